// Internal: between Parquet's schema (SchemaElements, converted and logical types) and feedline's flat
// ColumnSchema, in both directions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "feedline/io/table.h"
#include "io/parquet/metadata.h"

namespace feedline::parquet {

// The largest FIXED_LEN_BYTE_ARRAY value we accept (16 MiB): a bound against hostile type lengths.
constexpr int32_t kMaxTypeLength = 1 << 24;

struct VariantShape;  // variant.h

// One leaf column of the schema, read as a flat column (under no repeated field) or a list with a level for each
// repeated field above it; or a leaf we do not read (then `unsupported` says why). `name` is its dotted path
// (see schema_leaves). A VARIANT group is one Leaf too, a STRING column of JSON text, made of the leaves in
// `variant`.
struct Leaf {
  std::string name;
  std::string field;          // the top-level field it belongs to (its name, for a flat or list column)
  size_t index = 0;           // its column chunk's position in each row group (a VARIANT: its metadata's)
  int32_t physical_type = 0;  // parquet.thrift Type
  int max_def = 0;            // the optional and repeated fields on its path
  int max_rep = 0;            // the repeated fields on its path: 0 flat, 1 a list, more a list of lists
  int list_def = 0;           // lists: the definition level of a present but empty list (below it: null list)
  std::vector<int> inner_list_defs;  // lists of lists: list_def of each inner level, outside in
  ColumnSchema schema;
  std::string unsupported;    // why feedline cannot read it; empty when it can
  std::string note;           // an annotation it reads past (read by its physical type), for `inspect`
  bool int96 = false;         // INT96 timestamp: decoded as FIXED_LEN_BYTE_ARRAY(12), then made INT64 micros
  std::shared_ptr<const VariantShape> variant;  // a VARIANT group's leaves and shape; null for other leaves
};

// How many column chunks a row group holds for these leaves (a VARIANT's one for each of its leaves).
size_t chunk_count(const std::vector<Leaf>& leaves);

// The schema a leaf's column has once read (an INT96 leaf becomes INT64 TIMESTAMP(MICROS)).
ColumnSchema output_schema(const Leaf& leaf);

// Every leaf of the schema, in column-chunk order, each a flat or list column named by its dotted path: the
// fields of structs (`s.inner.z`), of lists of structs and of repeated groups (`objects.bbox`, a list of each
// struct's bbox), and a map's keys and values (`m.key`, `m.value`); a list's element and a map's entries take
// the list's or map's name (LIST in its three-level form and the legacy two-level forms, bare repeated
// primitives, MAP and MAP_KEY_VALUE); a VARIANT group as one Leaf (under repeated fields, a list or a list of
// lists of them). Leaves under groups of another shape or annotation, and of types outside our scope, come back
// with `unsupported` set, naming the feature, so that projection can skip them. Throws InvalidFile for a
// malformed schema.
std::vector<Leaf> schema_leaves(const format::FileMetaData& md);

// Whether the deprecated min/max statistics (signed comparison) mean what min_value/max_value would.
bool legacy_statistics_usable(const Leaf& leaf);

// The SchemaElement that describes `column`'s values (both LogicalType and the legacy ConvertedType), required
// or optional as `column.nullable` says.
format::SchemaElement to_schema_element(const ColumnSchema& column);

// Every SchemaElement of `column`, in schema order: its one element for a flat column; for a list column the
// three-level LIST form, `<required|optional> group name (LIST) { repeated group list { <required|optional>
// element } }`, the form the spec asks writers for. In a list of lists each inner level is the outer level's
// `element`: `group name (LIST) { repeated group list { group element (LIST) { repeated group list { element }
// } } }`.
std::vector<format::SchemaElement> to_schema_elements(const ColumnSchema& column);

// A leaf's path_in_schema: {name} for a flat column, {name, "list", "element"} for a list column, and one more
// "list", "element" for each inner level of a list of lists.
std::vector<std::string> path_in_schema(const ColumnSchema& column);

}  // namespace feedline::parquet
