// Writes a Table as a Parquet file of flat and list columns (a list, and each level of a list of lists, as the
// three-level LIST form), top-level or, with WriteOptions::dotted_names_as_structs, fields of a struct: each row
// group's column chunks are encoded (dictionary or PLAIN, repetition and definition levels, compression) on a
// pool of threads, then written in order with the footer.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "io/parallel.h"
#include "io/parquet/codec.h"
#include "io/parquet/dictionary.h"
#include "io/parquet/metadata.h"
#include "io/parquet/plain.h"
#include "io/parquet/rle.h"
#include "io/parquet/schema.h"
#include "io/parquet/writer_internal.h"

namespace feedline::parquet {

using namespace detail;

namespace {

constexpr size_t kMaxDictionaryEntries = size_t{1} << 20;
constexpr size_t kMaxDictionaryBytes = size_t{1} << 20;
constexpr size_t kMaxStatisticsBytes = 4096;  // longer byte-array min/max are left out
constexpr int64_t kMaxRowsPerPage = int64_t{1} << 24;
const char kCreatedBy[] = "feedline version 0.1.0";

struct EncodedChunk {
  std::string bytes;  // the pages, back to back
  format::ColumnMetaData md;
  int64_t dictionary_page_at = -1;  // offsets within `bytes`
  int64_t data_page_at = 0;
};

class PageWriter {
 public:
  PageWriter(const WriteOptions& options, EncodedChunk* chunk) : options_(options), chunk_(chunk) {}

  void dictionary_page(const std::string& plain, int64_t num_values) {
    chunk_->dictionary_page_at = static_cast<int64_t>(chunk_->bytes.size());
    format::PageHeader h;
    h.type = format::page_type::kDictionaryPage;
    format::DictionaryPageHeader d;
    d.num_values = static_cast<int32_t>(num_values);
    d.encoding = format::encoding::kPlain;
    h.dictionary_page_header = d;
    write(h, plain);
  }

  void data_page(const std::string& body, int64_t num_values, int32_t encoding) {
    // A page ends only where a row does, so one list of 2^31 elements would need a page larger than Thrift's i32.
    if (num_values > INT32_MAX) throw InvalidArgument("a Parquet page would hold more than 2^31-1 level entries");
    if (!first_data_page_written_) {
      chunk_->data_page_at = static_cast<int64_t>(chunk_->bytes.size());
      first_data_page_written_ = true;
    }
    format::PageHeader h;
    h.type = format::page_type::kDataPage;
    format::DataPageHeader d;
    d.num_values = static_cast<int32_t>(num_values);
    d.encoding = encoding;
    d.definition_level_encoding = format::encoding::kRle;
    d.repetition_level_encoding = format::encoding::kRle;
    h.data_page_header = d;
    write(h, body);
  }

  // A data page of dictionary indices: `body` holds its levels; the indices' bit width and their RLE runs follow.
  // The bit width is there even when every entry is null (no runs follow): readers read it whatever the count
  // (DuckDB read past a page without it, and failed at random on what lay there).
  void dictionary_indices_page(std::string* body, const uint32_t* indices, size_t n, int bit_width,
                               int64_t num_values) {
    body->push_back(static_cast<char>(bit_width));
    if (n > 0) rle_encode(indices, n, bit_width, body);
    data_page(*body, num_values, format::encoding::kRleDictionary);
  }

  // The encodings a chunk's pages use, for its metadata.
  void set_encodings(bool dictionary) {
    if (dictionary) {
      chunk_->md.encodings = {format::encoding::kPlain, format::encoding::kRle, format::encoding::kRleDictionary};
    } else {
      chunk_->md.encodings = {format::encoding::kPlain, format::encoding::kRle};
    }
  }

 private:
  void write(format::PageHeader& h, const std::string& body) {
    if (body.size() > static_cast<size_t>(INT32_MAX)) throw InvalidArgument("a Parquet page exceeds 2 GiB");
    compress(options_.codec, options_.compression_level, reinterpret_cast<const uint8_t*>(body.data()),
             body.size(), &compressed_);
    if (compressed_.size() > static_cast<size_t>(INT32_MAX)) throw InvalidArgument("a Parquet page exceeds 2 GiB");
    h.uncompressed_page_size = static_cast<int32_t>(body.size());
    h.compressed_page_size = static_cast<int32_t>(compressed_.size());
    if (options_.page_checksums) {
      h.crc = static_cast<int32_t>(crc32_of(reinterpret_cast<const uint8_t*>(compressed_.data()), compressed_.size()));
    }
    thrift::CompactWriter w;
    format::write_page_header(w, h);
    chunk_->bytes.append(w.buffer());
    chunk_->bytes.append(compressed_);
    chunk_->md.total_uncompressed_size += static_cast<int64_t>(w.buffer().size() + body.size());
    chunk_->md.total_compressed_size += static_cast<int64_t>(w.buffer().size() + compressed_.size());
  }

  const WriteOptions& options_;
  EncodedChunk* chunk_;
  std::string compressed_;
  bool first_data_page_written_ = false;
};

// Values in the order Parquet's statistics use: unsigned integers compare unsigned, floats skip NaN.
template <class T>
struct StatsOrder {
  bool is_unsigned = false;
  bool less(T a, T b) const {
    if constexpr (std::is_same_v<T, int32_t>) {
      return is_unsigned ? static_cast<uint32_t>(a) < static_cast<uint32_t>(b) : a < b;
    } else if constexpr (std::is_same_v<T, int64_t>) {
      return is_unsigned ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
    } else {
      return a < b;
    }
  }
};

template <class T>
std::string plain_bytes(T v) {
  return std::string(reinterpret_cast<const char*>(&v), sizeof(T));
}

// Min and max of values[0..n) in statistics order; false when there is none (no values, or only NaN).
template <class T>
bool min_max(const T* values, size_t n, const StatsOrder<T>& order, T* lo, T* hi) {
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    const T v = values[i];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(v)) continue;
    }
    if (!any) {
      *lo = *hi = v;
      any = true;
    } else {
      if (order.less(v, *lo)) *lo = v;
      if (order.less(*hi, v)) *hi = v;
    }
  }
  return any;
}


// Throws unless [lo, hi] fits the column's narrow INT(8/16) annotation.
void check_int_range(const Column& col, int64_t lo, int64_t hi) {
  const IntAnnotation& a = *col.schema.int_annotation;
  if (a.bit_width >= 32) return;  // every stored value is valid
  int64_t min_ok, max_ok;
  if (a.is_signed) {
    min_ok = -(int64_t{1} << (a.bit_width - 1));
    max_ok = (int64_t{1} << (a.bit_width - 1)) - 1;
  } else {
    min_ok = 0;
    max_ok = (int64_t{1} << a.bit_width) - 1;
  }
  if (lo < min_ok || hi > max_ok) {
    throw InvalidArgument(column_where(col) + " holds " + std::to_string(lo < min_ok ? lo : hi) +
                          ", outside its INT(" + std::to_string(a.bit_width) + (a.is_signed ? ", signed)" : ", unsigned)") +
                          " annotation");
  }
}


// The shape of rows [r0, r1) of `col` as a top-level column. Flat: no levels for a required column, the
// validity bytes when there are nulls, else all ones. A list: repetition level 0 starts each row, k continues a
// list at level k (1 the rows' lists); definition levels as ListLevels says. For a list of values, with list_def
// 1 for an optional list (else 0): a null list is 0, an empty list list_def, a null element list_def + 1 and a
// present element max_def (list_def + 1, + 1 when elements are optional).
void make_column_shape(const Column& col, int64_t r0, int64_t r1, ChunkShape* shape) {
  ChunkShape& sh = *shape;
  if (!col.schema.is_list) {
    sh.s0 = r0;
    sh.s1 = r1;
    sh.slot_valid = col.validity.empty() ? nullptr : col.validity.data() + r0;
    sh.entries = r1 - r0;
    if (col.schema.nullable) {
      sh.max_def = 1;
      if (sh.slot_valid == nullptr) {
        sh.own_def.assign(static_cast<size_t>(sh.entries), 1);
        sh.def = sh.own_def.data();
      } else {
        sh.def = sh.slot_valid;
      }
    }
    return;
  }
  const ListLevels levels(col);
  sh.s0 = levels.first_slot(r0);
  sh.s1 = levels.first_slot(r1);
  sh.slot_valid = col.element_validity.empty() ? nullptr : col.element_validity.data() + sh.s0;
  sh.max_rep = levels.depth;
  sh.max_def = levels.max_def;
  sh.own_def.reserve(static_cast<size_t>(sh.s1 - sh.s0 + (r1 - r0)));
  sh.own_rep.reserve(sh.own_def.capacity());
  for (int64_t r = r0; r < r1; ++r) levels.append(0, r, 0, &sh);
  sh.entries = static_cast<int64_t>(sh.own_def.size());
  sh.def = sh.own_def.data();
  sh.rep = sh.own_rep.data();
}

// The shape of rows [r0, r1) of `col`, a field of a struct when in_struct: then every entry's definition level
// is one higher than make_column_shape's, the optional struct group being present in every row.
void make_shape(const Column& col, int64_t r0, int64_t r1, bool in_struct, ChunkShape* shape) {
  ChunkShape& sh = *shape;
  make_column_shape(col, r0, r1, &sh);
  if (!in_struct) return;
  if (sh.def != nullptr && sh.def == sh.own_def.data()) {
    for (uint8_t& d : sh.own_def) ++d;
  } else {
    std::vector<uint8_t> def(static_cast<size_t>(sh.entries));
    for (size_t i = 0; i < def.size(); ++i) def[i] = static_cast<uint8_t>((sh.def != nullptr ? sh.def[i] : 0) + 1);
    sh.own_def = std::move(def);
  }
  sh.def = sh.own_def.data();
  ++sh.max_def;
}

// Appends levels[0..n) with their 4-byte length prefix, as data page v1 stores repetition and definition levels.
void append_levels(const uint8_t* levels, int64_t n, int max_level, std::string* body) {
  const size_t at = body->size();
  body->append(4, '\0');
  rle_encode(levels, static_cast<size_t>(n), bit_width_for(static_cast<uint64_t>(max_level)), body);
  const uint32_t len = static_cast<uint32_t>(body->size() - at - 4);
  std::memcpy(body->data() + at, &len, 4);
}

// Repetition levels, then definition levels, of entries [p0, p1): the start of a data page v1 body.
void append_page_levels(const ChunkShape& sh, int64_t p0, int64_t p1, std::string* body) {
  if (sh.max_rep > 0) append_levels(sh.rep + p0, p1 - p0, sh.max_rep, body);
  if (sh.max_def > 0) append_levels(sh.def + p0, p1 - p0, sh.max_def, body);
}

// A fixed-width chunk's statistics: its null count, and its values' range lo..hi when it has one (have_range).
template <class Stored>
format::Statistics fixed_statistics(int64_t null_count, bool have_range, Stored lo, Stored hi, bool is_unsigned) {
  format::Statistics s;
  s.null_count = null_count;
  if (!have_range) return s;
  if constexpr (std::is_floating_point_v<Stored>) {
    // Parquet's rule for zeros: a zero minimum is written as -0, a zero maximum as +0.
    if (lo == 0) lo = -Stored{0};
    if (hi == 0) hi = Stored{0};
  }
  s.min_value = plain_bytes(lo);
  s.max_value = plain_bytes(hi);
  s.is_min_value_exact = true;
  s.is_max_value_exact = true;
  // Old readers only know the signed, deprecated fields; they agree where the order is signed.
  if (!is_unsigned) {
    s.min = s.min_value;
    s.max = s.max_value;
  }
  return s;
}

template <class T>
EncodedChunk encode_fixed(const Column& col, const ChunkShape& shape, const WriteOptions& options) {
  using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
  const std::vector<Stored>& all = std::get<std::vector<Stored>>(col.values);
  const int64_t slots = shape.s1 - shape.s0;
  const uint8_t* valid = shape.slot_valid;

  // Present values, packed.
  std::vector<Stored> packed;
  const Stored* values = all.data() + shape.s0;
  size_t n = static_cast<size_t>(slots);
  if (valid != nullptr) {
    packed.reserve(static_cast<size_t>(slots));
    for (int64_t i = 0; i < slots; ++i) {
      if (valid[i]) packed.push_back(values[i]);
    }
    values = packed.data();
    n = packed.size();
  }

  EncodedChunk chunk;
  format::ColumnMetaData& md = chunk.md;
  StatsOrder<Stored> order;
  order.is_unsigned = col.schema.int_annotation && !col.schema.int_annotation->is_signed;
  Stored lo{}, hi{};
  const bool have_range = min_max(values, n, order, &lo, &hi);
  if constexpr (std::is_integral_v<Stored> && !std::is_same_v<T, bool>) {
    if (have_range && col.schema.int_annotation) {
      // Signed view for the range check: narrow annotations never need the top bit.
      Stored slo = lo, shi = hi;
      if (order.is_unsigned) min_max(values, n, StatsOrder<Stored>{}, &slo, &shi);
      check_int_range(col, static_cast<int64_t>(slo), static_cast<int64_t>(shi));
    }
  }
  if (options.statistics) {
    // Every entry without a value: null rows; in a list, null lists, empty lists and null elements.
    md.statistics = fixed_statistics(shape.entries - static_cast<int64_t>(n), have_range, lo, hi, order.is_unsigned);
  }

  // Dictionary where it pays: its PLAIN page plus bit-packed indices against PLAIN values.
  std::vector<Stored> dict;
  std::vector<uint32_t> indices;
  bool use_dict = false;
  int bit_width = 0;
  if (options.dictionary && !std::is_same_v<T, bool> && n > 0) {
    if (build_dictionary(values, n, kMaxDictionaryEntries, kMaxDictionaryBytes, &dict, &indices)) {
      bit_width = bit_width_for(dict.size() - 1);
      const double dict_bytes = static_cast<double>(dict.size() * sizeof(Stored)) +
                                static_cast<double>(n) * bit_width / 8.0;
      use_dict = dict_bytes < static_cast<double>(n * sizeof(Stored));
    }
  }

  PageWriter pages(options, &chunk);
  std::string body;
  if (use_dict) {
    encode_plain(dict.data(), dict.size(), &body);
    pages.dictionary_page(body, static_cast<int64_t>(dict.size()));
  }
  const double bits_per_entry =
      (use_dict ? std::max(bit_width, 1) : (std::is_same_v<T, bool> ? 1 : 8 * sizeof(Stored))) + shape.level_bits();
  const int64_t entries_per_page = std::clamp<int64_t>(
      static_cast<int64_t>(static_cast<double>(options.page_bytes) * 8 / bits_per_entry), 1, kMaxRowsPerPage);
  size_t v0 = 0;
  for (int64_t p0 = 0; p0 < shape.entries;) {
    const int64_t p1 = shape.row_boundary(std::min(shape.entries, p0 + entries_per_page));
    const size_t v1 = v0 + static_cast<size_t>(shape.values_in(p0, p1));
    body.clear();
    append_page_levels(shape, p0, p1, &body);
    if (use_dict) {
      pages.dictionary_indices_page(&body, indices.data() + v0, v1 - v0, bit_width, p1 - p0);
    } else {
      if constexpr (std::is_same_v<T, bool>) {
        encode_plain_bool(values + v0, v1 - v0, &body);
      } else {
        encode_plain(values + v0, v1 - v0, &body);
      }
      pages.data_page(body, p1 - p0, format::encoding::kPlain);
    }
    v0 = v1;
    p0 = p1;
  }
  pages.set_encodings(use_dict);
  return chunk;
}

// Whether big-endian two's complement integers of any lengths (DECIMAL in byte arrays) are a < b, by value: the
// order Parquet's statistics use for DECIMAL (SIGNED), where unsigned byte order would put -1 above 1.
bool decimal_less(std::string_view a, std::string_view b) {
  const bool a_negative = !a.empty() && (static_cast<uint8_t>(a[0]) & 0x80) != 0;
  const bool b_negative = !b.empty() && (static_cast<uint8_t>(b[0]) & 0x80) != 0;
  if (a_negative != b_negative) return a_negative;
  // The same sign: sign-extended to one length, two's complement orders as unsigned bytes.
  const size_t n = std::max(a.size(), b.size());
  const auto byte = [n](std::string_view v, bool negative, size_t i) -> uint8_t {
    const size_t pad = n - v.size();
    return i < pad ? (negative ? 0xff : 0x00) : static_cast<uint8_t>(v[i - pad]);
  };
  for (size_t i = 0; i < n; ++i) {
    const uint8_t x = byte(a, a_negative, i), y = byte(b, b_negative, i);
    if (x != y) return x < y;
  }
  return false;
}

// The slots (in the column's values) of a chunk's present byte arrays, each checked to fit a page.
std::vector<int64_t> present_byte_arrays(const Column& col, const ChunkShape& shape) {
  const ByteArrays& all = col.byte_arrays();
  const uint8_t* valid = shape.slot_valid;
  std::vector<int64_t> present;
  present.reserve(static_cast<size_t>(shape.s1 - shape.s0));
  for (int64_t i = shape.s0; i < shape.s1; ++i) {
    if (valid == nullptr || valid[i - shape.s0]) {
      if (all.at(i).size() > static_cast<size_t>(INT32_MAX)) {
        throw InvalidArgument(column_where(col) + (col.schema.is_list ? " element " : " row ") + std::to_string(i) +
                              " holds more than 2 GiB");
      }
      present.push_back(i);
    }
  }
  return present;
}

// A byte array chunk's statistics: its null count (as encode_fixed counts them), and the range of its `present`
// values where they have an order and it fits kMaxStatisticsBytes.
format::Statistics byte_array_statistics(const Column& col, const std::vector<int64_t>& present, int64_t null_count) {
  const ByteArrays& all = col.byte_arrays();
  format::Statistics s;
  s.null_count = null_count;
  // (INTERVAL has no order: the format's readers take no minimum or maximum of one)
  if (present.empty() || col.schema.logical.kind == LogicalKind::kInterval) return s;
  // Bytes compare as unsigned char (char_traits<char>'s order, Parquet's for byte arrays), decimals by value.
  const bool decimal = col.schema.logical.kind == LogicalKind::kDecimal;
  const auto less = [decimal](std::string_view a, std::string_view b) { return decimal ? decimal_less(a, b) : a < b; };
  std::string_view lo = all.at(present[0]), hi = lo;
  for (int64_t r : present) {
    const std::string_view v = all.at(r);
    if (less(v, lo)) lo = v;
    if (less(hi, v)) hi = v;
  }
  if (lo.size() <= kMaxStatisticsBytes && hi.size() <= kMaxStatisticsBytes) {
    s.min_value = std::string(lo);
    s.max_value = std::string(hi);
    s.is_min_value_exact = true;
    s.is_max_value_exact = true;
  }
  return s;
}

EncodedChunk encode_byte_arrays(const Column& col, const ChunkShape& shape, const WriteOptions& options) {
  const ByteArrays& all = col.byte_arrays();
  const bool fixed = col.schema.type == PhysicalType::kFixedLenByteArray;  // no length prefixes
  const size_t prefix = fixed ? 0 : 4;
  const std::vector<int64_t> present = present_byte_arrays(col, shape);
  const size_t n = present.size();

  EncodedChunk chunk;
  format::ColumnMetaData& md = chunk.md;
  if (options.statistics) {
    md.statistics = byte_array_statistics(col, present, shape.entries - static_cast<int64_t>(n));
  }

  ByteArrays dict;
  std::vector<uint32_t> indices;
  bool use_dict = false;
  int bit_width = 0;
  if (options.dictionary && n > 0 &&
      build_dictionary(all, present.data(), n, kMaxDictionaryEntries, kMaxDictionaryBytes, &dict, &indices)) {
    bit_width = bit_width_for(static_cast<uint64_t>(dict.size() - 1));
    size_t plain = 0;
    for (int64_t r : present) plain += prefix + all.at(r).size();
    const double dict_bytes = static_cast<double>(dict.bytes.size() + prefix * dict.size()) +
                              static_cast<double>(n) * bit_width / 8.0;
    use_dict = dict_bytes < static_cast<double>(plain);
  }

  PageWriter pages(options, &chunk);
  std::string body;
  if (use_dict) {
    std::vector<int64_t> all_rows(static_cast<size_t>(dict.size()));
    for (size_t i = 0; i < all_rows.size(); ++i) all_rows[i] = static_cast<int64_t>(i);
    encode_plain_byte_arrays(dict, all_rows.data(), all_rows.size(), &body, fixed);
    pages.dictionary_page(body, dict.size());
  }
  size_t v0 = 0;
  int64_t p0 = 0;
  const double index_bytes = std::max(bit_width, 1) / 8.0;
  const double level_bytes = shape.level_bits() / 8.0;
  while (p0 < shape.entries) {
    // Grow the page until its values and levels reach page_bytes, then to the next row.
    int64_t p1 = p0;
    size_t v1 = v0;
    double bytes = 0;
    while (p1 < shape.entries && p1 - p0 < kMaxRowsPerPage && bytes < static_cast<double>(options.page_bytes)) {
      if (shape.def == nullptr || shape.def[p1] == shape.max_def) {
        bytes += use_dict ? static_cast<double>(static_cast<size_t>(index_bytes + 1))
                          : static_cast<double>(prefix + all.at(present[v1]).size());
        ++v1;
      }
      bytes += level_bytes;
      ++p1;
    }
    const int64_t end = shape.row_boundary(p1);
    v1 += static_cast<size_t>(shape.values_in(p1, end));
    p1 = end;
    body.clear();
    append_page_levels(shape, p0, p1, &body);
    if (use_dict) {
      pages.dictionary_indices_page(&body, indices.data() + v0, v1 - v0, bit_width, p1 - p0);
    } else {
      encode_plain_byte_arrays(all, present.data() + v0, v1 - v0, &body, fixed);
      pages.data_page(body, p1 - p0, format::encoding::kPlain);
    }
    v0 = v1;
    p0 = p1;
  }
  pages.set_encodings(use_dict);
  return chunk;
}

// A column's schema as its struct's field (WriteOptions::dotted_names_as_structs): named by what follows the
// struct's name and its dot.
ColumnSchema field_schema(const ColumnSchema& column, size_t struct_name_length) {
  ColumnSchema field = column;
  field.name = column.name.substr(struct_name_length + 1);
  return field;
}

EncodedChunk encode_chunk(const Column& col, int64_t r0, int64_t r1, const WriteOptions& options) {
  const size_t in_struct = struct_name_length(col.schema.name, options);
  ChunkShape shape;
  make_shape(col, r0, r1, in_struct > 0, &shape);
  EncodedChunk chunk;
  switch (col.schema.type) {
    case PhysicalType::kBoolean: chunk = encode_fixed<bool>(col, shape, options); break;
    case PhysicalType::kInt32: chunk = encode_fixed<int32_t>(col, shape, options); break;
    case PhysicalType::kInt64: chunk = encode_fixed<int64_t>(col, shape, options); break;
    case PhysicalType::kFloat: chunk = encode_fixed<float>(col, shape, options); break;
    case PhysicalType::kDouble: chunk = encode_fixed<double>(col, shape, options); break;
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: chunk = encode_byte_arrays(col, shape, options); break;
  }
  format::ColumnMetaData& md = chunk.md;
  md.type = *to_schema_element(col.schema).type;
  if (in_struct > 0) {
    md.path_in_schema = path_in_schema(field_schema(col.schema, in_struct));
    md.path_in_schema.insert(md.path_in_schema.begin(), col.schema.name.substr(0, in_struct));
  } else {
    md.path_in_schema = path_in_schema(col.schema);
  }
  md.codec = codec_to_thrift(options.codec);
  md.num_values = shape.entries;  // level entries: for a list, its elements, null lists and empty lists
  return chunk;
}


}  // namespace

struct FileWriter::Impl {
  std::string path;
  std::vector<ColumnSchema> schema;
  WriteOptions options;
  AtomicFile out;
  format::FileMetaData md;
  Table pending;  // rows not yet in a row group: fewer than options.row_group_rows
  int16_t ordinal = 0;
  bool closed = false;

  Impl(std::string p, std::vector<ColumnSchema> s, WriteOptions o)
      : path(std::move(p)), schema(std::move(s)), options(std::move(o)), out(path) {}

  // Encodes rows [r0, r1) of `table` as one row group and writes it.
  void write_row_group(const Table& table, int64_t r0, int64_t r1) {
    std::vector<EncodedChunk> chunks(table.columns.size());
    parallel_for(table.columns.size(), resolve_threads(options.num_threads),
                 [&](size_t c) { chunks[c] = encode_chunk(table.columns[c], r0, r1, options); });
    format::RowGroup rg;
    rg.num_rows = r1 - r0;
    rg.file_offset = out.bytes_written();
    rg.ordinal = ordinal < INT16_MAX ? ordinal++ : std::optional<int16_t>();
    int64_t compressed = 0;
    for (EncodedChunk& chunk : chunks) {
      const int64_t at = out.bytes_written();
      format::ColumnChunk cc;
      cc.file_offset = at;
      chunk.md.data_page_offset = at + chunk.data_page_at;
      if (chunk.dictionary_page_at >= 0) chunk.md.dictionary_page_offset = at + chunk.dictionary_page_at;
      out.write(chunk.bytes);
      rg.total_byte_size += chunk.md.total_uncompressed_size;
      compressed += chunk.md.total_compressed_size;
      cc.meta_data = std::move(chunk.md);
      rg.columns.push_back(std::move(cc));
      chunk = EncodedChunk();
    }
    rg.total_compressed_size = compressed;
    md.row_groups.push_back(std::move(rg));
    md.num_rows += r1 - r0;
  }

};

FileWriter::FileWriter(std::string path, std::vector<ColumnSchema> schema, WriteOptions options) {
  Table empty = empty_table(schema);
  try {
    validate(empty, options);  // names, types and options, before the file is created
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path + ": " + e.what());
  }
  impl_ = std::make_unique<Impl>(std::move(path), std::move(schema), std::move(options));
  impl_->pending = std::move(empty);
  format::FileMetaData& md = impl_->md;
  md.version = 2;
  md.created_by = kCreatedBy;
  md.schema.emplace_back();
  md.schema[0].name = "schema";
  int32_t top_level = 0;  // the root's children: top-level columns and structs
  const std::vector<ColumnSchema>& columns = impl_->schema;
  // The prefix `struct.` that puts column c in a struct; empty for a top-level column.
  const auto struct_of = [&](size_t c) {
    const size_t n = struct_name_length(columns[c].name, impl_->options);
    return n == 0 ? std::string() : columns[c].name.substr(0, n + 1);
  };
  for (size_t c = 0; c < columns.size(); ++c) {
    const std::string prefix = struct_of(c);
    if (prefix.empty()) {
      for (format::SchemaElement& e : to_schema_elements(columns[c])) md.schema.push_back(std::move(e));
      ++top_level;
    } else {
      if (c == 0 || struct_of(c - 1) != prefix) {
        // A struct's first field (validate() saw that its fields stand together): the struct's group first.
        format::SchemaElement group;
        group.name = prefix.substr(0, prefix.size() - 1);
        group.repetition_type = format::repetition::kOptional;
        int32_t fields = 0;
        for (size_t f = c; f < columns.size() && struct_of(f) == prefix; ++f) ++fields;
        group.num_children = fields;
        md.schema.push_back(std::move(group));
        ++top_level;
      }
      for (format::SchemaElement& e : to_schema_elements(field_schema(columns[c], prefix.size() - 1))) {
        md.schema.push_back(std::move(e));
      }
    }
    md.column_orders.push_back(1);  // TYPE_ORDER: min_value/max_value follow each type's order
  }
  md.schema[0].num_children = top_level;
  for (const auto& [key, value] : impl_->options.key_value_metadata) md.key_value_metadata.push_back({key, value});
  impl_->out.write("PAR1", 4);
}

FileWriter::~FileWriter() = default;
FileWriter::FileWriter(FileWriter&&) noexcept = default;
FileWriter& FileWriter::operator=(FileWriter&&) noexcept = default;

const std::string& FileWriter::path() const { return impl_->path; }
const std::vector<ColumnSchema>& FileWriter::schema() const { return impl_->schema; }
int64_t FileWriter::num_rows() const { return impl_->md.num_rows + impl_->pending.num_rows; }

void FileWriter::write(const Table& table) {
  Impl& w = *impl_;
  if (w.closed) throw InvalidArgument(w.path + ": write() after close()");
  if (table.columns.size() != w.schema.size()) {
    throw InvalidArgument(w.path + ": the table has " + std::to_string(table.columns.size()) +
                          " columns, the file " + std::to_string(w.schema.size()));
  }
  for (size_t c = 0; c < w.schema.size(); ++c) check_same_schema(w.path, w.schema[c], table.columns[c].schema);
  try {
    validate(table, w.options);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(w.path + ": " + e.what());
  }
  const int64_t group = w.options.row_group_rows;
  int64_t r = 0;
  if (w.pending.num_rows > 0) {  // top up the pending rows first, so row groups keep the file's row order
    r = std::min(table.num_rows, group - w.pending.num_rows);
    append_rows(w.pending, table, 0, r);
    if (w.pending.num_rows == group) {
      w.write_row_group(w.pending, 0, group);
      w.pending = empty_table(w.schema);
    }
  }
  for (; table.num_rows - r >= group; r += group) w.write_row_group(table, r, r + group);
  if (r < table.num_rows) append_rows(w.pending, table, r, table.num_rows);
}

void FileWriter::close() {
  Impl& w = *impl_;
  if (w.closed) throw InvalidArgument(w.path + ": close() called twice");
  w.closed = true;  // a failure below leaves the writer closed; its destructor removes the temporary file
  if (w.pending.num_rows > 0) w.write_row_group(w.pending, 0, w.pending.num_rows);
  w.pending = Table();
  thrift::CompactWriter tw;
  format::write_file_metadata(tw, w.md);
  const std::string& footer = tw.buffer();
  const uint32_t len = static_cast<uint32_t>(footer.size());
  w.out.write(footer);
  w.out.write(&len, 4);
  w.out.write("PAR1", 4);
  w.out.commit();
}

void write_table(const std::string& path, const Table& table, const WriteOptions& options) {
  try {
    validate(table, options);  // first, so that a column whose values break its own schema is named for that
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path + ": " + e.what());
  }
  std::vector<ColumnSchema> schema;
  for (const Column& col : table.columns) schema.push_back(col.schema);
  FileWriter writer(path, std::move(schema), options);
  writer.write(table);
  writer.close();
}

}  // namespace feedline::parquet
