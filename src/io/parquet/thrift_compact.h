// Internal: the Thrift compact protocol, hand-written, for Parquet's footer and page headers.
// The reader treats its input as hostile: every string and list is bounded by the bytes that remain and by
// explicit caps, nesting depth is limited, unknown fields of any type are skipped, and any malformation
// throws InvalidFile naming the byte offset. Not thread-safe: one reader or writer per object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace feedline::parquet::thrift {

// Compact protocol type codes (field headers and list elements).
enum : uint8_t {
  kStop = 0,
  kBoolTrue = 1,
  kBoolFalse = 2,
  kI8 = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
  kUuid = 13,
};

struct Limits {
  int64_t max_string_bytes = 100 << 20;  // one string or binary
  int64_t max_list_size = 10'000'000;    // elements in one list, set or map
  int max_depth = 64;                    // nested structs and containers
};

struct FieldHeader {
  int16_t id = 0;
  uint8_t type = kStop;  // kBoolTrue/kBoolFalse carry the value of a bool field
};

struct ListHeader {
  int64_t size = 0;
  uint8_t elem_type = 0;
};

class CompactReader {
 public:
  // `base_offset` is where `data` sits in the file, so errors name file offsets.
  CompactReader(const uint8_t* data, size_t size, int64_t base_offset, Limits limits = {});

  // Struct framing: begin pushes a field-id scope (and counts depth), read_field returns false at STOP.
  void begin_struct();
  bool read_field(FieldHeader* field);
  void end_struct();

  bool read_bool(const FieldHeader& field);  // a bool field: the value is in the header
  int8_t read_i8();
  int16_t read_i16();
  int32_t read_i32();
  int64_t read_i64();
  double read_double();
  std::string read_binary();
  ListHeader read_list_header();
  // Skips one value of `type`, whatever it holds, recursively and within the depth limit.
  void skip(uint8_t type);

  size_t position() const { return pos_; }
  int64_t file_offset() const { return base_offset_ + static_cast<int64_t>(pos_); }
  [[noreturn]] void fail(const std::string& what) const;

 private:
  uint64_t read_varint(int max_bytes);
  uint8_t read_byte();
  void enter();
  void leave() { --depth_; }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  int64_t base_offset_;
  Limits limits_;
  int depth_ = 0;
  std::vector<int16_t> last_field_id_;
};

class CompactWriter {
 public:
  void begin_struct();
  void end_struct();  // writes STOP
  void field_header(int16_t id, uint8_t type);
  void field_bool(int16_t id, bool value);
  void field_i8(int16_t id, int8_t v);
  void field_i32(int16_t id, int32_t v);
  void field_i64(int16_t id, int64_t v);
  void field_binary(int16_t id, const std::string& v);
  void field_struct_begin(int16_t id) { field_header(id, kStruct); begin_struct(); }
  void field_list_begin(int16_t id, uint8_t elem_type, int64_t size);
  void list_header(uint8_t elem_type, int64_t size);
  void write_i32(int32_t v);
  void write_i64(int64_t v);
  void write_binary(const std::string& v);

  std::string& buffer() { return out_; }

 private:
  void varint(uint64_t v);

  std::string out_;
  std::vector<int16_t> last_field_id_;
};

}  // namespace feedline::parquet::thrift
