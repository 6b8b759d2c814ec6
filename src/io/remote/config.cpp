#include "io/remote/config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "feedline/io/error.h"

namespace feedline::remote::detail {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

std::string trim(std::string s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return {};
  const size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

std::string home_path(const std::string& tail) {
  const std::string home = env("HOME");
  return home.empty() ? std::string() : home + "/" + tail;
}

std::string read_text(const std::string& path) {
  if (path.empty()) return {};
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const IniSection* find_section(const std::vector<IniSection>& sections, const std::string& name) {
  for (const auto& s : sections) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool truthy(const std::string& v) { return v == "true" || v == "1" || v == "TRUE" || v == "True" || v == "yes"; }

void check_http_url(const std::string& value, const std::string& from) {
  if (value.rfind("http://", 0) != 0 && value.rfind("https://", 0) != 0) {
    throw InvalidArgument(from + ": '" + redact_url(value) + "' is not an http:// or https:// URL");
  }
}

}  // namespace

const std::string* IniSection::get(const std::string& key) const {
  for (const auto& [k, v] : values) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::vector<IniSection> parse_ini(const std::string& text) {
  std::vector<IniSection> sections;
  std::istringstream in(text);
  std::string line;
  std::string parent;  // a key whose value is a sub-section, while indented lines follow it
  while (std::getline(in, line)) {
    const bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t.front() == '[' && t.back() == ']') {
      sections.push_back({trim(t.substr(1, t.size() - 2)), {}});
      parent.clear();
      continue;
    }
    if (sections.empty()) continue;  // lines before any section belong to none
    const size_t eq = t.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = trim(t.substr(0, eq));
    const std::string value = trim(t.substr(eq + 1));
    if (indented && !parent.empty()) {
      sections.back().values.emplace_back(parent + "." + key, value);
      continue;
    }
    parent = value.empty() ? key : std::string();
    if (!value.empty()) sections.back().values.emplace_back(key, value);
  }
  return sections;
}

Resolved resolve(const Url& url) {
  Resolved r;
  RemoteConfig& c = r.config;
  c.ca_bundle = env("AWS_CA_BUNDLE");
  if (c.ca_bundle.empty()) c.ca_bundle = env("CURL_CA_BUNDLE");
  if (!url.object_store()) return r;

  c.profile = env("AWS_PROFILE");
  const bool profile_named = !c.profile.empty();
  if (c.profile.empty()) c.profile = env("AWS_DEFAULT_PROFILE");
  if (c.profile.empty()) c.profile = "default";
  std::string credentials_file = env("AWS_SHARED_CREDENTIALS_FILE");
  if (credentials_file.empty()) credentials_file = home_path(".aws/credentials");
  std::string config_file = env("AWS_CONFIG_FILE");
  if (config_file.empty()) config_file = home_path(".aws/config");
  const auto credentials = parse_ini(read_text(credentials_file));
  const auto config = parse_ini(read_text(config_file));
  const IniSection* cred_section = find_section(credentials, c.profile);
  const IniSection* config_section =
      find_section(config, c.profile == "default" ? std::string("default") : "profile " + c.profile);
  if (config_section == nullptr && c.profile != "default") config_section = find_section(config, c.profile);
  if (profile_named && cred_section == nullptr && config_section == nullptr) {
    throw InvalidArgument("AWS_PROFILE names the profile '" + c.profile + "', which neither " + credentials_file +
                          " nor " + config_file + " holds");
  }
  const auto setting = [&](const std::string& key, std::string* from) -> std::string {
    for (const IniSection* s : {cred_section, config_section}) {
      if (s == nullptr) continue;
      if (const std::string* v = s->get(key)) {
        *from = (s == cred_section ? credentials_file : config_file) + " [" + s->name + "]";
        return *v;
      }
    }
    return {};
  };

  // Credentials: both keys from the environment, else both from the profile.
  std::string key_id = env("AWS_ACCESS_KEY_ID");
  std::string secret = env("AWS_SECRET_ACCESS_KEY");
  if (key_id.empty() != secret.empty()) {
    throw InvalidArgument(std::string("the environment sets ") +
                          (key_id.empty() ? "AWS_SECRET_ACCESS_KEY but not AWS_ACCESS_KEY_ID"
                                          : "AWS_ACCESS_KEY_ID but not AWS_SECRET_ACCESS_KEY") +
                          ": set both, or neither to read the profile's");
  }
  if (!key_id.empty()) {
    c.credentials_from = "environment";
    r.secrets.session_token = env("AWS_SESSION_TOKEN");
  } else {
    std::string from;
    key_id = setting("aws_access_key_id", &from);
    std::string secret_from;
    secret = setting("aws_secret_access_key", &secret_from);
    if (key_id.empty() != secret.empty()) {
      throw InvalidArgument((key_id.empty() ? secret_from : from) + " holds only one of aws_access_key_id and " +
                            "aws_secret_access_key");
    }
    if (!key_id.empty()) {
      c.credentials_from = from;
      std::string token_from;
      r.secrets.session_token = setting("aws_session_token", &token_from);
    }
  }
  if (truthy(env("AWS_NO_SIGN_REQUEST"))) {
    key_id.clear();
    secret.clear();
    r.secrets.session_token.clear();
    c.credentials_from = "none (AWS_NO_SIGN_REQUEST)";
  }
  c.signed_requests = !key_id.empty();
  if (!c.signed_requests && c.credentials_from.empty()) c.credentials_from = "none: requests go unsigned";
  c.access_key_id = key_id;
  r.secrets.secret_access_key = secret;
  c.has_session_token = !r.secrets.session_token.empty();

  // Region.
  c.region = env("AWS_REGION");
  c.region_from = "AWS_REGION";
  if (c.region.empty()) {
    c.region = env("AWS_DEFAULT_REGION");
    c.region_from = "AWS_DEFAULT_REGION";
  }
  if (c.region.empty()) c.region = setting("region", &c.region_from);
  if (c.region.empty()) {
    c.region = url.scheme == Scheme::kGs ? "auto" : "us-east-1";
    c.region_from = "default";
  }

  // Endpoint and addressing.
  std::string endpoint = env("AWS_ENDPOINT_URL_S3");
  c.endpoint_from = "AWS_ENDPOINT_URL_S3";
  if (endpoint.empty()) {
    endpoint = env("AWS_ENDPOINT_URL");
    c.endpoint_from = "AWS_ENDPOINT_URL";
  }
  if (endpoint.empty()) {
    endpoint = setting("s3.endpoint_url", &c.endpoint_from);
    if (endpoint.empty()) endpoint = setting("endpoint_url", &c.endpoint_from);
  }
  bool custom = !endpoint.empty();
  if (custom) {
    check_http_url(endpoint, c.endpoint_from);
    while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  } else if (url.scheme == Scheme::kGs) {
    endpoint = "https://storage.googleapis.com";
    c.endpoint_from = "default for gs://";
  } else {
    endpoint = "https://s3." + c.region + ".amazonaws.com";
    c.endpoint_from = "default for the region";
  }
  c.endpoint = endpoint;
  std::string style = env("AWS_S3_ADDRESSING_STYLE");
  if (style.empty()) {
    std::string ignored;
    style = setting("s3.addressing_style", &ignored);
  }
  if (style == "path") {
    c.path_style = true;
  } else if (style == "virtual") {
    c.path_style = false;
  } else if (!style.empty() && style != "auto") {
    throw InvalidArgument("AWS_S3_ADDRESSING_STYLE: '" + style + "' is none of path, virtual, auto");
  } else {
    // Virtual-hosted needs the bucket in a DNS name: AWS's and GCS's endpoints; path-style for a custom endpoint
    // (MinIO, Ceph, a local server) and for bucket names with dots over HTTPS (the certificate covers one level).
    c.path_style = custom || url.bucket.find('.') != std::string::npos;
  }
  return r;
}

std::string object_request_url(const Url& url, const RemoteConfig& config, const std::string& query) {
  std::string out;
  if (!url.object_store()) {
    out = url.original;
  } else if (config.path_style) {
    // A bucket's own requests (listings) go to "/bucket", as AWS's SDKs send them.
    out = config.endpoint + "/" + url.bucket + (url.key.empty() ? "" : "/" + uri_encode(url.key, true));
  } else {
    const size_t scheme_end = config.endpoint.find("://") + 3;
    out = config.endpoint.substr(0, scheme_end) + url.bucket + "." + config.endpoint.substr(scheme_end) + "/" +
          uri_encode(url.key, true);
  }
  if (!query.empty()) out += (out.find('?') == std::string::npos ? "?" : "&") + query;
  return out;
}

}  // namespace feedline::remote::detail
