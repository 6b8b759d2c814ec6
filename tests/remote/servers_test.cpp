// The remote tests' servers themselves: the S3 gateway takes uploads from an independent client and answers signed
// range requests, nginx serves HTTPS with the test CA, and each fault of the proxy does to a client what it says.
#include <curl/curl.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <utility>

#include "remote_servers.h"
#include "test_paths.h"

namespace feedline {
namespace {

using testing::proxy_faults;
using testing::proxy_log;
using testing::proxy_pending;
using testing::proxy_reset;
using testing::run_s3tool;
using testing::test_servers;

struct Fetched {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::string headers;
  std::string error;
};

struct FetchOptions {
  std::string range;            // "first-last", sent by libcurl as a Range header
  std::string ca_file;          // for https://
  bool sign = false;            // SigV4 with the S3 gateway's keys
  std::string secret_override;  // a secret key to sign with instead of the right one
  long timeout_ms = 30000;

  FetchOptions& with_range(std::string r) { range = std::move(r); return *this; }
  FetchOptions& with_ca(std::string f) { ca_file = std::move(f); return *this; }
  FetchOptions& signed_s3(std::string secret = "") { sign = true; secret_override = std::move(secret); return *this; }
  FetchOptions& with_timeout_ms(long ms) { timeout_ms = ms; return *this; }
};

size_t append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

Fetched fetch(const std::string& url, const FetchOptions& o = {}) {
  CURL* curl = curl_easy_init();
  Fetched f;
  char error[CURL_ERROR_SIZE] = "";
  curl_slist* headers = nullptr;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &f.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, append);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &f.headers);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, o.timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (!o.range.empty()) curl_easy_setopt(curl, CURLOPT_RANGE, o.range.c_str());
  if (!o.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, o.ca_file.c_str());
  const std::string sigv4 = "aws:amz:" + (o.sign ? test_servers().s3_region() : std::string()) + ":s3";
  const std::string user = o.sign ? test_servers().s3_access_key() : "";
  const std::string secret = o.secret_override.empty() && o.sign ? test_servers().s3_secret_key() : o.secret_override;
  if (o.sign) {
    curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, sigv4.c_str());
    curl_easy_setopt(curl, CURLOPT_USERNAME, user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, secret.c_str());
    // S3 wants the payload's hash in a header of its own, which this libcurl does not add; it signs it.
    headers = curl_slist_append(headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  }
  f.code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &f.status);
  f.error = error;
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return f;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Bytes whose every slice is recognisable: position i holds 'a' + i % 26.
std::string pattern(size_t n) {
  std::string s(n, ' ');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 26);
  return s;
}

class RemoteServers : public ::testing::Test {
 protected:
  void SetUp() override {
    proxy_reset("s3");
    proxy_reset("http");
  }

  // A file under nginx's root, and its URL through the http proxy.
  static std::string served(const std::string& name, const std::string& bytes) {
    write_file(test_servers().http_root() + "/" + name, bytes);
    return test_servers().proxy_url("http") + "/" + name;
  }
};

TEST_F(RemoteServers, S3TakesUploadsListsThemAndAnswersSignedRangesThroughTheProxy) {
  const auto& servers = test_servers();
  ASSERT_EQ(servers.info["s3"]["server"], "radosgw");
  const std::string local = testing::scratch_dir("servers_s3") + "/object.bin";
  const std::string bytes = pattern(100000);
  write_file(local, bytes);

  auto made = run_s3tool({"mkbucket", "servers-test"});
  ASSERT_EQ(made.exit_code, 0) << made.output;
  auto put = run_s3tool({"put", "servers-test", "dir/object.bin", local});
  ASSERT_EQ(put.exit_code, 0) << put.output;
  auto listed = run_s3tool({"ls", "servers-test", "dir/"});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_EQ(listed.output, "dir/object.bin 100000\n");
  auto etag = run_s3tool({"etag", "servers-test", "dir/object.bin"});
  ASSERT_EQ(etag.exit_code, 0) << etag.output;
  EXPECT_EQ(etag.output, put.output);

  const std::string url = servers.proxy_url("s3") + "/servers-test/dir/object.bin";
  const Fetched got = fetch(url, FetchOptions().with_range("1000-1999").signed_s3());
  ASSERT_EQ(got.code, CURLE_OK) << got.error;
  EXPECT_EQ(got.status, 206) << got.body;
  EXPECT_EQ(got.body, bytes.substr(1000, 1000));

  if (servers.s3_verifies_signatures()) {
    const Fetched forged = fetch(url, FetchOptions().signed_s3("not-the-secret"));
    EXPECT_EQ(forged.status, 403) << forged.body;
    EXPECT_NE(forged.body.find("SignatureDoesNotMatch"), std::string::npos) << forged.body;
  }
  const auto log = proxy_log("s3", servers.s3_verifies_signatures() ? 2 : 1);
  ASSERT_GE(log.size(), 1u) << log.dump();
  EXPECT_EQ(log[0]["method"], "GET");
  EXPECT_EQ(log[0]["path"], "/servers-test/dir/object.bin");
  EXPECT_EQ(log[0]["range"], "bytes=1000-1999");
  EXPECT_EQ(log[0]["status"], 206);
  EXPECT_EQ(log[0]["bytes"], 1000);
  EXPECT_TRUE(log[0]["fault"].is_null());
}

TEST_F(RemoteServers, NginxServesHttpsWithTheTestCaAndRangesWithETags) {
  const auto& servers = test_servers();
  write_file(servers.http_root() + "/tls.txt", "over TLS");
  const Fetched got = fetch(servers.https_url() + "/tls.txt", FetchOptions().with_ca(servers.ca_file()));
  ASSERT_EQ(got.code, CURLE_OK) << got.error;
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, "over TLS");
  EXPECT_NE(got.headers.find("ETag: "), std::string::npos) << got.headers;

  const Fetched ranged = fetch(servers.http_url() + "/tls.txt", FetchOptions().with_range("5-7"));
  EXPECT_EQ(ranged.status, 206);
  EXPECT_EQ(ranged.body, "TLS");

  // Without the test CA the certificate is a stranger's.
  const Fetched unverified = fetch(servers.https_url() + "/tls.txt", FetchOptions().with_ca("/dev/null"));
  EXPECT_NE(unverified.code, CURLE_OK);
}

TEST_F(RemoteServers, CutSendsTheTrueLengthThenClosesShort) {
  const std::string url = served("cut.bin", pattern(50000));
  proxy_faults("http", R"([{"path": "cut.bin", "action": "cut", "after_bytes": 1234}])");
  const Fetched got = fetch(url);
  EXPECT_EQ(got.code, CURLE_PARTIAL_FILE) << got.error;
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, pattern(50000).substr(0, 1234));
  EXPECT_NE(got.headers.find("Content-Length: 50000"), std::string::npos) << got.headers;
  const auto log = proxy_log("http", 1);
  ASSERT_EQ(log.size(), 1u) << log.dump();
  EXPECT_EQ(log[0]["fault"], "cut");
  EXPECT_EQ(log[0]["bytes"], 1234);
  // The rule was used up: the next request goes through whole.
  EXPECT_EQ(fetch(url).body.size(), 50000u);
}

TEST_F(RemoteServers, StatusAnswersWithoutTheUpstreamThenPassesThrough) {
  const std::string url = served("status.txt", "fine");
  proxy_faults("http", nlohmann::json::array({{{"method", "GET"},
                                                {"action", "status"},
                                                {"status", 503},
                                                {"headers", {{"Retry-After", "1"}}},
                                                {"body", "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code>"
                                                         "<Message>Reduce your request rate.</Message></Error>"},
                                                {"times", 2}}}));
  for (int i = 0; i < 2; ++i) {
    const Fetched got = fetch(url);
    EXPECT_EQ(got.code, CURLE_OK);
    EXPECT_EQ(got.status, 503);
    EXPECT_NE(got.headers.find("Retry-After: 1"), std::string::npos) << got.headers;
    EXPECT_NE(got.body.find("<Code>SlowDown</Code>"), std::string::npos) << got.body;
  }
  const Fetched third = fetch(url);
  EXPECT_EQ(third.status, 200);
  EXPECT_EQ(third.body, "fine");
  const auto log = proxy_log("http", 3);
  ASSERT_EQ(log.size(), 3u) << log.dump();
  EXPECT_EQ(log[0]["status"], 503);
  EXPECT_EQ(log[1]["fault"], "status");
  EXPECT_TRUE(log[2]["fault"].is_null());
  EXPECT_TRUE(proxy_pending("http").empty());
}

TEST_F(RemoteServers, IgnoreRangeAnswersTheWholeObject) {
  const std::string url = served("ignore.txt", "0123456789");
  proxy_faults("http", R"([{"range": true, "action": "ignore_range"}])");
  const Fetched got = fetch(url, FetchOptions().with_range("2-4"));
  EXPECT_EQ(got.code, CURLE_OK) << got.error;
  EXPECT_EQ(got.status, 200);
  EXPECT_EQ(got.body, "0123456789");
  const Fetched next = fetch(url, FetchOptions().with_range("2-4"));
  EXPECT_EQ(next.status, 206);
  EXPECT_EQ(next.body, "234");
  const auto log = proxy_log("http", 2);
  ASSERT_EQ(log.size(), 2u) << log.dump();
  EXPECT_EQ(log[0]["fault"], "ignore_range");
  EXPECT_EQ(log[0]["range"], "bytes=2-4");
  EXPECT_EQ(log[0]["status"], 200);
}

TEST_F(RemoteServers, LieLengthAnnouncesTheLieAndSendsTheTruth) {
  const std::string url = served("lie.txt", "0123456789");
  proxy_faults("http", R"([{"action": "lie_length", "content_length": 20},
                           {"action": "lie_length", "content_length": 4}])");
  const Fetched longer = fetch(url);
  EXPECT_EQ(longer.code, CURLE_PARTIAL_FILE) << longer.error;
  EXPECT_EQ(longer.body, "0123456789");
  const Fetched shorter = fetch(url);
  EXPECT_EQ(shorter.code, CURLE_OK) << shorter.error;
  EXPECT_EQ(shorter.body, "0123");
  const auto log = proxy_log("http", 2);
  ASSERT_EQ(log.size(), 2u) << log.dump();
  EXPECT_EQ(log[0]["fault"], "lie_length");
  EXPECT_EQ(log[0]["bytes"], 10);
}

TEST_F(RemoteServers, ResetClosesWithoutAnAnswer) {
  const std::string url = served("reset.txt", "never seen");
  proxy_faults("http", R"([{"path": "reset", "action": "reset"}])");
  const Fetched got = fetch(url);
  EXPECT_TRUE(got.code == CURLE_RECV_ERROR || got.code == CURLE_GOT_NOTHING) << got.code << " " << got.error;
  EXPECT_EQ(got.status, 0);
  EXPECT_TRUE(got.body.empty());
  const auto log = proxy_log("http", 1);
  ASSERT_EQ(log.size(), 1u) << log.dump();
  EXPECT_EQ(log[0]["fault"], "reset");
  EXPECT_TRUE(log[0]["status"].is_null());
}

TEST_F(RemoteServers, StallHoldsTheRequestPastAClientTimeout) {
  const std::string url = served("stall.txt", "late");
  proxy_faults("http", R"([{"action": "stall", "seconds": 2}, {"action": "stall", "seconds": 0.5}])");
  const Fetched timed_out = fetch(url, FetchOptions().with_timeout_ms(500));
  EXPECT_EQ(timed_out.code, CURLE_OPERATION_TIMEDOUT) << timed_out.error;
  const auto start = std::chrono::steady_clock::now();
  const Fetched patient = fetch(url);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(450));
  EXPECT_EQ(patient.code, CURLE_OK) << patient.error;
  EXPECT_EQ(patient.body, "late");
  // The first request is done once its stall has ended and its answer met the closed connection.
  const auto log = proxy_log("http", 2);
  ASSERT_EQ(log.size(), 2u) << log.dump();
  EXPECT_EQ(log[0]["fault"], "stall");
  EXPECT_EQ(log[1]["fault"], "stall");
}

}  // namespace
}  // namespace feedline
