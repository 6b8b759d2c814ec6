// The remote layer without a network: URLs, the AWS configuration as the AWS tools read it, merged ranges, S3's error
// documents. The requests themselves are tested against real servers (tests/remote/).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/remote.h"
#include "io/remote/config.h"
#include "io/remote/fetch.h"
#include "io/remote/url.h"
#include "test_paths.h"

namespace feedline::remote {
namespace {

using detail::parse_url;
using detail::Scheme;

// Sets environment variables for one test and puts back what was there.
class ScopedEnv {
 public:
  using Values = std::map<std::string, std::optional<std::string>>;
  explicit ScopedEnv(Values values) {
    for (const char* name : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                             "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_PROFILE",
                             "AWS_DEFAULT_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
                             "AWS_NO_SIGN_REQUEST", "AWS_S3_ADDRESSING_STYLE", "AWS_CA_BUNDLE", "CURL_CA_BUNDLE"}) {
      if (values.count(name) == 0) values[name] = std::nullopt;
    }
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old == nullptr ? std::nullopt : std::optional<std::string>(old);
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(RemoteUrl, TellsRemotePathsFromLocalOnes) {
  for (const char* url : {"s3://b/k", "S3://bucket/key", "gs://bucket/x", "http://h/x", "HTTPS://h/x"}) {
    EXPECT_TRUE(is_remote_path(url)) << url;
  }
  for (const char* path : {"data/x.parquet", "/abs/s3://x", "s3:/b/k", "file:///x", "", "http:/x"}) {
    EXPECT_FALSE(is_remote_path(path)) << path;
  }
}

TEST(RemoteUrl, ParsesBucketsAndKeys) {
  auto u = parse_url("s3://my-bucket/a/b c/d.parquet");
  EXPECT_EQ(u.scheme, Scheme::kS3);
  EXPECT_EQ(u.bucket, "my-bucket");
  EXPECT_EQ(u.key, "a/b c/d.parquet");
  u = parse_url("gs://bucket.with.dots");
  EXPECT_EQ(u.scheme, Scheme::kGs);
  EXPECT_EQ(u.key, "");
  u = parse_url("https://user:secret@host:8443/x");
  EXPECT_EQ(u.scheme, Scheme::kHttps);
  EXPECT_EQ(u.text.find("secret"), std::string::npos) << u.text;
  EXPECT_EQ(u.original, "https://user:secret@host:8443/x");
  for (const char* bad : {"s3://", "s3:///key", "s3://AB/key", "s3://b/key", "s3://bucket$/k", "https:///x"}) {
    EXPECT_THROW(parse_url(bad), InvalidArgument) << bad;
  }
  try {
    parse_url("s3://Upper/key");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'Upper' is not a bucket name"), std::string::npos) << e.what();
  }
}

TEST(RemoteUrl, EncodesAsSigV4Wants) {
  EXPECT_EQ(detail::uri_encode("a b/c+d=e~f_g.h-i", true), "a%20b/c%2Bd%3De~f_g.h-i");
  EXPECT_EQ(detail::uri_encode("a/b", false), "a%2Fb");
  EXPECT_EQ(detail::uri_encode("\xc3\xa9", true), "%C3%A9");
  EXPECT_EQ(detail::join_url("s3://b/dir/", "/x.tar"), "s3://b/dir/x.tar");
  EXPECT_EQ(detail::join_url("s3://b", "x"), "s3://b/x");
}

TEST(RemoteConfig, ReadsIniFilesAsTheAwsToolsWriteThem) {
  const auto sections = detail::parse_ini(
      "# comment\n[default]\naws_access_key_id = AKIA1\n; another\n[profile dev]\nregion=eu-west-1\ns3 =\n"
      "  addressing_style = path\n  endpoint_url = http://127.0.0.1:9000\nother = x\n");
  ASSERT_EQ(sections.size(), 2u);
  EXPECT_EQ(*sections[0].get("aws_access_key_id"), "AKIA1");
  EXPECT_EQ(*sections[1].get("region"), "eu-west-1");
  EXPECT_EQ(*sections[1].get("s3.addressing_style"), "path");
  EXPECT_EQ(*sections[1].get("s3.endpoint_url"), "http://127.0.0.1:9000");
  EXPECT_EQ(*sections[1].get("other"), "x");
  EXPECT_EQ(sections[1].get("addressing_style"), nullptr);
}

TEST(RemoteConfig, TakesTheEnvironmentFirst) {
  ScopedEnv env(ScopedEnv::Values{{"AWS_ACCESS_KEY_ID", "AKIAENV"}, {"AWS_SECRET_ACCESS_KEY", "s3cr3t"},
                 {"AWS_SESSION_TOKEN", "tok"}, {"AWS_REGION", "eu-central-1"},
                 {"AWS_ENDPOINT_URL", "http://127.0.0.1:9000/"}, {"HOME", "/nonexistent"}});
  const auto r = detail::resolve(parse_url("s3://bucket/key"));
  EXPECT_TRUE(r.config.signed_requests);
  EXPECT_EQ(r.config.access_key_id, "AKIAENV");
  EXPECT_EQ(r.secrets.secret_access_key, "s3cr3t");
  EXPECT_EQ(r.secrets.session_token, "tok");
  EXPECT_TRUE(r.config.has_session_token);
  EXPECT_EQ(r.config.region, "eu-central-1");
  EXPECT_EQ(r.config.endpoint, "http://127.0.0.1:9000");
  EXPECT_TRUE(r.config.path_style) << "a custom endpoint is addressed path-style";
  EXPECT_EQ(detail::object_request_url(parse_url("s3://bucket/a b"), r.config), "http://127.0.0.1:9000/bucket/a%20b");
  EXPECT_EQ(r.config.credentials_from, "environment");
}

TEST(RemoteConfig, ReadsAProfileFromTheAwsFiles) {
  const std::string dir = testing::scratch_dir("remote_profiles");
  write_text(dir + "/credentials",
             "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = d\n"
             "[dev]\naws_access_key_id = AKIADEV\naws_secret_access_key = devsecret\naws_session_token = t\n");
  write_text(dir + "/config", "[default]\nregion = us-west-2\n[profile dev]\nregion = ap-south-1\ns3 =\n"
                              "  addressing_style = virtual\n");
  {
    ScopedEnv env(ScopedEnv::Values{{"AWS_SHARED_CREDENTIALS_FILE", dir + "/credentials"}, {"AWS_CONFIG_FILE", dir + "/config"}});
    const auto r = detail::resolve(parse_url("s3://bucket/key"));
    EXPECT_EQ(r.config.access_key_id, "AKIADEFAULT");
    EXPECT_EQ(r.config.region, "us-west-2");
    EXPECT_EQ(r.config.endpoint, "https://s3.us-west-2.amazonaws.com");
    EXPECT_FALSE(r.config.path_style);
    EXPECT_EQ(detail::object_request_url(parse_url("s3://bucket/k"), r.config),
              "https://bucket.s3.us-west-2.amazonaws.com/k");
    EXPECT_NE(r.config.credentials_from.find("[default]"), std::string::npos) << r.config.credentials_from;
  }
  {
    ScopedEnv env(ScopedEnv::Values{{"AWS_SHARED_CREDENTIALS_FILE", dir + "/credentials"}, {"AWS_CONFIG_FILE", dir + "/config"},
                   {"AWS_PROFILE", "dev"}, {"AWS_ENDPOINT_URL_S3", "http://127.0.0.1:1"}});
    const auto r = detail::resolve(parse_url("s3://bucket/key"));
    EXPECT_EQ(r.config.access_key_id, "AKIADEV");
    EXPECT_EQ(r.secrets.session_token, "t");
    EXPECT_EQ(r.config.region, "ap-south-1");
    EXPECT_FALSE(r.config.path_style) << "the profile asks for virtual-hosted addressing";
    EXPECT_EQ(detail::object_request_url(parse_url("s3://bucket/k"), r.config), "http://bucket.127.0.0.1:1/k");
  }
  {
    ScopedEnv env(ScopedEnv::Values{{"AWS_SHARED_CREDENTIALS_FILE", dir + "/credentials"}, {"AWS_CONFIG_FILE", dir + "/config"},
                   {"AWS_PROFILE", "nosuch"}});
    try {
      detail::resolve(parse_url("s3://bucket/key"));
      FAIL();
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("'nosuch'"), std::string::npos) << e.what();
    }
  }
  {
    ScopedEnv env(ScopedEnv::Values{{"AWS_SHARED_CREDENTIALS_FILE", dir + "/credentials"}, {"AWS_NO_SIGN_REQUEST", "true"}});
    EXPECT_FALSE(detail::resolve(parse_url("s3://bucket/key")).config.signed_requests);
  }
}

TEST(RemoteConfig, RefusesHalfAKeyPairAndABadEndpointWithoutShowingSecrets) {
  {
    ScopedEnv env(ScopedEnv::Values{{"AWS_SECRET_ACCESS_KEY", "topsecret"}, {"HOME", "/nonexistent"}});
    try {
      detail::resolve(parse_url("s3://bucket/key"));
      FAIL();
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("not AWS_ACCESS_KEY_ID"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("topsecret"), std::string::npos) << e.what();
    }
  }
  {
    ScopedEnv env(ScopedEnv::Values{{"AWS_ENDPOINT_URL", "ftp://x"}, {"HOME", "/nonexistent"}});
    EXPECT_THROW(detail::resolve(parse_url("s3://bucket/key")), InvalidArgument);
  }
  {
    ScopedEnv env(ScopedEnv::Values{{"HOME", "/nonexistent"}});
    const auto r = detail::resolve(parse_url("s3://bucket/key"));
    EXPECT_FALSE(r.config.signed_requests) << "no credentials anywhere: a public bucket, unsigned";
    EXPECT_EQ(r.config.region, "us-east-1");
    const auto g = detail::resolve(parse_url("gs://bucket/key"));
    EXPECT_EQ(g.config.endpoint, "https://storage.googleapis.com");
  }
}

TEST(RemoteRanges, MergesAsArrowDoes) {
  using R = ByteRange;
  const auto same = [](const std::vector<R>& a, const std::vector<R>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].offset != b[i].offset || a[i].size != b[i].size) return false;
    }
    return true;
  };
  // Unsorted input, a hole under the limit, one over it, an overlap, an empty range.
  auto got = coalesce_ranges({{300, 50}, {0, 100}, {100 + 8, 50}, {1000, 10}, {1005, 20}, {500, 0}}, 8, 1 << 20);
  EXPECT_TRUE(same(got, {{0, 158}, {300, 50}, {1000, 25}}));
  // The limit stops merging across holes; overlapping ranges still join; a range alone above it is cut evenly.
  got = coalesce_ranges({{0, 60}, {61, 60}}, 8, 100);
  EXPECT_TRUE(same(got, {{0, 60}, {61, 60}}));
  got = coalesce_ranges({{0, 250}}, 8, 100);
  EXPECT_TRUE(same(got, {{0, 84}, {84, 84}, {168, 82}}));
  // Every byte asked for is in exactly one output range.
  std::vector<R> many;
  for (int i = 0; i < 200; ++i) many.push_back({i * 37 % 5000, 5 + i % 13});
  got = coalesce_ranges(many, 16, 300);
  for (size_t i = 1; i < got.size(); ++i) EXPECT_LE(got[i - 1].end(), got[i].offset);
  for (const R& r : got) EXPECT_LE(r.size, 300);
  for (const R& want : many) {
    for (int64_t b = want.offset; b < want.end(); ++b) {
      int holders = 0;
      for (const R& r : got) holders += r.offset <= b && b < r.end();
      ASSERT_EQ(holders, 1) << "byte " << b;
    }
  }
}

TEST(RemoteErrors, ReadsS3ErrorDocuments) {
  if (!detail::remote_built()) GTEST_SKIP() << "a build without libcurl and pugixml";
  const auto e = detail::parse_s3_error(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code><Message>The specified key does not "
      "exist.</Message><Key>a/b</Key><Region>eu-west-1</Region></Error>");
  EXPECT_EQ(e.code, "NoSuchKey");
  EXPECT_EQ(e.message, "The specified key does not exist.");
  EXPECT_EQ(e.region, "eu-west-1");
  EXPECT_EQ(detail::parse_s3_error("<html>502 Bad Gateway</html>").code, "");
  EXPECT_EQ(detail::parse_s3_error("not xml <<<").code, "");
  EXPECT_EQ(detail::parse_s3_error("").code, "");
}

TEST(RemoteOptions, RefusesValuesOutOfRange) {
  const RemoteOptions saved = options();
  RemoteOptions o;
  o.max_attempts = 0;
  EXPECT_THROW(set_options(o), InvalidArgument);
  o = RemoteOptions();
  o.cache_limit = 0;
  EXPECT_THROW(set_options(o), InvalidArgument);
  o = RemoteOptions();
  o.max_in_flight = 3;
  set_options(o);
  EXPECT_EQ(options().max_in_flight, 3);
  set_options(saved);
}

TEST(RemoteFiles, LocalWritersRefuseAUrl) {
  EXPECT_THROW(AtomicFile("s3://bucket/out.parquet"), InvalidArgument);
}

}  // namespace
}  // namespace feedline::remote
