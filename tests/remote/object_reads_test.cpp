// Remote reads return the bytes the servers hold: objects of several sizes read whole, at random offsets and through
// ranges fetched ahead, from the S3 gateway (directly and through the fault proxy) and from nginx (HTTP, HTTPS, and
// HTTP through the proxy); keys that need encoding; listings under a prefix and over many pages.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "feedline/io/file.h"
#include "feedline/io/remote.h"
#include "io/remote/object.h"
#include "remote_test_support.h"

namespace feedline {
namespace {

using testing::RemoteTest;

// Compares without printing megabytes: the first differing offset, or the sizes.
::testing::AssertionResult same_bytes(const std::string& expected, const std::string& got) {
  if (expected == got) return ::testing::AssertionSuccess();
  if (expected.size() != got.size()) {
    return ::testing::AssertionFailure() << "got " << got.size() << " bytes, expected " << expected.size();
  }
  const auto at = std::mismatch(expected.begin(), expected.end(), got.begin()).first - expected.begin();
  return ::testing::AssertionFailure() << "bytes differ from offset " << at << " of " << expected.size();
}

std::string read_range(const RandomAccessFile& f, int64_t offset, int64_t size) {
  std::string out(static_cast<size_t>(size), '\0');
  f.read_at(offset, out.size(), out.data());
  return out;
}

// Reads `url` every way a reader does and compares with `bytes`: whole, at random offsets, within ranges fetched
// ahead, and opened with a tail request (as the Parquet reader opens it).
void expect_reads_equal(const std::string& url, const std::string& bytes, uint64_t seed) {
  SCOPED_TRACE(url);
  const auto n = static_cast<int64_t>(bytes.size());
  EXPECT_TRUE(same_bytes(bytes, read_file(url)));
  EXPECT_EQ(file_size(url), n);

  RandomAccessFile f(url);
  ASSERT_EQ(f.size(), n);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 12 && n > 0; ++i) {
    const int64_t offset = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
    const auto most = static_cast<uint64_t>(std::min<int64_t>(n - offset, 1 << 20));
    const int64_t size = 1 + static_cast<int64_t>(rng() % most);
    EXPECT_TRUE(same_bytes(bytes.substr(offset, size), read_range(f, offset, size))) << offset << "+" << size;
  }
  EXPECT_TRUE(same_bytes("", read_range(f, n, 0)));

  // Ranges fetched ahead, some close enough to be merged, then read in pieces and across their ends.
  RandomAccessFile g(url);
  const int64_t third = n / 3;
  const int64_t after_gap = third + 70100;
  std::vector<remote::ByteRange> ranges = {{0, std::min<int64_t>(n, 1000)},
                                           {third, std::min<int64_t>(n - third, 70000)},
                                           {after_gap, std::min<int64_t>(std::max<int64_t>(0, n - after_gap), 5000)},
                                           {std::max<int64_t>(0, n - 3000), std::min<int64_t>(n, 3000)}};
  g.prefetch(ranges);
  for (const auto& r : ranges) {
    const int64_t size = std::min(r.size, n - r.offset);
    if (size <= 0) continue;
    EXPECT_TRUE(same_bytes(bytes.substr(r.offset, size), read_range(g, r.offset, size))) << r.offset;
    const int64_t half = size / 2;
    EXPECT_TRUE(same_bytes(bytes.substr(r.offset + half, size - half), read_range(g, r.offset + half, size - half)));
  }
  if (n > 2) EXPECT_TRUE(same_bytes(bytes.substr(1, n - 2), read_range(g, 1, n - 2)));

  if (n > 0) {
    RandomAccessFile t(url, 4096);
    ASSERT_EQ(t.size(), n);
    const int64_t tail = std::min<int64_t>(n, 4096);
    EXPECT_TRUE(same_bytes(bytes.substr(n - tail), read_range(t, n - tail, tail)));
    EXPECT_TRUE(same_bytes(bytes.substr(0, std::min<int64_t>(n, 10)), read_range(t, 0, std::min<int64_t>(n, 10))));
    EXPECT_TRUE(same_bytes(bytes, read_range(t, 0, n)));
  }
}

struct Sample {
  std::string name;
  std::string bytes;
};

const std::vector<Sample>& samples() {
  static const std::vector<Sample> all = {{"one.bin", testing::random_bytes(1, 1)},
                                          {"small.bin", testing::random_bytes(100 << 10, 2)},
                                          {"large.bin", testing::random_bytes(20 << 20, 3)}};
  return all;
}

class RemoteReads : public RemoteTest {
 protected:
  // The samples in the bucket, uploaded once per process.
  static void upload_samples() {
    static bool done = false;
    if (done) return;
    std::vector<std::pair<std::string, std::string>> objects = {{key("reads/empty.bin"), ""}};
    for (const auto& s : samples()) objects.emplace_back(key("reads/" + s.name), s.bytes);
    testing::put_objects(kBucket, objects);
    done = true;
  }
  static std::string http_path(const Sample& s) {
    static std::map<std::string, std::string> served;
    auto it = served.find(s.name);
    if (it == served.end()) it = served.emplace(s.name, serve(s.name, s.bytes)).first;
    return it->second;
  }
};

TEST_F(RemoteReads, S3ObjectsReadAsTheirBytesDirectlyAndThroughTheProxy) {
  upload_samples();
  uint64_t seed = 10;
  for (const bool proxied : {false, true}) {
    if (proxied) through_proxy();
    for (const auto& s : samples()) {
      expect_reads_equal(testing::s3_url(kBucket, key("reads/" + s.name)), s.bytes, ++seed);
    }
  }
  const auto log = testing::proxy_log("s3");
  EXPECT_GE(testing::log_entries(log, "GET").size(), 6u) << "the proxied reads went through the proxy";
  for (const auto& e : log) EXPECT_TRUE(e["fault"].is_null());
}

TEST_F(RemoteReads, AnEmptyObjectReadsAsNothing) {
  upload_samples();
  const std::string url = testing::s3_url(kBucket, key("reads/empty.bin"));
  EXPECT_EQ(read_file(url), "");
  EXPECT_EQ(file_size(url), 0);
  EXPECT_EQ(RandomAccessFile(url).size(), 0);
  // Opened for a footer: a request for the last bytes of nothing.
  EXPECT_EQ(RandomAccessFile(url, 4096).size(), 0);
  const std::string http = testing::test_servers().http_url() + "/" + serve("empty.bin", "");
  EXPECT_EQ(read_file(http), "");
  EXPECT_EQ(RandomAccessFile(http, 4096).size(), 0);
}

TEST_F(RemoteReads, HttpAndHttpsFilesReadAsTheirBytes) {
  const auto& servers = testing::test_servers();
  uint64_t seed = 100;
  for (const std::string& base : {servers.http_url(), servers.https_url(), servers.proxy_url("http")}) {
    for (const auto& s : samples()) expect_reads_equal(base + "/" + http_path(s), s.bytes, ++seed);
  }
}

// Keys with characters that URLs and SigV4 encode: the gateway checks every signature, so a path encoded otherwise
// than it encodes fails.
TEST_F(RemoteReads, KeysThatNeedEncodingReadAndList) {
  const std::vector<std::string> names = {"dir with space/a b.bin",
                                          "plus+sign=equals&amp.bin",
                                          "unicod\xC3\xA9/\xD0\xBA\xD0\xBB\xD1\x8E\xD1\x87/"
                                          "\xE6\x97\xA5\xE6\x9C\xAC.bin",
                                          "deep/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/leaf.bin",
                                          "tilde~star*paren(1)!quote'.bin",
                                          "percent%2Fliteral%20.bin",
                                          "question?hash#.bin",
                                          "colon:semi;comma,at@dollar$.bin",
                                          "dots/./x.bin",
                                          "dots/../y.bin",
                                          "double//slash.bin"};
  const std::string prefix = key("enc/");
  std::map<std::string, std::string> expected;  // key -> bytes
  uint64_t seed = 200;
  for (const auto& name : names) {
    expected[prefix + name] = testing::random_bytes(1000 + seed, seed);
    ++seed;
  }
  testing::put_objects(kBucket, {expected.begin(), expected.end()});
  for (const bool proxied : {false, true}) {
    if (proxied) through_proxy();
    for (const auto& [k, bytes] : expected) {
      const std::string url = testing::s3_url(kBucket, k);
      EXPECT_TRUE(same_bytes(bytes, read_file(url))) << k;
      RandomAccessFile f(url, 100);
      EXPECT_TRUE(same_bytes(bytes.substr(10, 500), read_range(f, 10, 500))) << k;
    }
  }
  const auto listed = remote::list_objects(testing::s3_url(kBucket, prefix));
  ASSERT_EQ(listed.size(), expected.size());
  auto it = expected.begin();
  for (const auto& o : listed) {
    EXPECT_EQ(o.url, testing::s3_url(kBucket, it->first));
    EXPECT_EQ(o.size, static_cast<int64_t>(it->second.size()));
    ++it;
  }
  const auto spaced = remote::list_objects(testing::s3_url(kBucket, prefix + "dir with space/"));
  ASSERT_EQ(spaced.size(), 1u);
  EXPECT_EQ(spaced[0].url, testing::s3_url(kBucket, prefix + "dir with space/a b.bin"));
  const auto unicode = remote::list_objects(testing::s3_url(kBucket, prefix + "unicod\xC3\xA9/"));
  EXPECT_EQ(unicode.size(), 1u);
}

TEST_F(RemoteReads, ListingAPrefixGivesItsObjectsWithSizesAndETags) {
  const std::string prefix = key("list/");
  std::vector<std::pair<std::string, std::string>> objects;
  for (const std::string name : {"a/1.bin", "a/2.bin", "a/sub/3.bin", "a-sibling.bin", "b/4.bin"}) {
    objects.emplace_back(prefix + name, testing::random_bytes(name.size() * 10, objects.size()));
  }
  const auto put = testing::put_objects(kBucket, objects);
  std::map<std::string, std::string> etags;
  for (size_t i = 0; i < objects.size(); ++i) etags[objects[i].first.substr(prefix.size())] = put[i];
  through_proxy();
  const auto under_a = remote::list_objects(testing::s3_url(kBucket, prefix + "a/"));
  ASSERT_EQ(under_a.size(), 3u);
  const std::vector<std::string> names = {"a/1.bin", "a/2.bin", "a/sub/3.bin"};
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(under_a[i].url, testing::s3_url(kBucket, prefix + names[i]));
    EXPECT_EQ(under_a[i].size, static_cast<int64_t>(names[i].size() * 10));
    EXPECT_EQ(under_a[i].etag, etags[names[i]]);
  }
  EXPECT_EQ(remote::list_objects(testing::s3_url(kBucket, prefix + "a")).size(), 4u);
  EXPECT_EQ(remote::list_objects(testing::s3_url(kBucket, prefix)).size(), 5u);
  EXPECT_TRUE(remote::list_objects(testing::s3_url(kBucket, prefix + "nothing-here/")).empty());

  // What a listing said stands in for the request that opens an object.
  testing::proxy_reset("s3");
  RandomAccessFile f(under_a[0].url);
  EXPECT_EQ(f.size(), under_a[0].size);
  EXPECT_TRUE(testing::log_entries(testing::proxy_log("s3"), "HEAD").empty());
  EXPECT_TRUE(remote::exists(under_a[1].url));
  EXPECT_FALSE(remote::exists(testing::s3_url(kBucket, prefix + "a/missing.bin")));
}

TEST_F(RemoteReads, AListingOfManyPagesFollowsItsContinuationTokens) {
  const std::string prefix = key("pages/");
  // Names whose continuation tokens need encoding, should the server make tokens of keys.
  std::vector<std::string> keys;
  for (int i = 0; i < 7; ++i) {
    keys.push_back(prefix + "p " + std::to_string(i) + "+=\xC3\xA9/" + std::to_string(i) + ".bin");
  }
  std::vector<std::pair<std::string, std::string>> objects;
  for (const auto& k : keys) objects.emplace_back(k, k);
  testing::put_objects(kBucket, objects);
  std::sort(keys.begin(), keys.end());

  through_proxy();
  remote::detail::set_listing_page_keys(2);
  std::vector<remote::ObjectInfo> listed;
  const std::string error = testing::error_of([&] { listed = remote::list_objects(testing::s3_url(kBucket, prefix)); });
  remote::detail::set_listing_page_keys(0);
  ASSERT_EQ(error, "(no error)");
  ASSERT_EQ(listed.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(listed[i].url, testing::s3_url(kBucket, keys[i]));
    EXPECT_EQ(listed[i].size, static_cast<int64_t>(keys[i].size()));
  }
  const auto requests = testing::log_entries(testing::proxy_log("s3"), "GET");
  ASSERT_EQ(requests.size(), 4u);
  for (size_t i = 0; i < requests.size(); ++i) {
    const std::string query = requests[i]["query"];
    EXPECT_NE(query.find("max-keys=2"), std::string::npos) << query;
    EXPECT_EQ(query.find("continuation-token=") != std::string::npos, i > 0) << query;
    EXPECT_EQ(requests[i]["status"], 200);
  }
}

}  // namespace
}  // namespace feedline
