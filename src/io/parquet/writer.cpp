// Writes a Table as a Parquet file of flat and list columns (a list, and each level of a list of lists, as the
// three-level LIST form): each row group's column chunks are encoded (dictionary or PLAIN, repetition and
// definition levels, compression) on a pool of threads, then written in order with the footer.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <zstd.h>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "io/parquet/codec.h"
#include "io/parquet/dictionary.h"
#include "io/parquet/metadata.h"
#include "feedline/io/parallel.h"
#include "io/parquet/plain.h"
#include "io/parquet/rle.h"
#include "io/parquet/schema.h"

namespace feedline::parquet {
namespace {

namespace fmt = format;

constexpr size_t kMaxDictionaryEntries = size_t{1} << 20;
constexpr size_t kMaxDictionaryBytes = size_t{1} << 20;
constexpr size_t kMaxStatisticsBytes = 4096;  // longer byte-array min/max are left out
constexpr int64_t kMaxRowsPerPage = int64_t{1} << 24;
const char kCreatedBy[] = "feedline version 0.1.0";

struct EncodedChunk {
  std::string bytes;  // the pages, back to back
  fmt::ColumnMetaData md;
  int64_t dictionary_page_at = -1;  // offsets within `bytes`
  int64_t data_page_at = 0;
};

class PageWriter {
 public:
  PageWriter(const WriteOptions& options, EncodedChunk* chunk) : options_(options), chunk_(chunk) {}

  void dictionary_page(const std::string& plain, int64_t num_values) {
    chunk_->dictionary_page_at = static_cast<int64_t>(chunk_->bytes.size());
    fmt::PageHeader h;
    h.type = fmt::page_type::kDictionaryPage;
    fmt::DictionaryPageHeader d;
    d.num_values = static_cast<int32_t>(num_values);
    d.encoding = fmt::encoding::kPlain;
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
    fmt::PageHeader h;
    h.type = fmt::page_type::kDataPage;
    fmt::DataPageHeader d;
    d.num_values = static_cast<int32_t>(num_values);
    d.encoding = encoding;
    d.definition_level_encoding = fmt::encoding::kRle;
    d.repetition_level_encoding = fmt::encoding::kRle;
    h.data_page_header = d;
    write(h, body);
  }

 private:
  void write(fmt::PageHeader& h, const std::string& body) {
    if (body.size() > static_cast<size_t>(INT32_MAX)) throw InvalidArgument("a Parquet page exceeds 2 GiB");
    compress(options_.codec, options_.compression_level, reinterpret_cast<const uint8_t*>(body.data()),
             body.size(), &compressed_);
    if (compressed_.size() > static_cast<size_t>(INT32_MAX)) throw InvalidArgument("a Parquet page exceeds 2 GiB");
    h.uncompressed_page_size = static_cast<int32_t>(body.size());
    h.compressed_page_size = static_cast<int32_t>(compressed_.size());
    if (options_.page_checksums) {
      h.crc = static_cast<int32_t>(crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(compressed_.data()),
                                         static_cast<uInt>(compressed_.size())));
    }
    thrift::CompactWriter w;
    fmt::write_page_header(w, h);
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

std::string column_where(const Column& col) { return "column '" + col.schema.name + "'"; }

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

// The level entries and value slots of one column chunk. A flat column has one entry and one value slot per
// row; a list column one slot per element and one entry per element, null list and empty list, so that its
// pages can be cut between entries that start a row (repetition level 0) and nowhere else.
struct ChunkShape {
  int64_t s0 = 0, s1 = 0;                // value slots [s0, s1) of the column's values
  const uint8_t* slot_valid = nullptr;   // validity of slots s0.. (null: every slot holds a value)
  int64_t entries = 0;
  int max_def = 0, max_rep = 0;
  const uint8_t* def = nullptr;          // definition levels of the entries (null when max_def is 0)
  const uint8_t* rep = nullptr;          // repetition levels (null when max_rep is 0)
  std::vector<uint8_t> own_def, own_rep; // storage when the levels are not the column's own validity bytes

  ChunkShape() = default;
  ChunkShape(const ChunkShape&) = delete;  // def and rep may point into own_def and own_rep
  ChunkShape& operator=(const ChunkShape&) = delete;

  // Entries [p0, p1) that carry a value (their definition level reaches max_def).
  int64_t values_in(int64_t p0, int64_t p1) const {
    if (def == nullptr) return p1 - p0;
    return std::count(def + p0, def + p1, static_cast<uint8_t>(max_def));
  }
  // Where a page that should end at `p1` may end: at an entry that starts a row, or at the end.
  int64_t row_boundary(int64_t p1) const {
    while (rep != nullptr && p1 < entries && rep[p1] != 0) ++p1;
    return p1;
  }
  int level_bits() const {
    return bit_width_for(static_cast<uint64_t>(max_def)) + bit_width_for(static_cast<uint64_t>(max_rep));
  }
};

// The levels of lists of a list column, outside in: level 0 the rows' lists (list_offsets, validity), level k > 0
// inner_lists[k - 1]. The lists of the last level hold the value slots; those of any other, the next level's lists.
struct ListLevels {
  const Column& col;
  int depth;
  std::vector<int> null_def, empty_def;  // per level: the definition level of a null / an empty list
  int null_slot_def = 0, max_def = 0;    // of a null element / a present one

  explicit ListLevels(const Column& c) : col(c), depth(c.schema.list_depth()) {
    // Dremel's definition levels count the defined optional or repeated ancestors: a list that may be null adds
    // one when present, its repeated field one more when it holds an element, and an optional element one.
    int def = 0;
    for (int k = 0; k < depth; ++k) {
      null_def.push_back(def);
      def += nullable(k) ? 1 : 0;
      empty_def.push_back(def);
      ++def;
    }
    null_slot_def = def;
    max_def = def + (c.schema.element_nullable ? 1 : 0);
  }
  bool nullable(int k) const {
    return k == 0 ? col.schema.nullable : col.schema.inner_list_nullable[static_cast<size_t>(k - 1)];
  }
  const std::vector<int64_t>& offsets(int k) const {
    return k == 0 ? col.list_offsets : col.inner_lists[static_cast<size_t>(k - 1)].offsets;
  }
  const std::vector<uint8_t>& validity(int k) const {
    return k == 0 ? col.validity : col.inner_lists[static_cast<size_t>(k - 1)].validity;
  }
  bool is_null(int k, int64_t list) const {
    const std::vector<uint8_t>& v = validity(k);
    return !v.empty() && v[static_cast<size_t>(list)] == 0;
  }
  // The first value slot of row `row` (or the slot count, for the row after the last).
  int64_t first_slot(int64_t row) const {
    int64_t i = row;
    for (int k = 0; k < depth; ++k) i = offsets(k)[static_cast<size_t>(i)];
    return i;
  }
  // The level entries of list `list` at level k, the first of them with repetition level `rep`: one for a null
  // or empty list, else those of its elements, each after the first repeating at level k + 1.
  void append(int k, int64_t list, int rep, ChunkShape* sh) const {
    const bool null = is_null(k, list);
    const int64_t b = offsets(k)[static_cast<size_t>(list)], e = offsets(k)[static_cast<size_t>(list + 1)];
    if (null || b == e) {
      sh->own_rep.push_back(static_cast<uint8_t>(rep));
      const int def = null ? null_def[static_cast<size_t>(k)] : empty_def[static_cast<size_t>(k)];
      sh->own_def.push_back(static_cast<uint8_t>(def));
      return;
    }
    for (int64_t i = b; i < e; ++i) {
      const int r = i == b ? rep : k + 1;
      if (k + 1 < depth) {
        append(k + 1, i, r, sh);
      } else {
        sh->own_rep.push_back(static_cast<uint8_t>(r));
        sh->own_def.push_back(static_cast<uint8_t>(col.element_is_null(i) ? null_slot_def : max_def));
      }
    }
  }
};

// The shape of rows [r0, r1) of `col`. Flat: no levels for a required column, the validity bytes when there
// are nulls, else all ones. A list: repetition level 0 starts each row, k continues a list at level k (1 the
// rows' lists); definition levels as ListLevels says. For a list of values, with list_def 1 for an optional list
// (else 0): a null list is 0, an empty list list_def, a null element list_def + 1 and a present element max_def
// (list_def + 1, + 1 when elements are optional).
void make_shape(const Column& col, int64_t r0, int64_t r1, ChunkShape* shape) {
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
  fmt::ColumnMetaData& md = chunk.md;
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
    fmt::Statistics s;
    // Every entry without a value: null rows; in a list, null lists, empty lists and null elements.
    s.null_count = shape.entries - static_cast<int64_t>(n);
    if (have_range) {
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
      if (!order.is_unsigned) {
        s.min = s.min_value;
        s.max = s.max_value;
      }
    }
    md.statistics = s;
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
      if (v1 > v0) {
        body.push_back(static_cast<char>(bit_width));
        rle_encode(indices.data() + v0, v1 - v0, bit_width, &body);
      }
      pages.data_page(body, p1 - p0, fmt::encoding::kRleDictionary);
    } else {
      if constexpr (std::is_same_v<T, bool>) {
        encode_plain_bool(values + v0, v1 - v0, &body);
      } else {
        encode_plain(values + v0, v1 - v0, &body);
      }
      pages.data_page(body, p1 - p0, fmt::encoding::kPlain);
    }
    v0 = v1;
    p0 = p1;
  }
  if (use_dict) {
    md.encodings = {fmt::encoding::kPlain, fmt::encoding::kRle, fmt::encoding::kRleDictionary};
  } else {
    md.encodings = {fmt::encoding::kPlain, fmt::encoding::kRle};
  }
  return chunk;
}

EncodedChunk encode_byte_arrays(const Column& col, const ChunkShape& shape, const WriteOptions& options) {
  const ByteArrays& all = col.byte_arrays();
  const bool fixed = col.schema.type == PhysicalType::kFixedLenByteArray;  // no length prefixes
  const size_t prefix = fixed ? 0 : 4;
  const uint8_t* valid = shape.slot_valid;
  std::vector<int64_t> present;  // slot numbers (in `all`) of present values
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
  const size_t n = present.size();

  EncodedChunk chunk;
  fmt::ColumnMetaData& md = chunk.md;
  if (options.statistics) {
    fmt::Statistics s;
    s.null_count = shape.entries - static_cast<int64_t>(n);  // as encode_fixed counts them
    if (n > 0) {
      std::string_view lo = all.at(present[0]), hi = lo;
      for (int64_t r : present) {
        const std::string_view v = all.at(r);
        if (v < lo) lo = v;  // char_traits<char> compares as unsigned char, as Parquet wants
        if (hi < v) hi = v;
      }
      if (lo.size() <= kMaxStatisticsBytes && hi.size() <= kMaxStatisticsBytes) {
        s.min_value = std::string(lo);
        s.max_value = std::string(hi);
        s.is_min_value_exact = true;
        s.is_max_value_exact = true;
      }
    }
    md.statistics = s;
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
      if (v1 > v0) {
        body.push_back(static_cast<char>(bit_width));
        rle_encode(indices.data() + v0, v1 - v0, bit_width, &body);
      }
      pages.data_page(body, p1 - p0, fmt::encoding::kRleDictionary);
    } else {
      encode_plain_byte_arrays(all, present.data() + v0, v1 - v0, &body, fixed);
      pages.data_page(body, p1 - p0, fmt::encoding::kPlain);
    }
    v0 = v1;
    p0 = p1;
  }
  if (use_dict) {
    md.encodings = {fmt::encoding::kPlain, fmt::encoding::kRle, fmt::encoding::kRleDictionary};
  } else {
    md.encodings = {fmt::encoding::kPlain, fmt::encoding::kRle};
  }
  return chunk;
}

EncodedChunk encode_chunk(const Column& col, int64_t r0, int64_t r1, const WriteOptions& options) {
  ChunkShape shape;
  make_shape(col, r0, r1, &shape);
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
  fmt::ColumnMetaData& md = chunk.md;
  md.type = *to_schema_element(col.schema).type;
  md.path_in_schema = path_in_schema(col.schema);
  md.codec = codec_to_thrift(options.codec);
  md.num_values = shape.entries;  // level entries: for a list, its elements, null lists and empty lists
  return chunk;
}

// A list column's offsets, validity and element validity describe its values (Column's contract, table.h), at
// every level of a list of lists; checked before anything reads them.
void validate_list(const Column& col, int64_t rows) {
  const std::string where = column_where(col);
  const int depth = col.schema.list_depth();
  // Two schema elements a level: deeper lists would make a schema that readers refuse as hostile (feedline's
  // at 64 levels of nesting), and levels past uint8_t.
  constexpr int kMaxListDepth = 30;
  if (depth > kMaxListDepth) {
    throw InvalidArgument(where + " nests lists " + std::to_string(depth) + " deep; at most " +
                          std::to_string(kMaxListDepth) + " are written");
  }
  if (col.inner_lists.size() != static_cast<size_t>(depth - 1)) {
    throw InvalidArgument(where + ": inner_lists holds " + std::to_string(col.inner_lists.size()) +
                          " levels, its schema " + std::to_string(depth - 1));
  }
  const int64_t elements = std::visit([](const auto& v) { return static_cast<int64_t>(v.size()); }, col.values);
  const ListLevels levels(col);
  int64_t lists = rows;  // at level k
  for (int k = 0; k < depth; ++k) {
    const std::string name = k == 0 ? "list_offsets" : "inner_lists[" + std::to_string(k - 1) + "].offsets";
    const std::string what = k == 0 ? "rows" : "lists";
    const std::vector<int64_t>& offsets = levels.offsets(k);
    if (static_cast<int64_t>(offsets.size()) != lists + 1) {
      throw InvalidArgument(where + ": " + name + " holds " + std::to_string(offsets.size()) + " entries for " +
                            std::to_string(lists) + " " + what + " (" + what + " + 1 needed)");
    }
    if (offsets.front() != 0) {
      throw InvalidArgument(where + ": " + name + " starts at " + std::to_string(offsets.front()) + ", not 0");
    }
    for (int64_t i = 0; i < lists; ++i) {
      if (offsets[static_cast<size_t>(i + 1)] < offsets[static_cast<size_t>(i)]) {
        throw InvalidArgument(where + ": " + name + " decreases at " + (k == 0 ? "row " : "list ") +
                              std::to_string(i));
      }
    }
    const std::vector<uint8_t>& valid = levels.validity(k);
    // The rows' validity is checked with the flat columns' (its size, its bytes, nulls in a required column).
    if (k > 0 && !valid.empty()) {
      const std::string vname = "inner_lists[" + std::to_string(k - 1) + "].validity";
      if (static_cast<int64_t>(valid.size()) != lists) {
        throw InvalidArgument(where + ": " + vname + " holds " + std::to_string(valid.size()) + " entries for " +
                              std::to_string(lists) + " lists");
      }
      for (int64_t i = 0; i < lists; ++i) {
        const uint8_t v = valid[static_cast<size_t>(i)];
        if (v > 1) throw InvalidArgument(where + ": " + vname + " bytes must be 0 or 1");
        if (v == 0 && !levels.nullable(k)) {
          throw InvalidArgument(where + ": its lists at level " + std::to_string(k + 1) +
                                " are not nullable but list " + std::to_string(i) + " is null");
        }
      }
    }
    if (static_cast<int64_t>(valid.size()) == lists) {  // a null list holds nothing
      for (int64_t i = 0; i < lists; ++i) {
        const int64_t size = offsets[static_cast<size_t>(i + 1)] - offsets[static_cast<size_t>(i)];
        if (valid[static_cast<size_t>(i)] == 0 && size != 0) {
          throw InvalidArgument(where + (k == 0 ? " row " : " level " + std::to_string(k + 1) + " list ") +
                                std::to_string(i) + " is a null list holding " + std::to_string(size) +
                                (k + 1 < depth ? " lists" : " elements"));
        }
      }
    }
    lists = offsets.back();
  }
  if (lists != elements) {
    throw InvalidArgument(where + ": " + (depth == 1 ? "list_offsets" : "inner_lists[" + std::to_string(depth - 2) +
                                                                           "].offsets") +
                          " ends at " + std::to_string(lists) + ", its values hold " + std::to_string(elements) +
                          " elements");
  }
  const std::vector<uint8_t>& ev = col.element_validity;
  if (!ev.empty()) {
    if (static_cast<int64_t>(ev.size()) != elements) {
      throw InvalidArgument(where + ": element_validity holds " + std::to_string(ev.size()) + " entries for " +
                            std::to_string(elements) + " elements");
    }
    for (size_t e = 0; e < ev.size(); ++e) {
      if (ev[e] > 1) throw InvalidArgument(where + ": element_validity bytes must be 0 or 1");
      if (ev[e] == 0 && !col.schema.element_nullable) {
        throw InvalidArgument(where + ": its elements are not nullable but element " + std::to_string(e) + " is null");
      }
    }
  }
}

void validate(const Table& table, const WriteOptions& options) {
  if (table.num_rows < 0) throw InvalidArgument("table has a negative row count");
  std::set<std::string> names;
  for (const Column& col : table.columns) {
    const ColumnSchema& s = col.schema;
    const std::string where = column_where(col);
    if (!names.insert(s.name).second) throw InvalidArgument(where + " appears twice");
    if (col.values.index() != value_index(s.type)) {
      throw InvalidArgument(where + ": values do not match its type " + to_string(s.type));
    }
    if (s.is_list) validate_list(col, table.num_rows);
    if (col.size() != table.num_rows) {
      throw InvalidArgument(where + " holds " + std::to_string(col.size()) + " values for " +
                            std::to_string(table.num_rows) + " rows");
    }
    if (value_index(s.type) == value_index(PhysicalType::kByteArray)) {
      const ByteArrays& b = col.byte_arrays();
      if (b.offsets.empty() || b.offsets.front() != 0 || b.offsets.back() != static_cast<int64_t>(b.bytes.size()) ||
          !std::is_sorted(b.offsets.begin(), b.offsets.end())) {
        throw InvalidArgument(where + ": byte array offsets are inconsistent");
      }
    }
    if (s.type == PhysicalType::kFixedLenByteArray) {
      if (s.type_length < 1 || s.type_length > kMaxTypeLength) {
        throw InvalidArgument(where + ": FIXED_LEN_BYTE_ARRAY needs a type_length from 1 to " +
                              std::to_string(kMaxTypeLength) + ", got " + std::to_string(s.type_length));
      }
      const ByteArrays& b = col.byte_arrays();
      // A flat column's values are its rows, a list's its elements; a null one holds no bytes.
      const std::vector<uint8_t>& valid = s.is_list ? col.element_validity : col.validity;
      for (int64_t r = 0; r < b.size(); ++r) {
        const auto len = static_cast<int64_t>(b.at(r).size());
        const bool null = static_cast<int64_t>(valid.size()) == b.size() && valid[r] == 0;
        if (len != s.type_length && !null) {
          throw InvalidArgument(where + (s.is_list ? " element " : " row ") + std::to_string(r) + " holds " +
                                std::to_string(len) + " bytes, its FIXED_LEN_BYTE_ARRAY type_length is " +
                                std::to_string(s.type_length));
        }
      }
    }
    if (!col.validity.empty()) {
      if (static_cast<int64_t>(col.validity.size()) != table.num_rows) {
        throw InvalidArgument(where + ": validity holds " + std::to_string(col.validity.size()) + " entries for " +
                              std::to_string(table.num_rows) + " rows");
      }
      if (!s.nullable && std::find(col.validity.begin(), col.validity.end(), 0) != col.validity.end()) {
        throw InvalidArgument(where + " is not nullable but holds nulls");
      }
      if (std::any_of(col.validity.begin(), col.validity.end(), [](uint8_t v) { return v > 1; })) {
        throw InvalidArgument(where + ": validity bytes must be 0 or 1");
      }
    }
    if (s.int_annotation) {
      const IntAnnotation& a = *s.int_annotation;
      const bool ok = (s.type == PhysicalType::kInt32 && (a.bit_width == 8 || a.bit_width == 16 || a.bit_width == 32)) ||
                      (s.type == PhysicalType::kInt64 && a.bit_width == 64);
      if (!ok) {
        throw InvalidArgument(where + ": INT(" + std::to_string(a.bit_width) + ") cannot annotate " + to_string(s.type));
      }
    }
    if (s.logical.kind != LogicalKind::kNone) {
      const LogicalAnnotation& a = s.logical;
      const bool bytes = s.type == PhysicalType::kByteArray ||
                         (s.type == PhysicalType::kFixedLenByteArray && s.type_length <= 16);
      bool ok = !s.int_annotation && !s.is_string;
      switch (a.kind) {
        case LogicalKind::kNone: break;
        case LogicalKind::kDate: ok = ok && s.type == PhysicalType::kInt32; break;
        case LogicalKind::kTime:
          ok = ok && s.type == (a.unit == TimeUnit::kMillis ? PhysicalType::kInt32 : PhysicalType::kInt64);
          break;
        case LogicalKind::kTimestamp: ok = ok && s.type == PhysicalType::kInt64; break;
        case LogicalKind::kDecimal:
          ok = ok && a.precision >= 1 && a.precision <= 38 && a.scale >= 0 && a.scale <= a.precision &&
               ((s.type == PhysicalType::kInt32 && a.precision <= 9) ||
                (s.type == PhysicalType::kInt64 && a.precision <= 18) || bytes);
          break;
        case LogicalKind::kFloat16: ok = ok && s.type == PhysicalType::kFixedLenByteArray && s.type_length == 2; break;
      }
      if (!ok) throw InvalidArgument(where + ": its logical type does not fit " + to_string(s.type));
    }
    if (s.is_string && s.type != PhysicalType::kByteArray) {
      throw InvalidArgument(where + ": only BYTE_ARRAY columns can be strings");
    }
  }
  if (options.row_group_rows < 1) throw InvalidArgument("row_group_rows must be at least 1");
  if (options.page_bytes < 1 || options.page_bytes > (int64_t{1} << 30)) {
    throw InvalidArgument("page_bytes must be between 1 and 1 GiB");
  }
  if (options.codec == Codec::kZstd &&
      (options.compression_level < ZSTD_minCLevel() || options.compression_level > ZSTD_maxCLevel())) {
    throw InvalidArgument("zstd compression level " + std::to_string(options.compression_level) + " out of range");
  }
  if (options.codec == Codec::kGzip && (options.compression_level < -1 || options.compression_level > 9)) {
    throw InvalidArgument("gzip compression level " + std::to_string(options.compression_level) + " out of range");
  }
}

// A column of the table handed to FileWriter::write() must be the writer's column: the same name, type,
// annotations and nullability, so that one footer describes every row group.
void check_same_schema(const std::string& path, const ColumnSchema& want, const ColumnSchema& got) {
  const std::string where = path + ": column '" + want.name + "'";
  if (got.name != want.name) throw InvalidArgument(where + ": the table has column '" + got.name + "' in its place");
  const bool same = got.type == want.type && got.type_length == want.type_length &&
                    got.int_annotation == want.int_annotation && got.is_string == want.is_string &&
                    got.logical == want.logical && got.is_list == want.is_list &&
                    got.element_nullable == want.element_nullable &&
                    got.inner_list_nullable == want.inner_list_nullable;
  if (!same) throw InvalidArgument(where + ": the table's column has another type or annotation than the file's");
  if (got.nullable != want.nullable) {
    throw InvalidArgument(where + (want.nullable ? ": the file's column is optional, the table's required"
                                                 : ": the file's column is required, the table's optional"));
  }
}

// A table of `schema`'s columns and no rows.
Table empty_table(const std::vector<ColumnSchema>& schema) {
  Table t;
  for (const ColumnSchema& s : schema) t.columns.push_back(make_column(s));
  return t;
}

}  // namespace

struct FileWriter::Impl {
  std::string path;
  std::vector<ColumnSchema> schema;
  WriteOptions options;
  AtomicFile out;
  fmt::FileMetaData md;
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
    fmt::RowGroup rg;
    rg.num_rows = r1 - r0;
    rg.file_offset = out.bytes_written();
    rg.ordinal = ordinal < INT16_MAX ? ordinal++ : std::optional<int16_t>();
    int64_t compressed = 0;
    for (EncodedChunk& chunk : chunks) {
      const int64_t at = out.bytes_written();
      fmt::ColumnChunk cc;
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
  fmt::FileMetaData& md = impl_->md;
  md.version = 2;
  md.created_by = kCreatedBy;
  fmt::SchemaElement root;
  root.name = "schema";
  root.num_children = static_cast<int32_t>(impl_->schema.size());
  md.schema.push_back(root);
  for (const ColumnSchema& s : impl_->schema) {
    for (fmt::SchemaElement& e : to_schema_elements(s)) md.schema.push_back(std::move(e));
    md.column_orders.push_back(1);  // TYPE_ORDER: min_value/max_value follow each type's order
  }
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
  fmt::write_file_metadata(tw, w.md);
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
