#include "io/parquet/metadata.h"

#include <initializer_list>

namespace feedline::parquet::format {
namespace {

using thrift::CompactReader;
using thrift::CompactWriter;
using thrift::FieldHeader;

// Reads one struct: `on_field` returns true when it consumed the field, else the field is skipped (unknown
// id, or a known id with an unexpected wire type).
template <class F>
void read_struct(CompactReader& in, F&& on_field) {
  in.begin_struct();
  FieldHeader f;
  while (in.read_field(&f)) {
    if (!on_field(f)) in.skip(f.type);
  }
  in.end_struct();
}

// Tracks which required fields were seen.
class Required {
 public:
  void saw(int16_t id) {
    if (id >= 0 && id < 64) seen_ |= uint64_t{1} << id;
  }
  void check(CompactReader& in, const char* what, std::initializer_list<int16_t> ids) const {
    for (int16_t id : ids) {
      if ((seen_ & (uint64_t{1} << id)) == 0) {
        in.fail(std::string(what) + " lacks required field " + std::to_string(id));
      }
    }
  }

 private:
  uint64_t seen_ = 0;
};

bool is_bool(const FieldHeader& f) { return f.type == thrift::kBoolTrue || f.type == thrift::kBoolFalse; }

template <class T, class F>
std::vector<T> read_list(CompactReader& in, uint8_t elem_type, F&& read_elem) {
  const thrift::ListHeader h = in.read_list_header();
  std::vector<T> out;
  if (h.elem_type != elem_type && h.size != 0) {  // an empty list's element type does not matter
    for (int64_t i = 0; i < h.size; ++i) in.skip(h.elem_type);
    in.fail("list has element type " + std::to_string(h.elem_type) + ", expected " + std::to_string(elem_type));
  }
  out.reserve(static_cast<size_t>(h.size));
  for (int64_t i = 0; i < h.size; ++i) out.push_back(read_elem());
  return out;
}

Statistics read_statistics(CompactReader& in) {
  Statistics s;
  read_struct(in, [&](const FieldHeader& f) {
    switch (f.id) {
      case 1: if (f.type != thrift::kBinary) return false; s.max = in.read_binary(); return true;
      case 2: if (f.type != thrift::kBinary) return false; s.min = in.read_binary(); return true;
      case 3: if (f.type != thrift::kI64) return false; s.null_count = in.read_i64(); return true;
      case 4: if (f.type != thrift::kI64) return false; s.distinct_count = in.read_i64(); return true;
      case 5: if (f.type != thrift::kBinary) return false; s.max_value = in.read_binary(); return true;
      case 6: if (f.type != thrift::kBinary) return false; s.min_value = in.read_binary(); return true;
      case 7: if (!is_bool(f)) return false; s.is_max_value_exact = in.read_bool(f); return true;
      case 8: if (!is_bool(f)) return false; s.is_min_value_exact = in.read_bool(f); return true;
      default: return false;
    }
  });
  return s;
}

LogicalType read_logical_type(CompactReader& in) {
  LogicalType lt;
  read_struct(in, [&](const FieldHeader& f) {
    if (f.type != thrift::kStruct) return false;
    lt.kind = f.id;
    if (f.id == logical::kInteger) {
      Required req;
      read_struct(in, [&](const FieldHeader& g) {
        if (g.id == 1 && g.type == thrift::kI8) {
          lt.int_bit_width = in.read_i8();
        } else if (g.id == 2 && is_bool(g)) {
          lt.int_is_signed = in.read_bool(g);
        } else {
          return false;
        }
        req.saw(g.id);
        return true;
      });
      req.check(in, "IntType", {1, 2});
      return true;
    }
    if (f.id == logical::kDecimal) {
      Required req;
      read_struct(in, [&](const FieldHeader& g) {
        if (g.type != thrift::kI32 || (g.id != 1 && g.id != 2)) return false;
        (g.id == 1 ? lt.decimal_scale : lt.decimal_precision) = in.read_i32();
        req.saw(g.id);
        return true;
      });
      req.check(in, "DecimalType", {1, 2});
      return true;
    }
    if (f.id == logical::kTime || f.id == logical::kTimestamp) {
      Required req;
      read_struct(in, [&](const FieldHeader& g) {
        if (g.id == 1 && is_bool(g)) {
          lt.time_utc = in.read_bool(g);
        } else if (g.id == 2 && g.type == thrift::kStruct) {
          // TimeUnit: a union of empty structs; the member's id is the unit.
          read_struct(in, [&](const FieldHeader& u) {
            if (u.type != thrift::kStruct) return false;
            lt.time_unit = u.id;
            return false;  // skip the empty payload
          });
        } else {
          return false;
        }
        req.saw(g.id);
        return true;
      });
      req.check(in, f.id == logical::kTime ? "TimeType" : "TimestampType", {1, 2});
      return true;
    }
    return false;  // other members: their payload is skipped, the kind is remembered
  });
  return lt;
}

SchemaElement read_schema_element(CompactReader& in) {
  SchemaElement e;
  Required req;
  read_struct(in, [&](const FieldHeader& f) {
    const bool i32 = f.type == thrift::kI32;
    switch (f.id) {
      case 1: if (!i32) return false; e.type = in.read_i32(); break;
      case 2: if (!i32) return false; e.type_length = in.read_i32(); break;
      case 3: if (!i32) return false; e.repetition_type = in.read_i32(); break;
      case 4: if (f.type != thrift::kBinary) return false; e.name = in.read_binary(); break;
      case 5: if (!i32) return false; e.num_children = in.read_i32(); break;
      case 6: if (!i32) return false; e.converted_type = in.read_i32(); break;
      case 7: if (!i32) return false; e.scale = in.read_i32(); break;
      case 8: if (!i32) return false; e.precision = in.read_i32(); break;
      case 9: if (!i32) return false; e.field_id = in.read_i32(); break;
      case 10: if (f.type != thrift::kStruct) return false; e.logical_type = read_logical_type(in); break;
      default: return false;
    }
    req.saw(f.id);
    return true;
  });
  req.check(in, "SchemaElement", {4});
  return e;
}

KeyValue read_key_value(CompactReader& in) {
  KeyValue kv;
  Required req;
  read_struct(in, [&](const FieldHeader& f) {
    if (f.type != thrift::kBinary) return false;
    if (f.id == 1) {
      kv.key = in.read_binary();
    } else if (f.id == 2) {
      kv.value = in.read_binary();
    } else {
      return false;
    }
    req.saw(f.id);
    return true;
  });
  req.check(in, "KeyValue", {1});
  return kv;
}

std::vector<KeyValue> read_key_values(CompactReader& in) {
  return read_list<KeyValue>(in, thrift::kStruct, [&] { return read_key_value(in); });
}

ColumnMetaData read_column_metadata(CompactReader& in) {
  ColumnMetaData m;
  Required req;
  read_struct(in, [&](const FieldHeader& f) {
    const bool i32 = f.type == thrift::kI32, i64 = f.type == thrift::kI64, list = f.type == thrift::kList;
    switch (f.id) {
      case 1: if (!i32) return false; m.type = in.read_i32(); break;
      case 2: if (!list) return false; m.encodings = read_list<int32_t>(in, thrift::kI32, [&] { return in.read_i32(); }); break;
      case 3: if (!list) return false; m.path_in_schema = read_list<std::string>(in, thrift::kBinary, [&] { return in.read_binary(); }); break;
      case 4: if (!i32) return false; m.codec = in.read_i32(); break;
      case 5: if (!i64) return false; m.num_values = in.read_i64(); break;
      case 6: if (!i64) return false; m.total_uncompressed_size = in.read_i64(); break;
      case 7: if (!i64) return false; m.total_compressed_size = in.read_i64(); break;
      case 8: if (!list) return false; m.key_value_metadata = read_key_values(in); break;
      case 9: if (!i64) return false; m.data_page_offset = in.read_i64(); break;
      case 10: if (!i64) return false; m.index_page_offset = in.read_i64(); break;
      case 11: if (!i64) return false; m.dictionary_page_offset = in.read_i64(); break;
      case 12: if (f.type != thrift::kStruct) return false; m.statistics = read_statistics(in); break;
      default: return false;
    }
    req.saw(f.id);
    return true;
  });
  req.check(in, "ColumnMetaData", {1, 2, 3, 4, 5, 6, 7, 9});
  return m;
}

ColumnChunk read_column_chunk(CompactReader& in) {
  ColumnChunk c;
  read_struct(in, [&](const FieldHeader& f) {
    switch (f.id) {
      case 1: if (f.type != thrift::kBinary) return false; c.file_path = in.read_binary(); return true;
      case 2: if (f.type != thrift::kI64) return false; c.file_offset = in.read_i64(); return true;
      case 3: if (f.type != thrift::kStruct) return false; c.meta_data = read_column_metadata(in); return true;
      case 8:
      case 9: c.encrypted = true; return false;
      default: return false;
    }
  });
  return c;
}

RowGroup read_row_group(CompactReader& in) {
  RowGroup g;
  Required req;
  read_struct(in, [&](const FieldHeader& f) {
    const bool i64 = f.type == thrift::kI64;
    switch (f.id) {
      case 1:
        if (f.type != thrift::kList) return false;
        g.columns = read_list<ColumnChunk>(in, thrift::kStruct, [&] { return read_column_chunk(in); });
        break;
      case 2: if (!i64) return false; g.total_byte_size = in.read_i64(); break;
      case 3: if (!i64) return false; g.num_rows = in.read_i64(); break;
      case 5: if (!i64) return false; g.file_offset = in.read_i64(); break;
      case 6: if (!i64) return false; g.total_compressed_size = in.read_i64(); break;
      case 7: if (f.type != thrift::kI16) return false; g.ordinal = in.read_i16(); break;
      default: return false;
    }
    req.saw(f.id);
    return true;
  });
  req.check(in, "RowGroup", {1, 2, 3});
  return g;
}

int32_t read_column_order(CompactReader& in) {
  int32_t kind = 0;
  read_struct(in, [&](const FieldHeader& f) {
    if (f.type == thrift::kStruct) kind = f.id;
    return false;
  });
  return kind;
}

DataPageHeader read_data_page_header(CompactReader& in) {
  DataPageHeader h;
  Required req;
  read_struct(in, [&](const FieldHeader& f) {
    if (f.type != thrift::kI32) return false;
    switch (f.id) {
      case 1: h.num_values = in.read_i32(); break;
      case 2: h.encoding = in.read_i32(); break;
      case 3: h.definition_level_encoding = in.read_i32(); break;
      case 4: h.repetition_level_encoding = in.read_i32(); break;
      default: return false;
    }
    req.saw(f.id);
    return true;
  });
  req.check(in, "DataPageHeader", {1, 2, 3, 4});
  return h;
}

DataPageHeaderV2 read_data_page_header_v2(CompactReader& in) {
  DataPageHeaderV2 h;
  Required req;
  read_struct(in, [&](const FieldHeader& f) {
    if (f.id == 7 && is_bool(f)) {
      h.is_compressed = in.read_bool(f);
      return true;
    }
    if (f.type != thrift::kI32) return false;
    switch (f.id) {
      case 1: h.num_values = in.read_i32(); break;
      case 2: h.num_nulls = in.read_i32(); break;
      case 3: h.num_rows = in.read_i32(); break;
      case 4: h.encoding = in.read_i32(); break;
      case 5: h.definition_levels_byte_length = in.read_i32(); break;
      case 6: h.repetition_levels_byte_length = in.read_i32(); break;
      default: return false;
    }
    req.saw(f.id);
    return true;
  });
  req.check(in, "DataPageHeaderV2", {1, 2, 3, 4, 5, 6});
  return h;
}

DictionaryPageHeader read_dictionary_page_header(CompactReader& in) {
  DictionaryPageHeader h;
  Required req;
  read_struct(in, [&](const FieldHeader& f) {
    if (f.id == 1 && f.type == thrift::kI32) {
      h.num_values = in.read_i32();
    } else if (f.id == 2 && f.type == thrift::kI32) {
      h.encoding = in.read_i32();
    } else if (f.id == 3 && is_bool(f)) {
      h.is_sorted = in.read_bool(f);
    } else {
      return false;
    }
    req.saw(f.id);
    return true;
  });
  req.check(in, "DictionaryPageHeader", {1, 2});
  return h;
}

// ---------------------------------------------------------------------------------------------------------

void write_statistics(CompactWriter& w, const Statistics& s) {
  w.begin_struct();
  if (s.max) w.field_binary(1, *s.max);
  if (s.min) w.field_binary(2, *s.min);
  if (s.null_count) w.field_i64(3, *s.null_count);
  if (s.distinct_count) w.field_i64(4, *s.distinct_count);
  if (s.max_value) w.field_binary(5, *s.max_value);
  if (s.min_value) w.field_binary(6, *s.min_value);
  if (s.is_max_value_exact) w.field_bool(7, *s.is_max_value_exact);
  if (s.is_min_value_exact) w.field_bool(8, *s.is_min_value_exact);
  w.end_struct();
}

void write_key_values(CompactWriter& w, int16_t id, const std::vector<KeyValue>& kvs) {
  w.field_list_begin(id, thrift::kStruct, static_cast<int64_t>(kvs.size()));
  for (const KeyValue& kv : kvs) {
    w.begin_struct();
    w.field_binary(1, kv.key);
    if (kv.value) w.field_binary(2, *kv.value);
    w.end_struct();
  }
}

void write_schema_element(CompactWriter& w, const SchemaElement& e) {
  w.begin_struct();
  if (e.type) w.field_i32(1, *e.type);
  if (e.type_length) w.field_i32(2, *e.type_length);
  if (e.repetition_type) w.field_i32(3, *e.repetition_type);
  w.field_binary(4, e.name);
  if (e.num_children) w.field_i32(5, *e.num_children);
  if (e.converted_type) w.field_i32(6, *e.converted_type);
  if (e.scale) w.field_i32(7, *e.scale);
  if (e.precision) w.field_i32(8, *e.precision);
  if (e.field_id) w.field_i32(9, *e.field_id);
  if (e.logical_type && e.logical_type->kind != logical::kNone) {
    const LogicalType& lt = *e.logical_type;
    w.field_struct_begin(10);
    w.field_struct_begin(static_cast<int16_t>(lt.kind));
    if (lt.kind == logical::kInteger) {
      w.field_i8(1, lt.int_bit_width);
      w.field_bool(2, lt.int_is_signed);
    } else if (lt.kind == logical::kDecimal) {
      w.field_i32(1, lt.decimal_scale);
      w.field_i32(2, lt.decimal_precision);
    } else if (lt.kind == logical::kTime || lt.kind == logical::kTimestamp) {
      w.field_bool(1, lt.time_utc);
      w.field_struct_begin(2);
      w.field_struct_begin(static_cast<int16_t>(lt.time_unit));
      w.end_struct();
      w.end_struct();
    }
    w.end_struct();
    w.end_struct();
  }
  w.end_struct();
}

void write_column_metadata(CompactWriter& w, const ColumnMetaData& m) {
  w.begin_struct();
  w.field_i32(1, m.type);
  w.field_list_begin(2, thrift::kI32, static_cast<int64_t>(m.encodings.size()));
  for (int32_t e : m.encodings) w.write_i32(e);
  w.field_list_begin(3, thrift::kBinary, static_cast<int64_t>(m.path_in_schema.size()));
  for (const std::string& p : m.path_in_schema) w.write_binary(p);
  w.field_i32(4, m.codec);
  w.field_i64(5, m.num_values);
  w.field_i64(6, m.total_uncompressed_size);
  w.field_i64(7, m.total_compressed_size);
  if (!m.key_value_metadata.empty()) write_key_values(w, 8, m.key_value_metadata);
  w.field_i64(9, m.data_page_offset);
  if (m.index_page_offset) w.field_i64(10, *m.index_page_offset);
  if (m.dictionary_page_offset) w.field_i64(11, *m.dictionary_page_offset);
  if (m.statistics) {
    w.field_header(12, thrift::kStruct);
    write_statistics(w, *m.statistics);
  }
  w.end_struct();
}

}  // namespace

const char* type_name(int32_t t) {
  switch (t) {
    case type::kBoolean: return "BOOLEAN";
    case type::kInt32: return "INT32";
    case type::kInt64: return "INT64";
    case type::kInt96: return "INT96";
    case type::kFloat: return "FLOAT";
    case type::kDouble: return "DOUBLE";
    case type::kByteArray: return "BYTE_ARRAY";
    case type::kFixedLenByteArray: return "FIXED_LEN_BYTE_ARRAY";
    default: return "unknown type";
  }
}

const char* encoding_name(int32_t e) {
  switch (e) {
    case encoding::kPlain: return "PLAIN";
    case encoding::kPlainDictionary: return "PLAIN_DICTIONARY";
    case encoding::kRle: return "RLE";
    case encoding::kBitPacked: return "BIT_PACKED";
    case encoding::kDeltaBinaryPacked: return "DELTA_BINARY_PACKED";
    case encoding::kDeltaLengthByteArray: return "DELTA_LENGTH_BYTE_ARRAY";
    case encoding::kDeltaByteArray: return "DELTA_BYTE_ARRAY";
    case encoding::kRleDictionary: return "RLE_DICTIONARY";
    case encoding::kByteStreamSplit: return "BYTE_STREAM_SPLIT";
    default: return "unknown encoding";
  }
}

const char* codec_name(int32_t c) {
  switch (c) {
    case codec::kUncompressed: return "UNCOMPRESSED";
    case codec::kSnappy: return "SNAPPY";
    case codec::kGzip: return "GZIP";
    case codec::kLzo: return "LZO";
    case codec::kBrotli: return "BROTLI";
    case codec::kLz4: return "LZ4";
    case codec::kZstd: return "ZSTD";
    case codec::kLz4Raw: return "LZ4_RAW";
    default: return "unknown codec";
  }
}

const char* converted_type_name(int32_t c) {
  static const char* const kNames[] = {"UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE",
                                       "TIME_MILLIS", "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS",
                                       "UINT_8", "UINT_16", "UINT_32", "UINT_64", "INT_8", "INT_16", "INT_32",
                                       "INT_64", "JSON", "BSON", "INTERVAL"};
  if (c < 0 || c >= static_cast<int32_t>(sizeof kNames / sizeof kNames[0])) return "unknown converted type";
  return kNames[c];
}

FileMetaData read_file_metadata(CompactReader& in) {
  FileMetaData md;
  Required req;
  read_struct(in, [&](const FieldHeader& f) {
    switch (f.id) {
      case 1: if (f.type != thrift::kI32) return false; md.version = in.read_i32(); break;
      case 2:
        if (f.type != thrift::kList) return false;
        md.schema = read_list<SchemaElement>(in, thrift::kStruct, [&] { return read_schema_element(in); });
        break;
      case 3: if (f.type != thrift::kI64) return false; md.num_rows = in.read_i64(); break;
      case 4:
        if (f.type != thrift::kList) return false;
        md.row_groups = read_list<RowGroup>(in, thrift::kStruct, [&] { return read_row_group(in); });
        break;
      case 5: if (f.type != thrift::kList) return false; md.key_value_metadata = read_key_values(in); break;
      case 6: if (f.type != thrift::kBinary) return false; md.created_by = in.read_binary(); break;
      case 7:
        if (f.type != thrift::kList) return false;
        md.column_orders = read_list<int32_t>(in, thrift::kStruct, [&] { return read_column_order(in); });
        break;
      case 8: md.encrypted = true; return false;
      default: return false;
    }
    req.saw(f.id);
    return true;
  });
  req.check(in, "FileMetaData", {1, 2, 3, 4});
  return md;
}

PageHeader read_page_header(CompactReader& in) {
  PageHeader h;
  Required req;
  read_struct(in, [&](const FieldHeader& f) {
    const bool i32 = f.type == thrift::kI32, st = f.type == thrift::kStruct;
    switch (f.id) {
      case 1: if (!i32) return false; h.type = in.read_i32(); break;
      case 2: if (!i32) return false; h.uncompressed_page_size = in.read_i32(); break;
      case 3: if (!i32) return false; h.compressed_page_size = in.read_i32(); break;
      case 4: if (!i32) return false; h.crc = in.read_i32(); break;
      case 5: if (!st) return false; h.data_page_header = read_data_page_header(in); break;
      case 7: if (!st) return false; h.dictionary_page_header = read_dictionary_page_header(in); break;
      case 8: if (!st) return false; h.data_page_header_v2 = read_data_page_header_v2(in); break;
      default: return false;
    }
    req.saw(f.id);
    return true;
  });
  req.check(in, "PageHeader", {1, 2, 3});
  return h;
}

void write_file_metadata(CompactWriter& w, const FileMetaData& md) {
  w.begin_struct();
  w.field_i32(1, md.version);
  w.field_list_begin(2, thrift::kStruct, static_cast<int64_t>(md.schema.size()));
  for (const SchemaElement& e : md.schema) write_schema_element(w, e);
  w.field_i64(3, md.num_rows);
  w.field_list_begin(4, thrift::kStruct, static_cast<int64_t>(md.row_groups.size()));
  for (const RowGroup& g : md.row_groups) {
    w.begin_struct();
    w.field_list_begin(1, thrift::kStruct, static_cast<int64_t>(g.columns.size()));
    for (const ColumnChunk& c : g.columns) {
      w.begin_struct();
      if (c.file_path) w.field_binary(1, *c.file_path);
      w.field_i64(2, c.file_offset);
      if (c.meta_data) {
        w.field_header(3, thrift::kStruct);
        write_column_metadata(w, *c.meta_data);
      }
      w.end_struct();
    }
    w.field_i64(2, g.total_byte_size);
    w.field_i64(3, g.num_rows);
    if (g.file_offset) w.field_i64(5, *g.file_offset);
    if (g.total_compressed_size) w.field_i64(6, *g.total_compressed_size);
    if (g.ordinal) {
      w.field_header(7, thrift::kI16);
      w.write_i32(*g.ordinal);
    }
    w.end_struct();
  }
  if (!md.key_value_metadata.empty()) write_key_values(w, 5, md.key_value_metadata);
  if (md.created_by) w.field_binary(6, *md.created_by);
  if (!md.column_orders.empty()) {
    w.field_list_begin(7, thrift::kStruct, static_cast<int64_t>(md.column_orders.size()));
    for (int32_t kind : md.column_orders) {
      w.begin_struct();
      w.field_struct_begin(static_cast<int16_t>(kind));
      w.end_struct();
      w.end_struct();
    }
  }
  w.end_struct();
}

void write_page_header(CompactWriter& w, const PageHeader& h) {
  w.begin_struct();
  w.field_i32(1, h.type);
  w.field_i32(2, h.uncompressed_page_size);
  w.field_i32(3, h.compressed_page_size);
  if (h.crc) w.field_i32(4, *h.crc);
  if (h.data_page_header) {
    const DataPageHeader& d = *h.data_page_header;
    w.field_struct_begin(5);
    w.field_i32(1, d.num_values);
    w.field_i32(2, d.encoding);
    w.field_i32(3, d.definition_level_encoding);
    w.field_i32(4, d.repetition_level_encoding);
    w.end_struct();
  }
  if (h.dictionary_page_header) {
    const DictionaryPageHeader& d = *h.dictionary_page_header;
    w.field_struct_begin(7);
    w.field_i32(1, d.num_values);
    w.field_i32(2, d.encoding);
    if (d.is_sorted) w.field_bool(3, *d.is_sorted);
    w.end_struct();
  }
  if (h.data_page_header_v2) {
    const DataPageHeaderV2& d = *h.data_page_header_v2;
    w.field_struct_begin(8);
    w.field_i32(1, d.num_values);
    w.field_i32(2, d.num_nulls);
    w.field_i32(3, d.num_rows);
    w.field_i32(4, d.encoding);
    w.field_i32(5, d.definition_levels_byte_length);
    w.field_i32(6, d.repetition_levels_byte_length);
    w.field_bool(7, d.is_compressed);
    w.end_struct();
  }
  w.end_struct();
}

}  // namespace feedline::parquet::format
