// Every fault the proxy makes either passes with its retries counted, or fails with an error that names the URL, the
// HTTP status and the server's code and says what to check, without a secret in it: bodies cut short (resumed from
// the first missing byte), SlowDown with Retry-After, server errors, stalls, resets, ranges answered whole, lengths
// that lie, refused signatures, missing keys and buckets, objects replaced while they are read, and listings that
// are not listings.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/remote.h"
#include "remote_test_support.h"

namespace feedline {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using testing::RemoteTest;

constexpr const char* kSlowDown =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code>"
    "<Message>Please reduce your request rate.</Message></Error>";

std::string read_range(const RandomAccessFile& f, int64_t offset, int64_t size) {
  std::string out(static_cast<size_t>(size), '\0');
  f.read_at(offset, out.size(), out.data());
  return out;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// What `f` throws: its message, and its errno-like code.
struct Thrown {
  std::string message = "(no error)";
  int code = 0;
};
constexpr const char* kWrongSecret = "WrongSecretKeyThatMustNeverBePrinted0123";

// What `f` throws; no secret, right or wrong, is ever in it.
Thrown io_error_of(const std::function<void()>& f) {
  Thrown t;
  try {
    f();
  } catch (const IoError& e) {
    t.message = e.what();
    t.code = e.code();
  } catch (const std::exception& e) {
    t.message = std::string("not an IoError: ") + e.what();
  }
  EXPECT_EQ(t.message.find(testing::test_servers().s3_secret_key()), std::string::npos) << t.message;
  EXPECT_EQ(t.message.find(kWrongSecret), std::string::npos) << t.message;
  return t;
}

void expect_holds(const std::string& text, const std::vector<std::string>& parts) {
  for (const auto& p : parts) EXPECT_NE(text.find(p), std::string::npos) << "wanted \"" << p << "\" in: " << text;
}

class RemoteFaults : public RemoteTest {
 protected:
  void SetUp() override {
    RemoteTest::SetUp();
    through_proxy();
  }

  // The object `name` (one of kObjects, each for one test), uploaded with the others on first use; its s3:// URL.
  // `bytes_` holds its bytes.
  std::string object(const std::string& name) {
    static const std::vector<std::pair<std::string, size_t>> kObjects = {
        {"cut.bin", 1 << 20},      {"slowdown.bin", 1000},     {"500.bin", 5000},       {"stall.bin", 20000},
        {"reset.bin", 20000},      {"lie.bin", 100000},        {"exhausted.bin", 1000}, {"signed.bin", 1000},
        {"present.bin", 10},       {"replaced.bin", 200000},   {"replaced-mid.bin", 1 << 20},
        {"region.bin", 10}};
    static bool uploaded = false;
    if (!uploaded) {
      std::vector<std::pair<std::string, std::string>> objects;
      for (const auto& [n, size] : kObjects) objects.emplace_back(key("faults/" + n), bytes_of(n, size));
      testing::put_objects(kBucket, objects);
      uploaded = true;
    }
    for (const auto& [n, size] : kObjects) {
      if (n == name) bytes_ = bytes_of(n, size);
    }
    key_ = key("faults/" + name);
    return testing::s3_url(kBucket, key_);
  }
  static std::string bytes_of(const std::string& name, size_t size) {
    return testing::random_bytes(size, std::hash<std::string>()(name));
  }
  // The proxy's log of requests for the object, once `at_least` have been made and all are done.
  std::vector<json> requests(const std::string& method, size_t at_least = 0) {
    return testing::log_entries(testing::proxy_log("s3", at_least), method, key_);
  }
  void faults(json rules) {
    for (auto& r : rules) r["path"] = key_;
    testing::proxy_faults("s3", rules);
  }

  std::string bytes_;
  std::string key_;
};

TEST_F(RemoteFaults, ABodyCutShortIsResumedFromItsFirstMissingByte) {
  const std::string url = object("cut.bin");
  RandomAccessFile f(url);
  faults(json::array({{{"method", "GET"}, {"action", "cut"}, {"after_bytes", 300000}}}));
  const auto before = remote::stats();
  EXPECT_TRUE(read_range(f, 1000, 600000) == bytes_.substr(1000, 600000));
  const auto cost = testing::stats_since(before);
  EXPECT_EQ(cost.requests, 2);
  EXPECT_EQ(cost.retries, 1);
  EXPECT_EQ(cost.failures, 0);
  const auto gets = requests("GET", 3);
  ASSERT_EQ(gets.size(), 2u);
  EXPECT_EQ(gets[0]["range"], "bytes=1000-600999");
  EXPECT_EQ(gets[0]["fault"], "cut");
  EXPECT_EQ(gets[0]["bytes"], 300000);
  EXPECT_EQ(gets[1]["range"], "bytes=301000-600999");
  EXPECT_EQ(gets[1]["bytes"], 300000);

  // The whole object, read in one request, resumes the same way.
  testing::proxy_reset("s3");
  faults(json::array({{{"method", "GET"}, {"action", "cut"}, {"after_bytes", 123457}, {"times", 2}}}));
  EXPECT_TRUE(read_file(url) == bytes_);
  const auto whole = requests("GET", 3);
  ASSERT_EQ(whole.size(), 3u);
  EXPECT_EQ(whole[0]["range"], "bytes=0-");
  EXPECT_EQ(whole[1]["range"], "bytes=123457-");
  EXPECT_EQ(whole[2]["range"], "bytes=246914-");
}

TEST_F(RemoteFaults, AnHttpBodyCutShortIsResumedToo) {
  const std::string bytes = testing::random_bytes(500000, 7);
  const std::string rel = serve("cut-resume.bin", bytes);
  const std::string url = testing::test_servers().proxy_url("http") + "/" + rel;
  testing::proxy_faults("http", json::array({{{"path", rel}, {"action", "cut"}, {"after_bytes", 100000}}}));
  EXPECT_TRUE(read_file(url) == bytes);
  const auto gets = testing::log_entries(testing::proxy_log("http", 2), "GET", rel);
  ASSERT_EQ(gets.size(), 2u);
  EXPECT_EQ(gets[1]["range"], "bytes=100000-");
}

TEST_F(RemoteFaults, SlowDownWaitsForRetryAfterWithinMaxBackoff) {
  const std::string url = object("slowdown.bin");
  const json slow_down = {{"method", "GET"},
                          {"action", "status"},
                          {"status", 503},
                          {"headers", {{"Retry-After", "1"}}},
                          {"body", kSlowDown}};
  faults(json::array({slow_down}));
  auto before = remote::stats();
  auto start = Clock::now();
  EXPECT_EQ(read_file(url), bytes_);
  const double waited = seconds_since(start);
  EXPECT_GE(waited, 0.95);
  EXPECT_LT(waited, 5.0);
  EXPECT_EQ(testing::stats_since(before).retries, 1);
  EXPECT_EQ(requests("GET", 2).size(), 2u);

  // A Retry-After longer than max_backoff waits max_backoff.
  remote::RemoteOptions o = fast_options();
  o.max_backoff = std::chrono::milliseconds(200);
  remote::set_options(o);
  testing::proxy_reset("s3");
  faults(json::array({slow_down}));
  before = remote::stats();
  start = Clock::now();
  EXPECT_EQ(read_file(url), bytes_);
  const double capped = seconds_since(start);
  EXPECT_GE(capped, 0.19);
  EXPECT_LT(capped, 0.9);
  EXPECT_EQ(testing::stats_since(before).retries, 1);
}

TEST_F(RemoteFaults, ServerErrorsAreRetriedUntilTheAnswerComes) {
  const std::string url = object("500.bin");
  faults(json::array({{{"method", "GET"},
                       {"action", "status"},
                       {"status", 500},
                       {"body", "<Error><Code>InternalError</Code><Message>oops</Message></Error>"},
                       {"times", 2}}}));
  const auto before = remote::stats();
  EXPECT_EQ(read_file(url), bytes_);
  const auto cost = testing::stats_since(before);
  EXPECT_EQ(cost.retries, 2);
  EXPECT_EQ(cost.requests, 3);
  const auto gets = requests("GET", 3);
  ASSERT_EQ(gets.size(), 3u);
  EXPECT_EQ(gets[0]["status"], 500);
  EXPECT_EQ(gets[2]["status"], 206);
}

TEST_F(RemoteFaults, AStallPastTheLowSpeedTimeIsRetried) {
  const std::string url = object("stall.bin");
  remote::RemoteOptions o = fast_options();
  o.low_speed_time = std::chrono::milliseconds(1000);
  remote::set_options(o);
  RandomAccessFile f(url);
  faults(json::array({{{"method", "GET"}, {"action", "stall"}, {"seconds", 3}}}));
  const auto before = remote::stats();
  const auto start = Clock::now();
  EXPECT_TRUE(read_range(f, 100, 10000) == bytes_.substr(100, 10000));
  const double waited = seconds_since(start);
  EXPECT_GE(waited, 0.9);
  EXPECT_LT(waited, 2.9);
  EXPECT_EQ(testing::stats_since(before).retries, 1);
  const auto gets = requests("GET", 3);
  ASSERT_EQ(gets.size(), 2u);
  EXPECT_EQ(gets[0]["fault"], "stall");
}

TEST_F(RemoteFaults, AResetConnectionIsRetried) {
  const std::string url = object("reset.bin");
  RandomAccessFile f(url);
  faults(json::array({{{"method", "GET"}, {"action", "reset"}, {"times", 2}}}));
  const auto before = remote::stats();
  EXPECT_TRUE(read_range(f, 5, 15000) == bytes_.substr(5, 15000));
  // libcurl itself sends a request again on another connection when a reused one dies before answering: one attempt
  // of ours may take both resets, and is counted as one.
  EXPECT_LE(testing::stats_since(before).retries, 2);
  const auto gets = requests("GET", 4);
  ASSERT_EQ(gets.size(), 3u);
  EXPECT_EQ(gets[2]["status"], 206);
  EXPECT_EQ(gets[2]["range"], "bytes=5-15004");
}

// The S3 gateway refuses a request whose signed Range header the proxy took away, so nginx shows what the client
// does with a whole object in answer to a range.
TEST_F(RemoteFaults, ARangeAnsweredWithTheWholeObjectIsCutToTheRange) {
  const std::string bytes = testing::random_bytes(300000, 5);
  const std::string rel = serve("whole.bin", bytes);
  const std::string url = testing::test_servers().proxy_url("http") + "/" + rel;
  RandomAccessFile f(url);
  testing::proxy_faults("http", json::array({{{"path", rel}, {"method", "GET"}, {"action", "ignore_range"},
                                              {"times", 4}}}));
  EXPECT_TRUE(read_range(f, 123456, 1000) == bytes.substr(123456, 1000));
  EXPECT_TRUE(read_range(f, 299000, 1000) == bytes.substr(299000, 1000));
  // Opened for its end: the whole object in answer to a request for the last bytes.
  RandomAccessFile t(url, 4096);
  EXPECT_EQ(t.size(), 300000);
  EXPECT_TRUE(read_range(t, 300000 - 4096, 4096) == bytes.substr(300000 - 4096));
  EXPECT_TRUE(read_file(url) == bytes);
  const auto gets = testing::log_entries(testing::proxy_log("http", 5), "GET", rel);
  ASSERT_EQ(gets.size(), 4u);
  for (const auto& g : gets) {
    EXPECT_EQ(g["fault"], "ignore_range");
    EXPECT_EQ(g["status"], 200);
  }
}

TEST_F(RemoteFaults, ALengthThatLiesIsReadPastOrMadeUpFor) {
  const std::string url = object("lie.bin");
  RandomAccessFile f(url);
  // Longer than the body: every byte asked for arrives before the connection closes short of the lie.
  faults(json::array({{{"method", "GET"}, {"action", "lie_length"}, {"content_length", 20000}}}));
  EXPECT_TRUE(read_range(f, 1000, 10000) == bytes_.substr(1000, 10000));
  // Shorter than the body: the bytes past the lie are asked for again.
  faults(json::array({{{"method", "GET"}, {"action", "lie_length"}, {"content_length", 4000}}}));
  EXPECT_TRUE(read_range(f, 50000, 10000) == bytes_.substr(50000, 10000));
  // The whole object: its size comes from the Content-Range, which the lie leaves as it was.
  faults(json::array({{{"method", "GET"}, {"action", "lie_length"}, {"content_length", 1000}},
                      {{"method", "GET"}, {"action", "lie_length"}, {"content_length", 150000}}}));
  EXPECT_TRUE(read_file(url) == bytes_);
  EXPECT_TRUE(read_file(url) == bytes_);
  const auto gets = requests("GET", 6);
  ASSERT_EQ(gets.size(), 6u) << json(gets).dump();
  EXPECT_EQ(gets[0]["fault"], "lie_length");
  EXPECT_EQ(gets[2]["range"], "bytes=54000-59999");
  EXPECT_EQ(gets[4]["range"], "bytes=1000-");
}

TEST_F(RemoteFaults, AttemptsRunOutIntoAnErrorNamingUrlStatusAndCode) {
  const std::string url = object("exhausted.bin");
  remote::RemoteOptions o = fast_options();
  o.max_attempts = 3;
  remote::set_options(o);
  faults(json::array({{{"method", "GET"}, {"action", "status"}, {"status", 503}, {"body", kSlowDown}, {"times", -1}}}));
  const auto before = remote::stats();
  const Thrown t = io_error_of([&] { read_file(url); });
  expect_holds(t.message, {url, "endpoint " + testing::test_servers().proxy_url("s3"), "HTTP 503", "SlowDown",
                           "Please reduce your request rate.", "after 3 attempts"});
  EXPECT_EQ(t.code, EIO);
  expect_no_secret(t.message);
  const auto cost = testing::stats_since(before);
  EXPECT_EQ(cost.requests, 3);
  EXPECT_EQ(cost.retries, 2);
  EXPECT_EQ(cost.failures, 1);
  EXPECT_EQ(requests("GET", 3).size(), 3u);

  // Connections reset every time: the error says what libcurl saw.
  testing::proxy_reset("s3");
  RandomAccessFile f(url);
  faults(json::array({{{"method", "GET"}, {"action", "reset"}, {"times", -1}}}));
  const Thrown reset = io_error_of([&] { read_range(f, 0, 10); });
  expect_holds(reset.message, {url, "GET of bytes 0-9", "after 3 attempts"});
  expect_no_secret(reset.message);
}

TEST_F(RemoteFaults, AWrongSecretIsRefusedOnceWithAHintAndNoSecret) {
  const std::string url = object("signed.bin");
  const std::string wrong = kWrongSecret;
  ::setenv("AWS_SECRET_ACCESS_KEY", wrong.c_str(), 1);
  const auto before = remote::stats();
  const Thrown t = io_error_of([&] { read_file(url); });
  expect_holds(t.message, {url, "HTTP 403", "SignatureDoesNotMatch", "secret access key from environment"});
  EXPECT_EQ(t.code, EACCES);
  expect_no_secret(t.message);
  EXPECT_EQ(t.message.find(wrong), std::string::npos) << t.message;
  EXPECT_EQ(testing::stats_since(before).retries, 0);
  EXPECT_EQ(requests("GET", 1).size(), 1u);

  // A HEAD has no body to name the code: the status and the credentials' source still come.
  const Thrown head = io_error_of([&] { RandomAccessFile f(url); });
  expect_holds(head.message, {url, "HEAD", "HTTP 403", "environment"});
  EXPECT_EQ(head.code, EACCES);
  EXPECT_EQ(head.message.find(wrong), std::string::npos) << head.message;

  ::setenv("AWS_ACCESS_KEY_ID", "NOSUCHACCESSKEY00000", 1);
  const Thrown unknown = io_error_of([&] { read_file(url); });
  expect_holds(unknown.message, {"HTTP 403", "InvalidAccessKeyId", "does not know the access key id"});
  EXPECT_EQ(unknown.message.find(wrong), std::string::npos) << unknown.message;
}

TEST_F(RemoteFaults, MissingKeysAndBucketsFailAtOnceWithAHint) {
  object("present.bin");
  const std::string missing = testing::s3_url(kBucket, key("faults/absent.bin"));
  const auto before = remote::stats();
  const Thrown get = io_error_of([&] { read_file(missing); });
  expect_holds(get.message, {missing, "HTTP 404", "NoSuchKey", "there is no object '" + key("faults/absent.bin")});
  EXPECT_EQ(get.code, ENOENT);
  const Thrown head = io_error_of([&] { RandomAccessFile f(missing); });
  expect_holds(head.message, {missing, "HTTP 404", "there is no object"});
  EXPECT_EQ(head.code, ENOENT);
  const Thrown tail = io_error_of([&] { RandomAccessFile f(missing, 1000); });
  expect_holds(tail.message, {"HTTP 404", "NoSuchKey"});
  EXPECT_FALSE(remote::exists(missing));
  EXPECT_EQ(testing::stats_since(before).retries, 0);

  const std::string no_bucket = "s3://feedline-no-such-bucket/" + key("x.bin");
  const Thrown bucket = io_error_of([&] { read_file(no_bucket); });
  expect_holds(bucket.message, {no_bucket, "HTTP 404", "NoSuchBucket", "there is no bucket 'feedline-no-such-bucket'"});
  EXPECT_EQ(bucket.code, ENOENT);
  const Thrown listing = io_error_of([&] { remote::list_objects("s3://feedline-no-such-bucket/any/"); });
  expect_holds(listing.message, {"NoSuchBucket", "there is no bucket"});
  EXPECT_EQ(testing::stats_since(before).retries, 0);
  const auto log = testing::proxy_log("s3");
  EXPECT_EQ(log.size(), 6u) << log.dump();  // one request each: nothing retried

  const std::string http = testing::test_servers().proxy_url("http") + "/no-such-file.bin";
  const Thrown web = io_error_of([&] { read_file(http); });
  expect_holds(web.message, {http, "HTTP 404", "no such file"});
  EXPECT_EQ(web.code, ENOENT);
  for (const auto& m : {get.message, head.message, tail.message, bucket.message, listing.message}) expect_no_secret(m);
}

TEST_F(RemoteFaults, AnObjectReplacedWhileOpenIsAnErrorNeverAMix) {
  const std::string url = object("replaced.bin");
  const std::string old_bytes = bytes_;
  RandomAccessFile f(url);
  RandomAccessFile ahead(url);
  ahead.prefetch({{0, 50000}});
  EXPECT_TRUE(read_range(f, 0, 100) == old_bytes.substr(0, 100));
  EXPECT_TRUE(read_range(ahead, 0, 10) == old_bytes.substr(0, 10));
  testing::put_object(kBucket, key_, testing::random_bytes(200000, 99));

  const Thrown t = io_error_of([&] { read_range(f, 100000, 1000); });
  expect_holds(t.message, {url, "changed"});
  expect_no_secret(t.message);
  // What was fetched ahead is the old version, whole; past it, the new version is never read in its place.
  EXPECT_TRUE(read_range(ahead, 40000, 10000) == old_bytes.substr(40000, 10000));
  expect_holds(io_error_of([&] { read_range(ahead, 45000, 10000); }).message, {url, "changed"});
  // Opened again, it is the new version.
  EXPECT_TRUE(read_range(RandomAccessFile(url), 0, 100) == testing::random_bytes(200000, 99).substr(0, 100));
}

TEST_F(RemoteFaults, AnObjectReplacedBetweenTwoAttemptsIsAnError) {
  const std::string url = object("replaced-mid.bin");
  RandomAccessFile f(url);
  // The first attempt is cut; the second waits at the proxy while the object is replaced.
  faults(json::array({{{"method", "GET"}, {"action", "cut"}, {"after_bytes", 100000}},
                      {{"method", "GET"}, {"action", "stall"}, {"seconds", 1.5}}}));
  Thrown t;
  std::thread reader([&] { t = io_error_of([&] { read_range(f, 0, 1 << 20); }); });
  testing::put_object(kBucket, key_, testing::random_bytes(1 << 20, 98));
  reader.join();
  expect_holds(t.message, {url, "changed"});
  const auto gets = requests("GET", 2);
  ASSERT_EQ(gets.size(), 2u);
  EXPECT_EQ(gets[1]["range"], "bytes=100000-1048575");
  EXPECT_EQ(gets[1]["status"], 412);
}

TEST_F(RemoteFaults, AnHttpFileReplacedWhileOpenIsAnError) {
  const std::string rel = serve("replaced.bin", testing::random_bytes(10000, 1));
  const std::string url = testing::test_servers().http_url() + "/" + rel;
  RandomAccessFile f(url);
  EXPECT_TRUE(read_range(f, 0, 10) == testing::random_bytes(10000, 1).substr(0, 10));
  // Another size: nginx's ETag (modification time in seconds, size) changes within the second.
  testing::write_bytes(testing::test_servers().http_root() + "/" + rel, testing::random_bytes(10001, 2));
  expect_holds(io_error_of([&] { read_range(f, 100, 10); }).message, {url, "changed"});
}

TEST_F(RemoteFaults, AListingThatIsNoListingIsAClearError) {
  const std::string prefix = testing::s3_url(kBucket, key("faults/listing/"));
  const auto answer = [&](const std::string& body) {
    testing::proxy_reset("s3");
    testing::proxy_faults("s3", json::array({{{"method", "GET"},
                                              {"query", "list-type=2"},
                                              {"action", "status"},
                                              {"status", 200},
                                              {"headers", {{"Content-Type", "application/xml"}}},
                                              {"body", body},
                                              {"times", -1}}}));
    return io_error_of([&] { remote::list_objects(prefix); });
  };
  const std::string where = "s3://" + std::string(kBucket);
  expect_holds(answer("<html>a login page</html").message, {where, "not a listing (not XML)"});
  expect_holds(answer("<?xml version=\"1.0\"?><Other/>").message, {where, "not a listing (no ListBucketResult)"});
  expect_holds(answer("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>").message,
               {where, "goes on but gives no continuation token"});
  expect_holds(answer("<ListBucketResult><IsTruncated>true</IsTruncated>"
                      "<NextContinuationToken>same</NextContinuationToken></ListBucketResult>")
                   .message,
               {where, "repeats a continuation token"});
  expect_holds(answer("<ListBucketResult><Contents><Key>elsewhere/x</Key><Size>1</Size></Contents>"
                      "</ListBucketResult>")
                   .message,
               {"elsewhere/x", "does not begin with the prefix"});
  expect_holds(answer("<ListBucketResult><Contents><Key>" + key("faults/listing/x") +
                      "</Key><Size>many</Size></Contents></ListBucketResult>")
                   .message,
               {"'many', not a number of bytes"});
}

TEST_F(RemoteFaults, CredentialsInAnHttpUrlNeverReachAnError) {
  const std::string password = "Pa55wordNeverPrinted";
  std::string http = testing::test_servers().http_url();
  http.insert(http.find("://") + 3, "reader:" + password + "@");
  const Thrown missing = io_error_of([&] { read_file(http + "/no-such-file.bin"); });
  expect_holds(missing.message, {"http://***@127.0.0.1", "HTTP 404"});
  EXPECT_EQ(missing.message.find(password), std::string::npos) << missing.message;
  remote::RemoteOptions o = fast_options();
  o.max_attempts = 2;
  remote::set_options(o);
  const Thrown refused = io_error_of([&] { RandomAccessFile f("https://reader:" + password + "@127.0.0.1:1/x"); });
  expect_holds(refused.message, {"https://***@127.0.0.1:1/x", "after 2 attempts"});
  EXPECT_EQ(refused.message.find(password), std::string::npos) << refused.message;
}

// The gateway takes signatures for any region, so the proxy answers as AWS does for a bucket of another region.
TEST_F(RemoteFaults, ABucketInAnotherRegionIsNamedInTheHint) {
  const std::string url = object("region.bin");
  faults(json::array({{{"method", "GET"},
                       {"action", "status"},
                       {"status", 400},
                       {"headers", {{"x-amz-bucket-region", "eu-central-1"}}},
                       {"body", "<Error><Code>AuthorizationHeaderMalformed</Code><Message>the region 'us-east-1' is "
                                "wrong; expecting 'eu-central-1'</Message><Region>eu-central-1</Region></Error>"}},
                      {{"method", "HEAD"},
                       {"action", "status"},
                       {"status", 301},
                       {"headers", {{"x-amz-bucket-region", "eu-central-1"}}}}}));
  const Thrown get = io_error_of([&] { read_file(url); });
  expect_holds(get.message, {url, "HTTP 400 AuthorizationHeaderMalformed", "the bucket is in region eu-central-1",
                             "from AWS_REGION", "set AWS_REGION=eu-central-1"});
  const Thrown head = io_error_of([&] { RandomAccessFile f(url); });
  expect_holds(head.message, {url, "HTTP 301", "set AWS_REGION=eu-central-1"});
  expect_no_secret(get.message);
  EXPECT_EQ(requests("GET", 2).size(), 1u);
}

}  // namespace
}  // namespace feedline
