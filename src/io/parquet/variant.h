// Internal to the Parquet reader: VARIANT columns (parquet-format's VariantEncoding.md and VariantShredding.md),
// read as each row's value in JSON text. A VARIANT is a group of leaf columns: `metadata` (the key dictionary),
// `value` (a value in the variant binary encoding) and, when shredded, `typed_value` (a primitive column, an
// object's fields each again a `value` / `typed_value` pair, or a LIST of such pairs). Its rows are put back
// together from those leaves' definition and repetition levels, then written as JSON.
//
// JSON text: objects with their keys in byte order, no spaces ({"a":1,"b":[true,null]}); integers and decimals
// as exact numbers; floats as the shortest digits of their double; dates, times and timestamps as strings as
// `cat` prints such columns ("2024-11-07", "12:33:54.123456", "2024-11-07T12:33:54.123456Z", nanoseconds with 9
// digits); binary as a base64 string; UUIDs in their canonical text. NaN and infinities, which JSON lacks, as the
// strings "NaN", "Infinity" and "-Infinity".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/parquet/schema.h"

namespace feedline::parquet {

// One `value` / `typed_value` pair: the variant itself, an object's field or an array's element. Part numbers
// index VariantShape::parts.
struct VariantNode {
  enum class Typed { kNone, kPrimitive, kObject, kArray };
  int def = 0;     // the definition level at which the pair's group is present
  int value = -1;  // the part holding `value`, -1 when the group has none
  Typed typed = Typed::kNone;
  int typed_part = -1;  // kPrimitive: the part holding `typed_value`
  int typed_def = 0;    // kObject, kArray: the definition level at which typed_value is present (not null)
  int element_rep = 0;  // kArray: the repetition level of every element after an array's first
  std::vector<std::pair<std::string, VariantNode>> fields;  // kObject: each shredded field, by name
  std::vector<VariantNode> element;                          // kArray: the element (one)
  std::vector<int> parts;        // every part under the pair, `value` and typed_value's
  std::vector<int> typed_parts;  // the parts under typed_value
};

struct VariantShape {
  int metadata = -1;  // the part holding `metadata`
  VariantNode root;   // its parts include `metadata`
  std::vector<Leaf> parts;  // the group's leaves, in column-chunk order (Leaf::index: the chunk)
};

// Appends the JSON text of the variant `value` (its binary encoding), whose keys are in `metadata`, to `out`.
// Throws InvalidFile, naming what is wrong, for bytes that are not a valid variant.
void append_variant_json(std::string_view metadata, std::string_view value, std::string& out);

namespace detail {

struct ParsedFile;

// A VARIANT column's chunk of row group `rg` (leaf.variant set): a STRING column of num_rows JSON texts, with a
// validity vector when the column is nullable. Throws InvalidFile naming the leaf and page for a malformed chunk,
// and the row for a malformed value.
Column read_variant_chunk(const ParsedFile& file, const Leaf& leaf, const format::RowGroup& rg, int64_t output_budget);

}  // namespace detail

}  // namespace feedline::parquet
