// Globs and folders over object storage: one listing of a literal prefix, matched segment by segment as glob()
// matches a path.
#include "io/remote_glob.h"

#include <fnmatch.h>

#include <cctype>
#include <chrono>
#include <list>
#include <mutex>
#include <utility>

#include "feedline/io/error.h"
#include "io/remote/url.h"

namespace feedline::remote {
namespace {

// How long a listing answers the calls for the same prefix that follow it, and how many are kept.
constexpr std::chrono::seconds kListingReuse{30};
constexpr size_t kListingsKept = 4;

std::vector<std::string_view> segments(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t slash = text.find('/', start);
    out.push_back(text.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

bool is_skipped_folder(std::string_view name) { return !name.empty() && (name[0] == '.' || name[0] == '_'); }

bool match_segment(std::string_view pattern, std::string_view name) {
  return ::fnmatch(std::string(pattern).c_str(), std::string(name).c_str(), FNM_PERIOD) == 0;
}

bool match_from(const std::vector<std::string_view>& pattern, size_t p, const std::vector<std::string_view>& name,
                size_t n) {
  if (p == pattern.size()) return n == name.size();
  if (pattern[p] == "**") {
    for (size_t k = n;; ++k) {  // `**` takes name[n, k)
      if (match_from(pattern, p + 1, name, k)) return true;
      if (k == name.size() || is_skipped_folder(name[k])) return false;
    }
  }
  return n < name.size() && match_segment(pattern[p], name[n]) && match_from(pattern, p + 1, name, n + 1);
}

// "s3://bucket/": what a listed object's URL holds before its key.
std::string bucket_url(const detail::Url& u) {
  return std::string(u.scheme == detail::Scheme::kS3 ? "s3://" : "gs://") + u.bucket + "/";
}

detail::Url object_store_url(const std::string& url, const char* what) {
  detail::Url u = detail::parse_url(url);
  if (!u.object_store()) {
    throw InvalidArgument(u.text + ": " + what + " of an http(s) server cannot be listed (http has no listing): name "
                          "its files one by one, in a comma-separated list (tar shards also take a brace pattern "
                          "such as shard-{000..099}.tar)");
  }
  return u;
}

struct KeptListing {
  std::string prefix;
  std::chrono::steady_clock::time_point at;
  std::vector<ObjectInfo> objects;
};

std::mutex g_kept_mutex;
std::list<KeptListing> g_kept;  // the newest first

// list_objects(prefix), or a copy of its answer from the last kListingReuse.
std::vector<ObjectInfo> listing(const std::string& prefix) {
  {
    std::lock_guard<std::mutex> lock(g_kept_mutex);
    const auto now = std::chrono::steady_clock::now();
    g_kept.remove_if([&](const KeptListing& k) { return now - k.at > kListingReuse; });
    for (const KeptListing& k : g_kept) {
      if (k.prefix == prefix) return k.objects;
    }
  }
  std::vector<ObjectInfo> objects = list_objects(prefix);
  std::lock_guard<std::mutex> lock(g_kept_mutex);
  g_kept.push_front({prefix, std::chrono::steady_clock::now(), objects});
  while (g_kept.size() > kListingsKept) g_kept.pop_back();
  return objects;
}

}  // namespace

bool is_object_store_url(std::string_view url) {
  if (url.size() < 5 || url.substr(2, 3) != "://") return false;
  const auto a = static_cast<char>(std::tolower(static_cast<unsigned char>(url[0])));
  const auto b = static_cast<char>(std::tolower(static_cast<unsigned char>(url[1])));
  return (a == 's' && b == '3') || (a == 'g' && b == 's');
}

bool has_wildcard(std::string_view path) {
  const bool http = is_remote_path(path) && !is_object_store_url(path);
  return path.find_first_of(http ? "*" : "*?[") != std::string_view::npos;
}

bool glob_match(std::string_view pattern, std::string_view name) {
  return match_from(segments(pattern), 0, segments(name), 0);
}

std::vector<GlobMatch> glob_objects(const std::string& pattern) {
  const detail::Url u = object_store_url(pattern, "a pattern");
  const std::string base = bucket_url(u);
  const size_t wild = u.key.find_first_of("*?[\\");
  if (wild == std::string::npos && has_wildcard(u.original)) {
    throw InvalidArgument(u.text + ": a pattern matches keys, not buckets: put the wildcard after s3://bucket/");
  }
  std::string key_pattern = u.key;
  const bool folders_only = !key_pattern.empty() && key_pattern.back() == '/';
  if (folders_only) key_pattern.pop_back();
  const std::vector<std::string_view> pattern_segments = segments(key_pattern);
  std::vector<GlobMatch> out;
  for (ObjectInfo& object : listing(base + u.key.substr(0, wild))) {
    const std::string_view key = std::string_view(object.url).substr(base.size());
    // The shortest folder above the object that matches, else the object itself.
    size_t matched = std::string::npos;
    for (size_t slash = key.find('/'); slash != std::string_view::npos && matched == std::string::npos;
         slash = key.find('/', slash + 1)) {
      if (match_from(pattern_segments, 0, segments(key.substr(0, slash)), 0)) matched = base.size() + slash;
    }
    if (matched == std::string::npos && !folders_only && match_from(pattern_segments, 0, segments(key), 0)) {
      matched = 0;
    }
    if (matched != std::string::npos) out.push_back({std::move(object), matched});
  }
  return out;
}

bool is_folder_url(std::string_view url) {
  if (!url.empty() && url.back() == '/') return true;
  return is_object_store_url(url) && url.find('/', 5) == std::string_view::npos;
}

std::vector<ObjectInfo> folder_objects(const std::string& url) {
  const detail::Url u = object_store_url(url, "a folder");
  std::string prefix = bucket_url(u) + u.key;
  if (prefix.back() != '/') prefix += '/';
  return listing(prefix);
}

}  // namespace feedline::remote
