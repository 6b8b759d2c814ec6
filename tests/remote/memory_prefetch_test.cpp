// Ranges fetched ahead into memory (no disk cache): within RemoteOptions::memory_limit, each range asked for once,
// a failed fetch not kept as the answer for later reads, and a reader closed while its ranges are still in flight.
#include <gtest/gtest.h>
#include <malloc.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "feedline/io/file.h"
#include "feedline/io/remote.h"
#include "remote_test_support.h"

namespace feedline {
namespace {

using nlohmann::json;

std::string read_range(const RandomAccessFile& f, int64_t offset, int64_t size) {
  std::string out(static_cast<size_t>(size), '\0');
  f.read_at(offset, out.size(), out.data());
  return out;
}

class MemoryPrefetch : public testing::RemoteTest {
 protected:
  void SetUp() override {
    RemoteTest::SetUp();
    remote::RemoteOptions o = fast_options();
    o.hole_limit = 8 << 10;
    remote::set_options(o);
    if (bytes_.empty()) {
      bytes_ = testing::random_bytes(20 << 20, 41);
      testing::put_object(kBucket, key("memory/object.bin"), bytes_);
    }
    url_ = testing::s3_url(kBucket, key("memory/object.bin"));
    through_proxy();
  }
  static std::vector<json> gets() { return testing::log_entries(testing::proxy_log("s3"), "GET", "memory/object.bin"); }

  static inline std::string bytes_;
  std::string url_;
};

TEST_F(MemoryPrefetch, RangesBeyondTheMemoryLimitStillReadRight) {
  remote::RemoteOptions o = remote::options();
  o.memory_limit = 1 << 20;
  remote::set_options(o);
  RandomAccessFile f(url_);
  std::vector<remote::ByteRange> ranges;
  for (int i = 0; i < 6; ++i) ranges.push_back({int64_t{i} * (3 << 20), 600 << 10});
  f.prefetch({ranges[0]});
  f.prefetch({ranges.begin() + 1, ranges.end()});
  for (const auto& r : ranges) EXPECT_TRUE(read_range(f, r.offset, r.size) == bytes_.substr(r.offset, r.size));
  // Each range once ahead or once when read, and none ahead beyond the limit.
  EXPECT_LE(gets().size(), 2 * ranges.size());
}

TEST_F(MemoryPrefetch, AFailedRangeIsAskedForAgainByALaterRead) {
  remote::RemoteOptions o = remote::options();
  o.max_attempts = 2;
  remote::set_options(o);
  RandomAccessFile f(url_);
  testing::proxy_faults("s3", json::array({{{"method", "GET"}, {"path", "memory/object.bin"}, {"action", "status"},
                                            {"status", 503}, {"times", 2}}}));
  f.prefetch({{0, 100000}});
  EXPECT_NE(testing::error_of([&] { read_range(f, 0, 1000); }).find("HTTP 503"), std::string::npos);
  EXPECT_TRUE(read_range(f, 0, 1000) == bytes_.substr(0, 1000));
  EXPECT_EQ(gets().size(), 3u);
}

TEST_F(MemoryPrefetch, AReaderClosedWhileItsRangesAreInFlightLeavesThemToFinish) {
  // Every buffer of this size gets pages of its own, which freeing gives back: a write into one after it was freed
  // is a crash, not a quiet corruption.
  mallopt(M_MMAP_THRESHOLD, 128 << 10);
  testing::proxy_delay("s3", 300);
  {
    RandomAccessFile f(url_);
    f.prefetch({{0, 4 << 20}, {8 << 20, 4 << 20}});
  }
  const auto log = testing::proxy_log("s3", 3);
  EXPECT_EQ(testing::log_entries(log, "GET", "memory/object.bin").size(), 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  RandomAccessFile g(url_);
  EXPECT_TRUE(read_range(g, 100, 10 << 20) == bytes_.substr(100, 10 << 20));
}

}  // namespace
}  // namespace feedline
