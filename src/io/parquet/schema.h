// Internal: between Parquet's schema (SchemaElements, converted and logical types) and feedline's flat
// ColumnSchema, in both directions.
#pragma once

#include <string>
#include <vector>

#include "feedline/table.h"
#include "io/parquet/metadata.h"

namespace feedline::parquet {

// The largest FIXED_LEN_BYTE_ARRAY value we accept (16 MiB): a bound against hostile type lengths.
constexpr int32_t kMaxTypeLength = 1 << 24;

// One leaf column of a flat schema.
struct Leaf {
  std::string name;
  size_t index = 0;           // position among the leaves, and so in each row group's column chunks
  int32_t physical_type = 0;  // parquet.thrift Type
  int max_def = 0;            // 1 for OPTIONAL, 0 for REQUIRED
  ColumnSchema schema;
  std::string unsupported;    // why feedline cannot read it; empty when it can
  bool int96 = false;         // INT96 timestamp: decoded as FIXED_LEN_BYTE_ARRAY(12), then made INT64 micros
};

// The schema a leaf's column has once read (an INT96 leaf becomes INT64 TIMESTAMP(MICROS)).
ColumnSchema output_schema(const Leaf& leaf);

// The leaves of a flat schema. Throws Unsupported naming the column for nested or repeated data, InvalidFile
// for a malformed schema. Leaves of a type or annotation outside our scope come back with `unsupported` set,
// so that projection can skip them.
std::vector<Leaf> flat_leaves(const format::FileMetaData& md);

// Whether the deprecated min/max statistics (signed comparison) mean what min_value/max_value would.
bool legacy_statistics_usable(const Leaf& leaf);

// The SchemaElement that describes `column` (both LogicalType and the legacy ConvertedType).
format::SchemaElement to_schema_element(const ColumnSchema& column);

}  // namespace feedline::parquet
