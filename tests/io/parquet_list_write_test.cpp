// List columns through our own writer and reader: every element type, nullable lists and elements, codecs,
// dictionary or PLAIN, row groups and pages cut inside long runs of lists (and only where a row starts), the
// exact levels and statistics of a small column, and the writer's refusals of inconsistent list columns; and
// the same of lists of lists, two and three levels deep.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "io/parquet/codec.h"
#include "io/parquet/metadata.h"
#include "io/parquet/rle.h"
#include "io/parquet/thrift_compact.h"
#include "io/parquet_test_support.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

namespace fmt = format;
using feedline::testing::expect_tables_equal;
using feedline::testing::file_bytes;
using feedline::testing::random_list_table;
using feedline::testing::RandomTableSpec;
using feedline::testing::scratch_dir;
using feedline::testing::write_and_expect_read_back;

fmt::FileMetaData footer(const std::string& file) {
  uint32_t len = 0;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  const size_t at = file.size() - 8 - len;
  thrift::CompactReader in(reinterpret_cast<const uint8_t*>(file.data()) + at, len, static_cast<int64_t>(at));
  return fmt::read_file_metadata(in);
}

struct LevelSink {
  std::vector<uint8_t>* out;
  void run(uint32_t v, int64_t n) { out->insert(out->end(), static_cast<size_t>(n), static_cast<uint8_t>(v)); }
  void literal(const uint32_t* v, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out->push_back(static_cast<uint8_t>(v[i]));
  }
};

// One data page v1 of a list column, as written: its level entries' repetition and definition levels.
struct ListPage {
  std::vector<uint8_t> rep, def;
};

// Every data page of column `c` in row group `g`, levels decoded (RLE with a 4-byte length, as v1 stores them).
std::vector<ListPage> list_pages(const std::string& file, const fmt::FileMetaData& md, size_t g, size_t c,
                                 int max_def, int max_rep = 1) {
  const fmt::ColumnMetaData& cm = *md.row_groups.at(g).columns.at(c).meta_data;
  int64_t at = cm.dictionary_page_offset.value_or(cm.data_page_offset);
  const int64_t end = at + cm.total_compressed_size;
  std::vector<ListPage> pages;
  while (at < end) {
    const auto* base = reinterpret_cast<const uint8_t*>(file.data()) + at;
    thrift::CompactReader in(base, static_cast<size_t>(end - at), at);
    const fmt::PageHeader h = fmt::read_page_header(in);
    const uint8_t* body = base + in.position();
    at += static_cast<int64_t>(in.position()) + h.compressed_page_size;
    if (h.type != fmt::page_type::kDataPage) continue;
    std::vector<uint8_t> plain(static_cast<size_t>(h.uncompressed_page_size));
    decompress(codec_from_thrift(cm.codec), body, static_cast<size_t>(h.compressed_page_size), plain.data(),
               plain.size());
    ListPage page;
    const int64_t n = h.data_page_header->num_values;
    size_t p = 0;
    for (auto [levels, max] : {std::make_pair(&page.rep, max_rep), std::make_pair(&page.def, max_def)}) {
      uint32_t len = 0;
      std::memcpy(&len, plain.data() + p, 4);
      RleBitPackedDecoder decoder(plain.data() + p + 4, len, bit_width_for(static_cast<uint64_t>(max)));
      LevelSink sink{levels};
      decoder.decode(n, sink);
      p += 4 + len;
    }
    pages.push_back(std::move(page));
  }
  return pages;
}

// write_table refuses the table with InvalidArgument: `message`, after the path.
void expect_write_refused(const std::string& path, const Table& t, const std::string& message) {
  try {
    write_table(path, t);
    ADD_FAILURE() << "written: " << message;
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": " + message), std::string::npos) << e.what();
  }
}

using Case = feedline::testing::RoundTripCase;

class ListRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(ListRoundTrip, EveryElementTypeAndNullability) {
  const Case& c = GetParam();
  RandomTableSpec spec;
  spec.rows = 1500;
  spec.distinct = c.distinct;
  const Table t = random_list_table(5 + static_cast<uint64_t>(c.codec), spec);
  const std::string path = scratch_dir("list-roundtrip") + "/lists.parquet";
  write_and_expect_read_back(t, c, path);

  const FileInfo info = read_file_info(path);
  ASSERT_EQ(info.row_groups.size(), static_cast<size_t>((t.num_rows + c.row_group_rows - 1) / c.row_group_rows));
  const std::string file = file_bytes(path);
  const fmt::FileMetaData md = footer(file);
  bool saw_dictionary = false;
  int64_t most_pages = 0;
  for (size_t col = 0; col < t.columns.size(); ++col) {
    const Column& column = t.columns[col];
    SCOPED_TRACE(column.schema.name);
    const int max_def = (column.schema.nullable ? 1 : 0) + 1 + (column.schema.element_nullable ? 1 : 0);
    int64_t r0 = 0;
    for (size_t g = 0; g < md.row_groups.size(); ++g) {
      const int64_t r1 = r0 + md.row_groups[g].num_rows;
      // Entries and entries without a value (null lists, empty lists, null elements) of rows [r0, r1).
      int64_t entries = 0, without_value = 0;
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t n = column.list_size(r);
        entries += n == 0 ? 1 : n;
        without_value += n == 0 ? 1 : 0;
        for (int64_t e = column.list_offsets[r]; e < column.list_offsets[r + 1]; ++e) {
          without_value += column.element_is_null(e);
        }
      }
      const fmt::ColumnMetaData& cm = *md.row_groups[g].columns[col].meta_data;
      EXPECT_EQ(cm.path_in_schema, (std::vector<std::string>{column.schema.name, "list", "element"}));
      EXPECT_EQ(cm.num_values, entries);
      EXPECT_EQ(info.row_groups[g].columns[col].null_count, without_value);
      for (const int32_t e : cm.encodings) saw_dictionary |= e == fmt::encoding::kRleDictionary;
      // Every page starts a row, and the pages' rows add up to the row group's.
      const std::vector<ListPage> pages = list_pages(file, md, g, col, max_def);
      int64_t rows = 0, page_entries = 0;
      for (const ListPage& page : pages) {
        ASSERT_FALSE(page.rep.empty());
        EXPECT_EQ(page.rep[0], 0) << "a page of row group " << g << " starts inside a list";
        for (size_t i = 0; i < page.rep.size(); ++i) {
          rows += page.rep[i] == 0;
          EXPECT_LE(page.def[i], max_def);
        }
        page_entries += static_cast<int64_t>(page.rep.size());
      }
      EXPECT_EQ(rows, r1 - r0);
      EXPECT_EQ(page_entries, entries);
      most_pages = std::max(most_pages, static_cast<int64_t>(pages.size()));
      r0 = r1;
    }
  }
  EXPECT_EQ(saw_dictionary, c.dictionary);
  if (c.page_bytes <= 2000) EXPECT_GE(most_pages, 5);  // small pages: the cuts above were exercised
}

INSTANTIATE_TEST_SUITE_P(
    Parquet, ListRoundTrip,
    ::testing::Values(Case{Codec::kUncompressed, false, 1 << 20, 1 << 20, 0},
                      Case{Codec::kUncompressed, true, 1 << 20, 1 << 20, 16},
                      Case{Codec::kSnappy, false, 700, 1000, 0}, Case{Codec::kSnappy, true, 700, 1000, 5},
                      Case{Codec::kGzip, true, 999, 300, 300}, Case{Codec::kZstd, false, 1 << 20, 64, 0},
                      Case{Codec::kZstd, true, 100, 4096, 3}, Case{Codec::kZstd, true, 1, 1 << 20, 2},
                      Case{Codec::kLz4Raw, false, 900, 2000, 0}, Case{Codec::kBrotli, true, 1000, 4096, 7}),
    [](const ::testing::TestParamInfo<Case>& info) {
      const Case& c = info.param;
      return std::string(to_string(c.codec)) + (c.dictionary ? "_dict" : "_plain") + "_rg" +
             std::to_string(c.row_group_rows) + "_page" + std::to_string(c.page_bytes) + "_distinct" +
             std::to_string(c.distinct);
    });

// [1, 2], null, [], [3, null], [null], [4]: the levels, schema and statistics, entry by entry, against the
// spec's three-level LIST with an optional list of optional elements (max definition level 3).
TEST(ParquetListWrite, ExactLevelsSchemaAndStatistics) {
  ColumnSchema s;
  s.name = "xs";
  s.type = PhysicalType::kInt32;
  s.int_annotation = IntAnnotation{16, true};
  s.is_list = true;
  s.nullable = true;
  s.element_nullable = true;
  Column c = make_column(s);
  c.as<int32_t>() = {1, 2, 3, 0, 0, -4};
  c.list_offsets = {0, 2, 2, 2, 4, 5, 6};
  c.validity = {1, 0, 1, 1, 1, 1};
  c.element_validity = {1, 1, 1, 0, 0, 1};
  Table t;
  t.num_rows = 6;
  t.columns.push_back(c);
  for (bool dictionary : {false, true}) {
    SCOPED_TRACE(dictionary ? "dictionary" : "plain");
    WriteOptions w;
    w.dictionary = dictionary;
    const std::string path = scratch_dir("list-exact") + "/xs.parquet";
    write_table(path, t, w);
    expect_tables_equal(t, read_table(path));

    const std::string file = file_bytes(path);
    const fmt::FileMetaData md = footer(file);
    ASSERT_EQ(md.schema.size(), 4u);
    EXPECT_EQ(md.schema[0].num_children, 1);
    const fmt::SchemaElement& group = md.schema[1];
    EXPECT_EQ(group.name, "xs");
    EXPECT_FALSE(group.type.has_value());
    EXPECT_EQ(group.repetition_type, fmt::repetition::kOptional);
    EXPECT_EQ(group.num_children, 1);
    ASSERT_TRUE(group.logical_type.has_value());
    EXPECT_EQ(group.logical_type->kind, fmt::logical::kList);
    EXPECT_EQ(group.converted_type, fmt::converted::kList);
    EXPECT_EQ(md.schema[2].name, "list");
    EXPECT_EQ(md.schema[2].repetition_type, fmt::repetition::kRepeated);
    EXPECT_EQ(md.schema[2].num_children, 1);
    EXPECT_FALSE(md.schema[2].type.has_value());
    const fmt::SchemaElement& element = md.schema[3];
    EXPECT_EQ(element.name, "element");
    EXPECT_EQ(element.type, fmt::type::kInt32);
    EXPECT_EQ(element.repetition_type, fmt::repetition::kOptional);
    EXPECT_EQ(element.converted_type, fmt::converted::kInt16);
    EXPECT_FALSE(element.num_children.has_value());

    const fmt::ColumnMetaData& cm = *md.row_groups.at(0).columns.at(0).meta_data;
    EXPECT_EQ(cm.num_values, 8);  // 2 + 1 + 1 + 2 + 1 + 1 entries
    ASSERT_TRUE(cm.statistics.has_value());
    EXPECT_EQ(cm.statistics->null_count, 4);  // the null list, the empty list, two null elements
    int32_t lo = 0, hi = 0;
    std::memcpy(&lo, cm.statistics->min_value->data(), 4);
    std::memcpy(&hi, cm.statistics->max_value->data(), 4);
    EXPECT_EQ(lo, -4);
    EXPECT_EQ(hi, 3);
    const std::vector<ListPage> pages = list_pages(file, md, 0, 0, 3);
    ASSERT_EQ(pages.size(), 1u);
    EXPECT_EQ(pages[0].rep, (std::vector<uint8_t>{0, 1, 0, 0, 0, 1, 0, 0}));
    EXPECT_EQ(pages[0].def, (std::vector<uint8_t>{3, 3, 0, 1, 3, 2, 2, 3}));
  }

  // Required lists of required elements: definition level 1 for every element, 0 for an empty list.
  s.nullable = false;
  s.element_nullable = false;
  Column r = make_column(s);
  r.as<int32_t>() = {7, 8, 9};
  r.list_offsets = {0, 1, 1, 3};
  Table req;
  req.num_rows = 3;
  req.columns.push_back(r);
  const std::string path = scratch_dir("list-exact-required") + "/r.parquet";
  write_table(path, req);
  expect_tables_equal(req, read_table(path));
  const std::string file = file_bytes(path);
  const fmt::FileMetaData md = footer(file);
  EXPECT_EQ(md.schema[1].repetition_type, fmt::repetition::kRequired);
  EXPECT_EQ(md.schema[3].repetition_type, fmt::repetition::kRequired);
  const std::vector<ListPage> pages = list_pages(file, md, 0, 0, 1);
  ASSERT_EQ(pages.size(), 1u);
  EXPECT_EQ(pages[0].rep, (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(pages[0].def, (std::vector<uint8_t>{1, 0, 1, 1}));
  EXPECT_EQ(md.row_groups[0].columns[0].meta_data->statistics->null_count, 1);
}

// Lists beside flat columns, a list column of one long list per row group, and one that is all null lists.
TEST(ParquetListWrite, LongListsAndAllNullLists) {
  Table t;
  t.num_rows = 4;
  ColumnSchema flat{"id", PhysicalType::kInt64, false, std::nullopt, false};
  Column id = make_column(flat);
  id.as<int64_t>() = {10, 11, 12, 13};
  ColumnSchema ls;
  ls.name = "long";
  ls.type = PhysicalType::kDouble;
  ls.is_list = true;
  Column long_lists = make_column(ls);
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t e = 0; e < 50000; ++e) long_lists.as<double>().push_back(static_cast<double>(r * 50000 + e) * 0.25);
    long_lists.list_offsets.push_back(long_lists.list_offsets.back() + 50000);
  }
  ls.name = "nothing";
  ls.type = PhysicalType::kByteArray;
  ls.is_string = true;
  ls.nullable = true;
  Column nothing = make_column(ls);
  nothing.list_offsets.assign(5, 0);
  nothing.validity.assign(4, 0);
  t.columns = {id, long_lists, nothing};
  WriteOptions w;
  w.row_group_rows = 2;
  w.page_bytes = 1000;  // far less than one list: each list is a page of its own
  const std::string path = scratch_dir("list-long") + "/long.parquet";
  write_table(path, t, w);
  expect_tables_equal(t, read_table(path));
  const std::string file = file_bytes(path);
  const fmt::FileMetaData md = footer(file);
  ASSERT_EQ(md.row_groups.size(), 2u);
  for (size_t g = 0; g < 2; ++g) {
    const std::vector<ListPage> pages = list_pages(file, md, g, 1, 1);
    ASSERT_EQ(pages.size(), 2u);
    for (const ListPage& p : pages) EXPECT_EQ(p.rep.size(), 50000u);
    const fmt::ColumnMetaData& none = *md.row_groups[g].columns[2].meta_data;
    EXPECT_EQ(none.num_values, 2);
    EXPECT_EQ(none.statistics->null_count, 2);
    EXPECT_FALSE(none.statistics->min_value.has_value());
  }
}

TEST(ParquetListWrite, RejectsInconsistentListColumns) {
  const std::string path = scratch_dir("list-reject") + "/r.parquet";
  // [1, 2], [], [3] with nullable lists and elements; each case breaks one thing.
  auto good = [] {
    ColumnSchema s;
    s.name = "l";
    s.type = PhysicalType::kInt64;
    s.is_list = true;
    s.nullable = true;
    s.element_nullable = true;
    Column c = make_column(s);
    c.as<int64_t>() = {1, 2, 3};
    c.list_offsets = {0, 2, 2, 3};
    Table t;
    t.num_rows = 3;
    t.columns.push_back(c);
    return t;
  };
  const auto expect_refused = [&](const Table& t, const std::string& message) {
    expect_write_refused(path, t, message);
  };
  write_table(path, good());
  std::remove(path.c_str());

  Table t = good();
  t.columns[0].list_offsets = {0, 2, 3};
  expect_refused(t, "column 'l': list_offsets holds 3 entries for 3 rows (rows + 1 needed)");
  t = good();
  t.columns[0].list_offsets.clear();
  expect_refused(t, "column 'l': list_offsets holds 0 entries for 3 rows");
  t = good();
  t.columns[0].list_offsets = {1, 2, 2, 3};
  expect_refused(t, "column 'l': list_offsets starts at 1, not 0");
  t = good();
  t.columns[0].list_offsets = {0, 2, 1, 3};
  expect_refused(t, "column 'l': list_offsets decreases at row 1");
  t = good();
  t.columns[0].list_offsets = {0, 2, 2, 2};
  expect_refused(t, "column 'l': list_offsets ends at 2, its values hold 3 elements");
  t = good();
  t.columns[0].element_validity = {1, 0};
  expect_refused(t, "column 'l': element_validity holds 2 entries for 3 elements");
  t = good();
  t.columns[0].element_validity = {1, 2, 1};
  expect_refused(t, "column 'l': element_validity bytes must be 0 or 1");
  t = good();
  t.columns[0].schema.element_nullable = false;
  t.columns[0].element_validity = {1, 1, 0};
  t.columns[0].as<int64_t>()[2] = 0;
  expect_refused(t, "column 'l': its elements are not nullable but element 2 is null");
  t = good();
  t.columns[0].validity = {1, 1, 0};
  expect_refused(t, "column 'l' row 2 is a null list holding 1 elements");
  t = good();
  t.columns[0].schema.nullable = false;
  t.columns[0].validity = {1, 0, 1};  // the empty list marked null
  expect_refused(t, "column 'l' is not nullable but holds nulls");
  t = good();
  t.columns[0].validity = {1, 1};
  expect_refused(t, "column 'l': validity holds 2 entries for 3 rows");
  t = good();
  t.columns[0].schema.int_annotation = IntAnnotation{64, false};
  t.columns[0].schema.type = PhysicalType::kInt32;
  expect_refused(t, "column 'l': values do not match its type INT32");

  // A FIXED_LEN_BYTE_ARRAY element of the wrong length is named by its element number; a null one holds none.
  ColumnSchema fs;
  fs.name = "f";
  fs.type = PhysicalType::kFixedLenByteArray;
  fs.type_length = 2;
  fs.is_list = true;
  fs.element_nullable = true;
  Column f = make_column(fs);
  for (const char* v : {"ab", "", "c"}) std::get<ByteArrays>(f.values).push_back(v);
  f.list_offsets = {0, 3};
  f.element_validity = {1, 0, 1};
  Table ft;
  ft.num_rows = 1;
  ft.columns.push_back(f);
  expect_refused(ft, "column 'f' element 2 holds 1 bytes, its FIXED_LEN_BYTE_ARRAY type_length is 2");
  // Nothing was left behind by the failed writes.
  EXPECT_THROW(read_table(path), IoError);
}

// The definition level of a present value in a list of lists: each level adds one, and one more when it may be
// null; an optional element one more.
int nested_max_def(const ColumnSchema& s) {
  int def = (s.nullable ? 1 : 0) + 1 + (s.element_nullable ? 1 : 0);
  for (const bool nullable : s.inner_list_nullable) def += (nullable ? 1 : 0) + 1;
  return def;
}

using NestedCase = std::pair<int, Case>;  // depth, write options

class NestedListRoundTrip : public ::testing::TestWithParam<NestedCase> {};

TEST_P(NestedListRoundTrip, EveryNullabilityOfEveryLevel) {
  const auto& [depth, c] = GetParam();
  RandomTableSpec spec;
  spec.rows = 900;
  spec.distinct = c.distinct;
  const Table t = feedline::testing::random_nested_list_table(7 + static_cast<uint64_t>(c.codec), spec, depth);
  ASSERT_EQ(t.columns.size(), size_t{1} << (depth + 1));
  // Each level of some column holds a null list, an empty list and a long one, and some element is null.
  for (int level = 0; level < depth; ++level) {
    bool null = false, empty = false, long_list = false;
    for (const Column& col : t.columns) {
      const std::vector<int64_t>& o = level == 0 ? col.list_offsets : col.inner_lists[level - 1].offsets;
      const std::vector<uint8_t>& v = level == 0 ? col.validity : col.inner_lists[level - 1].validity;
      for (size_t i = 0; i + 1 < o.size(); ++i) {
        const bool is_null = !v.empty() && v[i] == 0;
        null |= is_null;
        empty |= !is_null && o[i + 1] == o[i];
        long_list |= o[i + 1] - o[i] >= 20;
      }
    }
    EXPECT_TRUE(null && empty && long_list) << "level " << level;
  }
  const std::string path = scratch_dir("nested-list-roundtrip") + "/nested.parquet";
  write_and_expect_read_back(t, c, path);

  const std::string file = file_bytes(path);
  const fmt::FileMetaData md = footer(file);
  ASSERT_EQ(md.row_groups.size(), static_cast<size_t>((t.num_rows + c.row_group_rows - 1) / c.row_group_rows));
  std::vector<std::string> path_in_schema{"", "list", "element"};
  for (int k = 1; k < depth; ++k) path_in_schema.insert(path_in_schema.end(), {"list", "element"});
  int64_t most_pages = 0;
  for (size_t col = 0; col < t.columns.size(); ++col) {
    const Column& column = t.columns[col];
    SCOPED_TRACE(column.schema.name);
    const int max_def = nested_max_def(column.schema);
    path_in_schema[0] = column.schema.name;
    int64_t r0 = 0;
    for (size_t g = 0; g < md.row_groups.size(); ++g) {
      const int64_t r1 = r0 + md.row_groups[g].num_rows;
      const fmt::ColumnMetaData& cm = *md.row_groups[g].columns[col].meta_data;
      EXPECT_EQ(cm.path_in_schema, path_in_schema);
      // Every page starts a row; repetition levels run to the depth, definition levels to max_def, which only
      // present values reach.
      const std::vector<ListPage> pages = list_pages(file, md, g, col, max_def, depth);
      int64_t rows = 0, entries = 0, values = 0;
      for (const ListPage& page : pages) {
        ASSERT_FALSE(page.rep.empty());
        EXPECT_EQ(page.rep[0], 0) << "a page of row group " << g << " starts inside a list";
        for (size_t i = 0; i < page.rep.size(); ++i) {
          rows += page.rep[i] == 0;
          EXPECT_LE(page.rep[i], depth);
          EXPECT_LE(page.def[i], max_def);
          values += page.def[i] == max_def;
        }
        entries += static_cast<int64_t>(page.rep.size());
      }
      EXPECT_EQ(rows, r1 - r0);
      EXPECT_EQ(cm.num_values, entries);
      ASSERT_TRUE(cm.statistics.has_value());
      EXPECT_EQ(cm.statistics->null_count, entries - values);
      most_pages = std::max(most_pages, static_cast<int64_t>(pages.size()));
      r0 = r1;
    }
  }
  if (c.page_bytes <= 2000) EXPECT_GE(most_pages, 3);  // small pages: the cuts above were exercised
}

INSTANTIATE_TEST_SUITE_P(
    Parquet, NestedListRoundTrip,
    ::testing::Values(NestedCase{2, Case{Codec::kUncompressed, false, 1 << 20, 1 << 20, 0}},
                      NestedCase{2, Case{Codec::kSnappy, true, 300, 700, 5}},
                      NestedCase{2, Case{Codec::kZstd, true, 1, 1 << 20, 2}},
                      NestedCase{3, Case{Codec::kZstd, false, 400, 500, 0}},
                      NestedCase{3, Case{Codec::kGzip, true, 1 << 20, 2000, 40}},
                      NestedCase{4, Case{Codec::kLz4Raw, true, 250, 1500, 0}}),
    [](const ::testing::TestParamInfo<NestedCase>& info) {
      const Case& c = info.param.second;
      return "depth" + std::to_string(info.param.first) + "_" + to_string(c.codec) +
             (c.dictionary ? "_dict" : "_plain") + "_rg" + std::to_string(c.row_group_rows) + "_page" +
             std::to_string(c.page_bytes);
    });

// [[1, 2], null, []], [[3]], null, [], [[null]] as list<list<INT32>> with every level and the elements
// optional: the levels entry by entry, the schema and the statistics, against Dremel's encoding by hand. A null
// list at the outer level has definition level 0, an empty one 1, a null inner list 2, an empty one 3, a null
// element 4, a value 5; repetition level 2 continues an inner list, 1 the outer list.
TEST(ParquetListWrite, ListsOfListsExactLevelsAndSchema) {
  ColumnSchema s;
  s.name = "xs";
  s.type = PhysicalType::kInt32;
  s.is_list = true;
  s.nullable = true;
  s.inner_list_nullable = {true};
  s.element_nullable = true;
  Column c = make_column(s);
  c.list_offsets = {0, 3, 4, 4, 4, 5};
  c.validity = {1, 1, 0, 1, 1};
  c.inner_lists[0].offsets = {0, 2, 2, 2, 3, 4};
  c.inner_lists[0].validity = {1, 0, 1, 1, 1};
  c.as<int32_t>() = {1, 2, 3, 0};
  c.element_validity = {1, 1, 1, 0};
  Table t;
  t.num_rows = 5;
  t.columns.push_back(c);
  const std::string path = scratch_dir("nested-list-exact") + "/xs.parquet";
  write_table(path, t);
  expect_tables_equal(t, read_table(path));

  const std::string file = file_bytes(path);
  const fmt::FileMetaData md = footer(file);
  ASSERT_EQ(md.schema.size(), 6u);
  const char* names[] = {"xs", "list", "element", "list", "element"};
  const int32_t repetitions[] = {fmt::repetition::kOptional, fmt::repetition::kRepeated, fmt::repetition::kOptional,
                                 fmt::repetition::kRepeated, fmt::repetition::kOptional};
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    const fmt::SchemaElement& e = md.schema[i + 1];
    EXPECT_EQ(e.name, names[i]);
    EXPECT_EQ(e.repetition_type, repetitions[i]);
    EXPECT_EQ(e.type.has_value(), i == 4);
    EXPECT_EQ(e.num_children, i == 4 ? std::nullopt : std::optional<int32_t>(1));
    const bool list_group = i == 0 || i == 2;
    EXPECT_EQ(e.logical_type.has_value() && e.logical_type->kind == fmt::logical::kList, list_group);
    EXPECT_EQ(e.converted_type == fmt::converted::kList, list_group);
  }
  const fmt::ColumnMetaData& cm = *md.row_groups.at(0).columns.at(0).meta_data;
  EXPECT_EQ(cm.path_in_schema, (std::vector<std::string>{"xs", "list", "element", "list", "element"}));
  EXPECT_EQ(cm.num_values, 8);
  EXPECT_EQ(cm.statistics->null_count, 5);  // all but the three values
  const std::vector<ListPage> pages = list_pages(file, md, 0, 0, 5, 2);
  ASSERT_EQ(pages.size(), 1u);
  EXPECT_EQ(pages[0].rep, (std::vector<uint8_t>{0, 2, 1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(pages[0].def, (std::vector<uint8_t>{5, 5, 2, 3, 5, 0, 1, 4}));

  // Required at every level: an empty outer list is 0, an empty inner list 1, a value 2.
  s.nullable = false;
  s.inner_list_nullable = {false};
  s.element_nullable = false;
  Column r = make_column(s);
  r.list_offsets = {0, 2, 2};     // [[7], []], []
  r.inner_lists[0].offsets = {0, 1, 1};
  r.as<int32_t>() = {7};
  Table req;
  req.num_rows = 2;
  req.columns.push_back(r);
  write_table(path, req);
  expect_tables_equal(req, read_table(path));
  const std::string req_file = file_bytes(path);
  const std::vector<ListPage> req_pages = list_pages(req_file, footer(req_file), 0, 0, 2, 2);
  ASSERT_EQ(req_pages.size(), 1u);
  EXPECT_EQ(req_pages[0].rep, (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(req_pages[0].def, (std::vector<uint8_t>{2, 1, 0}));
}

TEST(ParquetListWrite, RejectsInconsistentListsOfLists) {
  const std::string path = scratch_dir("nested-list-reject") + "/r.parquet";
  // [[1, 2], []], [[3]] with nullable inner lists; each case breaks one thing.
  auto good = [] {
    ColumnSchema s;
    s.name = "l";
    s.type = PhysicalType::kInt64;
    s.is_list = true;
    s.inner_list_nullable = {true};
    Column c = make_column(s);
    c.as<int64_t>() = {1, 2, 3};
    c.list_offsets = {0, 2, 3};
    c.inner_lists[0].offsets = {0, 2, 2, 3};
    Table t;
    t.num_rows = 2;
    t.columns.push_back(c);
    return t;
  };
  const auto expect_refused = [&](const Table& t, const std::string& message) {
    expect_write_refused(path, t, message);
  };
  write_table(path, good());
  expect_tables_equal(good(), read_table(path));
  std::remove(path.c_str());

  Table t = good();
  t.columns[0].inner_lists.clear();
  expect_refused(t, "column 'l': inner_lists holds 0 levels, its schema 1");
  t = good();
  t.columns[0].inner_lists[0].offsets = {0, 2, 3};
  expect_refused(t, "column 'l': inner_lists[0].offsets holds 3 entries for 3 lists (lists + 1 needed)");
  t = good();
  t.columns[0].inner_lists[0].offsets = {1, 2, 2, 3};
  expect_refused(t, "column 'l': inner_lists[0].offsets starts at 1, not 0");
  t = good();
  t.columns[0].inner_lists[0].offsets = {0, 2, 1, 3};
  expect_refused(t, "column 'l': inner_lists[0].offsets decreases at list 1");
  t = good();
  t.columns[0].inner_lists[0].offsets = {0, 2, 2, 2};
  expect_refused(t, "column 'l': inner_lists[0].offsets ends at 2, its values hold 3 elements");
  t = good();
  t.columns[0].list_offsets = {0, 2, 4};
  expect_refused(t, "column 'l': inner_lists[0].offsets holds 4 entries for 4 lists (lists + 1 needed)");
  t = good();
  t.columns[0].inner_lists[0].validity = {1, 1};
  expect_refused(t, "column 'l': inner_lists[0].validity holds 2 entries for 3 lists");
  t = good();
  t.columns[0].inner_lists[0].validity = {1, 2, 1};
  expect_refused(t, "column 'l': inner_lists[0].validity bytes must be 0 or 1");
  t = good();
  t.columns[0].inner_lists[0].validity = {0, 1, 1};
  expect_refused(t, "column 'l' level 2 list 0 is a null list holding 2 elements");
  t = good();
  t.columns[0].schema.inner_list_nullable = {false};
  t.columns[0].inner_lists[0].validity = {1, 0, 1};  // the empty inner list marked null
  expect_refused(t, "column 'l': its lists at level 2 are not nullable but list 1 is null");
  // Nothing was left behind by the failed writes.
  EXPECT_THROW(read_table(path), IoError);

  // 30 levels of lists, [[[...[5]...]]], are written and read back; 31 are refused.
  const auto deep = [](int depth) {
    ColumnSchema s;
    s.name = "deep";
    s.type = PhysicalType::kInt32;
    s.is_list = true;
    s.nullable = true;
    s.inner_list_nullable.assign(static_cast<size_t>(depth - 1), true);
    s.element_nullable = true;
    Column c = make_column(s);
    c.list_offsets = {0, 1};
    for (ListLevel& level : c.inner_lists) level.offsets = {0, 1};
    c.as<int32_t>() = {5};
    Table t;
    t.num_rows = 1;
    t.columns.push_back(c);
    return t;
  };
  write_table(path, deep(30));
  expect_tables_equal(deep(30), read_table(path));
  expect_refused(deep(31), "column 'deep' nests lists 31 deep; at most 30 are written");
}

// The corpus' lists of lists (three levels; and the legacy two-level form) read, written by us and read back:
// the same table, now in the three-level form at every level.
TEST(ParquetListWrite, CorpusListsOfListsWriteBack) {
  for (const char* name : {"nested_lists.snappy.parquet", "old_list_structure.parquet"}) {
    SCOPED_TRACE(name);
    const Table nested = read_table(feedline::testing::parquet_testing_dir() + "/data/" + name);
    ASSERT_GT(nested.columns.at(0).schema.list_depth(), 1);
    const std::string path = scratch_dir("nested-list-corpus") + "/" + name;
    write_table(path, nested);
    expect_tables_equal(nested, read_table(path));
  }
}

}  // namespace
}  // namespace feedline::parquet
