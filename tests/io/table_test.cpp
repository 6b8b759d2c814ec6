#include "feedline/table.h"

#include <gtest/gtest.h>

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

// head() of a list of lists keeps each level's lists down to the values of the rows it keeps.
TEST(Table, HeadOfAListOfLists) {
  ColumnSchema s;
  s.name = "l";
  s.type = PhysicalType::kInt32;
  s.is_list = true;
  s.nullable = true;
  s.inner_list_nullable = {true};
  s.element_nullable = true;
  // [[1, 2], null, []], null, [[3, null]]: table.h's example with a null row and a null element.
  Column c = make_column(s);
  ASSERT_EQ(c.inner_lists.size(), 1u);
  c.as<int32_t>() = {1, 2, 3, 0};
  c.list_offsets = {0, 3, 3, 4};
  c.validity = {1, 0, 1};
  c.inner_lists[0].offsets = {0, 2, 2, 2, 4};
  c.inner_lists[0].validity = {1, 0, 1, 1};
  c.element_validity = {1, 1, 1, 0};
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
  EXPECT_EQ(l.element_validity, (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(head(t, 3).columns[0].inner_lists[0].offsets, c.inner_lists[0].offsets);
}

}  // namespace
}  // namespace feedline
