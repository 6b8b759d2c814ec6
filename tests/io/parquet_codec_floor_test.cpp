// The read benchmark's codec floor (bench/codec_floor.h): every page of a file found from the footer and the page
// headers, each decompressing to exactly the size its header declares, and a decoded table's bytes counted.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../../bench/codec_floor.h"
#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "feedline/io/table.h"
#include "io/parquet/metadata.h"
#include "io/parquet/thrift_compact.h"
#include "parquet_test_support.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace format = parquet::format;

format::FileMetaData footer_of(const std::string& file) {
  uint32_t footer_len;
  std::memcpy(&footer_len, file.data() + file.size() - 8, 4);
  const size_t footer_at = file.size() - 8 - footer_len;
  parquet::thrift::CompactReader footer(reinterpret_cast<const uint8_t*>(file.data()) + footer_at, footer_len,
                                        static_cast<int64_t>(footer_at));
  return format::read_file_metadata(footer);
}

// Each chunk's page headers (and a v2 page's levels) take as many bytes of its compressed size as of its
// uncompressed size: what the pages found leave of the two sizes must be equal, and positive.
void expect_pages_cover_chunks(const std::string& file, const std::vector<bench::ChunkPages>& chunks) {
  const format::FileMetaData md = footer_of(file);
  size_t i = 0;
  for (const format::RowGroup& rg : md.row_groups) {
    for (const format::ColumnChunk& chunk : rg.columns) {
      ASSERT_LT(i, chunks.size());
      const bench::ChunkPages& c = chunks[i++];
      ASSERT_FALSE(c.pages.empty()) << "chunk " << i - 1;
      int64_t compressed = 0, uncompressed = 0;
      for (const bench::PageBody& p : c.pages) {
        compressed += static_cast<int64_t>(p.size);
        uncompressed += static_cast<int64_t>(p.uncompressed);
      }
      EXPECT_EQ(uncompressed, static_cast<int64_t>(c.uncompressed));
      const int64_t headers = chunk.meta_data->total_compressed_size - compressed;
      EXPECT_GT(headers, 0) << "chunk " << i - 1;
      EXPECT_EQ(chunk.meta_data->total_uncompressed_size - uncompressed, headers) << "chunk " << i - 1;
    }
  }
  EXPECT_EQ(i, chunks.size());
}

TEST(ParquetCodecFloor, FindsEveryPageOfEachCodecAndDecompressesThem) {
  const Table t = testing::id_name_table(0, 60000);
  for (const parquet::Codec codec : {parquet::Codec::kUncompressed, parquet::Codec::kSnappy, parquet::Codec::kZstd}) {
    SCOPED_TRACE(parquet::to_string(codec));
    const std::string path = testing::scratch_dir("parquet-codec-floor") + "/" + parquet::to_string(codec) + ".parquet";
    parquet::WriteOptions o;
    o.codec = codec;
    o.page_bytes = 16 << 10;
    o.row_group_rows = 25000;
    parquet::write_table(path, t, o);
    const std::string file = testing::file_bytes(path);
    const auto chunks = bench::file_pages(file, path);
    ASSERT_EQ(chunks.size(), 3u * 2u);  // three row groups of two columns
    for (const auto& c : chunks) EXPECT_EQ(c.codec, codec);
    expect_pages_cover_chunks(file, chunks);
    // Every page decompresses to exactly its declared size (decompress throws otherwise), on one thread and two.
    for (const int threads : {1, 2}) {
      const bench::FloorTimes floor = bench::codec_floor(chunks, 5 << 20, threads, 1 << 20);
      size_t pages = 0, compressed = 0, decompressed = 0;
      for (const auto& c : chunks) {
        pages += c.pages.size();
        decompressed += c.uncompressed;
        for (const auto& p : c.pages) compressed += p.size;
      }
      EXPECT_EQ(floor.pages, pages);
      EXPECT_GT(floor.pages, 12u);  // 16 KiB pages: several per chunk
      EXPECT_EQ(floor.compressed_bytes, compressed);
      EXPECT_EQ(floor.decompressed_bytes, decompressed);
      if (codec == parquet::Codec::kUncompressed) {
        EXPECT_EQ(compressed, decompressed);
      } else {
        EXPECT_LT(compressed, decompressed);
      }
      EXPECT_GE(floor.decompress_s, 0.0);
      EXPECT_GE(floor.copy_s, 0.0);
    }
  }
}

TEST(ParquetCodecFloor, DataPageV2LeavesItsLevelsOut) {
  const std::string path = testing::test_data_dir() + "/parquet-testing/data/datapage_v2.snappy.parquet";
  const std::string file = testing::file_bytes(path);
  const auto chunks = bench::file_pages(file, path);
  ASSERT_FALSE(chunks.empty());
  expect_pages_cover_chunks(file, chunks);
  const bench::FloorTimes floor = bench::codec_floor(chunks, 1000, 2);
  EXPECT_GT(floor.pages, 0u);
}

TEST(ParquetCodecFloor, RefusesABrokenFileByName) {
  const std::string path = testing::scratch_dir("parquet-codec-floor") + "/broken.parquet";
  parquet::write_table(path, testing::id_name_table(0, 1000), parquet::WriteOptions{});
  std::string file = testing::file_bytes(path);
  try {
    bench::file_pages(file.substr(0, file.size() - 1), path);
    ADD_FAILURE() << "a truncated file was taken";
  } catch (const InvalidFile& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  // A chunk whose first page header is garbage.
  const format::FileMetaData md = footer_of(file);
  const int64_t first = md.row_groups.at(0).columns.at(0).meta_data->data_page_offset;
  for (int k = 0; k < 8; ++k) file[static_cast<size_t>(first) + k] = '\xff';
  EXPECT_THROW(bench::file_pages(file, path), InvalidFile);
}

TEST(ParquetCodecFloor, CountsATablesBytes) {
  Table t = testing::id_name_table(0, 3);  // ids 0..2, names "row 0".."row 2"
  EXPECT_EQ(bench::table_bytes(t), 3 * 8 + (3 * 5 + 4 * 8));
  t.columns[0].validity = {1, 0, 1};
  EXPECT_EQ(bench::table_bytes(t), 3 * 8 + 3 + (3 * 5 + 4 * 8));
  ColumnSchema list{"tags"};
  list.type = PhysicalType::kInt32;
  list.is_list = true;
  Column tags = make_column(list);
  tags.as<int32_t>() = {1, 2, 3, 4, 5};
  tags.list_offsets = {0, 2, 2, 5};
  tags.element_validity = {1, 1, 0, 1, 1};
  t.columns.push_back(tags);
  EXPECT_EQ(bench::table_bytes(t), 3 * 8 + 3 + (3 * 5 + 4 * 8) + (5 * 4 + 4 * 8 + 5));
}

}  // namespace
}  // namespace feedline
