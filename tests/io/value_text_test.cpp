// The text of single values as feedline prints them (value_text.cpp): each logical type's name, statistics and
// values of every kind, the fallbacks for values of a size their type does not have, decimals of any length, and
// which values writers may hand on as bytes or hex (value_text_kind).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "feedline/io/table.h"
#include "io/value_text.h"

namespace feedline {
namespace {

ColumnSchema schema_of(PhysicalType type, LogicalKind kind = LogicalKind::kNone) {
  ColumnSchema s;
  s.name = "c";
  s.type = type;
  s.logical.kind = kind;
  if (type == PhysicalType::kFixedLenByteArray) s.type_length = 16;
  return s;
}

Column byte_column(ColumnSchema s, const std::vector<std::string>& values) {
  Column c = make_column(std::move(s));
  for (const std::string& v : values) std::get<ByteArrays>(c.values).push_back(v);
  return c;
}

template <class T>
std::string raw_of(T v) {
  std::string raw(sizeof v, '\0');
  std::memcpy(raw.data(), &v, sizeof v);
  return raw;
}

TEST(ValueText, LogicalTypeNamesWithTheirParameters) {
  ColumnSchema s = schema_of(PhysicalType::kInt64, LogicalKind::kTimestamp);
  s.logical.unit = TimeUnit::kNanos;
  s.logical.utc = false;
  EXPECT_EQ(logical_type_text(s), "TIMESTAMP(NANOS)");
  s.logical.kind = LogicalKind::kTime;
  s.logical.unit = TimeUnit::kMillis;
  s.logical.utc = true;
  EXPECT_EQ(logical_type_text(s), "TIME(MILLIS,UTC)");
  s.logical.kind = LogicalKind::kDecimal;
  s.logical.precision = 9;
  s.logical.scale = 2;
  EXPECT_EQ(logical_type_text(s), "DECIMAL(9,2)");
  const std::vector<std::pair<LogicalKind, const char*>> plain = {
      {LogicalKind::kDate, "DATE"},       {LogicalKind::kFloat16, "FLOAT16"}, {LogicalKind::kUuid, "UUID"},
      {LogicalKind::kVariant, "VARIANT"}, {LogicalKind::kInterval, "INTERVAL"}, {LogicalKind::kJson, "JSON"},
      {LogicalKind::kEnum, "ENUM"},       {LogicalKind::kBson, "BSON"}};
  for (const auto& [kind, name] : plain) EXPECT_EQ(logical_type_text(schema_of(PhysicalType::kInt32, kind)), name);
}

TEST(ValueText, TypesWithoutALogicalAnnotation) {
  ColumnSchema s = schema_of(PhysicalType::kInt32);
  EXPECT_EQ(logical_type_text(s), "");
  s.int_annotation = IntAnnotation{8, false};
  EXPECT_EQ(logical_type_text(s), "INT(8,unsigned)");
  ColumnSchema text = schema_of(PhysicalType::kByteArray);
  text.is_string = true;
  EXPECT_EQ(logical_type_text(text), "STRING");
  EXPECT_EQ(logical_type_text(schema_of(PhysicalType::kFixedLenByteArray)), "length 16");
}

TEST(ValueText, StatisticsAsTheirTypeOrHexWhereTheSizeDoesNotFit) {
  ColumnSchema u32 = schema_of(PhysicalType::kInt32);
  u32.int_annotation = IntAnnotation{32, false};
  EXPECT_EQ(statistic_text(u32, raw_of<int32_t>(-1)), "4294967295");
  EXPECT_EQ(statistic_text(schema_of(PhysicalType::kInt64), raw_of<int64_t>(-7)), "-7");
  EXPECT_EQ(statistic_text(schema_of(PhysicalType::kDouble), raw_of(std::nan(""))), "NaN");
  EXPECT_EQ(statistic_text(schema_of(PhysicalType::kFloat), raw_of(-std::numeric_limits<float>::infinity())),
            "-Infinity");
  EXPECT_EQ(statistic_text(schema_of(PhysicalType::kBoolean), std::string(1, '\1')), "true");
  EXPECT_EQ(statistic_text(schema_of(PhysicalType::kInt32), "ab"), "0x6162");
  EXPECT_EQ(statistic_text(schema_of(PhysicalType::kByteArray), "ab"), "0x6162");
  EXPECT_EQ(statistic_text(schema_of(PhysicalType::kInt32, LogicalKind::kDate), raw_of<int32_t>(19668)),
            "2023-11-07");
  EXPECT_EQ(statistic_text(schema_of(PhysicalType::kInt32, LogicalKind::kDate), "abc"), "0x616263");
  // An own form that the bytes do not fit (a UUID of 3 bytes) is hex too; a long decimal is its digits.
  EXPECT_EQ(statistic_text(schema_of(PhysicalType::kFixedLenByteArray, LogicalKind::kUuid), "abc"), "0x616263");
  ColumnSchema decimal = schema_of(PhysicalType::kFixedLenByteArray, LogicalKind::kDecimal);
  decimal.logical.scale = 3;
  EXPECT_EQ(statistic_text(decimal, std::string(20, '\xff')), "-0.001");
}

TEST(ValueText, ValuesOfEveryPhysicalType) {
  Column flags = make_column(schema_of(PhysicalType::kBoolean));
  flags.as<uint8_t>() = {1, 0};
  EXPECT_EQ(value_text(flags, 0), "true");
  EXPECT_EQ(value_text(flags, 1), "false");
  ColumnSchema u64 = schema_of(PhysicalType::kInt64);
  u64.int_annotation = IntAnnotation{64, false};
  Column big = make_column(u64);
  big.as<int64_t>() = {-1};
  EXPECT_EQ(value_text(big, 0), "18446744073709551615");
  Column floats = make_column(schema_of(PhysicalType::kFloat));
  floats.as<float>() = {0.1f, std::numeric_limits<float>::infinity()};
  EXPECT_EQ(value_text(floats, 0), "0.1");
  EXPECT_EQ(value_text(floats, 1), "Infinity");
  ColumnSchema text = schema_of(PhysicalType::kByteArray);
  text.is_string = true;
  EXPECT_EQ(value_text(byte_column(text, {"a,b"}), 0), "a,b");
  EXPECT_EQ(value_text(byte_column(schema_of(PhysicalType::kByteArray), {"\x01\xff"}), 0), "01ff");
  ColumnSchema fixed_text = schema_of(PhysicalType::kFixedLenByteArray);
  fixed_text.is_string = true;  // (a fixed length prints as hex all the same)
  EXPECT_EQ(value_text(byte_column(fixed_text, {"ab"}), 0), "6162");
}

TEST(ValueText, ValuesOfLogicalTypesAndTheirFallbacks) {
  Column ts = make_column(schema_of(PhysicalType::kInt64, LogicalKind::kTimestamp));
  ts.as<int64_t>() = {-1};
  EXPECT_EQ(value_text(ts, 0), "1969-12-31T23:59:59.999999Z");
  Column time = make_column(schema_of(PhysicalType::kInt32, LogicalKind::kTime));
  time.schema.logical.unit = TimeUnit::kMillis;
  time.as<int32_t>() = {45296789};
  EXPECT_EQ(value_text(time, 0), "12:34:56.789");
  Column decimal = make_column(schema_of(PhysicalType::kInt32, LogicalKind::kDecimal));
  decimal.schema.logical.scale = 2;
  decimal.as<int32_t>() = {-5};
  EXPECT_EQ(value_text(decimal, 0), "-0.05");
  const std::string uuid = "\x01\x96\xe8\xfb\x0a\xdf\x73\x55\xba\x39\xd4\xc2\xe6\x2d\xc4\xbd";
  const Column uuids = byte_column(schema_of(PhysicalType::kFixedLenByteArray, LogicalKind::kUuid), {uuid, "ab"});
  EXPECT_EQ(value_text(uuids, 0), "0196e8fb-0adf-7355-ba39-d4c2e62dc4bd");
  EXPECT_EQ(value_text(uuids, 1), "6162");  // not 16 bytes: hex
  std::string interval(12, '\0');
  interval[0] = 14;  // months
  interval[4] = 1;   // days
  interval[8] = 1;   // milliseconds
  const Column intervals =
      byte_column(schema_of(PhysicalType::kFixedLenByteArray, LogicalKind::kInterval), {interval, "abc"});
  EXPECT_EQ(value_text(intervals, 0), "1 year 2 months 1 day 00:00:00.001");
  EXPECT_EQ(value_text(intervals, 1), "616263");
  const std::string one("\x00\x3c", 2), nan("\x00\x7e", 2);
  const ColumnSchema half = schema_of(PhysicalType::kFixedLenByteArray, LogicalKind::kFloat16);
  const Column halves = byte_column(half, {one, nan, "a"});
  EXPECT_EQ(value_text(halves, 0), "1");
  EXPECT_EQ(value_text(halves, 1), "NaN");
  EXPECT_EQ(value_text(halves, 2), "61");
  ColumnSchema json = schema_of(PhysicalType::kByteArray, LogicalKind::kJson);
  json.is_string = true;
  EXPECT_EQ(value_text(byte_column(json, {R"({"a":1})"}), 0), R"({"a":1})");
}

TEST(ValueText, JsonValuesKeepTheirTypes) {
  Column doubles = make_column(schema_of(PhysicalType::kDouble));
  doubles.as<double>() = {2.5, std::nan("")};
  EXPECT_EQ(json_value(doubles, 0).dump(), "2.5");
  EXPECT_EQ(json_value(doubles, 1).dump(), "\"NaN\"");
  ColumnSchema u32 = schema_of(PhysicalType::kInt32);
  u32.int_annotation = IntAnnotation{32, false};
  Column unsigned_ints = make_column(u32);
  unsigned_ints.as<int32_t>() = {-1};
  EXPECT_EQ(json_value(unsigned_ints, 0).dump(), "4294967295");
  const std::string one("\x00\x3c", 2), infinity("\x00\x7c", 2);
  const ColumnSchema half = schema_of(PhysicalType::kFixedLenByteArray, LogicalKind::kFloat16);
  const Column halves = byte_column(half, {one, infinity});
  EXPECT_EQ(json_value(halves, 0).dump(), "1");
  EXPECT_EQ(json_value(halves, 1).dump(), "\"Infinity\"");
  ColumnSchema json = schema_of(PhysicalType::kByteArray, LogicalKind::kJson);
  json.is_string = true;
  const Column texts = byte_column(json, {R"({"a":[1,2]})", "not json"});
  EXPECT_EQ(json_value(texts, 0).dump(), R"({"a":[1,2]})");
  EXPECT_EQ(json_value(texts, 1).dump(), "\"not json\"");
  Column dates = make_column(schema_of(PhysicalType::kInt32, LogicalKind::kDate));
  dates.as<int32_t>() = {0};
  EXPECT_EQ(json_value(dates, 0).dump(), "\"1970-01-01\"");
}

TEST(ValueText, DecimalsOfAnyLengthAndHex) {
  EXPECT_EQ(decimal_to_string(123456, 3), "123.456");
  EXPECT_EQ(decimal_to_string(7, 0), "7");
  EXPECT_EQ(decimal_bytes_to_string(std::string("\x01") + std::string(16, '\0'), 0),
            "340282366920938463463374607431768211456");
  EXPECT_EQ(decimal_bytes_to_string(std::string(18, '\0'), 2), "0.00");
  EXPECT_EQ(decimal_bytes_to_string(std::string("\xff\xfe"), 1), "-0.2");
  std::string hex = "x";
  append_hex(hex, std::string("\x00\x0f\xa0", 3));
  EXPECT_EQ(hex, "x000fa0");
}

TEST(ValueText, WhichValuesWritersMayHandOnAsBytesOrHex) {
  ColumnSchema text = schema_of(PhysicalType::kByteArray);
  text.is_string = true;
  EXPECT_EQ(value_text_kind(text), ValueTextKind::kBytes);
  text.logical.kind = LogicalKind::kVariant;
  EXPECT_EQ(value_text_kind(text), ValueTextKind::kBytes);
  EXPECT_EQ(value_text_kind(schema_of(PhysicalType::kByteArray, LogicalKind::kBson)), ValueTextKind::kHex);
  EXPECT_EQ(value_text_kind(schema_of(PhysicalType::kFixedLenByteArray)), ValueTextKind::kHex);
  EXPECT_EQ(value_text_kind(schema_of(PhysicalType::kFixedLenByteArray, LogicalKind::kUuid)), ValueTextKind::kShort);
  EXPECT_EQ(value_text_kind(schema_of(PhysicalType::kInt64)), ValueTextKind::kShort);
}

}  // namespace
}  // namespace feedline
