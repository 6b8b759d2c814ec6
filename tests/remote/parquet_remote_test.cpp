// What a projected Parquet read of an S3 object costs: one request for the file's end (the footer with it, when it
// fits in RemoteOptions::footer_bytes), then one per merged range of the projected column chunks, and only those
// bytes; the table equals the local file's. Counted at the fault proxy, against ranges the test plans from the
// footer itself with coalesce_ranges.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "feedline/io/remote.h"
#include "io/parquet/metadata.h"
#include "io/parquet/thrift_compact.h"
#include "io/parquet_test_support.h"
#include "remote_test_support.h"

namespace feedline {
namespace {

using nlohmann::json;

constexpr int64_t kHole = 8 << 10;
constexpr int64_t kRangeLimit = 32 << 20;

parquet::format::FileMetaData footer_of(const std::string& bytes) {
  uint32_t footer_len;
  std::memcpy(&footer_len, bytes.data() + bytes.size() - 8, 4);
  const size_t at = bytes.size() - 8 - footer_len;
  parquet::thrift::CompactReader in(reinterpret_cast<const uint8_t*>(bytes.data()) + at, footer_len,
                                    static_cast<int64_t>(at));
  return parquet::format::read_file_metadata(in);
}

// The requests a read of `columns` should make after the one for the file's last `tail` bytes: the projected chunks'
// ranges less what that request brought, merged as the reader merges them.
std::vector<remote::ByteRange> planned_ranges(const std::string& bytes, const std::vector<std::string>& columns,
                                              int64_t tail) {
  const auto md = footer_of(bytes);
  const auto size = static_cast<int64_t>(bytes.size());
  uint32_t footer_len;
  std::memcpy(&footer_len, bytes.data() + bytes.size() - 8, 4);
  const int64_t footer_start = size - 8 - footer_len;
  const int64_t tail_start = size - std::min(size, tail);
  std::vector<remote::ByteRange> ranges;
  for (const auto& rg : md.row_groups) {
    for (const auto& chunk : rg.columns) {
      const auto& m = *chunk.meta_data;
      if (std::find(columns.begin(), columns.end(), m.path_in_schema.at(0)) == columns.end()) continue;
      int64_t start = m.data_page_offset;
      if (m.dictionary_page_offset && *m.dictionary_page_offset > 0) start = std::min(start, *m.dictionary_page_offset);
      int64_t end = std::min(footer_start, start + m.total_compressed_size);
      if (end > tail_start) end = std::max(start, tail_start);
      if (end > start) ranges.push_back({start, end - start});
    }
  }
  return remote::coalesce_ranges(ranges, kHole, kRangeLimit);
}

class RemoteParquet : public testing::RemoteTest {
 protected:
  void SetUp() override {
    RemoteTest::SetUp();
    remote::RemoteOptions o = fast_options();
    o.hole_limit = kHole;
    o.range_limit = kRangeLimit;
    remote::set_options(o);
    upload_once();
    through_proxy();
  }

  // A file of 28 columns in 4 row groups, uncompressed so that its chunks are large beside its footer.
  static void upload_once() {
    if (!bytes_.empty()) return;
    local_ = testing::scratch_dir("parquet_remote") + "/table.parquet";
    testing::RandomTableSpec spec;
    spec.rows = 40000;
    parquet::WriteOptions w;
    w.codec = parquet::Codec::kUncompressed;
    w.dictionary = false;
    w.row_group_rows = 10000;
    parquet::write_table(local_, testing::random_table(17, spec), w);
    bytes_ = testing::file_bytes(local_);
    url_ = testing::s3_url(kBucket, key("parquet/table.parquet"));
    testing::put_object(kBucket, key("parquet/table.parquet"), bytes_);
  }

  // Reads `columns` remotely and locally, checks the tables are equal, and returns the proxy's GETs of the file.
  std::vector<json> read_and_compare(const std::vector<std::string>& columns) {
    parquet::ReadOptions options;
    options.columns = columns;
    testing::proxy_reset("s3");
    const Table remote_table = parquet::read_table(url_, options);
    testing::expect_tables_equal(parquet::read_table(local_, options), remote_table);
    const auto log = testing::proxy_log("s3");
    EXPECT_TRUE(testing::log_entries(log, "HEAD").empty()) << "opened by its tail request alone";
    return testing::log_entries(log, "GET", "table.parquet");
  }

  static int64_t bytes_of(const std::vector<json>& gets) {
    int64_t n = 0;
    for (const auto& g : gets) n += g["bytes"].get<int64_t>();
    return n;
  }
  static int64_t sum(const std::vector<remote::ByteRange>& ranges) {
    int64_t n = 0;
    for (const auto& r : ranges) n += r.size;
    return n;
  }

  static inline std::string local_;
  static inline std::string bytes_;
  static inline std::string url_;
};

TEST_F(RemoteParquet, TwoColumnsCostTheTailAndTheirMergedChunks) {
  const std::vector<std::string> columns = {"i32_req", "f64_opt"};
  const int64_t tail = remote::RemoteOptions().footer_bytes;
  uint32_t footer_len;
  std::memcpy(&footer_len, bytes_.data() + bytes_.size() - 8, 4);
  ASSERT_LE(footer_len + 8, tail) << "the footer comes with the tail";
  const auto planned = planned_ranges(bytes_, columns, tail);
  const auto gets = read_and_compare(columns);
  ASSERT_EQ(gets.size(), 1 + planned.size()) << json(gets).dump();
  EXPECT_EQ(gets[0]["range"], "bytes=-" + std::to_string(tail));
  EXPECT_EQ(bytes_of(gets), tail + sum(planned));
  EXPECT_LT(bytes_of(gets), static_cast<int64_t>(bytes_.size()) / 5);
}

// The column whose chunk holds byte `offset`.
std::string column_at(const std::string& bytes, int64_t offset) {
  for (const auto& rg : footer_of(bytes).row_groups) {
    for (const auto& chunk : rg.columns) {
      const auto& m = *chunk.meta_data;
      if (m.data_page_offset <= offset && offset < m.data_page_offset + m.total_compressed_size) {
        return m.path_in_schema.at(0);
      }
    }
  }
  return {};
}

// A chunk that begins before the tail and ends in it: the part the tail brought is not asked for again.
TEST_F(RemoteParquet, AChunkPartlyInTheTailAsksOnlyForTheRest) {
  const int64_t tail = remote::RemoteOptions().footer_bytes;
  const std::vector<std::string> columns = {column_at(bytes_, static_cast<int64_t>(bytes_.size()) - tail)};
  ASSERT_FALSE(columns[0].empty());
  const auto planned = planned_ranges(bytes_, columns, tail);
  const auto gets = read_and_compare(columns);
  ASSERT_EQ(gets.size(), 1 + planned.size()) << json(gets).dump();
  EXPECT_EQ(bytes_of(gets), tail + sum(planned));
}

TEST_F(RemoteParquet, AFooterLargerThanTheTailCostsOneRequestMore) {
  remote::RemoteOptions o = remote::options();
  o.footer_bytes = 1024;
  remote::set_options(o);
  uint32_t footer_len;
  std::memcpy(&footer_len, bytes_.data() + bytes_.size() - 8, 4);
  ASSERT_GT(footer_len + 8, 1024u);
  const std::vector<std::string> columns = {"i64_req"};
  const auto planned = planned_ranges(bytes_, columns, 1024);
  const auto gets = read_and_compare(columns);
  ASSERT_EQ(gets.size(), 2 + planned.size()) << json(gets).dump();
  EXPECT_EQ(gets[0]["range"], "bytes=-1024");
  // The footer's request asks for what the tail did not bring.
  const int64_t footer_start = static_cast<int64_t>(bytes_.size()) - 8 - footer_len;
  EXPECT_EQ(gets[1]["range"], "bytes=" + std::to_string(footer_start) + "-" +
                                  std::to_string(static_cast<int64_t>(bytes_.size()) - 1024 - 1));
  EXPECT_EQ(bytes_of(gets), int64_t{footer_len} + 8 + sum(planned));
}

// With a disk cache, a read of chunks read before asks only for the file's end (which says the file is the same
// version); chunks within a whole file read before are not downloaded again either.
TEST_F(RemoteParquet, ChunksInTheDiskCacheAreNotAskedForAgain) {
  remote::RemoteOptions o = remote::options();
  o.cache_dir = testing::scratch_dir("parquet_remote_cache");
  remote::set_options(o);
  const std::vector<std::string> columns = {"i32_req", "str_opt"};
  const auto planned = planned_ranges(bytes_, columns, o.footer_bytes);
  const auto first = read_and_compare(columns);
  EXPECT_EQ(first.size(), 1 + planned.size()) << json(first).dump();
  EXPECT_EQ(read_and_compare(columns).size(), 1u);

  o.cache_dir = testing::scratch_dir("parquet_remote_cache_whole");
  remote::set_options(o);
  testing::proxy_reset("s3");
  EXPECT_TRUE(read_file(url_) == bytes_);
  EXPECT_EQ(testing::log_entries(testing::proxy_log("s3"), "GET").size(), 1u);
  const auto before = remote::stats();
  const auto gets = read_and_compare(columns);
  EXPECT_EQ(gets.size(), 1u) << json(gets).dump();
  EXPECT_EQ(testing::stats_since(before).cache_misses, 0);
}

// The footer's part before the tail is asked for as it is, with a disk cache too (where a read nothing planned
// takes a small object whole).
TEST_F(RemoteParquet, AFooterLargerThanTheTailIsAskedForAloneWithADiskCache) {
  remote::RemoteOptions o = remote::options();
  o.footer_bytes = 1024;
  o.cache_dir = testing::scratch_dir("parquet_remote_footer_cache");
  remote::set_options(o);
  const std::vector<std::string> columns = {"i64_req"};
  const auto planned = planned_ranges(bytes_, columns, 1024);
  const auto gets = read_and_compare(columns);
  EXPECT_EQ(gets.size(), 2 + planned.size()) << json(gets).dump();
  uint32_t footer_len;
  std::memcpy(&footer_len, bytes_.data() + bytes_.size() - 8, 4);
  EXPECT_EQ(bytes_of(gets), int64_t{footer_len} + 8 + sum(planned));
}

TEST_F(RemoteParquet, EveryColumnThroughAFileReaderEqualsTheLocalRead) {
  parquet::FileReader reader(url_);
  EXPECT_EQ(reader.info().num_rows, 40000);
  EXPECT_EQ(reader.info().row_groups.size(), 4u);
  testing::expect_tables_equal(parquet::read_table(local_), reader.read());
  parquet::ReadOptions some;
  some.columns = {"str_opt", "bool_req"};
  some.row_groups = {3, 1};
  testing::expect_tables_equal(parquet::read_table(local_, some), reader.read(some));
}

}  // namespace
}  // namespace feedline
