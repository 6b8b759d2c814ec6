#include "remote_servers.h"

#include <fcntl.h>
#include <ftw.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "test_paths.h"

extern char** environ;

namespace feedline::testing {

namespace {

constexpr const char* kPython = "/usr/bin/python3";
// radosgw's cluster takes a while on a small machine, more while a build runs beside it.
constexpr auto kStartTimeout = std::chrono::seconds(240);
constexpr auto kStopTimeout = std::chrono::seconds(60);

std::string remote_dir() { return std::string(FEEDLINE_SOURCE_DIR) + "/tests/remote"; }

bool exists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0;
}

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Waits for pid until the timeout; its exit code, or nullopt-like -1000 while it still runs.
constexpr int kStillRunning = -1000;
int wait_for(pid_t pid, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return exit_code_of(status);
    if (r < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() >= end) return kStillRunning;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::vector<char*> c_args(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }

void remove_folder(const std::string& dir) { ::nftw(dir.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

// The servers.py this process started in the foreground, when FEEDLINE_TEST_SERVERS named none.
struct ServersChild {
  pid_t pid = -1;
  int stdin_fd = -1;  // its stdin's write end: closing it asks servers.py to stop
  std::string dir;  // a scratch folder: servers.py's folder and its output
  std::string log;
};
ServersChild g_child;

void stop_child() {
  if (g_child.pid <= 0) return;
  ::close(g_child.stdin_fd);
  int code = wait_for(g_child.pid, kStopTimeout);
  if (code == kStillRunning) {
    std::fprintf(stderr, "remote test servers: servers.py (pid %d) did not stop; killing it\n", g_child.pid);
    ::kill(g_child.pid, SIGTERM);
    code = wait_for(g_child.pid, std::chrono::seconds(20));
    if (code == kStillRunning) {
      ::kill(g_child.pid, SIGKILL);
      code = wait_for(g_child.pid, std::chrono::seconds(20));
    }
  }
  g_child.pid = -1;
  if (code == 0) {
    remove_folder(g_child.dir);
  } else {
    std::fprintf(stderr, "remote test servers: servers.py ended with status %d; its folder and logs are kept in %s\n",
                 code, g_child.dir.c_str());
  }
}

std::string start_servers_child() {
  std::string base = "/tmp";
  if (const char* t = std::getenv("TMPDIR"); t && *t) base = t;
  std::string pattern = base + "/feedline-remote-XXXXXX";
  if (!::mkdtemp(pattern.data())) throw std::runtime_error(errno_text("mkdtemp " + pattern));
  // servers.py empties its folder when it starts: its output goes beside that folder.
  g_child.dir = pattern;
  g_child.log = g_child.dir + "/servers.out";
  const std::string servers_dir = g_child.dir + "/servers";
  const std::string servers_json = servers_dir + "/servers.json";

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe"));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[0], 0);
  posix_spawn_file_actions_addopen(&actions, 1, g_child.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const std::vector<std::string> argv = {kPython, remote_dir() + "/servers.py", "up", "--dir", servers_dir,
                                         "--s3", "--http", "--proxy", "s3", "--proxy", "http"};
  auto args = c_args(argv);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, kPython, &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[0]);
  if (rc != 0) {
    ::close(pipe_fds[1]);
    throw std::runtime_error(std::string("cannot start servers.py: ") + std::strerror(rc));
  }
  g_child.pid = pid;
  g_child.stdin_fd = pipe_fds[1];
  std::atexit(stop_child);

  const auto end = std::chrono::steady_clock::now() + kStartTimeout;
  while (!exists(servers_json)) {
    const int code = wait_for(pid, std::chrono::milliseconds(100));
    if (code != kStillRunning) {
      g_child.pid = -1;
      throw std::runtime_error("servers.py up ended with status " + std::to_string(code) +
                               " before the servers were ready:\n" + file_bytes(g_child.log));
    }
    if (std::chrono::steady_clock::now() > end) {
      stop_child();
      throw std::runtime_error("servers.py up was not ready after " + std::to_string(kStartTimeout.count()) +
                               " s:\n" + file_bytes(g_child.log));
    }
  }
  return servers_json;
}

TestServers load_servers() {
  std::string path;
  if (const char* env = std::getenv("FEEDLINE_TEST_SERVERS"); env && *env) {
    path = env;
    if (!exists(path)) {
      throw std::runtime_error("FEEDLINE_TEST_SERVERS names " + path +
                               ", which does not exist: did CTest's fixture remote.servers.up run and pass?");
    }
  } else {
    path = start_servers_child();
  }
  TestServers servers;
  servers.servers_json = path;
  try {
    servers.info = nlohmann::json::parse(file_bytes(path));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not readable JSON: " + e.what());
  }
  return servers;
}

std::string field(const TestServers& s, const std::vector<std::string>& keys) {
  const nlohmann::json* node = &s.info;
  std::string name;
  for (const auto& key : keys) {
    name += (name.empty() ? "" : ".") + key;
    if (!node->is_object() || !node->contains(key)) {
      throw std::runtime_error(s.servers_json + " has no " + name + ": servers.py was not asked for that server");
    }
    node = &(*node)[key];
  }
  return node->is_string() ? node->get<std::string>() : node->dump();
}

struct Url {
  std::string host, port, target;
};

Url parse_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) throw std::runtime_error("only http:// URLs are supported here: " + url);
  const auto slash = url.find('/', scheme.size());
  const std::string authority = url.substr(scheme.size(), slash == std::string::npos ? std::string::npos
                                                                                      : slash - scheme.size());
  Url u;
  u.target = slash == std::string::npos ? "/" : url.substr(slash);
  const auto colon = authority.rfind(':');
  u.host = colon == std::string::npos ? authority : authority.substr(0, colon);
  u.port = colon == std::string::npos ? "80" : authority.substr(colon + 1);
  return u;
}

int connect_to(const Url& u) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(u.host.c_str(), u.port.c_str(), &hints, &found); rc != 0) {
    throw std::runtime_error(u.host + ": " + ::gai_strerror(rc));
  }
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) throw std::runtime_error(errno_text("connect to " + u.host + ":" + u.port));
  timeval tv{60, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string dechunk(const std::string& raw) {
  std::string out;
  size_t pos = 0;
  for (;;) {
    const auto eol = raw.find("\r\n", pos);
    if (eol == std::string::npos) break;
    const size_t size = std::stoul(raw.substr(pos, eol - pos), nullptr, 16);
    if (size == 0) break;
    out += raw.substr(eol + 2, size);
    pos = eol + 2 + size + 2;
  }
  return out;
}

HttpResponse parse_response(const std::string& raw, const std::string& url) {
  const auto head_end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/", 0) != 0 || head_end == std::string::npos) {
    throw std::runtime_error(url + ": no HTTP answer (" + std::to_string(raw.size()) + " bytes)");
  }
  HttpResponse r;
  r.status = std::stoi(raw.substr(raw.find(' ') + 1, 3));
  std::string body = raw.substr(head_end + 4);
  std::istringstream head(raw.substr(0, head_end));
  std::string line;
  bool chunked = false;
  long long length = -1;
  while (std::getline(head, line)) {
    const std::string l = lower(line);
    if (l.rfind("content-length:", 0) == 0) length = std::stoll(l.substr(15));
    if (l.rfind("transfer-encoding:", 0) == 0 && l.find("chunked") != std::string::npos) chunked = true;
  }
  if (chunked) body = dechunk(body);
  else if (length >= 0 && static_cast<size_t>(length) < body.size()) body.resize(static_cast<size_t>(length));
  r.body = std::move(body);
  return r;
}

}  // namespace

const TestServers& test_servers() {
  static std::once_flag once;
  static TestServers servers;
  static std::string failure;
  std::call_once(once, [] {
    try {
      servers = load_servers();
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw std::runtime_error("remote test servers: " + failure);
  return servers;
}

std::string TestServers::s3_endpoint() const { return field(*this, {"s3", "endpoint"}); }
std::string TestServers::s3_region() const { return field(*this, {"s3", "region"}); }
std::string TestServers::s3_access_key() const { return field(*this, {"s3", "access_key"}); }
std::string TestServers::s3_secret_key() const { return field(*this, {"s3", "secret_key"}); }
bool TestServers::s3_verifies_signatures() const { return field(*this, {"s3", "verifies_signatures"}) == "true"; }
std::string TestServers::http_url() const { return field(*this, {"http", "url"}); }
std::string TestServers::https_url() const { return field(*this, {"http", "https_url"}); }
std::string TestServers::ca_file() const { return field(*this, {"http", "ca_file"}); }
std::string TestServers::http_root() const { return field(*this, {"http", "root"}); }
std::string TestServers::proxy_url(const std::string& which) const { return field(*this, {"proxy", which, "url"}); }
std::string TestServers::proxy_control(const std::string& which) const {
  return field(*this, {"proxy", which, "control"});
}

CommandResult run_command(const std::vector<std::string>& argv) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe"));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  auto args = c_args(argv);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv.at(0).c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  CommandResult result;
  if (rc != 0) {
    ::close(out[0]);
    result.output = "cannot run " + argv[0] + ": " + std::strerror(rc);
    return result;
  }
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n > 0) result.output.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = exit_code_of(status);
  return result;
}

CommandResult run_s3tool(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kPython, remote_dir() + "/s3tool.py", "--servers", test_servers().servers_json};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(argv);
}

HttpResponse http_request(const std::string& method, const std::string& url, const std::string& body) {
  const Url u = parse_url(url);
  const int fd = connect_to(u);
  std::string request = method + " " + u.target + " HTTP/1.1\r\nHost: " + u.host + ":" + u.port +
                        "\r\nContent-Length: " + std::to_string(body.size()) +
                        "\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n" + body;
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string message = errno_text("send to " + url);
      ::close(fd);
      throw std::runtime_error(message);
    }
    sent += static_cast<size_t>(n);
  }
  std::string raw;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) raw.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  ::close(fd);
  return parse_response(raw, url);
}

namespace {

nlohmann::json control(const std::string& which, const std::string& method, const std::string& what,
                       const std::string& body = "") {
  const std::string url = test_servers().proxy_control(which) + what;
  const HttpResponse r = http_request(method, url, body);
  if (r.status != 200) {
    throw std::runtime_error(method + " " + url + ": " + std::to_string(r.status) + " " + r.body);
  }
  return nlohmann::json::parse(r.body);
}

}  // namespace

void proxy_faults(const std::string& which, const nlohmann::json& rules) {
  const nlohmann::json list = rules.is_string() ? nlohmann::json::parse(rules.get<std::string>()) : rules;
  control(which, "POST", "/faults", list.dump());
}

nlohmann::json proxy_log(const std::string& which, size_t at_least) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    nlohmann::json log = control(which, "GET", "/log");
    bool done = log.size() >= at_least;
    for (const auto& entry : log) done = done && entry.value("done", true);
    if (done || std::chrono::steady_clock::now() > end) return log;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

nlohmann::json proxy_pending(const std::string& which) { return control(which, "GET", "/faults"); }

void proxy_reset(const std::string& which) { control(which, "POST", "/reset"); }

void proxy_delay(const std::string& which, int milliseconds) {
  control(which, "POST", "/delay", nlohmann::json{{"ms", milliseconds}}.dump());
}

void use_test_servers() {
  const TestServers& s = test_servers();
  proxy_reset("s3");
  proxy_reset("http");
  ::setenv("AWS_ACCESS_KEY_ID", s.s3_access_key().c_str(), 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", s.s3_secret_key().c_str(), 1);
  ::setenv("AWS_REGION", s.s3_region().c_str(), 1);
  ::setenv("AWS_ENDPOINT_URL", s.s3_endpoint().c_str(), 1);
  ::setenv("AWS_CA_BUNDLE", s.ca_file().c_str(), 1);
  ::setenv("AWS_CONFIG_FILE", "/dev/null", 1);
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null", 1);
  for (const char* name : {"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3",
                           "AWS_NO_SIGN_REQUEST", "AWS_S3_ADDRESSING_STYLE", "AWS_DEFAULT_REGION"}) {
    ::unsetenv(name);
  }
}

}  // namespace feedline::testing
