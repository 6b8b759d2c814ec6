#include "io/parquet/thrift_compact.h"

#include <cstring>

#include "feedline/io/error.h"

namespace feedline::parquet::thrift {

CompactReader::CompactReader(const uint8_t* data, size_t size, int64_t base_offset, Limits limits)
    : data_(data), size_(size), base_offset_(base_offset), limits_(limits) {}

void CompactReader::fail(const std::string& what) const {
  throw InvalidFile("corrupt Thrift metadata at offset " + std::to_string(file_offset()) + ": " + what);
}

uint8_t CompactReader::read_byte() {
  if (pos_ >= size_) fail("unexpected end of data");
  return data_[pos_++];
}

uint64_t CompactReader::read_varint(int max_bytes) {
  uint64_t v = 0;
  for (int i = 0; i < max_bytes; ++i) {
    const uint8_t b = read_byte();
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) return v;
  }
  fail("varint longer than " + std::to_string(max_bytes) + " bytes");
}

void CompactReader::enter() {
  if (++depth_ > limits_.max_depth) fail("nesting deeper than " + std::to_string(limits_.max_depth));
}

void CompactReader::begin_struct() {
  enter();
  last_field_id_.push_back(0);
}

void CompactReader::end_struct() {
  last_field_id_.pop_back();
  leave();
}

bool CompactReader::read_field(FieldHeader* field) {
  const uint8_t b = read_byte();
  const uint8_t type = b & 0x0f;
  if (type == kStop) {
    if (b != 0) fail("malformed stop field");
    return false;
  }
  if (type > kUuid) fail("unknown field type " + std::to_string(type));
  const int delta = b >> 4;
  int16_t id;
  if (delta != 0) {
    id = static_cast<int16_t>(last_field_id_.back() + delta);
  } else {
    id = read_i16();
  }
  last_field_id_.back() = id;
  field->id = id;
  field->type = type;
  return true;
}

bool CompactReader::read_bool(const FieldHeader& field) {
  if (field.type == kBoolTrue) return true;
  if (field.type == kBoolFalse) return false;
  fail("field " + std::to_string(field.id) + " is not a bool");
}

int8_t CompactReader::read_i8() { return static_cast<int8_t>(read_byte()); }

int16_t CompactReader::read_i16() {
  const uint64_t z = read_varint(3);
  const int64_t v = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
  if (v < INT16_MIN || v > INT16_MAX) fail("i16 out of range");
  return static_cast<int16_t>(v);
}

int32_t CompactReader::read_i32() {
  const uint64_t z = read_varint(5);
  if (z > UINT32_MAX) fail("i32 out of range");
  const uint32_t u = static_cast<uint32_t>(z);
  return static_cast<int32_t>((u >> 1) ^ (~(u & 1) + 1));
}

int64_t CompactReader::read_i64() {
  const uint64_t z = read_varint(10);
  return static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1));
}

double CompactReader::read_double() {
  if (size_ - pos_ < 8) fail("unexpected end of data in a double");
  double d;
  std::memcpy(&d, data_ + pos_, 8);
  pos_ += 8;
  return d;
}

std::string CompactReader::read_binary() {
  const uint64_t n = read_varint(5);
  if (n > static_cast<uint64_t>(limits_.max_string_bytes)) fail("string of " + std::to_string(n) + " bytes");
  if (n > size_ - pos_) fail("string of " + std::to_string(n) + " bytes runs past the end");
  std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return s;
}

ListHeader CompactReader::read_list_header() {
  const uint8_t b = read_byte();
  ListHeader h;
  h.elem_type = b & 0x0f;
  h.size = b >> 4;
  if (h.size == 15) h.size = static_cast<int64_t>(read_varint(5));
  // An empty list may carry element type 0 (some writers leave it unset; Thrift's own readers accept it): with no
  // element to read, the type does not matter. A list that has elements needs a real type.
  if ((h.elem_type == kStop && h.size != 0) || h.elem_type > kUuid) {
    fail("unknown list element type " + std::to_string(h.elem_type));
  }
  // Every element takes at least one byte, so the remaining bytes bound the count.
  if (h.size > limits_.max_list_size || static_cast<uint64_t>(h.size) > size_ - pos_) {
    fail("list of " + std::to_string(h.size) + " elements");
  }
  return h;
}

void CompactReader::skip(uint8_t type) {
  switch (type) {
    case kBoolTrue:
    case kBoolFalse:
      return;  // a field's bool lives in its header; list elements are handled below
    case kI8:
      read_byte();
      return;
    case kI16:
    case kI32:
    case kI64:
      read_varint(10);
      return;
    case kDouble:
      read_double();
      return;
    case kBinary: {
      const uint64_t n = read_varint(5);
      if (n > size_ - pos_) fail("skipped binary runs past the end");
      pos_ += static_cast<size_t>(n);
      return;
    }
    case kUuid:
      if (size_ - pos_ < 16) fail("unexpected end of data in a uuid");
      pos_ += 16;
      return;
    case kList:
    case kSet: {
      enter();
      const ListHeader h = read_list_header();
      for (int64_t i = 0; i < h.size; ++i) {
        if (h.elem_type == kBoolTrue || h.elem_type == kBoolFalse) {
          read_byte();
        } else {
          skip(h.elem_type);
        }
      }
      leave();
      return;
    }
    case kMap: {
      enter();
      const int64_t n = static_cast<int64_t>(read_varint(5));
      if (n > limits_.max_list_size || static_cast<uint64_t>(n) > size_ - pos_) fail("map of " + std::to_string(n));
      if (n > 0) {
        const uint8_t kv = read_byte();
        const uint8_t kt = kv >> 4, vt = kv & 0x0f;
        if (kt == kStop || kt > kUuid || vt == kStop || vt > kUuid) fail("unknown map element type");
        for (int64_t i = 0; i < n; ++i) {
          for (uint8_t t : {kt, vt}) {
            if (t == kBoolTrue || t == kBoolFalse) {
              read_byte();
            } else {
              skip(t);
            }
          }
        }
      }
      leave();
      return;
    }
    case kStruct: {
      begin_struct();
      FieldHeader f;
      while (read_field(&f)) skip(f.type);
      end_struct();
      return;
    }
    default:
      fail("cannot skip type " + std::to_string(type));
  }
}

// ---------------------------------------------------------------------------------------------------------

void CompactWriter::varint(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void CompactWriter::begin_struct() { last_field_id_.push_back(0); }

void CompactWriter::end_struct() {
  out_.push_back(0);
  last_field_id_.pop_back();
}

void CompactWriter::field_header(int16_t id, uint8_t type) {
  const int delta = id - last_field_id_.back();
  if (delta > 0 && delta <= 15) {
    out_.push_back(static_cast<char>((delta << 4) | type));
  } else {
    out_.push_back(static_cast<char>(type));
    const int32_t v = id;
    varint(static_cast<uint32_t>((v << 1) ^ (v >> 31)));
  }
  last_field_id_.back() = id;
}

void CompactWriter::field_bool(int16_t id, bool value) { field_header(id, value ? kBoolTrue : kBoolFalse); }

void CompactWriter::field_i8(int16_t id, int8_t v) {
  field_header(id, kI8);
  out_.push_back(static_cast<char>(v));
}

void CompactWriter::field_i32(int16_t id, int32_t v) {
  field_header(id, kI32);
  write_i32(v);
}

void CompactWriter::field_i64(int16_t id, int64_t v) {
  field_header(id, kI64);
  write_i64(v);
}

void CompactWriter::field_binary(int16_t id, const std::string& v) {
  field_header(id, kBinary);
  write_binary(v);
}

void CompactWriter::field_list_begin(int16_t id, uint8_t elem_type, int64_t size) {
  field_header(id, kList);
  list_header(elem_type, size);
}

void CompactWriter::list_header(uint8_t elem_type, int64_t size) {
  if (size < 15) {
    out_.push_back(static_cast<char>((size << 4) | elem_type));
  } else {
    out_.push_back(static_cast<char>(0xf0 | elem_type));
    varint(static_cast<uint64_t>(size));
  }
}

void CompactWriter::write_i32(int32_t v) {
  varint((static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31));
}

void CompactWriter::write_i64(int64_t v) {
  varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

void CompactWriter::write_binary(const std::string& v) {
  varint(v.size());
  out_.append(v);
}

}  // namespace feedline::parquet::thrift
