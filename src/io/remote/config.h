// Internal to the remote layer: where a URL's requests go and how they are signed (RemoteConfig), with the secrets
// that the public struct leaves out. Read from the environment and the AWS files on each call (cheap: a few small
// files), so that a test or a program that changes the environment is seen at once.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "feedline/io/remote.h"
#include "io/remote/url.h"

namespace feedline::remote::detail {

struct Credentials {
  std::string secret_access_key;
  std::string session_token;
};

struct Resolved {
  RemoteConfig config;
  Credentials secrets;
};

// Resolves the configuration for `url` (see RemoteConfig). Throws InvalidArgument for an AWS_ENDPOINT_URL that is
// not an http(s) URL, a profile named by AWS_PROFILE that neither file has, or only one of the key pair.
Resolved resolve(const Url& url);

// The HTTP(S) URL of the object (or of the bucket, when the key is empty, with `query` appended: "list-type=2&...").
std::string object_request_url(const Url& url, const RemoteConfig& config, const std::string& query = {});

// Reads an INI file as the AWS tools write them: [section] heads, `key = value` lines, `#` and `;` comments, and
// indented lines under a key that holds a sub-section ("s3 =\n  addressing_style = path", kept as "s3.addressing_style").
// Missing file: an empty map. Exposed for tests.
struct IniSection {
  std::string name;
  std::vector<std::pair<std::string, std::string>> values;
  const std::string* get(const std::string& key) const;
};
std::vector<IniSection> parse_ini(const std::string& text);

}  // namespace feedline::remote::detail
