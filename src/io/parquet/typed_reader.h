// Internal to the Parquet reader: a shape's chunk reader made for the type its leaf's values decode as
// (make_typed_reader), which each shape's file calls for its own reader template.
#pragma once

#include <cstdint>
#include <memory>

#include "feedline/io/error.h"
#include "feedline/io/table.h"
#include "io/parquet/chunk_reader.h"

namespace feedline::parquet::detail {

// Reader<T> for the type a leaf's physical type reads as: a byte a BOOLEAN, INT32, INT64, FLOAT, DOUBLE, and
// ByteArrays for BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY.
template <template <class> class Reader>
std::unique_ptr<ColumnChunkReader> make_typed_reader(const ChunkSource& source) {
  switch (source.leaf.schema.type) {
    case PhysicalType::kBoolean: return std::make_unique<Reader<uint8_t>>(source);
    case PhysicalType::kInt32: return std::make_unique<Reader<int32_t>>(source);
    case PhysicalType::kInt64: return std::make_unique<Reader<int64_t>>(source);
    case PhysicalType::kFloat: return std::make_unique<Reader<float>>(source);
    case PhysicalType::kDouble: return std::make_unique<Reader<double>>(source);
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: return std::make_unique<Reader<ByteArrays>>(source);
  }
  throw InvalidFile("unknown physical type");
}

}  // namespace feedline::parquet::detail
