// FileWriter: a file written a table at a time is the file write_table() writes from the whole table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "io/parquet/metadata.h"
#include "io/parquet/thrift_compact.h"
#include "io/parquet_test_support.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

using feedline::testing::expect_tables_equal;
using feedline::testing::random_list_table;
using feedline::testing::random_table;
using feedline::testing::RandomTableSpec;
using feedline::testing::scratch_dir;

std::vector<ColumnSchema> schema_of(const Table& t) {
  std::vector<ColumnSchema> schema;
  for (const Column& c : t.columns) schema.push_back(c.schema);
  return schema;
}

// Every file in `dir`, to check that nothing (no temporary file) was left behind.
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

// Pieces of uneven sizes, some empty, some larger than a row group, cut across row groups: the same bytes as
// write_table(), for flat columns of every type, for lists and for lists of lists.
TEST(FileWriter, PiecesGiveTheBytesOfWriteTable) {
  RandomTableSpec spec;
  spec.rows = 1300;
  for (const Table& t : {random_table(7, spec), random_list_table(8, spec),
                         feedline::testing::random_nested_list_table(9, spec, 3)}) {
    const std::string dir = scratch_dir("file_writer_pieces");
    WriteOptions options;
    options.row_group_rows = 300;
    options.page_bytes = 4096;
    write_table(dir + "/whole.parquet", t, options);
    FileWriter writer(dir + "/pieces.parquet", schema_of(t), options);
    const std::vector<int64_t> cuts{0, 1, 1, 299, 301, 950, 1300};
    for (size_t k = 1; k < cuts.size(); ++k) writer.write(slice(t, cuts[k - 1], cuts[k]));
    EXPECT_EQ(writer.num_rows(), t.num_rows);
    EXPECT_FALSE(std::filesystem::exists(dir + "/pieces.parquet"));  // not before close()
    writer.close();
    EXPECT_EQ(read_file(dir + "/pieces.parquet"), read_file(dir + "/whole.parquet"));
    EXPECT_EQ(read_file_info(dir + "/pieces.parquet").row_groups.size(), 5u);
    expect_tables_equal(t, read_table(dir + "/pieces.parquet"));
  }
}

// A table of another schema is refused whole, naming the file and the column, and the writer goes on.
TEST(FileWriter, RefusesAnotherSchemaAndGoesOn) {
  const std::string dir = scratch_dir("file_writer_schema");
  const std::string path = dir + "/t.parquet";
  Table t;
  t.num_rows = 2;
  t.columns.push_back(make_column(ColumnSchema{"x", PhysicalType::kInt64}));
  t.columns[0].as<int64_t>() = {1, 2};
  FileWriter writer(path, schema_of(t));
  auto expect_refused = [&](const Table& bad, const std::string& says) {
    try {
      writer.write(bad);
      ADD_FAILURE() << "no error for " << says;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  Table other = t;
  other.columns[0].schema.name = "y";
  expect_refused(other, "the table has column 'y'");
  other = t;
  other.columns[0].schema.nullable = true;
  expect_refused(other, "the file's column is required");
  other = t;
  other.columns[0].schema.int_annotation = IntAnnotation{64, false};
  expect_refused(other, "another type or annotation");
  other = t;
  other.columns.push_back(t.columns[0]);
  expect_refused(other, "2 columns, the file 1");
  other = t;
  other.columns[0].as<int64_t>().pop_back();  // 1 value for 2 rows: write_table's own check, with the path
  expect_refused(other, "holds 1 values for 2 rows");
  writer.write(t);
  writer.close();
  expect_tables_equal(t, read_table(path));
  EXPECT_THROW(writer.write(t), InvalidArgument);
  EXPECT_THROW(writer.close(), InvalidArgument);
}

// Destroyed before close(), or refused at construction, a writer leaves nothing in the folder.
TEST(FileWriter, LeavesNothingWithoutClose) {
  const std::string dir = scratch_dir("file_writer_abandon");
  RandomTableSpec spec;
  spec.rows = 50;
  const Table t = random_table(3, spec);
  {
    FileWriter writer(dir + "/t.parquet", schema_of(t));
    writer.write(t);
  }
  EXPECT_TRUE(files_in(dir).empty());
  WriteOptions bad;
  bad.row_group_rows = 0;
  try {
    FileWriter writer(dir + "/t.parquet", schema_of(t), bad);
    ADD_FAILURE() << "row_group_rows 0 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/t.parquet: row_group_rows"), std::string::npos) << e.what();
  }
  std::vector<ColumnSchema> twice = schema_of(t);
  twice.push_back(twice.front());
  EXPECT_THROW(FileWriter(dir + "/t.parquet", twice), InvalidArgument);
  EXPECT_TRUE(files_in(dir).empty());
}

// No write() at all: a file of the schema and no rows.
TEST(FileWriter, NoRowsGiveAnEmptyFileOfTheSchema) {
  const std::string path = scratch_dir("file_writer_empty") + "/t.parquet";
  RandomTableSpec spec;
  spec.rows = 10;
  const Table t = random_table(5, spec);
  FileWriter writer(path, schema_of(t));
  writer.close();
  const Table back = read_table(path);
  EXPECT_EQ(back.num_rows, 0);
  expect_tables_equal(head(t, 0), back);
}

}  // namespace
}  // namespace feedline::parquet

namespace feedline::parquet {
namespace {

// Strings of every length from 0 to 40 bytes (a short one is copied by a fixed-size move, a long one by a copy
// sized to it), in runs and in literal batches, among nulls, on pages of a few hundred values (so that values of
// many lengths end a page): read back as written, whatever the codec, from dictionary pages and from PLAIN ones.
TEST(Writer, StringsOfEveryLengthReadBack) {
  std::vector<std::string> words;
  for (int len = 0; len <= 40; ++len) {
    std::string w;
    for (int j = 0; j < len; ++j) w += static_cast<char>('a' + (len * 7 + j) % 26);
    words.push_back(w);
  }
  ColumnSchema s{"word", PhysicalType::kByteArray};
  s.nullable = true;
  s.is_string = true;
  Table t;
  t.columns = {make_column(s)};
  t.num_rows = 6000;
  ByteArrays& values = std::get<ByteArrays>(t.columns[0].values);
  t.columns[0].validity.assign(6000, 1);
  std::mt19937_64 rng(42);
  for (int64_t r = 0; r < t.num_rows;) {
    const size_t word = rng() % words.size();
    const int64_t repeat = rng() % 4 == 0 ? 1 + static_cast<int64_t>(rng() % 30) : 1;  // runs among literals
    for (int64_t k = 0; k < repeat && r < t.num_rows; ++k, ++r) {
      if (rng() % 17 == 0) {
        t.columns[0].validity[static_cast<size_t>(r)] = 0;
        values.push_back("");
      } else {
        values.push_back(words[word]);
      }
    }
  }
  for (const bool dictionary : {true, false}) {
    for (const Codec codec : {Codec::kUncompressed, Codec::kSnappy, Codec::kZstd}) {
      WriteOptions w;
      w.codec = codec;
      w.dictionary = dictionary;
      w.page_bytes = 1000;  // pages of a few hundred values
      const std::string path = scratch_dir("writer-strings") + "/words.parquet";
      write_table(path, t, w);
      const std::vector<std::string> encodings = read_file_info(path).row_groups.at(0).columns.at(0).encodings;
      const std::string expected = dictionary ? "RLE_DICTIONARY" : "PLAIN";
      EXPECT_NE(std::find(encodings.begin(), encodings.end(), expected), encodings.end()) << expected;
      if (!dictionary) {
        EXPECT_EQ(std::find(encodings.begin(), encodings.end(), "RLE_DICTIONARY"), encodings.end());
      }
      expect_tables_equal(t, read_table(path));
    }
  }
}

// A dictionary-encoded data page whose entries are all null still holds the indices' bit width, as readers expect
// (one that reads it whatever the count would otherwise read past the page).
TEST(Writer, AllNullDictionaryPagesKeepTheirBitWidth) {
  ColumnSchema s{"x"};
  s.nullable = true;
  Table t;
  t.columns = {make_column(s)};
  t.num_rows = 2000;
  t.columns[0].as<int64_t>().assign(2000, 0);
  t.columns[0].validity.assign(2000, 0);
  for (int i = 0; i < 10; ++i) {
    t.columns[0].as<int64_t>()[static_cast<size_t>(i)] = i % 3;
    t.columns[0].validity[static_cast<size_t>(i)] = 1;
  }
  WriteOptions w;
  w.codec = Codec::kUncompressed;
  w.page_bytes = 64;
  w.page_checksums = false;
  const std::string path = scratch_dir("writer-null-dict") + "/nulls.parquet";
  write_table(path, t, w);
  expect_tables_equal(t, read_table(path));

  const std::string file = feedline::testing::file_bytes(path);
  const auto* bytes = reinterpret_cast<const uint8_t*>(file.data());
  int64_t pos = 4;  // the chunk's pages follow the magic
  int null_pages = 0, dictionary_pages = 0;
  while (pos < static_cast<int64_t>(file.size()) - 8) {
    thrift::CompactReader reader(bytes + pos, file.size() - static_cast<size_t>(pos), pos);
    format::PageHeader h;
    try {
      h = format::read_page_header(reader);
    } catch (const InvalidFile&) {
      break;  // the footer
    }
    const int64_t body = pos + static_cast<int64_t>(reader.position());
    if (h.type == format::page_type::kDataPage && h.data_page_header->encoding == format::encoding::kRleDictionary) {
      ++dictionary_pages;
      uint32_t levels;  // v1: the definition levels' byte length, then the levels, then the indices
      std::memcpy(&levels, file.data() + body, 4);
      const int64_t values = 4 + static_cast<int64_t>(levels);
      ASSERT_GT(h.uncompressed_page_size, values) << "a dictionary page without its bit width, at offset " << pos;
      EXPECT_LE(bytes[body + values], 32) << "at offset " << pos;
      if (h.uncompressed_page_size == values + 1) ++null_pages;
    }
    pos = body + h.compressed_page_size;
  }
  EXPECT_GT(dictionary_pages, 2);
  EXPECT_GT(null_pages, 0);
}

}  // namespace
}  // namespace feedline::parquet
