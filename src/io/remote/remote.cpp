// The remote layer's public functions: configuration, stat, listing.
#include "feedline/io/remote.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <set>

#include "feedline/io/error.h"
#include "io/remote/config.h"
#include "io/remote/fetch.h"
#include "io/remote/object.h"
#include "io/remote/url.h"

namespace feedline::remote {

RemoteConfig resolve_config(const std::string& url) { return detail::resolve(detail::parse_url(url)).config; }

ObjectInfo stat(const std::string& url) {
  const detail::Url u = detail::parse_url(url);
  if (auto known = detail::recall_object(u.text)) return *known;
  detail::Request r;
  r.url = u;
  r.method = detail::Method::kHead;
  const detail::Response resp = detail::fetch(std::move(r));
  if (resp.object_size < 0) throw IoError(u.text + ": the server did not say the object's size");
  return {u.text, resp.object_size, resp.etag};
}

bool exists(const std::string& url) {
  try {
    stat(url);
    return true;
  } catch (const IoError& e) {
    if (e.code() == ENOENT) return false;
    throw;
  }
}

namespace detail {
namespace {
std::atomic<int> g_listing_page_keys{0};
}  // namespace

void set_listing_page_keys(int keys) { g_listing_page_keys = std::max(0, keys); }
}  // namespace detail

namespace {

int64_t parse_size(const char* text, const std::string& where) {
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v < 0 || errno == ERANGE) {
    throw IoError(where + ": the listing gives the size '" + std::string(text) + "', not a number of bytes");
  }
  return v;
}

}  // namespace

std::vector<ObjectInfo> list_objects(const std::string& prefix_url) {
  const detail::Url u = detail::parse_url(prefix_url);
  if (!u.object_store()) {
    throw InvalidArgument(u.text + ": an http(s) server has no listing: name the files themselves (a comma-separated "
                          "list; tar shards also take a brace pattern such as train-{000..099}.tar), or read them "
                          "from s3://");
  }
  const std::string scheme = u.scheme == detail::Scheme::kS3 ? "s3://" : "gs://";
  const std::string where = scheme + u.bucket + " (listing '" + u.key + "')";
  std::vector<ObjectInfo> out;
  std::set<std::string> tokens;
  std::string token;
  for (;;) {
    // Parameters in the order SigV4's canonical query wants them (sorted by name), each encoded once.
    std::string query;
    if (!token.empty()) query += "continuation-token=" + detail::uri_encode(token, false) + "&";
    query += "list-type=2";
    if (const int keys = detail::g_listing_page_keys.load(); keys > 0) query += "&max-keys=" + std::to_string(keys);
    if (!u.key.empty()) query += "&prefix=" + detail::uri_encode(u.key, false);
    detail::Request r;
    r.url = u;
    r.url.key.clear();
    r.query = query;
    const detail::Response resp = detail::fetch(std::move(r));
    const detail::ListingPage page = detail::parse_listing_page(resp.body);
    if (!page.ok) throw IoError(where + ": " + page.error);
    std::string last = out.empty() ? std::string() : out.back().url;
    for (const auto& c : page.entries) {
      const std::string& key = c.key;
      if (key.empty() || key.compare(0, u.key.size(), u.key) != 0) {
        throw IoError(where + ": the listing holds the key '" + key + "', which does not begin with the prefix");
      }
      if (!c.has_size) throw IoError(where + ": the listing gives no size for '" + key + "'");
      ObjectInfo info{scheme + u.bucket + "/" + key, parse_size(c.size.c_str(), where), c.etag};
      if (!last.empty() && info.url <= last) {
        throw IoError(where + ": the listing is out of order or repeats ('" + key + "')");
      }
      last = info.url;
      out.push_back(std::move(info));
    }
    if (!page.truncated) break;
    token = page.token;
    if (token.empty()) throw IoError(where + ": the listing says it goes on but gives no continuation token");
    if (!tokens.insert(token).second) throw IoError(where + ": the listing repeats a continuation token");
  }
  detail::remember_objects(out);
  return out;
}

}  // namespace feedline::remote
