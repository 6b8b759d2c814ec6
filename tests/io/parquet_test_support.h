// Helpers shared by the Parquet tests: random tables of every supported type, and table comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "feedline/table.h"

namespace feedline::testing {

struct RandomTableSpec {
  int64_t rows = 1000;
  double null_fraction = 0.2;  // for nullable columns
  int distinct = 0;            // > 0: draw values from this many distinct ones (dictionary-friendly)
  bool with_nulls_everywhere = false;
};

// A table with every type: required and optional of BOOLEAN, INT32 (plain and INT(8/16/32, +-)), INT64
// (plain, INT(64, unsigned)), FLOAT, DOUBLE, BYTE_ARRAY (raw and STRING), FIXED_LEN_BYTE_ARRAY(5).
inline Table random_table(uint64_t seed, const RandomTableSpec& spec) {
  std::mt19937_64 rng(seed);
  Table t;
  t.num_rows = spec.rows;
  auto add = [&](ColumnSchema s) {
    Column c = make_column(s);
    t.columns.push_back(std::move(c));
    return &t.columns.back();
  };
  struct Kind {
    const char* name;
    PhysicalType type;
    std::optional<IntAnnotation> ann;
    bool is_string;
  };
  const std::vector<Kind> kinds = {
      {"bool", PhysicalType::kBoolean, std::nullopt, false},
      {"i32", PhysicalType::kInt32, std::nullopt, false},
      {"i8", PhysicalType::kInt32, IntAnnotation{8, true}, false},
      {"u8", PhysicalType::kInt32, IntAnnotation{8, false}, false},
      {"i16", PhysicalType::kInt32, IntAnnotation{16, true}, false},
      {"u16", PhysicalType::kInt32, IntAnnotation{16, false}, false},
      {"u32", PhysicalType::kInt32, IntAnnotation{32, false}, false},
      {"i64", PhysicalType::kInt64, std::nullopt, false},
      {"u64", PhysicalType::kInt64, IntAnnotation{64, false}, false},
      {"f32", PhysicalType::kFloat, std::nullopt, false},
      {"f64", PhysicalType::kDouble, std::nullopt, false},
      {"bin", PhysicalType::kByteArray, std::nullopt, false},
      {"str", PhysicalType::kByteArray, std::nullopt, true},
      {"flba", PhysicalType::kFixedLenByteArray, std::nullopt, false},
  };
  std::uniform_real_distribution<double> unit(0, 1);
  for (bool nullable : {false, true}) {
    for (const Kind& k : kinds) {
      ColumnSchema s;
      s.name = std::string(k.name) + (nullable ? "_opt" : "_req");
      s.type = k.type;
      s.nullable = nullable;
      s.int_annotation = k.ann;
      s.is_string = k.is_string;
      if (k.type == PhysicalType::kFixedLenByteArray) s.type_length = 5;
      Column* c = add(s);
      if (nullable) c->validity.resize(static_cast<size_t>(spec.rows));
      for (int64_t i = 0; i < spec.rows; ++i) {
        const bool present = !nullable || unit(rng) >= spec.null_fraction;
        if (nullable) c->validity[static_cast<size_t>(i)] = present ? 1 : 0;
        uint64_t r = rng();
        if (spec.distinct > 0) r = std::hash<uint64_t>{}(r % static_cast<uint64_t>(spec.distinct)) * 0x9E3779B97F4A7C15ULL;
        if (!present) r = 0;
        switch (k.type) {
          case PhysicalType::kBoolean: c->as<uint8_t>().push_back(present ? (r >> 7) & 1 : 0); break;
          case PhysicalType::kInt32: {
            int32_t v = static_cast<int32_t>(r);
            if (k.ann && k.ann->bit_width < 32) {
              const int w = k.ann->bit_width;
              const int64_t span = int64_t{1} << w;
              int64_t x = static_cast<int64_t>(r % static_cast<uint64_t>(span));
              if (k.ann->is_signed) x -= span / 2;
              v = static_cast<int32_t>(x);
            }
            c->as<int32_t>().push_back(present ? v : 0);
            break;
          }
          case PhysicalType::kInt64: c->as<int64_t>().push_back(present ? static_cast<int64_t>(r) : 0); break;
          case PhysicalType::kFloat: {
            float f = static_cast<float>(static_cast<int64_t>(r >> 20) - (int64_t{1} << 43)) / 1024.0f;
            if (present && r % 97 == 3) f = -0.0f;
            c->as<float>().push_back(present ? f : 0.0f);
            break;
          }
          case PhysicalType::kDouble: {
            double d = static_cast<double>(static_cast<int64_t>(r)) / 3.0;
            if (present && r % 89 == 5) d = 0.0;
            c->as<double>().push_back(present ? d : 0.0);
            break;
          }
          case PhysicalType::kByteArray:
          case PhysicalType::kFixedLenByteArray: {
            std::string v;
            if (present) {
              const size_t len = k.type == PhysicalType::kFixedLenByteArray ? 5 : r % 23;
              for (size_t j = 0; j < len; ++j) {
                const char ch = k.is_string ? static_cast<char>('a' + (r >> (j % 50)) % 26)
                                            : static_cast<char>((r >> ((j * 7) % 56)) & 0xff);
                v.push_back(ch);
              }
            }
            std::get<ByteArrays>(c->values).push_back(v);
            break;
          }
        }
      }
      // A nullable column whose validity happens to hold no nulls is stored without a validity vector.
      if (nullable && std::find(c->validity.begin(), c->validity.end(), 0) == c->validity.end()) c->validity.clear();
    }
  }
  return t;
}

// Asserts schema, values (bitwise for floats) and validity are equal.
inline void expect_tables_equal(const Table& expected, const Table& actual) {
  ASSERT_EQ(expected.num_rows, actual.num_rows);
  ASSERT_EQ(expected.columns.size(), actual.columns.size());
  for (size_t c = 0; c < expected.columns.size(); ++c) {
    const Column& e = expected.columns[c];
    const Column& a = actual.columns[c];
    SCOPED_TRACE("column " + e.schema.name);
    EXPECT_EQ(e.schema.name, a.schema.name);
    EXPECT_EQ(e.schema.type, a.schema.type);
    EXPECT_EQ(e.schema.nullable, a.schema.nullable);
    EXPECT_EQ(e.schema.int_annotation.has_value(), a.schema.int_annotation.has_value());
    if (e.schema.int_annotation && a.schema.int_annotation) EXPECT_EQ(*e.schema.int_annotation, *a.schema.int_annotation);
    EXPECT_EQ(e.schema.is_string, a.schema.is_string);
    EXPECT_EQ(e.schema.type_length, a.schema.type_length);
    EXPECT_TRUE(e.schema.logical == a.schema.logical);
    ASSERT_EQ(e.validity, a.validity);
    ASSERT_EQ(e.values.index(), a.values.index());
    if (e.values.index() == value_index(PhysicalType::kByteArray)) {
      const ByteArrays& eb = e.byte_arrays();
      const ByteArrays& ab = a.byte_arrays();
      ASSERT_EQ(eb.size(), ab.size());
      for (int64_t i = 0; i < eb.size(); ++i) {
        ASSERT_EQ(eb.at(i), ab.at(i)) << "row " << i;
      }
    } else {
      std::visit(
          [&](const auto& ev) {
            using V = std::decay_t<decltype(ev)>;
            if constexpr (!std::is_same_v<V, ByteArrays>) {
              const V& av = std::get<V>(a.values);
              ASSERT_EQ(ev.size(), av.size());
              for (size_t i = 0; i < ev.size(); ++i) {
                ASSERT_EQ(0, std::memcmp(&ev[i], &av[i], sizeof ev[i])) << "row " << i;
              }
            }
          },
          e.values);
    }
  }
}

}  // namespace feedline::testing
