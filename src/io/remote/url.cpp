#include "io/remote/url.h"

#include <cctype>

#include "feedline/io/error.h"
#include "feedline/io/remote.h"

namespace feedline {

bool is_remote_path(std::string_view path) {
  for (std::string_view scheme : {"s3://", "gs://", "http://", "https://"}) {
    if (path.size() >= scheme.size()) {
      bool same = true;
      for (size_t i = 0; i < scheme.size() && same; ++i) {
        same = std::tolower(static_cast<unsigned char>(path[i])) == scheme[i];
      }
      if (same) return true;
    }
  }
  return false;
}

namespace remote::detail {

std::string redact_url(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const size_t authority = scheme_end + 3;
  const size_t authority_end = url.find_first_of("/?#", authority);
  const std::string_view host_part = url.substr(authority, authority_end == std::string_view::npos
                                                               ? std::string_view::npos
                                                               : authority_end - authority);
  const size_t at = host_part.rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, authority));
  out += "***@";
  out += url.substr(authority + at + 1);
  return out;
}

Url parse_url(std::string_view url) {
  Url u;
  u.text = redact_url(url);
  u.original = std::string(url);
  const size_t colon = url.find("://");
  if (colon == std::string_view::npos || !is_remote_path(url)) {
    throw InvalidArgument("'" + u.text + "' is not a URL that feedline reads (s3://, gs://, http://, https://)");
  }
  std::string scheme;
  for (char c : url.substr(0, colon)) scheme += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  u.scheme = scheme == "s3" ? Scheme::kS3 : scheme == "gs" ? Scheme::kGs : scheme == "http" ? Scheme::kHttp
                                                                                           : Scheme::kHttps;
  const std::string_view rest = url.substr(colon + 3);
  if (!u.object_store()) {
    const size_t host_end = rest.find_first_of("/?#");
    if (rest.empty() || host_end == 0) throw InvalidArgument("'" + u.text + "' names no host");
    return u;
  }
  const size_t slash = rest.find('/');
  u.bucket = std::string(rest.substr(0, slash));
  u.key = slash == std::string_view::npos ? std::string() : std::string(rest.substr(slash + 1));
  if (u.bucket.empty()) throw InvalidArgument("'" + u.text + "' names no bucket (" + scheme + "://bucket/key)");
  // Bucket names: 3 to 63 of lower-case letters, digits, '.', '-' and '_' (older buckets); nothing that could leave
  // the host name or the path they go into.
  bool ok = u.bucket.size() >= 3 && u.bucket.size() <= 63;
  for (char c : u.bucket) {
    ok = ok && (std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
                c == '.' || c == '-' || c == '_');
  }
  if (!ok) {
    throw InvalidArgument("'" + u.text + "': '" + u.bucket +
                          "' is not a bucket name (3 to 63 lower-case letters, digits, '.', '-')");
  }
  return u;
}

std::string uri_encode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (std::isalnum(b) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += c;
    } else {
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

std::string join_url(std::string_view prefix, std::string_view name) {
  std::string out(prefix);
  while (!out.empty() && out.back() == '/' && !(out.size() >= 3 && out.compare(out.size() - 3, 3, "://") == 0)) {
    out.pop_back();
  }
  while (!name.empty() && name.front() == '/') name.remove_prefix(1);
  if (!out.empty() && out.back() != '/') out += '/';
  out += name;
  return out;
}

}  // namespace remote::detail
}  // namespace feedline
