#include "feedline/io/table.h"

#include <gtest/gtest.h>

#include "feedline/io/error.h"

namespace feedline {
namespace {

TEST(Column, ValueAsDoubleReadsUnsignedAnnotations) {
  // Unsigned INT(32) and INT(64) values are stored as the signed type's bit pattern.
  Column u32 = make_column(ColumnSchema{"u32", PhysicalType::kInt32, false, IntAnnotation{32, false}});
  u32.as<int32_t>() = {-1, 7};
  EXPECT_EQ(u32.value_as_double(0), 4294967295.0);
  EXPECT_EQ(u32.value_as_double(1), 7.0);
  Column s32 = make_column(ColumnSchema{"s32", PhysicalType::kInt32});
  s32.as<int32_t>() = {-1};
  EXPECT_EQ(s32.value_as_double(0), -1.0);
  Column u64 = make_column(ColumnSchema{"u64", PhysicalType::kInt64, false, IntAnnotation{64, false}});
  u64.as<int64_t>() = {-1, 7};
  EXPECT_EQ(u64.value_as_double(0), 18446744073709551615.0);
  EXPECT_EQ(u64.value_as_double(1), 7.0);
  Column s64 = make_column(ColumnSchema{"s64", PhysicalType::kInt64, false, IntAnnotation{64, true}});
  s64.as<int64_t>() = {-1};
  EXPECT_EQ(s64.value_as_double(0), -1.0);
}

// [[1, 2], null, []], null, [[3, null]] as a list<list<INT32>> column (table.h's example with a null row and a
// null element).
Column list_of_lists() {
  ColumnSchema s;
  s.name = "l";
  s.type = PhysicalType::kInt32;
  s.is_list = true;
  s.nullable = true;
  s.inner_list_nullable = {true};
  s.element_nullable = true;
  Column c = make_column(s);
  c.as<int32_t>() = {1, 2, 3, 0};
  c.list_offsets = {0, 3, 3, 4};
  c.validity = {1, 0, 1};
  c.inner_lists[0].offsets = {0, 2, 2, 2, 4};
  c.inner_lists[0].validity = {1, 0, 1, 1};
  c.element_validity = {1, 1, 1, 0};
  return c;
}

// head() of a list of lists keeps each level's lists down to the values of the rows it keeps.
TEST(Table, HeadOfAListOfLists) {
  const Column c = list_of_lists();
  Table t;
  t.num_rows = 3;
  t.columns.push_back(c);
  const Table h = head(t, 2);
  const Column& l = h.columns[0];
  EXPECT_EQ(l.size(), 2);
  EXPECT_EQ(l.list_offsets, (std::vector<int64_t>{0, 3, 3}));
  EXPECT_EQ(l.validity, (std::vector<uint8_t>{1, 0}));
  ASSERT_EQ(l.inner_lists.size(), 1u);
  EXPECT_EQ(l.inner_lists[0].offsets, (std::vector<int64_t>{0, 2, 2, 2}));
  EXPECT_EQ(l.inner_lists[0].validity, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(l.as<int32_t>(), (std::vector<int32_t>{1, 2}));
  EXPECT_TRUE(l.element_validity.empty());  // the rows kept hold no null element
  EXPECT_EQ(head(t, 3).columns[0].inner_lists[0].offsets, c.inner_lists[0].offsets);
}

// slice() from the middle starts every level's offsets again at 0.
TEST(Table, SliceOfAListOfListsRebasesItsOffsets) {
  Table t;
  t.num_rows = 3;
  t.columns.push_back(list_of_lists());
  const Column l = slice(t, 1, 3).columns[0];
  EXPECT_EQ(l.size(), 2);
  EXPECT_EQ(l.list_offsets, (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(l.validity, (std::vector<uint8_t>{0, 1}));
  EXPECT_EQ(l.inner_lists[0].offsets, (std::vector<int64_t>{0, 2}));
  EXPECT_TRUE(l.inner_lists[0].validity.empty());  // the one inner list kept is not null
  EXPECT_EQ(l.as<int32_t>(), (std::vector<int32_t>{3, 0}));
  EXPECT_EQ(l.element_validity, (std::vector<uint8_t>{1, 0}));
  EXPECT_THROW(slice(t, 2, 4), InvalidArgument);
  EXPECT_THROW(slice(t, 2, 1), InvalidArgument);
}

void expect_same_column(const Column& a, const Column& b) {
  EXPECT_EQ(a.values, b.values) << a.schema.name;
  EXPECT_EQ(a.validity, b.validity) << a.schema.name;
  EXPECT_EQ(a.list_offsets, b.list_offsets) << a.schema.name;
  EXPECT_EQ(a.element_validity, b.element_validity) << a.schema.name;
  ASSERT_EQ(a.inner_lists.size(), b.inner_lists.size()) << a.schema.name;
  for (size_t k = 0; k < a.inner_lists.size(); ++k) {
    EXPECT_EQ(a.inner_lists[k].offsets, b.inner_lists[k].offsets) << a.schema.name;
    EXPECT_EQ(a.inner_lists[k].validity, b.inner_lists[k].validity) << a.schema.name;
  }
}

// Cut anywhere and appended back, a table is itself again: offsets continue, and a validity vector appears only
// where a null does (a part without nulls has an empty one).
TEST(Table, AppendRowsOfEverySplitGivesTheTableBack) {
  Table t;
  t.num_rows = 3;
  t.columns.push_back(list_of_lists());
  Column ints = make_column(ColumnSchema{"i", PhysicalType::kInt64, true});
  ints.as<int64_t>() = {5, 0, 7};
  ints.validity = {1, 0, 1};
  t.columns.push_back(ints);
  Column text = make_column(ColumnSchema{"s", PhysicalType::kByteArray});
  for (const char* v : {"ab", "", "cde"}) std::get<ByteArrays>(text.values).push_back(v);
  t.columns.push_back(text);
  ColumnSchema ls{"li", PhysicalType::kInt32};
  ls.is_list = true;
  Column list = make_column(ls);
  list.as<int32_t>() = {1, 2, 3, 4};
  list.list_offsets = {0, 2, 2, 4};
  t.columns.push_back(list);
  for (int64_t a = 0; a <= 3; ++a) {
    for (int64_t b = a; b <= 3; ++b) {
      Table out = slice(t, 0, a);
      append_rows(out, t, a, b);
      append_rows(out, t, b, 3);
      ASSERT_EQ(out.num_rows, 3);
      for (size_t c = 0; c < t.columns.size(); ++c) expect_same_column(out.columns[c], t.columns[c]);
    }
  }
  // The null of 'i' is row 1: rows 2..3 alone have none, and neither does their copy.
  EXPECT_TRUE(slice(t, 2, 3).columns[1].validity.empty());
  Table into;  // no columns yet: it takes the source's
  append_rows(into, t, 1, 2);
  EXPECT_EQ(into.columns[2].byte_arrays().at(0), "");
  EXPECT_EQ(into.columns[1].validity, (std::vector<uint8_t>{0}));
}

TEST(Table, AppendRowsRefusesAnotherSchema) {
  Table a, b;
  a.columns.push_back(make_column(ColumnSchema{"x", PhysicalType::kInt64}));
  b.columns.push_back(make_column(ColumnSchema{"x", PhysicalType::kInt32}));
  b.columns[0].as<int32_t>() = {1};
  b.num_rows = 1;
  EXPECT_THROW(append_rows(a, b, 0, 1), InvalidArgument);
  b.columns[0] = make_column(ColumnSchema{"y", PhysicalType::kInt64});
  b.columns[0].as<int64_t>() = {1};
  EXPECT_THROW(append_rows(a, b, 0, 1), InvalidArgument);
  EXPECT_EQ(a.num_rows, 0);
}

}  // namespace
}  // namespace feedline
