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

}  // namespace
}  // namespace feedline
