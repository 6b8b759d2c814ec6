// Hostile list levels and pages: levels that contradict the schema at one, two and three levels of lists, and
// faults in a page amid others, which must give the same error whether a chunk's pages decode on one thread or
// apart on several. Everything must read or throw feedline::Error: never crash, hang or allocate without bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "io/parquet/delta.h"
#include "io/parquet/dictionary.h"
#include "io/parquet/metadata.h"
#include "io/parquet/rle.h"
#include "io/parquet_hostile_support.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

using feedline::testing::data_page_header;
using feedline::testing::expect_throw_with;
using feedline::testing::Int32Page;
using feedline::testing::int32_leaf_file;
using feedline::testing::int32_list_schema;
using feedline::testing::list_file;
using feedline::testing::list_file_of_pages;
using feedline::testing::make_file;
using feedline::testing::one_column_metadata;
using feedline::testing::page;
using feedline::testing::scratch_dir;
using feedline::testing::write_bytes;
namespace fmt = format;

TEST(ParquetHostile, ListLevels) {
  const std::string path = scratch_dir("list-levels") + "/l.parquet";
  // [[5, null], [], null, [7]]: a valid file first.
  write_bytes(path, list_file(4, {0, 1, 0, 0, 0}, {3, 2, 1, 0, 3}, {5, 7}, true));
  const Table t = read_table(path);
  const Column& l = t.column("l");
  ASSERT_TRUE(l.schema.is_list);
  EXPECT_EQ(l.list_offsets, (std::vector<int64_t>{0, 2, 2, 2, 3}));
  EXPECT_EQ(l.as<int32_t>(), (std::vector<int32_t>{5, 0, 7}));
  EXPECT_EQ(l.element_validity, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(l.validity, (std::vector<uint8_t>{1, 1, 0, 1}));

  expect_throw_with<InvalidFile>(path, list_file(2, {0, 1, 0}, {2, 3, 2}, {1, 2, 3}, false),
                                 "column 'l', row group 0, page at offset 4: definition level 3 above the column's maximum 2");
  expect_throw_with<InvalidFile>(path, list_file(2, {1, 0, 0}, {3, 3, 3}, {1, 2, 3}, true),
                                 "repetition level 1 starts the chunk");
  expect_throw_with<InvalidFile>(path, list_file(2, {0, 0, 1}, {3, 1, 3}, {1, 2}, true),
                                 "repetition level 1 on a null or empty list");
  expect_throw_with<InvalidFile>(path, list_file(3, {0, 1, 0}, {3, 3, 3}, {1, 2, 3}, true),
                                 "list levels start 2 rows, the row group holds 3");
  expect_throw_with<InvalidFile>(path, list_file(1, {0, 1, 0}, {3, 3, 3}, {1, 2, 3}, true),
                                 "list levels start more rows than the row group's 1");
  expect_throw_with<InvalidFile>(path, list_file(2, {0, 1, 0}, {3, 3, 3}, {1, 2}, true),
                                 "PLAIN data holds 2 values, page declares 3");
}

// A list chunk of many pages (over a megabyte, so that its pages may decode on several threads), cut anywhere,
// inside lists too: read on one thread and on four, the same column, and each fault, in a page amid others,
// gives the same error naming that page.
TEST(ParquetHostile, ListChunkOfManyPagesReadsAlikeOnAnyThreads) {
  const std::string path = scratch_dir("list-pages") + "/l.parquet";
  // Rows: 10% null lists, 10% empty, the rest 1..120 elements with 5% null elements (definition levels 0, 1,
  // 3 and 2: `optional group l (LIST) { repeated group list { optional int32 element } }`).
  std::mt19937_64 rng(11);
  Column expected;  // its offsets and validities; the values (a null element's slot holds 0) beside it
  std::vector<int32_t> expected_values;
  std::vector<uint8_t> rep, def;
  std::vector<int32_t> present;
  const int64_t rows = 6000;
  expected.list_offsets.push_back(0);
  for (int64_t r = 0; r < rows; ++r) {
    const uint64_t kind = rng() % 10;
    expected.validity.push_back(kind != 0);
    if (kind <= 1) {
      rep.push_back(0);
      def.push_back(kind == 0 ? 0 : 1);
    } else {
      const int64_t length = 1 + static_cast<int64_t>(rng() % 120);
      for (int64_t e = 0; e < length; ++e) {
        const bool null_element = rng() % 20 == 0;
        const auto v = static_cast<int32_t>(rng());
        rep.push_back(e == 0 ? 0 : 1);
        def.push_back(null_element ? 2 : 3);
        if (!null_element) present.push_back(v);
        expected.element_validity.push_back(!null_element);
        expected_values.push_back(null_element ? 0 : v);
      }
    }
    expected.list_offsets.push_back(static_cast<int64_t>(expected.element_validity.size()));
  }
  // Pages of 9,000 to 25,000 entries, cut wherever that falls; but page 7 starts a row with an element after a
  // null or empty list (for a fault below).
  std::vector<Int32Page> pages;
  for (size_t at = 0, value = 0; at < rep.size();) {
    size_t n = std::min(rep.size() - at, static_cast<size_t>(9000 + rng() % 16000));
    if (pages.size() == 6) {
      while (at + n < rep.size() && !(def[at + n - 1] <= 1 && rep[at + n] == 0 && def[at + n] >= 2)) ++n;
    }
    Int32Page p;
    p.rep.assign(rep.begin() + at, rep.begin() + at + n);
    p.def.assign(def.begin() + at, def.begin() + at + n);
    const auto values = static_cast<size_t>(std::count(p.def.begin(), p.def.end(), 3));
    p.values.assign(present.begin() + value, present.begin() + value + values);
    pages.push_back(std::move(p));
    at += n;
    value += values;
  }
  ASSERT_GE(pages.size(), 12u);
  size_t continued = 0;
  for (const Int32Page& p : pages) continued += p.rep[0] != 0;
  ASSERT_GE(continued, 3u) << "some pages should start inside a list";
  const auto file = [&](int64_t file_rows, const std::vector<Int32Page>& ps, std::vector<int64_t>* offsets = nullptr) {
    return list_file_of_pages(file_rows, ps, offsets);
  };

  std::vector<int64_t> offsets;
  write_bytes(path, file(rows, pages, &offsets));
  ASSERT_GT(std::ifstream(path, std::ios::binary | std::ios::ate).tellg(), 1 << 20);
  for (const int threads : {1, 4}) {
    SCOPED_TRACE(threads);
    ReadOptions options;
    options.num_threads = threads;
    const Table t = read_table(path, options);
    const Column& l = t.column("l");
    EXPECT_EQ(l.list_offsets, expected.list_offsets);
    EXPECT_EQ(l.validity, expected.validity);
    EXPECT_EQ(l.element_validity, expected.element_validity);
    EXPECT_EQ(l.as<int32_t>(), expected_values);
  }

  // Each fault in page 7 (or the last page, or page 9), read on one thread and on four: the same message.
  const auto expect_fault = [&](const std::vector<Int32Page>& ps, int64_t file_rows, size_t page,
                                const std::string& message) {
    std::vector<int64_t> at;
    const std::string bytes = file(file_rows, ps, &at);
    write_bytes(path, bytes);
    const std::string where = "page at offset " + std::to_string(at[page]) + ": " + message;
    for (const int threads : {1, 4}) {
      ReadOptions options;
      options.num_threads = threads;
      try {
        read_table(path, options);
        ADD_FAILURE() << "read without complaint on " << threads << " threads; expected " << where;
      } catch (const InvalidFile& e) {
        EXPECT_NE(std::string(e.what()).find(where), std::string::npos)
            << threads << " threads: " << e.what() << "; expected " << where;
      }
    }
  };
  ASSERT_LE(pages[6].def.back(), 1);
  ASSERT_GE(pages[7].def[0], 2);
  const auto null_list = std::find(pages[7].def.begin() + 1, pages[7].def.end(), 0) - pages[7].def.begin();
  ASSERT_LT(null_list, static_cast<int64_t>(pages[7].def.size()));
  std::vector<Int32Page> bad = pages;  // an element added to a null list, inside the page
  bad[7].rep[static_cast<size_t>(null_list)] = 1;
  expect_fault(bad, rows, 7, "repetition level 1 on a null or empty list");
  bad = pages;  // an element added to the list that ended the page before, a null or empty one
  bad[7].rep[0] = 1;
  expect_fault(bad, rows, 7, "repetition level 1 on a null or empty list");
  bad = pages;
  bad[7].values.pop_back();
  expect_fault(bad, rows, 7, "PLAIN data holds " + std::to_string(bad[7].values.size()) + " values, page declares " +
                                 std::to_string(pages[7].values.size()));
  expect_fault(pages, rows - 1, pages.size() - 1, "list levels start more rows than the row group's " +
                                                     std::to_string(rows - 1));
  bad = pages;  // a page whose stored size runs past the chunk: found after the pages before it
  bad[9].declared_size = 1 << 30;
  expect_fault(bad, rows, 9, "page of 1073741824 bytes runs past the chunk");
  bad[7].rep[0] = 1;  // ... unless one of them is at fault first
  expect_fault(bad, rows, 7, "repetition level 1 on a null or empty list");
}

// `path` read on `threads` threads, a chunk's pages decoded apart (forced, whatever its size) when more than one.
Table read_with_pages_apart(const std::string& path, int threads) {
  ReadOptions options;
  options.num_threads = threads;
  options.page_threads = threads;
  return read_table(path, options);
}

// A flat column's pages decoded apart (forced, on four threads): each fault, in a page amid others, gives the
// error a read on one thread gives, naming that page; a header's fault comes after the pages before it.
TEST(ParquetHostile, FlatPagesDecodedApartFailAsOnOneThread) {
  const std::string path = scratch_dir("flat-pages") + "/x.parquet";
  fmt::SchemaElement root, x;
  root.name = "schema";
  root.num_children = 1;
  x.name = "x";
  x.type = fmt::type::kInt32;
  x.repetition_type = fmt::repetition::kOptional;
  std::mt19937_64 rng(5);
  std::vector<Int32Page> pages(12);
  std::vector<int32_t> expected;
  std::vector<uint8_t> valid;
  for (Int32Page& p : pages) {
    for (int i = 0; i < 200; ++i) {
      const bool present = rng() % 5 != 0;
      const auto v = static_cast<int32_t>(rng());
      p.def.push_back(present);
      if (present) p.values.push_back(v);
      expected.push_back(present ? v : 0);
      valid.push_back(present);
    }
  }
  const auto file = [&](const std::vector<Int32Page>& ps, std::vector<int64_t>* offsets) {
    return int32_leaf_file(2400, {root, x}, {"x"}, ps, 0, 1, offsets);
  };
  const auto read = [&](int threads) { return read_with_pages_apart(path, threads); };
  write_bytes(path, file(pages, nullptr));
  for (const int threads : {1, 4}) {
    const Table t = read(threads);
    EXPECT_EQ(t.column("x").as<int32_t>(), expected) << threads;
    EXPECT_EQ(t.column("x").validity, valid) << threads;
  }
  const auto expect_fault = [&](const std::vector<Int32Page>& ps, size_t page, const std::string& message) {
    std::vector<int64_t> at;
    write_bytes(path, file(ps, &at));
    const std::string where = "page at offset " + std::to_string(at[page]) + ": " + message;
    for (const int threads : {1, 4}) {
      try {
        read(threads);
        ADD_FAILURE() << "read without complaint on " << threads << " threads; expected " << where;
      } catch (const InvalidFile& e) {
        EXPECT_NE(std::string(e.what()).find(where), std::string::npos)
            << threads << " threads: " << e.what() << "; expected " << where;
      }
    }
  };
  std::vector<Int32Page> bad = pages;
  bad[7].values.pop_back();
  const std::string short_values = "PLAIN data holds " + std::to_string(bad[7].values.size()) +
                                    " values, page declares " + std::to_string(pages[7].values.size());
  expect_fault(bad, 7, short_values);
  bad[9].values.pop_back();  // the first of two
  expect_fault(bad, 7, short_values);
  bad = pages;
  bad[9].declared_size = 1 << 30;
  expect_fault(bad, 9, "page of 1073741824 bytes runs past the chunk");
  bad[7].values.pop_back();
  expect_fault(bad, 7, short_values);
}

// An optional FIXED_LEN_BYTE_ARRAY(3) column of a dictionary page and five data pages with nulls, one of each
// encoding the type may have (PLAIN, RLE_DICTIONARY, BYTE_STREAM_SPLIT, PLAIN, DELTA_BYTE_ARRAY): read on one
// thread and with its pages decoded apart (forced, on three threads), it gives the values written. An index
// past the dictionary, and a page of an encoding the type cannot have, are refused either way, alike.
TEST(ParquetHostile, FixedLengthPagesDecodedApartReadAsOnOneThread) {
  const std::string path = scratch_dir("flba-apart") + "/f.parquet";
  const std::string dictionary = "aaabbbccc";
  std::mt19937_64 rng(9);
  std::vector<std::string> expected;
  std::vector<uint8_t> valid;
  const auto file = [&](uint32_t bad_index, int32_t last = fmt::encoding::kDeltaByteArray) {
    expected.clear();
    valid.clear();
    fmt::PageHeader dh;
    dh.type = fmt::page_type::kDictionaryPage;
    dh.uncompressed_page_size = dh.compressed_page_size = static_cast<int32_t>(dictionary.size());
    fmt::DictionaryPageHeader d;
    d.num_values = 3;
    d.encoding = fmt::encoding::kPlain;
    dh.dictionary_page_header = d;
    std::string body = page(dh, dictionary);
    const std::vector<int32_t> encodings{fmt::encoding::kPlain, fmt::encoding::kRleDictionary,
                                         fmt::encoding::kByteStreamSplit, fmt::encoding::kPlain, last};
    for (size_t e = 0; e < encodings.size(); ++e) {
      const int32_t encoding = encodings[e];
      std::vector<uint8_t> def;
      std::vector<uint32_t> indices;
      std::vector<std::string> values;
      for (int i = 0; i < 50; ++i) {
        // (the last page without nulls: its values end where the column's room does)
        const bool present = rng() % 4 != 0 || e + 1 == encodings.size();
        def.push_back(present);
        valid.push_back(present);
        std::string v;
        if (present && encoding == fmt::encoding::kRleDictionary) {
          indices.push_back(static_cast<uint32_t>(rng() % 3));
          v = dictionary.substr(indices.back() * 3, 3);
        } else if (present) {
          for (int b = 0; b < 3; ++b) v += static_cast<char>('d' + rng() % 20);
        }
        if (present) values.push_back(v);
        expected.push_back(v);
      }
      std::string levels;
      rle_encode(def.data(), def.size(), 1, &levels);
      const auto len = static_cast<uint32_t>(levels.size());
      std::string data = std::string(reinterpret_cast<const char*>(&len), 4) + levels;
      if (encoding == fmt::encoding::kRleDictionary) {
        if (bad_index != 0) indices[indices.size() / 2] = bad_index;
        data += '\x02';
        rle_encode(indices.data(), indices.size(), 2, &data);
      } else if (encoding == fmt::encoding::kByteStreamSplit) {
        for (int b = 0; b < 3; ++b) {
          for (const std::string& v : values) data += v[static_cast<size_t>(b)];
        }
      } else if (encoding == fmt::encoding::kDeltaByteArray) {
        data += encode_delta_byte_arrays(values);
      } else {
        for (const std::string& v : values) data += v;
      }
      body += page(data_page_header(50, static_cast<int32_t>(data.size()), encoding), data);
    }
    fmt::FileMetaData md = one_column_metadata(250);
    md.schema[1].type = fmt::type::kFixedLenByteArray;
    md.schema[1].type_length = 3;
    md.schema[1].repetition_type = fmt::repetition::kOptional;
    fmt::ColumnMetaData& cm = *md.row_groups[0].columns[0].meta_data;
    cm.type = fmt::type::kFixedLenByteArray;
    cm.encodings = {fmt::encoding::kPlain, fmt::encoding::kRleDictionary, fmt::encoding::kByteStreamSplit, last};
    cm.total_compressed_size = static_cast<int64_t>(body.size());
    return make_file(md, body);
  };
  const auto read = [&](int threads) { return read_with_pages_apart(path, threads); };
  write_bytes(path, file(0));
  for (const int threads : {1, 3}) {
    SCOPED_TRACE(threads);
    const Table t = read(threads);
    const Column& x = t.column("x");
    EXPECT_EQ(x.validity, valid);
    ASSERT_EQ(x.byte_arrays().size(), 250);
    for (int64_t i = 0; i < 250; ++i) EXPECT_EQ(x.byte_arrays().at(i), expected[static_cast<size_t>(i)]) << i;
  }
  const auto expect_refused = [&](const std::string& bytes, const std::string& message) {
    write_bytes(path, bytes);
    for (const int threads : {1, 3}) {
      try {
        read(threads);
        ADD_FAILURE() << "read without complaint on " << threads << " threads";
      } catch (const InvalidFile& e) {
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << threads << ": " << e.what();
      }
    }
  };
  expect_refused(file(3), "dictionary index 3 out of range");
  expect_refused(file(0, fmt::encoding::kDeltaLengthByteArray),
                 "DELTA_LENGTH_BYTE_ARRAY on a FIXED_LEN_BYTE_ARRAY column");
}

// A one-column file whose column is a nullable list of nullable lists of nullable INT32 (`optional group l
// (LIST) { repeated group list { optional group element (LIST) { repeated group list { optional int32 element
// } } } }`: repetition levels up to 2, definition levels up to 5) with one data page v1 of the given levels.
std::string nested_list_file(int64_t rows, const std::vector<uint8_t>& rep, const std::vector<uint8_t>& def,
                             const std::vector<int32_t>& values) {
  return int32_leaf_file(rows, int32_list_schema(2, /*element_optional=*/true),
                         {"l", "list", "element", "list", "element"}, rep, 2, def, 5, values);
}

TEST(ParquetHostile, NestedListLevels) {
  const std::string path = scratch_dir("nested-list-levels") + "/l.parquet";
  // [[1, null], [], null], null, [], [[2]]: a valid file first.
  write_bytes(path, nested_list_file(4, {0, 2, 1, 1, 0, 0, 0}, {5, 4, 3, 2, 0, 1, 5}, {1, 2}));
  const Table t = read_table(path);
  const Column& l = t.column("l");
  ASSERT_EQ(l.schema.list_depth(), 2);
  EXPECT_EQ(l.list_offsets, (std::vector<int64_t>{0, 3, 3, 3, 4}));
  EXPECT_EQ(l.validity, (std::vector<uint8_t>{1, 0, 1, 1}));
  ASSERT_EQ(l.inner_lists.size(), 1u);
  EXPECT_EQ(l.inner_lists[0].offsets, (std::vector<int64_t>{0, 2, 2, 2, 3}));
  EXPECT_EQ(l.inner_lists[0].validity, (std::vector<uint8_t>{1, 1, 0, 1}));
  EXPECT_EQ(l.as<int32_t>(), (std::vector<int32_t>{1, 0, 2}));
  EXPECT_EQ(l.element_validity, (std::vector<uint8_t>{1, 0, 1}));

  // Levels that contradict the schema or each other: InvalidFile naming the column, row group and page.
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 3}, {5, 5}, {1, 2}),
                                 "column 'l', row group 0, page at offset 4: repetition level 3 above the column's "
                                 "maximum 2");
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 2}, {5, 6}, {1, 2}),
                                 "definition level 6 above the column's maximum 5");
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {2, 0}, {5, 5}, {1, 2}),
                                 "repetition level 2 starts the chunk");
  // An element added to an inner list that is empty, to a row that is null, to a row that is empty.
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 2}, {3, 5}, {1}),
                                 "repetition level 2 on a null, empty or absent list");
  expect_throw_with<InvalidFile>(path, nested_list_file(2, {0, 1, 0}, {0, 5, 5}, {1, 2}),
                                 "repetition level 1 on a null, empty or absent list");
  expect_throw_with<InvalidFile>(path, nested_list_file(2, {0, 2, 0}, {1, 5, 5}, {1, 2}),
                                 "repetition level 2 on a null, empty or absent list");
  // A repetition level that continues a list with nothing in it.
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 2}, {5, 3}, {1}),
                                 "repetition level 2 with definition level 3, which adds no element");
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 1}, {5, 1}, {1}),
                                 "repetition level 1 with definition level 1, which adds no element");
  // Counts that disagree: rows, values.
  expect_throw_with<InvalidFile>(path, nested_list_file(2, {0, 1}, {5, 5}, {1, 2}),
                                 "list levels start 1 rows, the row group holds 2");
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 0}, {5, 5}, {1, 2}),
                                 "list levels start more rows than the row group's 1");
  expect_throw_with<InvalidFile>(path, nested_list_file(1, {0, 2, 1}, {5, 5, 5}, {1, 2}),
                                 "PLAIN data holds 2 values, page declares 3");
}

// Three levels of lists (nullable at each level, nullable elements): definition levels 1, 3 and 5 are the empty
// lists of each level, 7 a value.
std::string three_level_list_file(int64_t rows, const std::vector<uint8_t>& rep, const std::vector<uint8_t>& def,
                                  const std::vector<int32_t>& values) {
  return int32_leaf_file(rows, int32_list_schema(3, /*element_optional=*/true),
                         {"l", "list", "element", "list", "element", "list", "element"}, rep, 3, def, 7, values);
}

TEST(ParquetHostile, ThreeLevelListLevels) {
  const std::string path = scratch_dir("three-level-list-levels") + "/l.parquet";
  // [[[1, null]], []], null: a valid file first.
  write_bytes(path, three_level_list_file(2, {0, 3, 1, 0}, {7, 6, 3, 0}, {1}));
  const Table t = read_table(path);
  const Column& l = t.column("l");
  ASSERT_EQ(l.schema.list_depth(), 3);
  EXPECT_EQ(l.list_offsets, (std::vector<int64_t>{0, 2, 2}));
  EXPECT_EQ(l.validity, (std::vector<uint8_t>{1, 0}));
  ASSERT_EQ(l.inner_lists.size(), 2u);
  EXPECT_EQ(l.inner_lists[0].offsets, (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(l.inner_lists[1].offsets, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(l.as<int32_t>(), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(l.element_validity, (std::vector<uint8_t>{1, 0}));

  // (Levels above the maxima cannot be written here: 7 and 3 fill their bit widths.)
  expect_throw_with<InvalidFile>(path, three_level_list_file(1, {0, 3}, {5, 7}, {1}),
                                 "repetition level 3 on a null, empty or absent list");
  expect_throw_with<InvalidFile>(path, three_level_list_file(1, {0, 2}, {7, 3}, {1}),
                                 "repetition level 2 with definition level 3, which adds no element");
  expect_throw_with<InvalidFile>(path, three_level_list_file(1, {0, 0}, {7, 7}, {1, 2}),
                                 "list levels start more rows than the row group's 1");
}

}  // namespace
}  // namespace feedline::parquet
