#include "feedline/io/convert.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "feedline/dataset/dataset.h"
#include "feedline/io/error.h"
#include "feedline/io/idx.h"
#include "feedline/io/parquet.h"
#include "test_paths.h"

namespace feedline {
namespace {

Column int64_column(const std::string& name, const std::vector<int64_t>& values, const std::vector<uint8_t>& validity = {}) {
  Column c = make_column(ColumnSchema{name, PhysicalType::kInt64, !validity.empty()});
  c.as<int64_t>() = values;
  c.validity = validity;
  return c;
}

Column int32_column(const std::string& name, const std::vector<int32_t>& values,
                    std::optional<IntAnnotation> annotation = std::nullopt) {
  ColumnSchema s{name, PhysicalType::kInt32};
  s.int_annotation = annotation;
  Column c = make_column(s);
  c.as<int32_t>() = values;
  return c;
}

Column double_column(const std::string& name, const std::vector<double>& values) {
  Column c = make_column(ColumnSchema{name, PhysicalType::kDouble});
  c.as<double>() = values;
  return c;
}

Table table_of(std::vector<Column> columns) {
  Table t;
  t.num_rows = columns.empty() ? 0 : columns.front().size();
  t.columns = std::move(columns);
  return t;
}

// What a narrowed column's stored value means, with its annotation.
int64_t stored_value(const Column& c, size_t i) {
  if (c.schema.type == PhysicalType::kInt64) return c.as<int64_t>()[i];
  const int32_t v = c.as<int32_t>()[i];
  return c.schema.int_annotation && !c.schema.int_annotation->is_signed ? int64_t{static_cast<uint32_t>(v)} : v;
}

Table write_and_read(const Table& table, const std::string& name) {
  const std::string path = testing::scratch_dir("convert-" + name) + "/t.parquet";
  parquet::write_table(path, table);
  return parquet::read_table(path);
}

struct NarrowCase {
  std::vector<int64_t> values;
  PhysicalType type;
  int bits;  // 0: no annotation expected
  bool is_signed;
};

// How a case is named in test listings (CTest's names too): its values and what they narrow to, rather than the
// struct's bytes, which hold heap addresses.
void PrintTo(const NarrowCase& c, std::ostream* os) {
  *os << "{";
  for (size_t i = 0; i < c.values.size(); ++i) *os << (i ? ", " : "") << c.values[i];
  *os << "} as ";
  if (c.bits == 0) *os << (c.type == PhysicalType::kInt32 ? "INT32" : "INT64");
  else *os << (c.is_signed ? "INT" : "UINT") << c.bits;
}

class NarrowTest : public ::testing::TestWithParam<NarrowCase> {};

TEST_P(NarrowTest, PicksTheSmallestTypeAndKeepsEveryValue) {
  const NarrowCase& c = GetParam();
  Table t = table_of({int64_column("x", c.values)});
  narrow_integer_columns(t);
  const Column& x = t.columns[0];
  EXPECT_EQ(x.schema.type, c.type);
  if (c.bits == 0) {
    EXPECT_FALSE(x.schema.int_annotation.has_value());
  } else {
    ASSERT_TRUE(x.schema.int_annotation.has_value());
    EXPECT_EQ(x.schema.int_annotation->bit_width, c.bits);
    EXPECT_EQ(x.schema.int_annotation->is_signed, c.is_signed);
  }
  for (size_t i = 0; i < c.values.size(); ++i) EXPECT_EQ(stored_value(x, i), c.values[i]) << "value " << i;
  // The writer accepts the narrowed type and the reader gives the values back.
  const Table back = write_and_read(t, "narrow");
  ASSERT_EQ(back.columns[0].schema.int_annotation, x.schema.int_annotation);
  for (size_t i = 0; i < c.values.size(); ++i) EXPECT_EQ(stored_value(back.columns[0], i), c.values[i]);
}

// Narrowed a block of one row at a time (IntegerRanges, then cast_integer_columns), a column comes out as
// narrow_integer_columns() makes it whole: the range of every block decides, not the first block's.
TEST_P(NarrowTest, BlockByBlockAsWhole) {
  const NarrowCase& c = GetParam();
  Table whole = table_of({int64_column("x", c.values), double_column("d", std::vector<double>(c.values.size()))});
  std::vector<Table> blocks;
  IntegerRanges ranges;
  for (int64_t r = 0; r < whole.num_rows; ++r) {
    blocks.push_back(slice(whole, r, r + 1));
    ranges.add(blocks.back());
  }
  narrow_integer_columns(whole);
  const std::vector<ColumnSchema> narrowed = ranges.narrowed();
  ASSERT_EQ(narrowed.size(), 2u);
  EXPECT_EQ(narrowed[0].type, whole.columns[0].schema.type);
  EXPECT_EQ(narrowed[0].int_annotation, whole.columns[0].schema.int_annotation);
  EXPECT_EQ(narrowed[1].type, PhysicalType::kDouble);
  Table joined;
  for (size_t k = 0; k < blocks.size(); ++k) {
    cast_integer_columns(blocks[k], narrowed, static_cast<int64_t>(k));
    append_rows(joined, blocks[k], 0, 1);
  }
  EXPECT_EQ(joined.columns[0].values, whole.columns[0].values);
}

constexpr int64_t kMax64 = std::numeric_limits<int64_t>::max();

INSTANTIATE_TEST_SUITE_P(
    Ranges, NarrowTest,
    ::testing::Values(NarrowCase{{0, 255, 7}, PhysicalType::kInt32, 8, false},
                      NarrowCase{{0, 256}, PhysicalType::kInt32, 16, false},
                      NarrowCase{{-128, 127}, PhysicalType::kInt32, 8, true},
                      NarrowCase{{-129, 0}, PhysicalType::kInt32, 16, true},
                      NarrowCase{{-1, 128}, PhysicalType::kInt32, 16, true},
                      NarrowCase{{65535, 3}, PhysicalType::kInt32, 16, false},
                      NarrowCase{{65536}, PhysicalType::kInt32, 32, false},
                      NarrowCase{{-32768, 32767}, PhysicalType::kInt32, 16, true},
                      NarrowCase{{4294967295}, PhysicalType::kInt32, 32, false},
                      NarrowCase{{-2147483648LL, 2147483647}, PhysicalType::kInt32, 32, true},
                      NarrowCase{{4294967296LL}, PhysicalType::kInt64, 0, false},
                      NarrowCase{{-2147483649LL, 0}, PhysicalType::kInt64, 0, false},
                      NarrowCase{{-1, 2147483648LL}, PhysicalType::kInt64, 0, false},
                      NarrowCase{{kMax64, -kMax64 - 1}, PhysicalType::kInt64, 0, false}));

TEST(Narrow, IgnoresNullsAndLeavesThemZero) {
  // The null slot holds a value far outside the others' range: it must not widen the type.
  Table t = table_of({int64_column("x", {3, 99999, 200}, {1, 0, 1})});
  narrow_integer_columns(t);
  const Column& x = t.columns[0];
  EXPECT_EQ(x.schema.int_annotation, (IntAnnotation{8, false}));
  EXPECT_TRUE(x.schema.nullable);
  EXPECT_EQ(x.as<int32_t>(), (std::vector<int32_t>{3, 0, 200}));
  EXPECT_EQ(x.validity, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_TRUE(write_and_read(t, "nulls").columns[0].is_null(1));
}

TEST(Narrow, NarrowsListElementsAndKeepsTheLists) {
  ColumnSchema s{"l", PhysicalType::kInt64};
  s.is_list = true;
  Column l = make_column(s);
  l.as<int64_t>() = {1, 2, -3, 4, 5};
  l.list_offsets = {0, 2, 2, 5};
  Table t = table_of({l});
  narrow_integer_columns(t);
  const Column& x = t.columns[0];
  EXPECT_TRUE(x.schema.is_list);
  EXPECT_EQ(x.schema.int_annotation, (IntAnnotation{8, true}));
  EXPECT_EQ(x.as<int32_t>(), (std::vector<int32_t>{1, 2, -3, 4, 5}));
  EXPECT_EQ(x.list_offsets, (std::vector<int64_t>{0, 2, 2, 5}));
}

// A block whose values the narrowed type cannot hold (a file that changed between the passes) is refused, naming
// the column and the row in the file; so is a block of other columns.
TEST(Narrow, CastRefusesValuesBeyondTheNarrowedType) {
  Table first = table_of({int64_column("x", {1, 200})});
  IntegerRanges ranges;
  ranges.add(first);
  Table later = table_of({int64_column("x", {3, 256})});
  try {
    cast_integer_columns(later, ranges.narrowed(), 1000);
    ADD_FAILURE() << "256 cast to INT(8,unsigned)";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "column 'x' row 1001 holds 256, beyond INT(8,unsigned)");
  }
  EXPECT_EQ(later.columns[0].schema.type, PhysicalType::kInt64);  // left as it was
  Table other = table_of({int64_column("y", {1})});
  EXPECT_THROW(ranges.add(other), InvalidArgument);
}

TEST(Narrow, LeavesOtherColumnsAlone) {
  Column date = int32_column("d", {1, 2});
  date.schema.logical.kind = LogicalKind::kDate;
  Column all_null = int64_column("n", {0, 0}, {0, 0});
  Column huge_unsigned = make_column(ColumnSchema{"u", PhysicalType::kInt64});
  huge_unsigned.schema.int_annotation = IntAnnotation{64, false};
  huge_unsigned.as<int64_t>() = {-1, 5};  // 2^64 - 1 as INT(64, unsigned)
  Column u32 = int32_column("u32", {-1, 0}, IntAnnotation{32, false});  // 4294967295 needs all 32 bits
  Table t = table_of({date, double_column("f", {1.0, 2.0}), all_null, huge_unsigned, u32});
  const Table before = t;
  narrow_integer_columns(t);
  for (size_t i = 0; i < t.columns.size(); ++i) {
    EXPECT_EQ(t.columns[i].schema.type, before.columns[i].schema.type) << t.columns[i].schema.name;
    EXPECT_EQ(t.columns[i].schema.int_annotation, before.columns[i].schema.int_annotation) << t.columns[i].schema.name;
    EXPECT_EQ(t.columns[i].values.index(), before.columns[i].values.index()) << t.columns[i].schema.name;
    for (size_t row = 0; row < 2; ++row) {
      EXPECT_EQ(t.columns[i].value_as_double(static_cast<int64_t>(row)),
                before.columns[i].value_as_double(static_cast<int64_t>(row)))
          << t.columns[i].schema.name << " row " << row;
    }
  }
  // An unsigned INT(64) column whose values fit 8 bits narrows like any other.
  Table small = table_of({huge_unsigned});
  small.columns[0].as<int64_t>() = {200, 5};
  narrow_integer_columns(small);
  EXPECT_EQ(small.columns[0].schema.int_annotation, (IntAnnotation{8, false}));
}

// label, a, b, c: three feature columns around another.
Table feature_table() {
  return table_of({int64_column("label", {1, 2, 3}), int64_column("a", {0, 10, 255}), double_column("b", {0.5, 1.5, 2.5}),
                   int64_column("c", {7, 8, 9})});
}

TEST(Pack, BytesRowMajorInTheFirstColumnsPlace) {
  Table t = feature_table();
  pack_columns(t, "img", {"a", "c"}, PackAs::kBytes);
  ASSERT_EQ(t.columns.size(), 3u);
  EXPECT_EQ(t.columns[0].schema.name, "label");
  EXPECT_EQ(t.columns[1].schema.name, "img");
  EXPECT_EQ(t.columns[2].schema.name, "b");
  const Column& img = t.columns[1];
  EXPECT_EQ(img.schema.type, PhysicalType::kFixedLenByteArray);
  EXPECT_EQ(img.schema.type_length, 2);
  EXPECT_FALSE(img.schema.nullable);
  ASSERT_EQ(img.size(), 3);
  EXPECT_EQ(img.byte_arrays().at(0), std::string("\x00\x07", 2));
  EXPECT_EQ(img.byte_arrays().at(1), std::string("\x0a\x08", 2));
  EXPECT_EQ(img.byte_arrays().at(2), std::string("\xff\x09", 2));
  const Table back = write_and_read(t, "bytes");
  EXPECT_EQ(back.column("img").byte_arrays().bytes, img.byte_arrays().bytes);
}

TEST(Pack, ListsTakeTheSharedTypeOrWiden) {
  Table same = table_of({int32_column("p1", {1, 2}, IntAnnotation{8, false}), int32_column("p2", {3, 4}, IntAnnotation{8, false})});
  pack_columns(same, "v", {"p*"}, PackAs::kList);
  const Column& v = same.columns[0];
  EXPECT_TRUE(v.schema.is_list);
  EXPECT_EQ(v.schema.type, PhysicalType::kInt32);
  EXPECT_EQ(v.schema.int_annotation, (IntAnnotation{8, false}));
  EXPECT_EQ(v.as<int32_t>(), (std::vector<int32_t>{1, 3, 2, 4}));
  EXPECT_EQ(v.list_offsets, (std::vector<int64_t>{0, 2, 4}));

  Table ints = table_of({int32_column("p1", {-5, 2}), int64_column("p2", {1LL << 40, 4}),
                         int32_column("p3", {-1, 0}, IntAnnotation{32, false})});
  pack_columns(ints, "v", {"p*"}, PackAs::kList);
  EXPECT_EQ(ints.columns[0].schema.type, PhysicalType::kInt64);
  EXPECT_FALSE(ints.columns[0].schema.int_annotation.has_value());
  EXPECT_EQ(ints.columns[0].as<int64_t>(), (std::vector<int64_t>{-5, 1LL << 40, 4294967295LL, 2, 4, 0}));

  Table mixed = feature_table();
  pack_columns(mixed, "v", {"a", "b", "c"}, PackAs::kList);
  EXPECT_EQ(mixed.columns[1].schema.type, PhysicalType::kDouble);
  EXPECT_EQ(mixed.columns[1].as<double>(), (std::vector<double>{0, 0.5, 7, 10, 1.5, 8, 255, 2.5, 9}));
  const Table back = write_and_read(mixed, "list");
  EXPECT_EQ(back.column("v").as<double>(), mixed.columns[1].as<double>());
  EXPECT_EQ(back.column("v").list_offsets, mixed.columns[1].list_offsets);
}

void expect_refused(Table t, const std::string& name, const std::vector<std::string>& patterns, PackAs as,
                    const std::string& message, int64_t first_row = 0) {
  const Table before = t;
  try {
    pack_columns(t, name, patterns, as, first_row);
    ADD_FAILURE() << "packing " << name << " was not refused (expected: " << message << ")";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
  EXPECT_EQ(t.columns.size(), before.columns.size()) << "a refused pack changed the table";
}

TEST(Pack, RefusesWhatItCannotPackNamingTheColumnAndRow) {
  expect_refused(feature_table(), "img", {"a", "b"}, PackAs::kBytes, "column 'b' holds DOUBLE values");
  Table wide = feature_table();
  wide.columns[3].as<int64_t>()[2] = 256;
  expect_refused(wide, "img", {"a", "c"}, PackAs::kBytes, "column 'c' row 2 holds 256");
  wide.columns[3].as<int64_t>()[2] = -1;
  expect_refused(wide, "img", {"a", "c"}, PackAs::kBytes, "column 'c' row 2 holds -1");
  // A block of a file: rows counted from its first.
  expect_refused(wide, "img", {"a", "c"}, PackAs::kBytes, "column 'c' row 502 holds -1", 500);
  Table nulls = feature_table();
  nulls.columns[1].validity = {1, 0, 1};
  nulls.columns[1].schema.nullable = true;
  expect_refused(nulls, "img", {"a"}, PackAs::kList, "column 'a' row 1 is null");
  expect_refused(nulls, "img", {"a"}, PackAs::kList, "column 'a' row 8 is null", 7);
  expect_refused(feature_table(), "label", {"a", "c"}, PackAs::kList, "a column left in the table has that name");
  expect_refused(feature_table(), "img", {"z*"}, PackAs::kList, "no column matches 'z*'");
  Table big = feature_table();
  big.columns[1].as<int64_t>()[0] = (1LL << 53) + 1;
  expect_refused(big, "v", {"a", "b"}, PackAs::kList, "column 'a' row 0 holds 9007199254740993");
  Column text = make_column(ColumnSchema{"s", PhysicalType::kByteArray});
  for (int i = 0; i < 3; ++i) std::get<ByteArrays>(text.values).push_back("x");
  Table strings = feature_table();
  strings.columns.push_back(text);
  expect_refused(strings, "v", {"a", "s"}, PackAs::kList, "column 's' is not a plain number");
  // Packing onto one of its own sources' names is allowed: that column goes.
  Table self = feature_table();
  pack_columns(self, "a", {"a", "c"}, PackAs::kBytes);
  EXPECT_EQ(self.columns[1].schema.name, "a");
  EXPECT_EQ(self.columns[1].schema.type, PhysicalType::kFixedLenByteArray);
}

TEST(Pack, ThePackedImagesDecodeAsThePixelColumnsDo) {
  ImageSplit split;
  split.count = 5;
  split.rows = split.cols = 28;
  for (int64_t i = 0; i < split.count * 28 * 28; ++i) split.images.push_back(static_cast<uint8_t>((i * 37) % 256));
  for (int64_t i = 0; i < split.count; ++i) split.labels.push_back(static_cast<uint8_t>(i));
  const Table pixels = image_split_to_table(split, ImageTableLayoutKind::kPixelColumnsInt64);
  Table packed = pixels;
  pack_columns(packed, "image", {"pixel*"}, PackAs::kBytes);
  narrow_integer_columns(packed);
  EXPECT_EQ(packed.column("label").schema.int_annotation, (IntAnnotation{8, false}));
  const ImageTensors want = decode_image_table(pixels);
  const ImageTensors got = decode_image_table(write_and_read(packed, "image"));
  EXPECT_TRUE(torch::equal(want.images, got.images));
  EXPECT_TRUE(torch::equal(want.labels, got.labels));
}

}  // namespace
}  // namespace feedline
