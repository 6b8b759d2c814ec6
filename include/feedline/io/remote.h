// Files in object storage and on web servers: `s3://bucket/key` (AWS S3, and any server that speaks its API: MinIO,
// Ceph, R2), `gs://bucket/key` (Google Cloud Storage through its S3-compatible API, with HMAC keys) and
// `http://` / `https://` URLs are read wherever a local path is. The readers above do not know a file is remote:
// RandomAccessFile, read_file() and file_size() (feedline/io/file.h) take a URL as they take a path, and listings
// (folders, globs, prefixes) go through list_objects().
//
// Requests go through libcurl (connections reused, HTTP/2 where the server offers it); S3 requests are signed by
// libcurl's AWS SigV4. Configuration is read as AWS's own tools read it, from the environment and the user's AWS
// files (see RemoteConfig): nothing here takes a secret as an argument, and no error, log or progress line shows one.
//
// Failed requests are retried (RemoteOptions: attempts, backoff, timeouts); a request that still fails throws
// IoError naming the URL, the HTTP status and the server's error code and message. An object that changes while it
// is read (its ETag) is an IoError naming it, never a mix of old and new bytes.
//
// Thread-safe: every function may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace feedline {

// Whether `path` is a URL that this layer reads: it begins with s3://, gs://, http:// or https://.
bool is_remote_path(std::string_view path);

namespace remote {

// How remote reads behave, for the whole process. Set once (set_options) before the first read; a change applies to
// the requests made after it.
struct RemoteOptions {
  // Where shards and ranges are kept on local disk between reads and runs; empty: no disk cache, and the bytes of a
  // read stay in memory until it ends, at most `memory_limit` of them fetched ahead. Processes on one host may share
  // the folder: what one downloads, the others wait for and read. Default: the environment's FEEDLINE_CACHE_DIR.
  std::string cache_dir;
  // The cache's size on disk: past it, the entries used least recently and read by no one are removed.
  int64_t cache_limit = int64_t{20} << 30;
  // Bytes fetched ahead and held in memory when there is no disk cache.
  int64_t memory_limit = int64_t{1} << 30;
  // Attempts a request gets in all (1: no retry). Between attempts: exponential backoff from `backoff` up to
  // `max_backoff`, with jitter; a server's Retry-After is honoured up to `max_backoff`.
  int max_attempts = 6;
  std::chrono::milliseconds backoff{100};
  std::chrono::milliseconds max_backoff{20000};
  // A connection not made within this is a failed attempt.
  std::chrono::milliseconds connect_timeout{10000};
  // A transfer slower than `low_speed_bytes` a second for `low_speed_time` (waiting for an answer included) is a
  // failed attempt.
  std::chrono::milliseconds low_speed_time{30000};
  int64_t low_speed_bytes = 1024;
  // Requests in flight at once, over all readers of the process.
  int max_in_flight = 32;
  // Range reads planned together (a Parquet file's column chunks) are merged when the hole between them is at most
  // `hole_limit` bytes, and a merged range is cut at `range_limit` bytes. 0: derived from the time to first byte and
  // the bandwidth the process has measured (as Arrow's CacheOptions::MakeFromNetworkMetrics does), 8 KiB and
  // 32 MiB until it has measured them.
  int64_t hole_limit = 0;
  int64_t range_limit = 0;
  // Bytes asked for at the end of a file opened for a footer (Parquet), so that a small footer takes one request.
  int64_t footer_bytes = 64 << 10;
};

// Throws InvalidArgument naming the field for a value out of range (attempts < 1, a negative size or time).
void set_options(const RemoteOptions& options);
RemoteOptions options();

// A size in bytes as people write it: "1073741824", "512M", "20G", "1.5T" (K, M, G, T: powers of 1024; a trailing
// "B" or "iB" allowed). InvalidArgument naming the text otherwise.
int64_t parse_size(const std::string& text);

// Where the requests go and how they are signed, as resolved from the environment and the AWS files for one URL.
// For s3:// and gs://: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, else the profile
// AWS_PROFILE (or `default`) of AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials); the region from AWS_REGION,
// AWS_DEFAULT_REGION, else the profile's `region` in AWS_CONFIG_FILE (~/.aws/config), else us-east-1; the endpoint
// from AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the profile's `endpoint_url`, else AWS's regional endpoint (GCS's
// for gs://). Without credentials, requests go unsigned (public buckets); AWS_NO_SIGN_REQUEST=true forces that.
// Addressing is path-style (endpoint/bucket/key) for a custom endpoint and virtual-hosted (bucket.endpoint/key) for
// AWS's, unless AWS_S3_ADDRESSING_STYLE (or the profile's `s3 = addressing_style = ...`) says `path` or `virtual`.
// AWS_CA_BUNDLE or CURL_CA_BUNDLE name the certificate authorities for HTTPS (a private CA).
struct RemoteConfig {
  std::string endpoint;      // scheme://host[:port], no trailing slash
  std::string region;
  bool path_style = false;
  bool signed_requests = false;
  std::string access_key_id;  // never printed
  bool has_session_token = false;
  std::string ca_bundle;
  std::string profile;
  // Where each came from, for error messages and `feedline inspect`: "environment", "~/.aws/credentials [default]",
  // ... (never the values of secrets).
  std::string credentials_from;
  std::string region_from;
  std::string endpoint_from;
};
RemoteConfig resolve_config(const std::string& url);

// An object: its URL as the user wrote it, its size and its ETag (empty where the server sends none).
struct ObjectInfo {
  std::string url;
  int64_t size = 0;
  std::string etag;
};

// The object at `url` (one HEAD request). Throws IoError naming the URL when it is missing or cannot be read.
ObjectInfo stat(const std::string& url);

// Whether an object is at `url`: false for a 404, IoError for any other failure.
bool exists(const std::string& url);

// Every object whose key begins with the key of `prefix_url` (s3:// or gs://), in key order, pages of a listing
// (ListObjectsV2) followed to the end. `prefix_url` = s3://bucket/some/prefix: every key under it, at any depth.
// http(s) has no listing: InvalidArgument saying so. Throws IoError naming the bucket for a listing that fails or
// that the server answers with something other than a listing.
std::vector<ObjectInfo> list_objects(const std::string& prefix_url);

// What the process's remote reads have cost so far: requests and bytes over the network, retries, the disk cache's
// hits and misses, and how long readers waited for bytes.
struct RemoteStats {
  int64_t requests = 0;
  int64_t bytes = 0;
  int64_t retries = 0;
  int64_t failures = 0;         // requests that failed after their last attempt
  int64_t cache_hits = 0;       // ranges served from the disk cache
  int64_t cache_misses = 0;     // ranges downloaded into it
  int64_t cache_evictions = 0;  // entries removed to keep it under its limit
  double wait_seconds = 0;      // time readers spent waiting for bytes
};
RemoteStats stats();

// A byte range of a file: [offset, offset + size).
struct ByteRange {
  int64_t offset = 0;
  int64_t size = 0;
  int64_t end() const { return offset + size; }
};

// Ranges merged as the readers merge them: sorted, overlapping ones and those at most `hole_limit` apart joined, and
// a merged range cut into pieces of at most `range_limit` bytes (a range larger than that alone is cut too).
std::vector<ByteRange> coalesce_ranges(std::vector<ByteRange> ranges, int64_t hole_limit, int64_t range_limit);

}  // namespace remote
}  // namespace feedline
