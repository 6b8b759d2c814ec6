// Internal to the Parquet writer: the level entries of a column chunk (ChunkShape, ListLevels), shared by the
// encoder (writer.cpp) and the checks a table passes before anything is written (write_checks.cpp). Plain data and
// functions: safe from any thread on data no other thread changes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "feedline/io/parquet.h"
#include "feedline/io/table.h"
#include "io/parquet/rle.h"

namespace feedline::parquet::detail {

inline std::string column_where(const Column& col) { return "column '" + col.schema.name + "'"; }

// The level entries and value slots of one column chunk. A flat column has one entry and one value slot per
// row; a list column one slot per element and one entry per element, null list and empty list, so that its
// pages can be cut between entries that start a row (repetition level 0) and nowhere else.
struct ChunkShape {
  int64_t s0 = 0, s1 = 0;                // value slots [s0, s1) of the column's values
  const uint8_t* slot_valid = nullptr;   // validity of slots s0.. (null: every slot holds a value)
  int64_t entries = 0;
  int max_def = 0, max_rep = 0;
  const uint8_t* def = nullptr;          // definition levels of the entries (null when max_def is 0)
  const uint8_t* rep = nullptr;          // repetition levels (null when max_rep is 0)
  std::vector<uint8_t> own_def, own_rep; // storage when the levels are not the column's own validity bytes

  ChunkShape() = default;
  ChunkShape(const ChunkShape&) = delete;  // def and rep may point into own_def and own_rep
  ChunkShape& operator=(const ChunkShape&) = delete;

  // Entries [p0, p1) that carry a value (their definition level reaches max_def).
  int64_t values_in(int64_t p0, int64_t p1) const {
    if (def == nullptr) return p1 - p0;
    return std::count(def + p0, def + p1, static_cast<uint8_t>(max_def));
  }
  // Where a page that should end at `p1` may end: at an entry that starts a row, or at the end.
  int64_t row_boundary(int64_t p1) const {
    while (rep != nullptr && p1 < entries && rep[p1] != 0) ++p1;
    return p1;
  }
  int level_bits() const {
    return bit_width_for(static_cast<uint64_t>(max_def)) + bit_width_for(static_cast<uint64_t>(max_rep));
  }
};

// The levels of lists of a list column, outside in: level 0 the rows' lists (list_offsets, validity), level k > 0
// inner_lists[k - 1]. The lists of the last level hold the value slots; those of any other, the next level's lists.
struct ListLevels {
  const Column& col;
  int depth;
  std::vector<int> null_def, empty_def;  // per level: the definition level of a null / an empty list
  int null_slot_def = 0, max_def = 0;    // of a null element / a present one

  explicit ListLevels(const Column& c) : col(c), depth(c.schema.list_depth()) {
    // Dremel's definition levels count the defined optional or repeated ancestors: a list that may be null adds
    // one when present, its repeated field one more when it holds an element, and an optional element one.
    int def = 0;
    for (int k = 0; k < depth; ++k) {
      null_def.push_back(def);
      def += nullable(k) ? 1 : 0;
      empty_def.push_back(def);
      ++def;
    }
    null_slot_def = def;
    max_def = def + (c.schema.element_nullable ? 1 : 0);
  }
  bool nullable(int k) const {
    return k == 0 ? col.schema.nullable : col.schema.inner_list_nullable[static_cast<size_t>(k - 1)];
  }
  const std::vector<int64_t>& offsets(int k) const {
    return k == 0 ? col.list_offsets : col.inner_lists[static_cast<size_t>(k - 1)].offsets;
  }
  const std::vector<uint8_t>& validity(int k) const {
    return k == 0 ? col.validity : col.inner_lists[static_cast<size_t>(k - 1)].validity;
  }
  bool is_null(int k, int64_t list) const {
    const std::vector<uint8_t>& v = validity(k);
    return !v.empty() && v[static_cast<size_t>(list)] == 0;
  }
  // The first value slot of row `row` (or the slot count, for the row after the last).
  int64_t first_slot(int64_t row) const {
    int64_t i = row;
    for (int k = 0; k < depth; ++k) i = offsets(k)[static_cast<size_t>(i)];
    return i;
  }
  // The level entries of list `list` at level k, the first of them with repetition level `rep`: one for a null
  // or empty list, else those of its elements, each after the first repeating at level k + 1.
  void append(int k, int64_t list, int rep, ChunkShape* sh) const {
    const bool null = is_null(k, list);
    const int64_t b = offsets(k)[static_cast<size_t>(list)], e = offsets(k)[static_cast<size_t>(list + 1)];
    if (null || b == e) {
      sh->own_rep.push_back(static_cast<uint8_t>(rep));
      const int def = null ? null_def[static_cast<size_t>(k)] : empty_def[static_cast<size_t>(k)];
      sh->own_def.push_back(static_cast<uint8_t>(def));
      return;
    }
    for (int64_t i = b; i < e; ++i) {
      const int r = i == b ? rep : k + 1;
      if (k + 1 < depth) {
        append(k + 1, i, r, sh);
      } else {
        sh->own_rep.push_back(static_cast<uint8_t>(r));
        sh->own_def.push_back(static_cast<uint8_t>(col.element_is_null(i) ? null_slot_def : max_def));
      }
    }
  }
};

// Where WriteOptions::dotted_names_as_structs puts a column named `name`: the length of the struct's name (the
// part before the first dot), or 0 for a top-level column (the option off, or no dot in the name). A name whose
// part before or after the first dot is empty is refused by validate().
inline size_t struct_name_length(const std::string& name, const WriteOptions& options) {
  if (!options.dotted_names_as_structs) return 0;
  const size_t dot = name.find('.');
  return dot == std::string::npos ? 0 : dot;
}

void validate(const Table& table, const WriteOptions& options);

// A column of the table handed to FileWriter::write() must be the writer's column: the same name, type,
// annotations and nullability, so that one footer describes every row group.
void check_same_schema(const std::string& path, const ColumnSchema& want, const ColumnSchema& got);

// A table of `schema`'s columns and no rows.
Table empty_table(const std::vector<ColumnSchema>& schema);

}  // namespace feedline::parquet::detail
