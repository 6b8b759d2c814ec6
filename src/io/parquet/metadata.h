// Internal: the parts of parquet.thrift that feedline reads and writes, as plain structs with a Thrift
// compact read and write for each. Enums stay int32 as read from the wire and are range-checked where they
// are used, so a value from a newer writer never becomes an out-of-range C++ enum. Unknown fields are skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/parquet/thrift_compact.h"

namespace feedline::parquet::format {

// parquet.thrift's enums, as the integers on the wire.
namespace type {
enum : int32_t { kBoolean = 0, kInt32 = 1, kInt64 = 2, kInt96 = 3, kFloat = 4, kDouble = 5, kByteArray = 6, kFixedLenByteArray = 7 };
}
namespace converted {
enum : int32_t { kUtf8 = 0, kMap = 1, kMapKeyValue = 2, kList = 3, kEnum = 4, kDecimal = 5, kDate = 6, kTimeMillis = 7, kTimeMicros = 8, kTimestampMillis = 9, kTimestampMicros = 10, kUint8 = 11, kUint16 = 12, kUint32 = 13, kUint64 = 14, kInt8 = 15, kInt16 = 16, kInt32 = 17, kInt64 = 18, kJson = 19, kBson = 20, kInterval = 21 };
}
namespace repetition {
enum : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };
}
namespace encoding {
enum : int32_t { kPlain = 0, kPlainDictionary = 2, kRle = 3, kBitPacked = 4, kDeltaBinaryPacked = 5, kDeltaLengthByteArray = 6, kDeltaByteArray = 7, kRleDictionary = 8, kByteStreamSplit = 9 };
}
namespace codec {
enum : int32_t { kUncompressed = 0, kSnappy = 1, kGzip = 2, kLzo = 3, kBrotli = 4, kLz4 = 5, kZstd = 6, kLz4Raw = 7 };
}
namespace page_type {
enum : int32_t { kDataPage = 0, kIndexPage = 1, kDictionaryPage = 2, kDataPageV2 = 3 };
}
// LogicalType is a union; we keep which member was set (its field id) and the INTEGER payload.
namespace logical {
enum : int32_t { kNone = 0, kString = 1, kMap = 2, kList = 3, kEnum = 4, kDecimal = 5, kDate = 6, kTime = 7, kTimestamp = 8, kInteger = 10, kUnknown = 11, kJson = 12, kBson = 13, kUuid = 14, kFloat16 = 15, kVariant = 16, kGeometry = 17, kGeography = 18 };
}

const char* type_name(int32_t physical_type);
const char* encoding_name(int32_t encoding);
const char* codec_name(int32_t codec);
const char* converted_type_name(int32_t converted_type);

struct Statistics {
  std::optional<std::string> max, min;  // deprecated: signed comparison
  std::optional<int64_t> null_count, distinct_count;
  std::optional<std::string> max_value, min_value;
  std::optional<bool> is_max_value_exact, is_min_value_exact;
};

struct LogicalType {
  int32_t kind = logical::kNone;  // the union member's field id; an unknown member keeps its id
  int8_t int_bit_width = 0;       // kInteger only
  bool int_is_signed = true;
  int32_t decimal_scale = 0, decimal_precision = 0;  // kDecimal
  bool time_utc = true;                              // kTime, kTimestamp: isAdjustedToUTC
  int32_t time_unit = 0;                             // kTime, kTimestamp: 1 MILLIS, 2 MICROS, 3 NANOS
};

struct SchemaElement {
  std::optional<int32_t> type;
  std::optional<int32_t> type_length;
  std::optional<int32_t> repetition_type;
  std::string name;
  std::optional<int32_t> num_children;
  std::optional<int32_t> converted_type;
  std::optional<int32_t> scale, precision, field_id;
  std::optional<LogicalType> logical_type;
};

struct KeyValue {
  std::string key;
  std::optional<std::string> value;
};

struct ColumnMetaData {
  int32_t type = 0;
  std::vector<int32_t> encodings;
  std::vector<std::string> path_in_schema;
  int32_t codec = 0;
  int64_t num_values = 0;
  int64_t total_uncompressed_size = 0;
  int64_t total_compressed_size = 0;
  std::vector<KeyValue> key_value_metadata;
  int64_t data_page_offset = 0;
  std::optional<int64_t> index_page_offset;
  std::optional<int64_t> dictionary_page_offset;
  std::optional<Statistics> statistics;
};

struct ColumnChunk {
  std::optional<std::string> file_path;
  int64_t file_offset = 0;
  std::optional<ColumnMetaData> meta_data;
  bool encrypted = false;  // crypto_metadata or encrypted_column_metadata present
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  int64_t total_byte_size = 0;
  int64_t num_rows = 0;
  std::optional<int64_t> file_offset;
  std::optional<int64_t> total_compressed_size;
  std::optional<int16_t> ordinal;
};

struct FileMetaData {
  int32_t version = 0;
  std::vector<SchemaElement> schema;
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  std::vector<KeyValue> key_value_metadata;
  std::optional<std::string> created_by;
  std::vector<int32_t> column_orders;  // the ColumnOrder union's member id per column (1: TYPE_ORDER)
  bool encrypted = false;              // encryption_algorithm present
};

struct DataPageHeader {
  int32_t num_values = 0;
  int32_t encoding = 0;
  int32_t definition_level_encoding = 0;
  int32_t repetition_level_encoding = 0;
};

// Data page v2: levels first, uncompressed and unprefixed, then the values (compressed when is_compressed).
struct DataPageHeaderV2 {
  int32_t num_values = 0;
  int32_t num_nulls = 0;
  int32_t num_rows = 0;
  int32_t encoding = 0;
  int32_t definition_levels_byte_length = 0;
  int32_t repetition_levels_byte_length = 0;
  bool is_compressed = true;
};

struct DictionaryPageHeader {
  int32_t num_values = 0;
  int32_t encoding = 0;
  std::optional<bool> is_sorted;
};

struct PageHeader {
  int32_t type = 0;
  int32_t uncompressed_page_size = 0;
  int32_t compressed_page_size = 0;
  std::optional<int32_t> crc;
  std::optional<DataPageHeader> data_page_header;
  std::optional<DictionaryPageHeader> dictionary_page_header;
  std::optional<DataPageHeaderV2> data_page_header_v2;
};

// Readers throw InvalidFile (from CompactReader) for malformed input or a missing required field.
FileMetaData read_file_metadata(thrift::CompactReader& in);
PageHeader read_page_header(thrift::CompactReader& in);

void write_file_metadata(thrift::CompactWriter& out, const FileMetaData& md);
void write_page_header(thrift::CompactWriter& out, const PageHeader& ph);

}  // namespace feedline::parquet::format
