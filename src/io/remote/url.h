// Internal to the remote layer: URLs as the user writes them (s3://bucket/key, gs://..., http(s)://...) and the
// HTTP URLs requests go to. No network here.
#pragma once

#include <string>
#include <string_view>

namespace feedline::remote::detail {

enum class Scheme { kS3, kGs, kHttp, kHttps };

struct Url {
  Scheme scheme = Scheme::kHttp;
  std::string text;      // as the user wrote it, what errors name (a password in it replaced by ***)
  std::string original;  // as the user wrote it
  std::string bucket;  // s3 and gs
  std::string key;     // s3 and gs: the key, without a leading '/'; may be empty (a bucket, a prefix)
  bool object_store() const { return scheme == Scheme::kS3 || scheme == Scheme::kGs; }
};

// Throws InvalidArgument naming the URL for one that is not remote, an s3:// or gs:// URL without a bucket, or a
// bucket name that is not one.
Url parse_url(std::string_view url);

// `text` percent-encoded as AWS's SigV4 canonical form wants: every byte but A-Z a-z 0-9 - _ . ~ as %XX (upper
// case); '/' kept where `keep_slash`.
std::string uri_encode(std::string_view text, bool keep_slash);

// `url` without a user name or password in its authority, for messages.
std::string redact_url(std::string_view url);

// The URL's form for messages: an s3:// URL as written, an http(s) one redacted.
inline std::string display(const Url& u) { return u.text; }

// `prefix` + "/" + `name`, with one slash between (a URL or a key).
std::string join_url(std::string_view prefix, std::string_view name);

}  // namespace feedline::remote::detail
