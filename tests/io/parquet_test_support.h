// Helpers shared by the Parquet tests: random tables of every supported type, and table comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "feedline/io/parquet.h"
#include "feedline/io/table.h"
#include "io/parquet/metadata.h"
#include "io/parquet/thrift_compact.h"
#include "test_paths.h"

namespace feedline::testing {

struct RandomTableSpec {
  int64_t rows = 1000;
  double null_fraction = 0.2;  // for nullable columns
  int distinct = 0;            // > 0: draw values from this many distinct ones (dictionary-friendly)
  bool with_nulls_everywhere = false;
};

// The value kinds of the random tables: BOOLEAN, INT32 (plain and INT(8/16/32, +-)), INT64 (plain,
// INT(64, unsigned)), FLOAT, DOUBLE, BYTE_ARRAY (raw and STRING), FIXED_LEN_BYTE_ARRAY(5).
struct ValueKind {
  const char* name;
  PhysicalType type;
  std::optional<IntAnnotation> ann;
  bool is_string;
};

inline const std::vector<ValueKind>& value_kinds() {
  static const std::vector<ValueKind> kinds = {
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
  return kinds;
}

inline ColumnSchema kind_schema(const ValueKind& k, const std::string& name) {
  ColumnSchema s;
  s.name = name;
  s.type = k.type;
  s.int_annotation = k.ann;
  s.is_string = k.is_string;
  if (k.type == PhysicalType::kFixedLenByteArray) s.type_length = 5;
  return s;
}

// Appends one value of kind `k` made from the random bits `r` to `c`'s values: a zero value (no bytes) when
// it is not present, as Table wants for nulls.
inline void push_random_value(Column* c, const ValueKind& k, uint64_t r, bool present) {
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

// Random bits drawn from `distinct` values when it is positive (dictionary-friendly).
inline uint64_t draw_bits(std::mt19937_64& rng, int distinct) {
  uint64_t r = rng();
  if (distinct > 0) r = std::hash<uint64_t>{}(r % static_cast<uint64_t>(distinct)) * 0x9E3779B97F4A7C15ULL;
  return r;
}

// A table with every type of value_kinds(), required and optional.
inline Table random_table(uint64_t seed, const RandomTableSpec& spec) {
  std::mt19937_64 rng(seed);
  Table t;
  t.num_rows = spec.rows;
  std::uniform_real_distribution<double> unit(0, 1);
  for (bool nullable : {false, true}) {
    for (const ValueKind& k : value_kinds()) {
      ColumnSchema s = kind_schema(k, std::string(k.name) + (nullable ? "_opt" : "_req"));
      s.nullable = nullable;
      t.columns.push_back(make_column(s));
      Column* c = &t.columns.back();
      if (nullable) c->validity.resize(static_cast<size_t>(spec.rows));
      for (int64_t i = 0; i < spec.rows; ++i) {
        const bool present = !nullable || unit(rng) >= spec.null_fraction;
        if (nullable) c->validity[static_cast<size_t>(i)] = present ? 1 : 0;
        push_random_value(c, k, draw_bits(rng, spec.distinct), present);
      }
      // A nullable column whose validity happens to hold no nulls is stored without a validity vector.
      if (nullable && std::find(c->validity.begin(), c->validity.end(), 0) == c->validity.end()) c->validity.clear();
    }
  }
  return t;
}

// A table of list columns: one per value kind and combination of nullable lists and nullable elements, named
// like "l_i32_ol_oe" (optional list, optional elements) or "l_i32_rl_re". Rows come in blocks of 64 of one
// regime: short lists (0 to 6 elements) with null lists and null elements mixed in, long lists (20 to 200
// elements, so that a page fills inside a run of them), all empty lists, or all null lists (empty where lists
// are required): long runs of every level pattern.
inline Table random_list_table(uint64_t seed, const RandomTableSpec& spec) {
  std::mt19937_64 rng(seed);
  Table t;
  t.num_rows = spec.rows;
  std::uniform_real_distribution<double> unit(0, 1);
  for (const ValueKind& k : value_kinds()) {
    for (const bool list_nullable : {false, true}) {
      for (const bool element_nullable : {false, true}) {
        ColumnSchema s = kind_schema(k, std::string("l_") + k.name + (list_nullable ? "_ol" : "_rl") +
                                            (element_nullable ? "_oe" : "_re"));
        s.is_list = true;
        s.nullable = list_nullable;
        s.element_nullable = element_nullable;
        t.columns.push_back(make_column(s));
        Column* c = &t.columns.back();
        for (int64_t i = 0; i < spec.rows; ++i) {
          const int regime = static_cast<int>((i / 64 + static_cast<int64_t>(seed)) % 5);
          bool null_list = regime == 3;
          int64_t length = 0;
          if (regime == 0 || regime == 1) {
            null_list = unit(rng) < spec.null_fraction / 2;
            length = static_cast<int64_t>(rng() % 7);
          } else if (regime == 2) {
            length = 20 + static_cast<int64_t>(rng() % 181);
          }
          null_list = null_list && list_nullable;
          if (null_list) length = 0;
          c->validity.push_back(null_list ? 0 : 1);
          for (int64_t e = 0; e < length; ++e) {
            const bool present = !element_nullable || unit(rng) >= spec.null_fraction;
            c->element_validity.push_back(present ? 1 : 0);
            push_random_value(c, k, draw_bits(rng, spec.distinct), present);
          }
          c->list_offsets.push_back(c->list_offsets.back() + length);
        }
        // As the reader gives them back: no validity vector without a null.
        if (std::find(c->validity.begin(), c->validity.end(), 0) == c->validity.end()) c->validity.clear();
        if (std::find(c->element_validity.begin(), c->element_validity.end(), 0) == c->element_validity.end()) {
          c->element_validity.clear();
        }
      }
    }
  }
  return t;
}

// Lists of lists of `depth` levels (2 or more): a column for each combination of nullable levels and elements
// (2^(depth + 1) of them), their values taken in turn from the value kinds. Each level holds null lists (where
// it may), empty lists and lists of up to four entries, and now and then a long one (up to 150 entries), so
// that pages are cut inside long runs. Validity vectors without a null are left empty, as the reader gives them.
inline Table random_nested_list_table(uint64_t seed, const RandomTableSpec& spec, int depth) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  Table t;
  t.num_rows = spec.rows;
  const std::vector<ValueKind>& kinds = value_kinds();
  for (int mask = 0; mask < (1 << (depth + 1)); ++mask) {
    const ValueKind& k = kinds[static_cast<size_t>(mask * 5 + depth) % kinds.size()];
    ColumnSchema s = kind_schema(k, "d" + std::to_string(depth) + "_" + std::to_string(mask) + "_" + k.name);
    s.is_list = true;
    s.nullable = (mask & 1) != 0;
    for (int level = 1; level < depth; ++level) s.inner_list_nullable.push_back(((mask >> level) & 1) != 0);
    s.element_nullable = ((mask >> depth) & 1) != 0;
    t.columns.push_back(make_column(s));
    Column* c = &t.columns.back();
    const auto offsets = [&](int level) -> std::vector<int64_t>& {
      return level == 0 ? c->list_offsets : c->inner_lists[static_cast<size_t>(level - 1)].offsets;
    };
    const auto validity = [&](int level) -> std::vector<uint8_t>& {
      return level == 0 ? c->validity : c->inner_lists[static_cast<size_t>(level - 1)].validity;
    };
    const auto nullable = [&](int level) {
      return level == 0 ? s.nullable : static_cast<bool>(s.inner_list_nullable[static_cast<size_t>(level - 1)]);
    };
    // One list at `level`: its entries first (lists of the next level, or values), then its end offset.
    const auto add_list = [&](int level, const auto& self) -> void {
      const bool null = nullable(level) && unit(rng) < spec.null_fraction / 2;
      int64_t length = 0;
      if (!null) length = unit(rng) < 0.02 ? 20 + static_cast<int64_t>(rng() % 131) : static_cast<int64_t>(rng() % 5);
      for (int64_t e = 0; e < length; ++e) {
        if (level + 1 < depth) {
          self(level + 1, self);
        } else {
          const bool present = !s.element_nullable || unit(rng) >= spec.null_fraction;
          if (s.element_nullable) c->element_validity.push_back(present ? 1 : 0);
          push_random_value(c, k, draw_bits(rng, spec.distinct), present);
        }
      }
      if (nullable(level)) validity(level).push_back(null ? 0 : 1);
      const int64_t end = level + 1 < depth ? static_cast<int64_t>(offsets(level + 1).size()) - 1
                                            : std::visit([](const auto& v) { return static_cast<int64_t>(v.size()); },
                                                         c->values);
      offsets(level).push_back(end);
    };
    for (int64_t r = 0; r < spec.rows; ++r) add_list(0, add_list);
    for (int level = 0; level < depth; ++level) {
      std::vector<uint8_t>& v = validity(level);
      if (std::find(v.begin(), v.end(), 0) == v.end()) v.clear();
    }
    if (std::find(c->element_validity.begin(), c->element_validity.end(), 0) == c->element_validity.end()) {
      c->element_validity.clear();
    }
  }
  return t;
}

// Asserts schema, values (bitwise for floats), validity and list structure (every level of lists of lists) are
// equal.
// A small table of an INT64 column `id` holding first..first+rows-1 and a STRING column `name` ("row <id>"):
// rows that tell which file and place they came from.
inline Table id_name_table(int64_t first, int64_t rows) {
  ColumnSchema id{"id"}, name{"name"};
  name.type = PhysicalType::kByteArray;
  name.is_string = true;
  Table t;
  t.columns = {make_column(id), make_column(name)};
  for (int64_t i = first; i < first + rows; ++i) {
    t.columns[0].as<int64_t>().push_back(i);
    std::get<ByteArrays>(t.columns[1].values).push_back("row " + std::to_string(i));
  }
  t.num_rows = rows;
  return t;
}

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
    EXPECT_EQ(e.schema.is_list, a.schema.is_list);
    EXPECT_EQ(e.schema.element_nullable, a.schema.element_nullable);
    EXPECT_EQ(e.schema.inner_list_nullable, a.schema.inner_list_nullable);
    ASSERT_EQ(e.validity, a.validity);
    ASSERT_EQ(e.list_offsets, a.list_offsets);
    ASSERT_EQ(e.inner_lists.size(), a.inner_lists.size());
    for (size_t k = 0; k < e.inner_lists.size(); ++k) {
      ASSERT_EQ(e.inner_lists[k].offsets, a.inner_lists[k].offsets) << "inner level " << k;
      ASSERT_EQ(e.inner_lists[k].validity, a.inner_lists[k].validity) << "inner level " << k;
    }
    ASSERT_EQ(e.element_validity, a.element_validity);
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

// One round trip's write options, and how many distinct values the random table draws (0: any).
struct RoundTripCase {
  parquet::Codec codec;
  bool dictionary;
  int64_t row_group_rows;
  int64_t page_bytes;
  int distinct;
};

// Writes `table` to `path` with the case's options and checks it reads back equal with 1 and with 3 threads.
inline void write_and_expect_read_back(const Table& table, const RoundTripCase& c, const std::string& path) {
  parquet::WriteOptions w;
  w.codec = c.codec;
  w.dictionary = c.dictionary;
  w.row_group_rows = c.row_group_rows;
  w.page_bytes = c.page_bytes;
  parquet::write_table(path, table, w);
  for (int threads : {1, 3}) {
    SCOPED_TRACE("read with " + std::to_string(threads) + " threads");
    parquet::ReadOptions r;
    r.num_threads = threads;
    expect_tables_equal(table, parquet::read_table(path, r));
  }
}

// Copies the Parquet file `src` to `dst` with its footer changed by `edit` (the column data as it was): files of
// features no writer at hand makes.
inline void rewrite_footer(const std::string& src, const std::string& dst,
                           const std::function<void(parquet::format::FileMetaData&)>& edit) {
  const std::string file = file_bytes(src);
  ASSERT_GE(file.size(), 12u) << src;
  uint32_t footer_len;
  std::memcpy(&footer_len, file.data() + file.size() - 8, 4);
  const size_t footer_at = file.size() - 8 - footer_len;
  parquet::thrift::CompactReader reader(reinterpret_cast<const uint8_t*>(file.data()) + footer_at, footer_len,
                                        static_cast<int64_t>(footer_at));
  parquet::format::FileMetaData md = parquet::format::read_file_metadata(reader);
  edit(md);
  parquet::thrift::CompactWriter w;
  parquet::format::write_file_metadata(w, md);
  const uint32_t len = static_cast<uint32_t>(w.buffer().size());
  std::ofstream(dst, std::ios::binary) << file.substr(0, footer_at) << w.buffer()
                                       << std::string(reinterpret_cast<const char*>(&len), 4) << "PAR1";
}

// The options under which tests that read every file of the shared corpora read them: a memory limit of 1 GiB
// (the default also allows a quarter of the machine's memory), so that large_string_map.brotli, 2 GB of strings
// from a file of 4 KB, is refused there and read by a test of its own.
inline parquet::ReadOptions sweep_read_options() {
  parquet::ReadOptions options;
  options.max_output_bytes = int64_t{1} << 30;
  return options;
}

// Copies the Parquet file `src` to `dst` with the primitive column `name` annotated VARIANT (a group's
// annotation, which the spec does not give a primitive): a file with one column feedline does not read.
inline void write_with_unreadable_column(const std::string& src, const std::string& dst, const std::string& name) {
  rewrite_footer(src, dst, [&](parquet::format::FileMetaData& md) {
    for (auto& e : md.schema) {
      if (e.name != name) continue;
      parquet::format::LogicalType lt;
      lt.kind = parquet::format::logical::kVariant;
      e.logical_type = lt;
      e.converted_type.reset();
    }
  });
}

}  // namespace feedline::testing
