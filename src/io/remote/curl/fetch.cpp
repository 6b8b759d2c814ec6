#include "io/remote/fetch.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "feedline/io/error.h"
#include "io/remote/config.h"
#include "feedline/io/remote.h"

namespace feedline::remote::detail {
namespace {

using Clock = std::chrono::steady_clock;

// SHA-256 of an empty body: what S3 wants in x-amz-content-sha256 for a GET or HEAD, and what libcurl's signer hashes.
constexpr const char* kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr size_t kMaxErrorBody = 64 << 10;

std::mutex g_metrics_mu;
NetworkMetrics g_metrics;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return std::string(s);
}

// "bytes 100-199/1000": the first byte, the last and the total (-1 for '*'); false when it is not that.
bool parse_content_range(const std::string& v, int64_t* first, int64_t* last, int64_t* total) {
  long long a = 0, b = 0;
  char tail[32] = {0};
  if (std::sscanf(v.c_str(), "bytes %lld-%lld/%31s", &a, &b, tail) != 3 || a < 0 || b < a) return false;
  *first = a;
  *last = b;
  if (std::strcmp(tail, "*") == 0) {
    *total = -1;
  } else {
    char* end = nullptr;
    const long long t = std::strtoll(tail, &end, 10);
    if (end == tail || *end != '\0' || t <= b) return false;
    *total = t;
  }
  return true;
}

// Why an attempt ended before its answer did.
enum class Abort { kNone, kEnough, kChanged, kBadRange, kTooMuch, kWriteFailed };

struct Job {
  Request req;
  Resolved cfg;
  std::string request_url;
  std::promise<Response> promise;
  std::shared_future<Response> future;
  Response resp;
  int attempt = 0;
  int64_t delivered = 0;  // bytes delivered to the destination over every attempt
  std::string last_error;
  // One attempt's state.
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  char curl_error[CURL_ERROR_SIZE] = {0};
  long status = 0;
  std::string etag, content_range, retry_after, bucket_region, content_type;
  int64_t content_length = -1;
  bool body_started = false;
  int64_t asked_first = 0;  // the object offset this attempt asked to begin at
  int64_t skip = 0;         // bytes of this answer to drop before the ones wanted (a 200 to a range request)
  int64_t attempt_bytes = 0;
  std::string error_body;
  Abort abort = Abort::kNone;
  std::string abort_detail;

  // The bytes the answers must deliver in all: the size asked for, else (the end of the object) what its size, once
  // an answer has said it, leaves; -1 while unknown.
  int64_t wanted() const {
    if (req.suffix > 0) return resp.object_size >= 0 ? resp.object_size - resp.first_byte : -1;
    if (req.size >= 0) return req.size;
    return resp.object_size >= 0 ? resp.object_size - req.offset : -1;
  }
  // Whether every byte wanted has been delivered (a transfer that fails after its last byte then lost nothing).
  bool complete() const {
    return req.method == Method::kGet && req.query.empty() && body_started && wanted() >= 0 && delivered == wanted();
  }
  std::string what() const {
    if (req.method == Method::kHead) return "HEAD";
    if (!req.query.empty()) return "listing";
    if (req.suffix > 0) return "GET of the last " + std::to_string(req.suffix) + " bytes";
    if (req.size < 0) return req.offset == 0 ? "GET" : "GET from byte " + std::to_string(req.offset);
    return "GET of bytes " + std::to_string(req.offset) + "-" + std::to_string(req.offset + req.size - 1);
  }
};

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* job = static_cast<Job*>(user);
  const std::string_view line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new answer (after a redirect or a 100 Continue): what the last one said no longer counts.
    const size_t sp = line.find(' ');
    job->status = sp == std::string_view::npos ? 0 : std::strtol(std::string(line.substr(sp + 1, 3)).c_str(), nullptr, 10);
    job->etag.clear();
    job->content_range.clear();
    job->retry_after.clear();
    job->bucket_region.clear();
    job->content_type.clear();
    job->content_length = -1;
    return size * n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  const std::string_view name = line.substr(0, colon);
  const std::string value = trim(line.substr(colon + 1));
  if (iequals(name, "etag")) {
    job->etag = value;
  } else if (iequals(name, "content-range")) {
    job->content_range = value;
  } else if (iequals(name, "content-length")) {
    char* end = nullptr;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    job->content_length = end != value.c_str() && v >= 0 ? v : -1;
  } else if (iequals(name, "retry-after")) {
    job->retry_after = value;
  } else if (iequals(name, "x-amz-bucket-region")) {
    job->bucket_region = value;
  } else if (iequals(name, "content-type")) {
    job->content_type = value;
  }
  return size * n;
}

bool write_out(Job* job, const char* data, int64_t n) {
  Request& r = job->req;
  if (r.out != nullptr) {
    std::memcpy(r.out + job->delivered, data, static_cast<size_t>(n));
  } else if (r.fd >= 0) {
    int64_t done = 0;
    while (done < n) {
      const ssize_t w = ::pwrite(r.fd, data + done, static_cast<size_t>(n - done), r.fd_offset + job->delivered + done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        job->abort_detail = std::string("cannot write to the cache: ") + std::strerror(errno);
        return false;
      }
      done += w;
    }
  } else {
    job->resp.body.append(data, static_cast<size_t>(n));
  }
  job->delivered += n;
  return true;
}

// Checks the head of a successful answer before its first byte is taken.
bool begin_body(Job* job) {
  Request& r = job->req;
  const std::string& expected = !r.etag.empty() ? r.etag : job->resp.etag;
  if (!expected.empty() && !job->etag.empty() && job->etag != expected) {
    job->abort = Abort::kChanged;
    job->abort_detail = "its ETag was " + expected + " and is now " + job->etag;
    return false;
  }
  if (job->resp.etag.empty()) job->resp.etag = job->etag;
  if (!job->content_type.empty()) job->resp.content_type = job->content_type;
  if (job->status == 206) {
    int64_t first = 0, last = 0, total = 0;
    if (!parse_content_range(job->content_range, &first, &last, &total)) {
      job->abort = Abort::kBadRange;
      job->abort_detail = "a partial answer without a valid Content-Range ('" + job->content_range + "')";
      return false;
    }
    if (total >= 0) {
      if (job->resp.object_size >= 0 && total != job->resp.object_size) {
        job->abort = Abort::kChanged;
        job->abort_detail = "its size was " + std::to_string(job->resp.object_size) + " bytes and is now " +
                            std::to_string(total);
        return false;
      }
      job->resp.object_size = total;
    }
    if (r.suffix > 0 && job->delivered == 0) {
      job->asked_first = first;
      job->resp.first_byte = first;
    }
    if (first != job->asked_first) {
      job->abort = Abort::kBadRange;
      job->abort_detail = "asked for bytes from " + std::to_string(job->asked_first) + ", got " +
                          job->content_range;
      return false;
    }
    job->skip = 0;
  } else {
    // A whole object in answer: what was asked for starts `asked_first` bytes in. A suffix's start is known once
    // the length is.
    if (job->content_length >= 0) {
      if (job->resp.object_size >= 0 && job->content_length != job->resp.object_size && r.method == Method::kGet &&
          r.query.empty()) {
        job->abort = Abort::kChanged;
        job->abort_detail = "its size was " + std::to_string(job->resp.object_size) + " bytes and is now " +
                            std::to_string(job->content_length);
        return false;
      }
      if (r.query.empty()) job->resp.object_size = job->content_length;
    }
    if (r.suffix > 0 && job->delivered == 0) {
      if (job->content_length < 0) {
        job->abort = Abort::kBadRange;
        job->abort_detail = "a whole answer without a length to a request for the end of the object";
        return false;
      }
      job->asked_first = std::max<int64_t>(0, job->content_length - r.suffix);
      job->resp.first_byte = job->asked_first;
    }
    job->skip = job->asked_first;
  }
  return true;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* job = static_cast<Job*>(user);
  const int64_t total = static_cast<int64_t>(size * n);
  job->attempt_bytes += total;
  if (job->status < 200 || job->status >= 300) {
    const size_t room = kMaxErrorBody - std::min(kMaxErrorBody, job->error_body.size());
    job->error_body.append(data, std::min(room, static_cast<size_t>(total)));
    return size * n;
  }
  if (!job->body_started) {
    job->body_started = true;
    if (!begin_body(job)) return 0;
  }
  int64_t at = 0;
  if (job->skip > 0) {
    at = std::min(job->skip, total);
    job->skip -= at;
  }
  int64_t take = total - at;
  const int64_t wanted = job->wanted();
  if (wanted >= 0 && job->delivered + take > wanted) {
    take = wanted - job->delivered;
    if (take > 0 && !write_out(job, data + at, take)) {
      job->abort = Abort::kWriteFailed;
      return 0;
    }
    // A whole object in answer has more after what was asked for: stop it there. A partial answer longer than
    // asked is a server that cannot be trusted.
    job->abort = job->status == 206 ? Abort::kTooMuch : Abort::kEnough;
    if (job->abort == Abort::kTooMuch) job->abort_detail = "the answer holds more bytes than were asked for";
    return 0;
  }
  if (take > 0 && !write_out(job, data + at, take)) {
    job->abort = Abort::kWriteFailed;
    return 0;
  }
  if (wanted >= 0 && job->delivered == wanted && job->status == 200 && take < total - at) {
    job->abort = Abort::kEnough;
    return 0;
  }
  return size * n;
}

int64_t jittered(std::chrono::milliseconds base, int attempt, std::chrono::milliseconds cap) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const double grown = static_cast<double>(base.count()) * static_cast<double>(int64_t{1} << std::min(attempt, 20));
  const double ceiling = std::min(grown, static_cast<double>(cap.count()));
  // Half fixed, half random ("equal jitter"): retries of many clients spread out, yet never come at once.
  std::uniform_real_distribution<double> half(0.5, 1.0);
  return static_cast<int64_t>(ceiling * half(rng));
}

int64_t retry_after_ms(const std::string& v) {
  if (v.empty()) return -1;
  char* end = nullptr;
  const double seconds = std::strtod(v.c_str(), &end);
  if (end != v.c_str() && seconds >= 0) return static_cast<int64_t>(seconds * 1000);
  const time_t when = curl_getdate(v.c_str(), nullptr);
  if (when < 0) return -1;
  return std::max<int64_t>(0, (static_cast<int64_t>(when) - static_cast<int64_t>(std::time(nullptr))) * 1000);
}

// A request for an object's last bytes, or for all of it from byte 0, is unsatisfiable (416) only when the object is
// empty (RFC 9110, 14.1.2): that answer says its size, 0, as a Content-Range of "bytes */0" does where one comes.
bool empty_object(const Job& job) {
  const bool from_start = job.req.suffix > 0 || (job.req.size < 0 && job.req.offset == 0);
  return job.status == 416 && from_start && job.req.method == Method::kGet && job.req.query.empty() &&
         job.delivered == 0 && (job.content_range.empty() || job.content_range == "bytes */0");
}

bool status_ok(long s) { return s >= 200 && s < 300; }

bool retryable_status(long s) { return s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504; }

bool retryable_curl(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_AGAIN:
    // Bytes that are no HTTP answer ("HTTP/0.9"), as what is left on a reused connection of a body whose length a
    // server understated: the URLs here are all http(s), so libcurl 7 gives this code for nothing else.
    case CURLE_UNSUPPORTED_PROTOCOL:
      return true;
    default:
      return false;
  }
}

// What to check, for a request the server refused.
std::string hint(const Job& job, const S3Error& e) {
  const RemoteConfig& c = job.cfg.config;
  const bool store = job.req.url.object_store();
  const std::string region = !job.bucket_region.empty() ? job.bucket_region : e.region;
  if (store && !region.empty() && region != c.region) {
    return "the bucket is in region " + region + ", not " + c.region + " (from " + c.region_from +
           "): set AWS_REGION=" + region;
  }
  if (e.code == "InvalidAccessKeyId") {
    return "the server does not know the access key id from " + c.credentials_from;
  }
  if (e.code == "SignatureDoesNotMatch") {
    return "the secret access key from " + c.credentials_from +
           " does not match its access key id, or the endpoint or region is another server's";
  }
  if (e.code == "ExpiredToken" || e.code == "InvalidToken" || e.code == "TokenRefreshRequired") {
    return "the session token (AWS_SESSION_TOKEN) has expired or is not valid";
  }
  if (e.code == "NoSuchBucket") return "there is no bucket '" + job.req.url.bucket + "' at " + c.endpoint;
  if (e.code == "NoSuchKey" || (job.status == 404 && store)) {
    return "there is no object '" + job.req.url.key + "' in bucket '" + job.req.url.bucket + "'";
  }
  if (job.status == 404) return "the server has no such file";
  if (job.status == 403 || job.status == 401) {
    if (store && !c.signed_requests) {
      return "no credentials were found (" + c.credentials_from + "): set AWS_ACCESS_KEY_ID and "
             "AWS_SECRET_ACCESS_KEY or AWS_PROFILE";
    }
    if (store) return "the credentials from " + c.credentials_from + " may not read it";
    return "the server refuses access";
  }
  if (job.status == 301 || job.status == 307 || e.code == "PermanentRedirect") {
    return "the bucket is served by another endpoint than " + c.endpoint + " (from " + c.endpoint_from + ")";
  }
  if (job.status == 412) return "the object changed while it was read";
  if (job.status == 416) return "the object is shorter than expected: it changed while it was read";
  return {};
}

class Engine {
 public:
  Engine() {
    (void)options();  // made before the engine, so that it outlives the loop thread at exit
    curl_global_init(CURL_GLOBAL_DEFAULT);
    multi_ = curl_multi_init();
    curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
    thread_ = std::thread([this] { loop(); });
  }
  ~Engine() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    curl_multi_wakeup(multi_);
    thread_.join();
    for (CURL* e : idle_) curl_easy_cleanup(e);
    curl_multi_cleanup(multi_);
  }

  std::shared_future<Response> submit(Request request) {
    auto job = std::make_shared<Job>();
    job->req = std::move(request);
    job->future = job->promise.get_future().share();
    try {
      job->cfg = resolve(job->req.url);
      job->request_url = object_request_url(job->req.url, job->cfg.config, job->req.query);
    } catch (...) {
      job->promise.set_exception(std::current_exception());
      return job->future;
    }
    job->resp.first_byte = job->req.offset;
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_of(*job).push_back(job);
    }
    curl_multi_wakeup(multi_);
    return job->future;
  }

 private:
  void loop() {
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) break;
        const auto now = Clock::now();
        while (!timers_.empty() && timers_.begin()->first <= now) {
          // A retry goes first in its queue: it was due before what came after it.
          queue_of(*timers_.begin()->second).push_front(timers_.begin()->second);
          timers_.erase(timers_.begin());
        }
      }
      start_ready();
      int running = 0;
      curl_multi_perform(multi_, &running);
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
        if (msg->msg == CURLMSG_DONE) finish(msg->easy_handle, msg->data.result);
      }
      int wait_ms = 1000;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (startable(options().max_in_flight)) wait_ms = 0;
        if (!timers_.empty()) {
          const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(timers_.begin()->first -
                                                                                    Clock::now());
          wait_ms = std::clamp<int>(static_cast<int>(until.count()), 0, wait_ms);
        }
      }
      curl_multi_poll(multi_, nullptr, 0, wait_ms, nullptr);
    }
    // Stopping (the process ends): what is still running fails.
    for (auto& [easy, job] : active_) {
      curl_multi_remove_handle(multi_, easy);
      curl_easy_cleanup(easy);
      curl_slist_free_all(job->headers);
      job->promise.set_exception(std::make_exception_ptr(IoError(job->req.url.text + ": the process is ending")));
    }
    active_.clear();
  }

  std::deque<std::shared_ptr<Job>>& queue_of(const Job& job) { return job.req.background ? background_ : ready_; }

  // How many bytes background transfers may still have to come before the next one starts: one bandwidth-delay
  // product as measured (at least 1 MiB). The next request's wait for its first byte then overlaps the end of those
  // before it, while each transfer gets the link almost alone, in the order they were asked for.
  static int64_t background_budget() {
    const NetworkMetrics m = network_metrics();
    return std::max<int64_t>(int64_t{1} << 20, static_cast<int64_t>(m.bytes_per_second * m.first_byte_seconds));
  }

  // The bytes the running background transfers have yet to deliver (loop thread).
  int64_t background_to_come() const {
    int64_t left = 0;
    for (const auto& [easy, job] : active_) {
      if (!job->req.background) continue;
      left += job->req.size > 0 ? std::max<int64_t>(0, job->req.size - job->delivered) : int64_t{1} << 20;
    }
    return left;
  }

  // Whether a queued request may start now (loop thread, under mu_).
  bool startable(int limit) {
    if (static_cast<int>(active_.size()) >= std::max(1, limit)) return false;
    if (!ready_.empty()) return true;
    return !background_.empty() && background_to_come() <= background_budget();
  }

  void start_ready() {
    const int limit = options().max_in_flight;
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!startable(limit)) return;
        auto& queue = !ready_.empty() ? ready_ : background_;
        job = queue.front();
        queue.pop_front();
      }
      start(job);
    }
  }

  void start(const std::shared_ptr<Job>& job) {
    const RemoteOptions o = options();
    Request& r = job->req;
    ++job->attempt;
    job->status = 0;
    job->body_started = false;
    job->skip = 0;
    job->attempt_bytes = 0;
    job->error_body.clear();
    job->abort = Abort::kNone;
    job->abort_detail.clear();
    job->curl_error[0] = '\0';
    CURL* easy = nullptr;
    if (!idle_.empty()) {
      easy = idle_.back();
      idle_.pop_back();
      curl_easy_reset(easy);
    } else {
      easy = curl_easy_init();
    }
    job->easy = easy;
    curl_slist* headers = nullptr;
    // The range this attempt asks for: what is still missing.
    std::string range;
    if (r.method == Method::kGet && r.query.empty()) {
      if (r.suffix > 0 && job->delivered == 0) {
        range = "bytes=-" + std::to_string(r.suffix);
        job->asked_first = -1;
      } else {
        int64_t begin = 0;
        int64_t last = -1;
        if (r.suffix > 0) {
          begin = job->resp.first_byte + job->delivered;
          if (job->resp.object_size >= 0) last = job->resp.object_size - 1;
        } else {
          begin = r.offset + job->delivered;
          if (r.size >= 0) last = r.offset + r.size - 1;
        }
        job->asked_first = begin;
        // Open-ended from 0 too: a partial answer's Content-Range says the object's size, which a Content-Length
        // alone (wrong, from a broken proxy) does not prove.
        range = "bytes=" + std::to_string(begin) + "-" + (last >= 0 ? std::to_string(last) : std::string());
      }
    }
    if (!range.empty()) headers = curl_slist_append(headers, ("Range: " + range).c_str());
    const std::string& etag = !r.etag.empty() ? r.etag : job->resp.etag;
    // A weak ETag (W/"...") never matches under If-Match (RFC 9110, 13.1.1): such a server's answers are checked by
    // their ETag alone.
    if (!etag.empty() && etag.rfind("W/", 0) != 0 && r.query.empty()) {
      headers = curl_slist_append(headers, ("If-Match: " + etag).c_str());
    }
    const Resolved& cfg = job->cfg;
    if (r.url.object_store() && cfg.config.signed_requests) {
      headers = curl_slist_append(headers, (std::string("x-amz-content-sha256: ") + kEmptySha256).c_str());
      if (!cfg.secrets.session_token.empty()) {
        headers = curl_slist_append(headers, ("x-amz-security-token: " + cfg.secrets.session_token).c_str());
      }
      const std::string sigv4 = "aws:amz:" + cfg.config.region + ":s3";
      curl_easy_setopt(easy, CURLOPT_AWS_SIGV4, sigv4.c_str());
      curl_easy_setopt(easy, CURLOPT_USERNAME, cfg.config.access_key_id.c_str());
      curl_easy_setopt(easy, CURLOPT_PASSWORD, cfg.secrets.secret_access_key.c_str());
    }
    job->headers = headers;
    curl_easy_setopt(easy, CURLOPT_URL, job->request_url.c_str());
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, job.get());
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, job.get());
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, job.get());
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, job->curl_error);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(o.connect_timeout.count()));
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(std::max<int64_t>(1, o.low_speed_bytes)));
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME,
                     static_cast<long>(std::max<int64_t>(1, (o.low_speed_time.count() + 999) / 1000)));
    curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 512L << 10);
    curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "feedline");
    // A retry does not trust the connection pool: the connection the failed attempt used may be what failed.
    if (job->attempt > 1) curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
    if (r.method == Method::kHead) curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
    if (r.url.object_store()) {
      // A key is a name, not a path: "a/../b" and "a/./b" are keys of their own, which libcurl would otherwise
      // squash into another key's path.
      curl_easy_setopt(easy, CURLOPT_PATH_AS_IS, 1L);
    } else {
      curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
      curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 5L);
    }
    if (!cfg.config.ca_bundle.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, cfg.config.ca_bundle.c_str());
    active_[easy] = job;
    count_requests(1, 0, 0, 0);
    curl_multi_add_handle(multi_, easy);
  }

  void release(const std::shared_ptr<Job>& job) {
    curl_multi_remove_handle(multi_, job->easy);
    active_.erase(job->easy);
    if (job->abort == Abort::kNone && idle_.size() < 64) {
      idle_.push_back(job->easy);
    } else {
      curl_easy_cleanup(job->easy);  // a transfer cut short leaves its connection in no state to reuse
    }
    job->easy = nullptr;
    curl_slist_free_all(job->headers);
    job->headers = nullptr;
  }

  void measure(CURL* easy, int64_t bytes) {
    curl_off_t pre = 0, first = 0, total = 0;
    curl_easy_getinfo(easy, CURLINFO_PRETRANSFER_TIME_T, &pre);
    curl_easy_getinfo(easy, CURLINFO_STARTTRANSFER_TIME_T, &first);
    curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &total);
    std::lock_guard<std::mutex> lock(g_metrics_mu);
    const double ttfb = static_cast<double>(first - pre) / 1e6;
    if (ttfb >= 0) {
      g_metrics.first_byte_seconds =
          g_metrics.first_byte_seconds == 0 ? ttfb : 0.8 * g_metrics.first_byte_seconds + 0.2 * ttfb;
    }
    const double transfer = static_cast<double>(total - first) / 1e6;
    if (bytes >= (int64_t{1} << 20) && transfer > 0) {
      const double bw = static_cast<double>(bytes) / transfer;
      g_metrics.bytes_per_second = g_metrics.bytes_per_second == 0 ? bw : 0.8 * g_metrics.bytes_per_second + 0.2 * bw;
    }
  }

  void finish(CURL* easy, CURLcode code) {
    const auto it = active_.find(easy);
    if (it == active_.end()) return;
    const std::shared_ptr<Job> job = it->second;
    count_requests(0, job->attempt_bytes, 0, 0);
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &job->status);
    if (code == CURLE_OK || job->abort == Abort::kEnough) measure(easy, job->attempt_bytes);
    release(job);
    Request& r = job->req;
    job->resp.status = job->status;
    job->resp.attempts = job->attempt;

    // An answer without a body (an empty object, or a range of nothing) never reached on_body: its head is checked
    // here.
    if (code == CURLE_OK && status_ok(job->status) && !job->body_started && r.method == Method::kGet &&
        r.query.empty()) {
      job->body_started = true;
      begin_body(job.get());
    }
    if (job->abort == Abort::kChanged) return fail(job, "changed while it was read: " + job->abort_detail);
    if (job->abort == Abort::kWriteFailed) return fail(job, job->abort_detail);
    bool transient = false;
    std::string why;
    if (job->abort == Abort::kBadRange || job->abort == Abort::kTooMuch) {
      transient = true;
      why = job->abort_detail;
    } else if (code != CURLE_OK && job->abort != Abort::kEnough && !(status_ok(job->status) && job->complete())) {
      why = job->curl_error[0] != '\0' ? job->curl_error : curl_easy_strerror(code);
      if (!retryable_curl(code)) return fail(job, why);
      transient = true;
    } else if (job->status >= 200 && job->status < 300) {
      const int64_t wanted = job->wanted();
      if (r.method == Method::kGet && wanted >= 0 && job->delivered < wanted) {
        transient = true;
        why = "the answer ended after " + std::to_string(job->delivered) + " of " + std::to_string(wanted) + " bytes";
      } else {
        job->resp.bytes = job->delivered;
        if (r.method == Method::kHead && job->content_length >= 0) job->resp.object_size = job->content_length;
        if (job->resp.etag.empty()) job->resp.etag = job->etag;
        if (job->resp.content_type.empty()) job->resp.content_type = job->content_type;
        job->promise.set_value(std::move(job->resp));
        return;
      }
    } else if (empty_object(*job)) {
      job->resp.object_size = 0;
      job->resp.first_byte = 0;
      job->resp.bytes = 0;
      job->resp.etag = job->etag;
      job->promise.set_value(std::move(job->resp));
      return;
    } else {
      const S3Error e = parse_s3_error(job->error_body);
      why = "HTTP " + std::to_string(job->status);
      if (!e.code.empty()) why += " " + e.code;
      if (!e.message.empty()) why += ": " + e.message;
      if (!retryable_status(job->status)) {
        const std::string h = hint(*job, e);
        return fail(job, why + (h.empty() ? "" : "; " + h));
      }
      transient = true;
    }
    if (transient && job->attempt < std::max(1, options().max_attempts)) {
      job->last_error = why;
      count_requests(0, 0, 1, 0);
      const RemoteOptions o = options();
      int64_t delay = jittered(o.backoff, job->attempt - 1, o.max_backoff);
      const int64_t after = retry_after_ms(job->retry_after);
      if (after >= 0) delay = std::min<int64_t>(std::max(delay, after), o.max_backoff.count());
      std::lock_guard<std::mutex> lock(mu_);
      timers_.emplace(Clock::now() + std::chrono::milliseconds(delay), job);
      return;
    }
    fail(job, why + " (after " + std::to_string(job->attempt) + (job->attempt == 1 ? " attempt" : " attempts") + ")");
  }

  void fail(const std::shared_ptr<Job>& job, const std::string& why) {
    count_requests(0, 0, 0, 1);
    std::string where = job->req.url.text;
    if (job->req.url.object_store()) where += " (endpoint " + job->cfg.config.endpoint + ")";
    // The errno a local file would have given: callers tell a missing object from a refused one by it.
    const int code = job->status == 404 ? ENOENT : job->status == 403 || job->status == 401 ? EACCES : EIO;
    job->promise.set_exception(
        std::make_exception_ptr(IoError(where + ": " + job->what() + " failed: " + why, code)));
  }

  CURLM* multi_ = nullptr;
  std::thread thread_;
  std::mutex mu_;
  bool stop_ = false;
  std::deque<std::shared_ptr<Job>> ready_;       // reads that wait, first come first started
  std::deque<std::shared_ptr<Job>> background_;  // fetches ahead, in the order they were asked for
  std::multimap<Clock::time_point, std::shared_ptr<Job>> timers_;
  // Loop thread only.
  std::map<CURL*, std::shared_ptr<Job>> active_;
  std::vector<CURL*> idle_;
};

// The process's engine. A child made by fork() without exec() has no loop thread: it makes an engine of its own
// (the parent's is left as it was, never touched).
Engine& engine() {
  static std::mutex mu;
  static Engine* e = nullptr;
  static pid_t owner = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (e == nullptr || owner != ::getpid()) {
    static std::unique_ptr<Engine> first;
    if (e == nullptr) {
      first = std::make_unique<Engine>();
      e = first.get();
    } else {
      e = new Engine();  // NOLINT: the parent's engine cannot be destroyed here; this one lives to the end
    }
    owner = ::getpid();
  }
  return *e;
}

}  // namespace

bool remote_built() { return true; }

std::shared_future<Response> submit(Request request) { return engine().submit(std::move(request)); }

Response fetch(Request request) {
  auto f = submit(std::move(request));
  return f.get();
}

std::vector<Response> fetch_all(std::vector<Request> requests) {
  std::vector<std::shared_future<Response>> futures;
  futures.reserve(requests.size());
  for (auto& r : requests) futures.push_back(submit(std::move(r)));
  std::vector<Response> out;
  out.reserve(futures.size());
  std::exception_ptr first;
  for (auto& f : futures) {
    try {
      out.push_back(f.get());
    } catch (...) {
      if (!first) first = std::current_exception();
      out.emplace_back();
    }
  }
  if (first) std::rethrow_exception(first);
  return out;
}

NetworkMetrics network_metrics() {
  std::lock_guard<std::mutex> lock(g_metrics_mu);
  return g_metrics;
}

}  // namespace feedline::remote::detail
