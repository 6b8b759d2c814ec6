// Internal to the remote layer: HTTP requests with the process's retries, on one event loop over libcurl's multi
// interface (its own thread, started on first use), at most RemoteOptions::max_in_flight transfers at once.
//
// A request that fails in a way that may pass (a connection refused, reset or timed out, a body cut short, HTTP
// 408/429/5xx) is tried again after a backoff with jitter, or the server's Retry-After, asking only for the bytes
// still missing; one that cannot pass (403, 404, an object that changed) fails at once. What fails throws IoError
// naming the URL, the HTTP status, the server's error code and message, and what to check.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "io/remote/url.h"

namespace feedline::remote::detail {

enum class Method { kGet, kHead };

struct Request {
  Url url;
  Method method = Method::kGet;
  std::string query;  // appended to the request URL (a listing's parameters), already encoded and sorted
  // The bytes asked for: [offset, offset + size) of the object; size < 0: from offset to the end; suffix > 0: the
  // last `suffix` bytes (offset and size then unused). A known size is what the answer must hold: fewer bytes are
  // asked for again, more are an error.
  int64_t offset = 0;
  int64_t size = -1;
  int64_t suffix = 0;
  // The ETag the object must have (If-Match, and checked on every answer): a change is an error, never a mix.
  std::string etag;
  // Where the bytes go: `out` (room for `size` bytes), else a file at `fd_offset` (pwrite), else Response::body.
  char* out = nullptr;
  // Kept alive until the request ends: the owner of `out`, which may let it go before then (a reader that closes
  // with ranges still in flight).
  std::shared_ptr<void> hold;
  int fd = -1;
  int64_t fd_offset = 0;
  // Fetched ahead of its reads: such requests start in the order they were made, each once those running before it
  // have less than a bandwidth-delay product left to come, so that the one due first gets the link's full rate
  // rather than an equal share of it; a read that waits (not background) starts before any of them.
  bool background = false;
};

struct Response {
  long status = 0;
  int64_t object_size = -1;  // from Content-Range's total, or a whole answer's Content-Length
  int64_t first_byte = 0;    // the object offset of the first byte delivered
  int64_t bytes = 0;         // bytes delivered
  std::string etag;
  std::string body;  // when the request had no `out` and no `fd`
  std::string content_type;
  int attempts = 0;
};

// Runs the request (and its retries) and waits for it. Throws IoError when it fails.
Response fetch(Request request);
// Runs the requests together and waits for all; then throws the first one's error, if any failed.
std::vector<Response> fetch_all(std::vector<Request> requests);
// Starts the request; the future holds its response or its IoError.
std::shared_future<Response> submit(Request request);

// The network as the process has measured it: time to first byte and the bandwidth of large transfers, as moving
// averages; 0 until measured.
struct NetworkMetrics {
  double first_byte_seconds = 0;
  double bytes_per_second = 0;
};
NetworkMetrics network_metrics();

// Counters the other parts of the layer add to (RemoteStats).
void count_requests(int64_t requests, int64_t bytes, int64_t retries, int64_t failures);
void add_wait_seconds(double seconds);
void add_cache_counts(int64_t hits, int64_t misses, int64_t evictions);

// Whether this build reads remote files (it was built with libcurl and pugixml).
bool remote_built();

// The text of an S3 error document's Code, Message and Region (empty when the body is not one). Exposed for tests.
struct S3Error {
  std::string code;
  std::string message;
  std::string region;
};
S3Error parse_s3_error(const std::string& body);

// One page of a ListObjectsV2 listing, as the server gave it (checked by list_objects()).
struct ListingPage {
  struct Entry {
    std::string key;
    bool has_size = false;
    std::string size;
    std::string etag;
  };
  bool ok = false;
  std::string error;  // why the body is not a listing, when !ok
  std::vector<Entry> entries;
  bool truncated = false;
  std::string token;
};
ListingPage parse_listing_page(const std::string& body);

}  // namespace feedline::remote::detail
