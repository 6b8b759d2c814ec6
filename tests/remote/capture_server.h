// A loopback HTTP server for tests that look at requests as the client sends them: it records each request's head
// and answers it with the next of a list of canned answers, one connection per request. For test code only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace feedline::testing {

struct Captured {
  std::string method;
  std::string target;  // path and query, as sent
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case, in the order sent
};

// A loopback HTTP server: each request gets the next of `answers` (whole HTTP answers) on a connection that is then
// closed, and is recorded.
class CaptureServer {
 public:
  explicit CaptureServer(std::vector<std::string> answers) : answers_(std::move(answers)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener_, 16) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      throw std::runtime_error("capture server: cannot listen");
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~CaptureServer() {
    stop_ = true;
    thread_.join();
    ::close(listener_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<Captured> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void serve() {
    size_t next = 0;
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::string head;
      char buf[4096];
      while (head.find("\r\n\r\n") == std::string::npos) {
        pollfd c{fd, POLLIN, 0};
        if (::poll(&c, 1, 5000) <= 0) break;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        head.append(buf, static_cast<size_t>(n));
      }
      record(head);
      const std::string answer = next < answers_.size() ? answers_[next++] : "HTTP/1.1 500 Nothing\r\n\r\n";
      ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::shutdown(fd, SHUT_WR);
      ::close(fd);
    }
  }
  void record(const std::string& head) {
    Captured c;
    size_t at = head.find("\r\n");
    const std::string first = head.substr(0, at);
    c.method = first.substr(0, first.find(' '));
    c.target = first.substr(first.find(' ') + 1, first.rfind(' ') - first.find(' ') - 1);
    while (at != std::string::npos && at + 2 < head.size()) {
      const size_t end = head.find("\r\n", at + 2);
      const std::string line = head.substr(at + 2, end - at - 2);
      at = end;
      const size_t colon = line.find(':');
      if (line.empty() || colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      c.headers.emplace_back(name, value);
    }
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(std::move(c));
  }

  std::vector<std::string> answers_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<Captured> requests_;
};

// An HTTP answer: status line, headers, a Content-Length (the body's, unless `length` says another), then the body.
inline std::string answer(const std::string& status, const std::vector<std::string>& headers, const std::string& body,
                          int64_t length = -1) {
  std::string out = "HTTP/1.1 " + status + "\r\n";
  for (const auto& h : headers) out += h + "\r\n";
  out += "Content-Length: " + std::to_string(length >= 0 ? length : static_cast<int64_t>(body.size())) + "\r\n";
  out += "Connection: close\r\n\r\n" + body;
  return out;
}

// The value of the header `name` (lower case) of a captured request; "" when it was not sent.
inline std::string header(const Captured& c, const std::string& name) {
  for (const auto& [n, v] : c.headers) {
    if (n == name) return v;
  }
  return {};
}

}  // namespace feedline::testing
