// FileReader: a file opened and its footer parsed once, then read any number of times, from several threads at
// once, with the results and errors of read_table and read_file_info.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "io/parquet_test_support.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

namespace fs = std::filesystem;
using feedline::testing::expect_tables_equal;
using feedline::testing::parquet_testing_dir;
using feedline::testing::random_list_table;
using feedline::testing::random_table;
using feedline::testing::RandomTableSpec;
using feedline::testing::scratch_dir;

// Every value kind, required and optional.
Table flat_table(int64_t rows) {
  RandomTableSpec spec;
  spec.rows = rows;
  spec.distinct = 40;  // dictionary pages as well as plain ones
  return random_table(11, spec);
}

// Our writer's files: flat_table(rows) in row groups of `group_rows`.
std::string flat_file(const std::string& name, int64_t rows, int64_t group_rows) {
  WriteOptions w;
  w.row_group_rows = group_rows;
  w.page_bytes = 2000;  // several pages a chunk
  const std::string path = scratch_dir(name) + "/flat.parquet";
  write_table(path, flat_table(rows), w);
  return path;
}

// Rows [first, first + count) of a table of flat columns, as the reader gives them (no validity when no nulls).
Table rows_of(const Table& t, int64_t first, int64_t count) {
  Table out;
  out.num_rows = count;
  const auto from = static_cast<size_t>(first), to = static_cast<size_t>(first + count);
  for (const Column& c : t.columns) {
    Column part = make_column(c.schema);
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, ByteArrays>) {
            for (size_t i = from; i < to; ++i) {
              const std::string_view value = v.at(static_cast<int64_t>(i));
              std::get<ByteArrays>(part.values).bytes.append(value);
              std::get<ByteArrays>(part.values).offsets.push_back(
                  static_cast<int64_t>(std::get<ByteArrays>(part.values).bytes.size()));
            }
          } else {
            std::get<V>(part.values).assign(v.begin() + first, v.begin() + first + count);
          }
        },
        c.values);
    if (!c.validity.empty()) {
      part.validity.assign(c.validity.begin() + first, c.validity.begin() + first + count);
      if (std::find(part.validity.begin(), part.validity.end(), 0) == part.validity.end()) part.validity.clear();
    }
    out.columns.push_back(std::move(part));
  }
  return out;
}

std::string list_file(const std::string& name) {
  RandomTableSpec spec;
  spec.rows = 900;
  WriteOptions w;
  w.row_group_rows = 250;
  const std::string path = scratch_dir(name) + "/lists.parquet";
  write_table(path, random_list_table(5, spec), w);
  return path;
}

// Files of other writers: page v2, DELTA_*, tiny pages, nested lists, a footer row count of 0 (beside a repeated
// group we do not read), Impala's nested types.
std::vector<std::string> corpus_files() {
  std::vector<std::string> out;
  for (const char* name : {"alltypes_plain.parquet", "alltypes_tiny_pages.parquet", "datapage_v2.snappy.parquet",
                           "delta_byte_array.parquet", "nested_lists.snappy.parquet",
                           "repeated_no_annotation.parquet", "nullable.impala.parquet"}) {
    const std::string path = parquet_testing_dir() + "/data/" + name;
    if (fs::is_regular_file(path)) out.push_back(path);
  }
  return out;
}

// The message of what `f` throws as a feedline::Error, or "" when it throws nothing.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void expect_same_schema(const std::vector<ColumnSchema>& a, const std::vector<ColumnSchema>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(a[i].name);
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].type, b[i].type);
    EXPECT_EQ(a[i].nullable, b[i].nullable);
    EXPECT_EQ(a[i].int_annotation, b[i].int_annotation);
    EXPECT_EQ(a[i].is_string, b[i].is_string);
    EXPECT_EQ(a[i].type_length, b[i].type_length);
    EXPECT_TRUE(a[i].logical == b[i].logical);
    EXPECT_EQ(a[i].is_list, b[i].is_list);
    EXPECT_EQ(a[i].element_nullable, b[i].element_nullable);
    EXPECT_EQ(a[i].inner_list_nullable, b[i].inner_list_nullable);
  }
}

void expect_same_info(const FileInfo& a, const FileInfo& b) {
  EXPECT_EQ(a.num_rows, b.num_rows);
  expect_same_schema(a.schema, b.schema);
  EXPECT_EQ(a.unsupported_columns, b.unsupported_columns);
  EXPECT_EQ(a.key_value_metadata, b.key_value_metadata);
  EXPECT_EQ(a.created_by, b.created_by);
  ASSERT_EQ(a.row_groups.size(), b.row_groups.size());
  for (size_t g = 0; g < a.row_groups.size(); ++g) {
    EXPECT_EQ(a.row_groups[g].num_rows, b.row_groups[g].num_rows) << "row group " << g;
    ASSERT_EQ(a.row_groups[g].columns.size(), b.row_groups[g].columns.size()) << "row group " << g;
    for (size_t c = 0; c < a.row_groups[g].columns.size(); ++c) {
      const ColumnChunkInfo &x = a.row_groups[g].columns[c], &y = b.row_groups[g].columns[c];
      SCOPED_TRACE("row group " + std::to_string(g) + ", column " + std::to_string(c));
      EXPECT_EQ(x.codec, y.codec);
      EXPECT_EQ(x.encodings, y.encodings);
      EXPECT_EQ(x.compressed_bytes, y.compressed_bytes);
      EXPECT_EQ(x.uncompressed_bytes, y.uncompressed_bytes);
      EXPECT_EQ(x.offset, y.offset);
      EXPECT_EQ(x.null_count, y.null_count);
      EXPECT_EQ(x.min, y.min);
      EXPECT_EQ(x.max, y.max);
    }
  }
}

TEST(ParquetFileReader, ReadsWhatReadTableReads) {
  // First against what was written: read_table runs FileReader's code now, so the two alone would agree on a bug.
  {
    const std::string path = flat_file("fr_written", 2000, 300);
    const FileReader reader(path);
    expect_tables_equal(flat_table(2000), reader.read());
    ReadOptions third;
    third.row_groups = {2};
    expect_tables_equal(rows_of(flat_table(2000), 600, 300), reader.read(third));
  }
  std::vector<std::string> files = {flat_file("fr_flat", 3000, 700), list_file("fr_lists")};
  const std::vector<std::string> corpus = corpus_files();
  EXPECT_GE(corpus.size(), 6u) << "the corpus at " << parquet_testing_dir() << " is missing files";
  files.insert(files.end(), corpus.begin(), corpus.end());
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    const FileReader reader(path);
    EXPECT_EQ(reader.path(), path);
    const FileInfo& info = reader.info();
    ASSERT_FALSE(info.schema.empty());
    // Every column when the file has none we cannot read, else every one we can.
    ReadOptions all;
    if (!info.unsupported_columns.empty()) {
      for (const ColumnSchema& c : info.schema) all.columns.push_back(c.name);
    }
    // Twice over, so that nothing a read leaves behind changes the next.
    for (int pass = 0; pass < 2; ++pass) {
      expect_tables_equal(read_table(path, all), reader.read(all));
      // The last readable columns first, and the row groups backwards: order as asked, as read_table keeps it.
      ReadOptions some;
      for (size_t c = info.schema.size(); c-- > 0 && some.columns.size() < 3;) {
        some.columns.push_back(info.schema[c].name);
      }
      for (size_t g = info.row_groups.size(); g-- > 0;) some.row_groups.push_back(static_cast<int64_t>(g));
      some.num_threads = 1 + pass;
      expect_tables_equal(read_table(path, some), reader.read(some));
    }
  }
}

TEST(ParquetFileReader, FourThreadsReadingRowGroupsGetTheSerialReads) {
  const std::string path = flat_file("fr_threads", 4000, 250);  // 16 row groups
  const FileReader reader(path);
  const auto groups = static_cast<int64_t>(reader.info().row_groups.size());
  ASSERT_EQ(groups, 16);
  const Table written = flat_table(4000);
  std::vector<Table> serial;
  for (int64_t g = 0; g < groups; ++g) {
    ReadOptions one;
    one.row_groups = {g};
    serial.push_back(reader.read(one));
    SCOPED_TRACE("serial read of row group " + std::to_string(g));
    expect_tables_equal(rows_of(written, 250 * g, 250), serial.back());
  }
  std::vector<Table> parallel(static_cast<size_t>(groups));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      // Each thread reads its row groups three times, each read decoding on two threads of its own.
      for (int round = 0; round < 3; ++round) {
        for (int64_t g = t; g < groups; g += 4) {
          ReadOptions one;
          one.row_groups = {g};
          one.num_threads = 2;
          parallel[static_cast<size_t>(g)] = reader.read(one);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int64_t g = 0; g < groups; ++g) {
    SCOPED_TRACE("row group " + std::to_string(g));
    EXPECT_EQ(parallel[static_cast<size_t>(g)].num_rows, 250);
    expect_tables_equal(serial[static_cast<size_t>(g)], parallel[static_cast<size_t>(g)]);
  }
}

TEST(ParquetFileReader, InfoIsWhatReadFileInfoReturns) {
  std::vector<std::string> files = {flat_file("fr_info", 1000, 300), list_file("fr_info_lists")};
  for (const std::string& path : corpus_files()) files.push_back(path);
  // A file with columns we cannot read: info() lists them as read_file_info does.
  files.push_back(parquet_testing_dir() + "/data/nested_maps.snappy.parquet");
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    const FileReader reader(path);
    // Made once, whichever thread asks first.
    std::vector<const FileInfo*> seen(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < seen.size(); ++t) threads.emplace_back([&, t] { seen[t] = &reader.info(); });
    for (auto& t : threads) t.join();
    for (const FileInfo* p : seen) EXPECT_EQ(p, &reader.info());
    expect_same_info(read_file_info(path), reader.info());
  }
}

TEST(ParquetFileReader, ChunkOffsetsTileTheFileAsWritten) {
  // The writer puts each row group's chunks one after another in column order, from just past the magic: each
  // chunk's offset and size name exactly its bytes.
  const std::string path = flat_file("fr_offsets", 1000, 300);
  const FileInfo info = read_file_info(path);
  int64_t next = 4;
  for (size_t g = 0; g < info.row_groups.size(); ++g) {
    for (size_t c = 0; c < info.row_groups[g].columns.size(); ++c) {
      const ColumnChunkInfo& chunk = info.row_groups[g].columns[c];
      SCOPED_TRACE("row group " + std::to_string(g) + ", column " + std::to_string(c));
      EXPECT_EQ(chunk.offset, next);
      EXPECT_GT(chunk.compressed_bytes, 0);
      next = chunk.offset + chunk.compressed_bytes;
    }
  }
  EXPECT_LT(next, static_cast<int64_t>(std::filesystem::file_size(path)) - 8) << "the footer follows the chunks";
}

TEST(ParquetFileReader, ThrowsWhatReadTableThrows) {
  const std::string path = flat_file("fr_errors", 500, 200);
  const FileReader reader(path);
  for (const ReadOptions& bad : {ReadOptions{{"no_such_column"}, {}, 0}, ReadOptions{{"i32_req", "i32_req"}, {}, 0},
                                 ReadOptions{{}, {3}, 0}, ReadOptions{{}, {1, 1}, 0}}) {
    const std::string expected = error_of([&] { read_table(path, bad); });
    ASSERT_NE(expected, "");
    EXPECT_EQ(error_of([&] { reader.read(bad); }), expected);
    EXPECT_THROW(reader.read(bad), InvalidArgument);
  }
  // Valid features we do not read fail the read, not the opening, as they fail read_table.
  // (Column data in another file.)
  const std::string unknown = scratch_dir("fr_external") + "/external.parquet";
  feedline::testing::rewrite_footer(path, unknown, [](parquet::format::FileMetaData& md) {
    md.row_groups.at(0).columns.at(0).file_path = "elsewhere.parquet";
  });
  const FileReader unknown_reader(unknown);
  EXPECT_THROW(unknown_reader.read(), Unsupported);
  EXPECT_EQ(error_of([&] { unknown_reader.read(); }), error_of([&] { read_table(unknown); }));
  // Files that fail in a page (a checksum) fail the read alike.
  for (const char* name : {"datapage_v1-corrupt-checksum.parquet", "rle-dict-uncompressed-corrupt-checksum.parquet"}) {
    const std::string bad = parquet_testing_dir() + "/data/" + name;
    const std::string expected = error_of([&] { read_table(bad); });
    EXPECT_NE(expected, "") << bad;
    EXPECT_EQ(error_of([&] { FileReader(bad).read(); }), expected) << bad;
  }
  // The corpus' corrupt files (some of which we read): the same outcome, whether the footer (at opening) or a
  // page (at reading) is what is wrong.
  for (const auto& e : fs::directory_iterator(parquet_testing_dir() + "/bad_data")) {
    if (e.path().extension() != ".parquet") continue;
    const std::string bad = e.path().string();
    EXPECT_EQ(error_of([&] { FileReader(bad).read(); }), error_of([&] { read_table(bad); })) << bad;
  }
}

TEST(ParquetFileReader, ATruncatedFileFailsAtOpeningNamingThePath) {
  const std::string source = flat_file("fr_truncated_src", 500, 200);
  const std::string path = scratch_dir("fr_truncated") + "/cut.parquet";
  fs::copy_file(source, path);
  fs::resize_file(path, fs::file_size(path) / 2);
  try {
    FileReader reader(path);
    ADD_FAILURE() << "a file cut in half opened";
  } catch (const InvalidFile& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find("truncated?"), std::string::npos) << message;
    EXPECT_EQ(error_of([&] { read_table(path); }), message);
    EXPECT_EQ(error_of([&] { read_file_info(path); }), message);
  }
  const std::string missing = scratch_dir("fr_missing") + "/none.parquet";
  try {
    FileReader reader(missing);
    ADD_FAILURE() << "a missing file opened";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(missing + ": ", 0), 0u) << e.what();
  }
}

// It holds the descriptor of the file it opened: the path deleted or replaced after, it reads what it opened.
TEST(ParquetFileReader, ReadsTheFileItOpenedAfterThePathIsDeletedOrReplaced) {
  const std::string path = flat_file("fr_deleted", 1200, 500);
  const Table expected = read_table(path);
  const FileReader reader(path);
  fs::remove(path);
  ASSERT_FALSE(fs::exists(path));
  expect_tables_equal(expected, reader.read());
  EXPECT_EQ(reader.info().num_rows, 1200);

  const std::string other = flat_file("fr_replaced", 1500, 500);
  const FileReader replaced_reader(other);
  RandomTableSpec spec;
  spec.rows = 10;
  write_table(other, random_table(99, spec));  // through a temporary file renamed onto `other`
  EXPECT_EQ(read_table(other).num_rows, 10);
  EXPECT_EQ(replaced_reader.read().num_rows, 1500);
}

TEST(ParquetFileReader, MovesKeepTheOpenFile) {
  const std::string path = flat_file("fr_moves", 600, 200);
  FileReader first(path);
  FileReader second = std::move(first);
  EXPECT_EQ(second.path(), path);
  FileReader third(flat_file("fr_moves_other", 100, 50));
  third = std::move(second);
  EXPECT_EQ(third.path(), path);
  expect_tables_equal(read_table(path), third.read());
  static_assert(!std::is_copy_constructible_v<FileReader> && !std::is_copy_assignable_v<FileReader>);
  static_assert(std::is_nothrow_move_constructible_v<FileReader> && std::is_nothrow_move_assignable_v<FileReader>);
}

}  // namespace
}  // namespace feedline::parquet
