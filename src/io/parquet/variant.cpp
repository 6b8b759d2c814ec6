// VARIANT columns: the variant binary encoding as JSON text, and a chunk's rows put back together from the
// group's leaves (see variant.h).
#include "io/parquet/variant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "io/parquet/chunk_reader.h"
#include "io/parquet/levels.h"
#include "io/parquet/parsed_file.h"
#include "io/value_text.h"

namespace feedline::parquet {

namespace {

// Nesting deeper than this is refused as hostile (decoding it would only recurse).
constexpr int kMaxVariantDepth = 128;

// `n` (1 to 8) bytes at p, little-endian.
uint64_t little_endian(const char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          static const char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

void append_base64(std::string& out, std::string_view bytes) {
  static const char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  out += '"';
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << 16 |
                       static_cast<uint32_t>(static_cast<uint8_t>(bytes[i + 1])) << 8 | static_cast<uint8_t>(bytes[i + 2]);
    out += kDigits[v >> 18];
    out += kDigits[(v >> 12) & 63];
    out += kDigits[(v >> 6) & 63];
    out += kDigits[v & 63];
  }
  if (i < bytes.size()) {
    const bool two = i + 1 < bytes.size();
    const uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << 16 |
                       (two ? static_cast<uint32_t>(static_cast<uint8_t>(bytes[i + 1])) << 8 : 0);
    out += kDigits[v >> 18];
    out += kDigits[(v >> 12) & 63];
    out += two ? kDigits[(v >> 6) & 63] : '=';
    out += '=';
  }
  out += '"';
}

// A number, or for NaN and infinities (which JSON lacks) their names as strings.
void append_number(std::string& out, double v) {
  const std::string text = double_text(v);
  if (std::isfinite(v)) {
    out += text;
  } else {
    append_json_string(out, text);
  }
}

// A variant's metadata: its dictionary of keys (VariantEncoding.md, "Metadata encoding").
class Metadata {
 public:
  explicit Metadata(std::string_view bytes) : bytes_(bytes) {
    if (bytes.empty()) throw InvalidFile("empty VARIANT metadata");
    const auto header = static_cast<uint8_t>(bytes[0]);
    if ((header & 0x0F) != 1) throw InvalidFile("VARIANT metadata of version " + std::to_string(header & 0x0F));
    offset_size_ = ((header >> 6) & 3) + 1;
    if (bytes.size() < 1 + static_cast<size_t>(offset_size_)) throw InvalidFile("VARIANT metadata truncated");
    size_ = little_endian(bytes.data() + 1, offset_size_);
    const size_t after_size = 1 + static_cast<size_t>(offset_size_);
    if (size_ >= (bytes.size() - after_size) / static_cast<size_t>(offset_size_)) {
      throw InvalidFile("VARIANT metadata of " + std::to_string(size_) + " keys in " + std::to_string(bytes.size()) +
                        " bytes");
    }
    offsets_ = after_size;
    strings_ = offsets_ + (size_ + 1) * static_cast<size_t>(offset_size_);
  }

  std::string_view key(uint64_t id) const {
    if (id >= size_) throw InvalidFile("VARIANT key id " + std::to_string(id) + " beyond the metadata's " + std::to_string(size_));
    const uint64_t begin = offset(id), end = offset(id + 1);
    if (begin > end || end > bytes_.size() - strings_) throw InvalidFile("VARIANT metadata key offsets out of bounds");
    return bytes_.substr(strings_ + begin, end - begin);
  }

 private:
  uint64_t offset(uint64_t i) const {
    return little_endian(bytes_.data() + offsets_ + i * static_cast<size_t>(offset_size_), offset_size_);
  }

  std::string_view bytes_;
  int offset_size_ = 1;
  uint64_t size_ = 0;
  size_t offsets_ = 0, strings_ = 0;
};

void need(std::string_view v, size_t bytes) {
  if (v.size() < bytes) throw InvalidFile("VARIANT value truncated");
}

void append_value(const Metadata& md, std::string_view v, std::string& out, int depth);

// An object's or array's element count, its offsets (count + 1 of `offset_size` bytes) and where its values
// begin, checked against the value's bytes.
struct Container {
  uint64_t count = 0;
  size_t ids = 0, offsets = 0, data = 0;
  int id_size = 0, offset_size = 0;
  uint64_t total = 0;  // bytes of the values

  uint64_t offset(std::string_view v, uint64_t i) const {
    return little_endian(v.data() + offsets + i * static_cast<size_t>(offset_size), offset_size);
  }
  uint64_t id(std::string_view v, uint64_t i) const {
    return little_endian(v.data() + ids + i * static_cast<size_t>(id_size), id_size);
  }
};

Container container(std::string_view v, bool large, int id_size, int offset_size) {
  Container c;
  c.id_size = id_size;
  c.offset_size = offset_size;
  const int count_size = large ? 4 : 1;
  need(v, 1 + static_cast<size_t>(count_size));
  c.count = little_endian(v.data() + 1, count_size);
  size_t pos = 1 + static_cast<size_t>(count_size);
  const size_t per_element = static_cast<size_t>(id_size + offset_size);
  if (c.count > (v.size() - pos) / per_element ||
      c.count * per_element + static_cast<size_t>(offset_size) > v.size() - pos) {
    throw InvalidFile("VARIANT " + std::string(id_size ? "object" : "array") + " of " + std::to_string(c.count) +
                      " elements in " + std::to_string(v.size()) + " bytes");
  }
  c.ids = pos;
  pos += c.count * static_cast<size_t>(id_size);
  c.offsets = pos;
  c.data = pos + (c.count + 1) * static_cast<size_t>(offset_size);
  c.total = c.offset(v, c.count);
  if (c.total > v.size() - c.data) throw InvalidFile("VARIANT values run past the value");
  return c;
}

// Element i of a container: its bytes, from its offset to the end of the values (its own header bounds it).
std::string_view element(std::string_view v, const Container& c, uint64_t i) {
  const uint64_t at = c.offset(v, i);
  if (at >= c.total) throw InvalidFile("VARIANT element offset " + std::to_string(at) + " out of bounds");
  return v.substr(c.data + at, c.total - at);
}

// The fields of the object `v` (basic type 2), each its key and JSON text, in their stored order.
void object_fields(const Metadata& md, std::string_view v, std::vector<std::pair<std::string_view, std::string>>* fields,
                   int depth) {
  const int header = static_cast<uint8_t>(v[0]) >> 2;
  const Container c = container(v, (header >> 4) & 1, ((header >> 2) & 3) + 1, (header & 3) + 1);
  for (uint64_t i = 0; i < c.count; ++i) {
    std::string text;
    append_value(md, element(v, c, i), text, depth + 1);
    fields->emplace_back(md.key(c.id(v, i)), std::move(text));
  }
}

void append_object(const std::vector<std::pair<std::string_view, std::string>>& fields, std::string& out) {
  out += '{';
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, fields[i].first);
    out += ':';
    out += fields[i].second;
  }
  out += '}';
}

void append_decimal(std::string_view v, int bytes, std::string& out) {
  need(v, 1 + static_cast<size_t>(bytes));
  const int scale = static_cast<uint8_t>(v[0]);
  if (scale > 38) throw InvalidFile("VARIANT decimal of scale " + std::to_string(scale));
  unsigned __int128 u = 0;
  for (int i = bytes - 1; i >= 0; --i) u = (u << 8) | static_cast<uint8_t>(v[1 + static_cast<size_t>(i)]);
  __int128 unscaled;
  if (bytes < 16) {
    const int shift = 128 - 8 * bytes;  // sign-extend
    unscaled = static_cast<__int128>(u << shift) >> shift;
  } else {
    unscaled = static_cast<__int128>(u);
  }
  out += decimal_to_string(unscaled, scale);
}

void append_primitive(int type, std::string_view v, std::string& out) {
  const auto fixed = [&](int bytes) {
    need(v, static_cast<size_t>(bytes));
    const uint64_t u = little_endian(v.data(), bytes);
    const int shift = 64 - 8 * bytes;
    return shift == 0 ? static_cast<int64_t>(u) : static_cast<int64_t>(u << shift) >> shift;
  };
  const auto quoted = [&](const std::string& text) { append_json_string(out, text); };
  switch (type) {
    case 0: out += "null"; return;
    case 1: out += "true"; return;
    case 2: out += "false"; return;
    case 3: out += std::to_string(fixed(1)); return;
    case 4: out += std::to_string(fixed(2)); return;
    case 5: out += std::to_string(fixed(4)); return;
    case 6: out += std::to_string(fixed(8)); return;
    case 7: {
      double d;
      need(v, 8);
      std::memcpy(&d, v.data(), 8);
      return append_number(out, d);
    }
    case 8: return append_decimal(v, 4, out);
    case 9: return append_decimal(v, 8, out);
    case 10: return append_decimal(v, 16, out);
    case 11: return quoted(date_text(fixed(4)));
    case 12: return quoted(timestamp_text(fixed(8), TimeUnit::kMicros, true));
    case 13: return quoted(timestamp_text(fixed(8), TimeUnit::kMicros, false));
    case 14: {
      float f;
      need(v, 4);
      std::memcpy(&f, v.data(), 4);
      return append_number(out, f);
    }
    case 15:
    case 16: {
      need(v, 4);
      const uint64_t length = little_endian(v.data(), 4);
      if (length > v.size() - 4) throw InvalidFile("VARIANT " + std::string(type == 15 ? "binary" : "string") + " of " + std::to_string(length) + " bytes runs past the value");
      const std::string_view bytes = v.substr(4, length);
      if (type == 15) return append_base64(out, bytes);
      return append_json_string(out, bytes);
    }
    case 17: return quoted(time_text(fixed(8), TimeUnit::kMicros));
    case 18: return quoted(timestamp_text(fixed(8), TimeUnit::kNanos, true));
    case 19: return quoted(timestamp_text(fixed(8), TimeUnit::kNanos, false));
    case 20: need(v, 16); return quoted(uuid_text(v.substr(0, 16)));
    default: throw InvalidFile("VARIANT primitive of unknown type " + std::to_string(type));
  }
}

void append_value(const Metadata& md, std::string_view v, std::string& out, int depth) {
  if (depth > kMaxVariantDepth) throw InvalidFile("VARIANT nested deeper than " + std::to_string(kMaxVariantDepth));
  need(v, 1);
  const auto first = static_cast<uint8_t>(v[0]);
  const int header = first >> 2;
  switch (first & 3) {
    case 0: return append_primitive(header, v.substr(1), out);
    case 1:
      need(v, 1 + static_cast<size_t>(header));
      return append_json_string(out, v.substr(1, static_cast<size_t>(header)));
    case 2: {
      std::vector<std::pair<std::string_view, std::string>> fields;
      object_fields(md, v, &fields, depth);
      return append_object(fields, out);
    }
    default: {
      const Container c = container(v, (header >> 2) & 1, 0, (header & 3) + 1);
      out += '[';
      for (uint64_t i = 0; i < c.count; ++i) {
        if (i) out += ',';
        const uint64_t end = c.offset(v, i + 1);
        if (end < c.offset(v, i) || end > c.total) throw InvalidFile("VARIANT array offsets out of order");
        append_value(md, element(v, c, i).substr(0, end - c.offset(v, i)), out, depth + 1);
      }
      out += ']';
    }
  }
}

// A shredded typed_value: entry i of its part's values, as JSON.
void append_typed(const Leaf& part, const Column& values, size_t i, std::string& out) {
  const ColumnSchema& s = part.schema;
  const LogicalAnnotation& a = s.logical;
  switch (s.type) {
    case PhysicalType::kBoolean: out += values.as<uint8_t>()[i] ? "true" : "false"; return;
    case PhysicalType::kInt32:
    case PhysicalType::kInt64: {
      const int64_t v = s.type == PhysicalType::kInt32 ? values.as<int32_t>()[i] : values.as<int64_t>()[i];
      switch (a.kind) {
        case LogicalKind::kDate: return append_json_string(out, date_text(v));
        case LogicalKind::kTime: return append_json_string(out, time_text(v, a.unit));
        case LogicalKind::kTimestamp: return append_json_string(out, timestamp_text(v, a.unit, a.utc));
        case LogicalKind::kDecimal: out += decimal_to_string(v, a.scale); return;
        default: break;
      }
      if (s.int_annotation && !s.int_annotation->is_signed) {
        out += std::to_string(s.type == PhysicalType::kInt32 ? static_cast<uint64_t>(static_cast<uint32_t>(v))
                                                              : static_cast<uint64_t>(v));
      } else {
        out += std::to_string(v);
      }
      return;
    }
    case PhysicalType::kFloat: return append_number(out, values.as<float>()[i]);
    case PhysicalType::kDouble: return append_number(out, values.as<double>()[i]);
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: {
      const std::string_view bytes = values.byte_arrays().at(static_cast<int64_t>(i));
      if (a.kind == LogicalKind::kDecimal) {
        out += decimal_bytes_to_string(bytes, a.scale);
      } else if (a.kind == LogicalKind::kUuid && bytes.size() == 16) {
        append_json_string(out, uuid_text(bytes));
      } else if (s.is_string) {
        append_json_string(out, bytes);
      } else {
        append_base64(out, bytes);
      }
      return;
    }
  }
}

// Puts a chunk's rows back together from its parts' level entries, a row at a time (Dremel's record assembly,
// for the shapes VariantShredding.md gives).
class Assembler {
 public:
  Assembler(const VariantShape& shape, std::vector<detail::RawChunk>& raw)
      : shape_(shape), raw_(raw), pos_(raw.size(), 0) {}

  // The next row's JSON text appended to `out`; false for a null row.
  bool row(std::string& out) {
    starts(0, "rows");
    const VariantNode& root = shape_.root;
    if (def(root.parts[0]) < root.def) {
      skip(root.parts);
      return false;
    }
    return variant(out);
  }

  // The next row of a VARIANT under `depth` repeated fields (a list, a list of lists...), entry by entry:
  // `entry(r, d, text)` for each of the row's entries of the variant's first leaf, with their repetition and
  // definition levels, and the variant's JSON text where one is present (nullptr where the group is absent: a
  // null element, or a null or empty list).
  template <class OnEntry>
  void nested_row(int depth, OnEntry&& entry) {
    starts(0, "rows");
    const VariantNode& root = shape_.root;
    const int first = root.parts[0];
    for (bool more = true; more;) {
      const int r = rep(first), d = def(first);
      if (d < root.def) {
        skip(root.parts);
        entry(r, d, nullptr);
      } else {
        std::string text;
        variant(text);
        entry(r, d, &text);
      }
      more = !at_end(first) && rep(first) > 0;
      if (!more) break;
      if (rep(first) > depth) throw InvalidFile("a VARIANT's leaf repeats deeper than the lists above it");
      starts(rep(first), "list elements");
    }
  }

  // Checks that every leaf of the variant is at an entry of repetition level `r` (0: a row's first).
  void starts(int r, const char* what) const {
    for (const int p : shape_.root.parts) {
      if (at_end(p) || rep(p) != r) {
        throw InvalidFile(std::string("the VARIANT's leaves disagree on where ") + what + " begin");
      }
    }
  }

  // A present variant (its group defined) at the current entries, its JSON text appended to `out`.
  bool variant(std::string& out) {
    const VariantNode& root = shape_.root;
    const int m = shape_.metadata;
    const size_t i = pos_[static_cast<size_t>(m)]++;
    if (raw_[static_cast<size_t>(m)].def[i] != part(m).max_def) throw InvalidFile("a VARIANT without its metadata");
    const Metadata md(bytes(m, i));
    if (!pair(root, md, out, 0)) throw InvalidFile("a VARIANT of neither value nor typed_value");
    return true;
  }

  // Checks that every entry was used.
  void finish() const {
    for (size_t p = 0; p < raw_.size(); ++p) {
      if (pos_[p] != raw_[p].def.size()) throw InvalidFile("leaf '" + shape_.parts[p].name + "' holds entries beyond its rows");
    }
  }

 private:
  const Leaf& part(int p) const { return shape_.parts[static_cast<size_t>(p)]; }
  bool at_end(int p) const { return pos_[static_cast<size_t>(p)] >= raw_[static_cast<size_t>(p)].def.size(); }
  int def(int p) const {
    if (at_end(p)) throw InvalidFile("leaf '" + part(p).name + "' ends before the VARIANT's other leaves");
    return raw_[static_cast<size_t>(p)].def[pos_[static_cast<size_t>(p)]];
  }
  int rep(int p) const { return raw_[static_cast<size_t>(p)].rep[pos_[static_cast<size_t>(p)]]; }
  std::string_view bytes(int p, size_t i) const {
    return raw_[static_cast<size_t>(p)].values.byte_arrays().at(static_cast<int64_t>(i));
  }
  // Passes one entry of each part: a group absent (null, or in an empty list) has one entry in each leaf below.
  void skip(const std::vector<int>& parts) {
    for (const int p : parts) {
      def(p);
      ++pos_[static_cast<size_t>(p)];
    }
  }

  // The pair `n` if its group is present (appended to out), else passes its entries; false when it is absent or
  // holds neither value nor typed_value (a missing field).
  bool node(const VariantNode& n, const Metadata& md, std::string& out, int depth) {
    if (def(n.parts[0]) < n.def) {
      skip(n.parts);
      return false;
    }
    return pair(n, md, out, depth);
  }

  // A present pair: its value, its typed_value, or an object merged from both. False when both are null.
  bool pair(const VariantNode& n, const Metadata& md, std::string& out, int depth) {
    if (depth > kMaxVariantDepth) throw InvalidFile("VARIANT nested deeper than " + std::to_string(kMaxVariantDepth));
    std::string_view value;
    bool has_value = false;
    if (n.value >= 0) {
      has_value = def(n.value) == part(n.value).max_def;
      if (has_value) value = bytes(n.value, pos_[static_cast<size_t>(n.value)]);
      ++pos_[static_cast<size_t>(n.value)];
    }
    const auto only_typed = [&] {
      if (has_value) throw InvalidFile("a VARIANT with both value and a typed_value that is not an object");
    };
    switch (n.typed) {
      case VariantNode::Typed::kNone: break;
      case VariantNode::Typed::kPrimitive: {
        const int p = n.typed_part;
        const bool present = def(p) == part(p).max_def;
        const size_t i = pos_[static_cast<size_t>(p)]++;
        if (!present) break;
        only_typed();
        append_typed(part(p), raw_[static_cast<size_t>(p)].values, i, out);
        return true;
      }
      case VariantNode::Typed::kObject: {
        if (def(n.typed_parts[0]) < n.typed_def) {
          skip(n.typed_parts);
          break;
        }
        std::vector<std::pair<std::string_view, std::string>> fields;
        for (const auto& [name, field] : n.fields) {
          std::string text;
          if (node(field, md, text, depth + 1)) fields.emplace_back(name, std::move(text));
        }
        if (has_value) {  // partly shredded: the other fields
          if (value.empty() || (static_cast<uint8_t>(value[0]) & 3) != 2) {
            throw InvalidFile("a VARIANT with a shredded object and a value that is not an object");
          }
          const size_t shredded = fields.size();
          object_fields(md, value, &fields, depth);
          for (size_t k = shredded; k < fields.size(); ++k) {
            for (size_t j = 0; j < shredded; ++j) {
              if (fields[j].first == fields[k].first) {
                throw InvalidFile("VARIANT field '" + std::string(fields[k].first) + "' both shredded and in value");
              }
            }
          }
        }
        std::sort(fields.begin(), fields.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        append_object(fields, out);
        return true;
      }
      case VariantNode::Typed::kArray: {
        const int first = n.typed_parts[0];
        const int d = def(first);
        if (d < n.typed_def) {
          skip(n.typed_parts);
          break;
        }
        only_typed();
        if (d == n.typed_def) {  // an empty array
          skip(n.typed_parts);
          out += "[]";
          return true;
        }
        const VariantNode& element = n.element[0];
        out += '[';
        for (bool more = true; more;) {
          std::string text;
          out += node(element, md, text, depth + 1) ? text : "null";
          more = !at_end(first) && rep(first) == n.element_rep;
          if (more) out += ',';
        }
        out += ']';
        return true;
      }
    }
    if (!has_value) return false;
    append_value(md, value, out, depth);
    return true;
  }

  const VariantShape& shape_;
  std::vector<detail::RawChunk>& raw_;
  std::vector<size_t> pos_;
};

// The lists of a VARIANT under leaf.max_rep repeated fields, put together from its first leaf's levels (Dremel's
// record assembly): `col`'s row offsets and validity, its inner lists (a list of lists), and its elements, the
// variants' JSON texts with a null element's validity.
void read_variant_lists(const Leaf& leaf, int64_t num_rows, Assembler& assembler, Column* col) {
  using detail::rethrow_with;
  const int depth = leaf.max_rep;
  ByteArrays& out = std::get<ByteArrays>(col->values);
  // Each level's offsets hold an entry for each list begun there (its first child), and the end at last.
  col->list_offsets.clear();
  for (ListLevel& level : col->inner_lists) level.offsets.clear();
  // The children begun so far of the lists at level k (0: the rows' lists): lists of level k + 1, or elements.
  const auto children = [&](int k) -> int64_t {
    return k + 1 < depth ? static_cast<int64_t>(col->inner_lists[static_cast<size_t>(k)].offsets.size()) : out.size();
  };
  bool any_null_element = false;
  int64_t row = 0;
  int open = 0;  // the levels whose lists the last entry left open for more elements: 0 to depth
  const auto empty_def_at = [&](int k) {
    return k == 0 ? leaf.list_def : leaf.inner_list_defs[static_cast<size_t>(k - 1)];
  };
  const auto entry = [&](int r, int d, const std::string* text) {
    // An entry at repetition level r > 0 is the next element of a list at level r - 1, which must be open, and
    // not null or empty by its own definition level.
    if (r > 0 && (r > open || d <= empty_def_at(r - 1))) {
      throw InvalidFile("repetition level " + std::to_string(r) + " on a null or empty list");
    }
    // A new list begins at each level from r down: a row's list, or the next element of the list above.
    for (int k = r; k < depth; ++k) {
      const int empty_def = empty_def_at(k);
      const bool nullable =
          k == 0 ? leaf.schema.nullable : leaf.schema.inner_list_nullable[static_cast<size_t>(k - 1)];
      if (d < empty_def && !nullable) throw InvalidFile("a null in a required list");
      if (k == 0) {
        col->list_offsets.push_back(children(0));
        if (d < empty_def) col->validity[static_cast<size_t>(row)] = 0;
      } else {
        ListLevel& level = col->inner_lists[static_cast<size_t>(k - 1)];
        level.offsets.push_back(children(k));
        level.validity.push_back(d < empty_def ? 0 : 1);
      }
      if (d <= empty_def) {  // a null or an empty list: nothing below it, and no more elements in it
        open = k;
        return;
      }
    }
    open = depth;
    // An element of the innermost lists: a variant, or null (the group absent).
    if (text == nullptr && !leaf.schema.element_nullable) {
      throw InvalidFile("a null element in a list of required VARIANTs");
    }
    if (text == nullptr && !any_null_element) {
      any_null_element = true;
      col->element_validity.assign(static_cast<size_t>(out.size()), 1);
    }
    if (any_null_element) col->element_validity.push_back(text != nullptr ? 1 : 0);
    out.push_back(text != nullptr ? std::string_view(*text) : std::string_view());
  };
  for (; row < num_rows; ++row) {
    try {
      assembler.nested_row(depth, entry);
    } catch (const Error&) {
      rethrow_with("row " + std::to_string(row) + " of the row group: ");
    }
  }
  assembler.finish();
  // Outside in, so that each level's end is taken before the level below it gets its own.
  col->list_offsets.push_back(children(0));
  for (int k = 1; k < depth; ++k) col->inner_lists[static_cast<size_t>(k - 1)].offsets.push_back(children(k));
  detail::drop_validity_without_nulls(col);
}

}  // namespace

void append_variant_json(std::string_view metadata, std::string_view value, std::string& out) {
  append_value(Metadata(metadata), value, out, 0);
}

namespace detail {

Column read_variant_chunk(const ParsedFile& file, const Leaf& leaf, const format::RowGroup& rg, int64_t output_budget) {
  const VariantShape& shape = *leaf.variant;
  std::vector<RawChunk> raw(shape.parts.size());
  for (size_t k = 0; k < shape.parts.size(); ++k) {
    const Leaf& part = shape.parts[k];
    const ChunkSource source{file, part, rg.columns[part.index], rg.num_rows, output_budget, 1};
    const std::unique_ptr<ColumnChunkReader> reader = make_chunk_reader(ChunkShape::kRawLevels, source);
    try {
      ChunkTarget target;
      target.raw = &raw[k];
      reader->read(&target);
    } catch (const Error&) {
      std::string where = "leaf '" + part.name + "'";
      if (reader->page_offset() >= 0) where += ", page at offset " + std::to_string(reader->page_offset());
      rethrow_with(where + ": ");
    }
  }
  Column col = make_column(leaf.schema);
  ByteArrays& out = std::get<ByteArrays>(col.values);
  if (leaf.schema.nullable) col.validity.assign(static_cast<size_t>(rg.num_rows), 1);
  Assembler assembler(shape, raw);
  if (leaf.max_rep > 0) {
    read_variant_lists(leaf, rg.num_rows, assembler, &col);
    return col;
  }
  std::string text;
  for (int64_t r = 0; r < rg.num_rows; ++r) {
    text.clear();
    bool present = false;
    try {
      present = assembler.row(text);
    } catch (const Error&) {
      rethrow_with("row " + std::to_string(r) + " of the row group: ");
    }
    if (!present) {
      if (!leaf.schema.nullable) throw InvalidFile("row " + std::to_string(r) + ": null in a required VARIANT");
      col.validity[static_cast<size_t>(r)] = 0;
    }
    out.push_back(text);
  }
  assembler.finish();
  return col;
}

}  // namespace detail

}  // namespace feedline::parquet
