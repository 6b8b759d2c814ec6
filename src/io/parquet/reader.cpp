// Reads flat Parquet files into a Table: footer, schema, then every (row group, column) chunk decoded on a
// pool of threads straight into the Table's vectors.
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "feedline/error.h"
#include "feedline/file.h"
#include "feedline/parquet.h"
#include "io/parquet/codec.h"
#include "io/parquet/delta.h"
#include "io/parquet/dictionary.h"
#include "io/parquet/metadata.h"
#include "io/parquet/parallel.h"
#include "io/parquet/plain.h"
#include "io/parquet/rle.h"
#include "io/parquet/schema.h"

namespace feedline::parquet {
namespace {

namespace fmt = format;

constexpr int64_t kMaxPageBytes = int64_t{1} << 30;
constexpr int64_t kMaxDictionaryHeaderBytes = 100;
// Decoded output may exceed the file by this factor (RLE runs compress without bound), or reach kMinBudget.
constexpr int64_t kMaxExpansion = 1024;
constexpr int64_t kMinOutputBudget = int64_t{1} << 30;

// Rethrows the current feedline::Error with `prefix` in front, keeping its type.
[[noreturn]] void rethrow_with(const std::string& prefix) {
  try {
    throw;
  } catch (const Unsupported& e) {
    throw Unsupported(prefix + e.what());
  } catch (const InvalidFile& e) {
    throw InvalidFile(prefix + e.what());
  }
}

std::string read_whole(const std::string& path) {
  const int64_t size = file_size(path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw IoError(path + ": cannot open");
  std::string data(static_cast<size_t>(size), '\0');
  const size_t got = size == 0 ? 0 : std::fread(data.data(), 1, data.size(), f);
  std::fclose(f);
  if (got != data.size()) throw IoError(path + ": read failed (file changed while reading?)");
  return data;
}

struct ParsedFile {
  std::string path;
  std::string data;
  int64_t footer_start = 0;  // where the Thrift FileMetaData begins: column data must end before it
  fmt::FileMetaData md;
  std::vector<Leaf> leaves;
  bool old_parquet_mr = false;  // written by parquet-mr 1.2.8 or older, or one that does not say its version
};

// "parquet-mr version 1.2.8 (build ...)" or plain "parquet-mr": whether that version is below 1.2.9.
bool is_old_parquet_mr(const std::string& created_by) {
  const std::string prefix = "parquet-mr";
  if (created_by.compare(0, prefix.size(), prefix) != 0) return false;
  const size_t v = created_by.find("version ");
  if (v == std::string::npos) return true;
  int major = 0, minor = 0, patch = 0;
  if (std::sscanf(created_by.c_str() + v + 8, "%d.%d.%d", &major, &minor, &patch) < 1) return true;
  if (major != 1) return major < 1;
  if (minor != 2) return minor < 2;
  return patch < 9;
}

ParsedFile parse(const std::string& path) {
  ParsedFile f;
  f.path = path;
  f.data = read_whole(path);
  const int64_t size = static_cast<int64_t>(f.data.size());
  const auto* bytes = reinterpret_cast<const uint8_t*>(f.data.data());
  if (size < 12) throw InvalidFile(path + ": not a Parquet file (" + std::to_string(size) + " bytes)");
  if (std::memcmp(bytes, "PAR1", 4) != 0 && std::memcmp(bytes, "PARE", 4) != 0) {
    throw InvalidFile(path + ": not a Parquet file (no PAR1 magic at offset 0)");
  }
  if (std::memcmp(bytes + size - 4, "PARE", 4) == 0) {
    throw Unsupported(path + ": encrypted footer (PARE) is not supported");
  }
  if (std::memcmp(bytes + size - 4, "PAR1", 4) != 0) {
    throw InvalidFile(path + ": no PAR1 magic at the end (offset " + std::to_string(size - 4) + "): truncated?");
  }
  uint32_t footer_len;
  std::memcpy(&footer_len, bytes + size - 8, 4);
  if (footer_len > static_cast<uint64_t>(size - 12)) {
    throw InvalidFile(path + ": footer length " + std::to_string(footer_len) + " exceeds the file (" +
                      std::to_string(size) + " bytes)");
  }
  f.footer_start = size - 8 - footer_len;
  try {
    thrift::CompactReader in(bytes + f.footer_start, footer_len, f.footer_start);
    f.md = fmt::read_file_metadata(in);
  } catch (const Error&) {
    rethrow_with(path + ": footer: ");
  }
  if (f.md.encrypted) throw Unsupported(path + ": encrypted files are not supported");
  f.old_parquet_mr = is_old_parquet_mr(f.md.created_by.value_or(""));
  try {
    f.leaves = flat_leaves(f.md);
  } catch (const Error&) {
    rethrow_with(path + ": ");
  }
  // Row groups must agree with the schema and with each other.
  int64_t rows = 0;
  for (size_t g = 0; g < f.md.row_groups.size(); ++g) {
    const fmt::RowGroup& rg = f.md.row_groups[g];
    const std::string where = path + ": row group " + std::to_string(g) + ": ";
    if (rg.num_rows < 0) throw InvalidFile(where + "negative row count " + std::to_string(rg.num_rows));
    if (rg.columns.size() != f.leaves.size()) {
      throw InvalidFile(where + std::to_string(rg.columns.size()) + " column chunks for " +
                        std::to_string(f.leaves.size()) + " schema columns");
    }
    if (rg.num_rows > INT64_MAX - rows) throw InvalidFile(where + "row count overflows");
    rows += rg.num_rows;
  }
  if (rows != f.md.num_rows) {
    throw InvalidFile(path + ": footer declares " + std::to_string(f.md.num_rows) + " rows, row groups hold " +
                      std::to_string(rows));
  }
  return f;
}

// ---------------------------------------------------------------------------------------------------------
// One column chunk.

struct Scratch {
  std::vector<uint8_t> page;  // decompressed page
};

Scratch& scratch() {
  static thread_local Scratch s;
  return s;
}

// Where decoded values go: fixed-width columns write into a preallocated slice, byte arrays append.
template <class T>
struct FixedOut {
  T* values;
};

// A data page, v1 or v2, as the value decoder needs it.
struct PageData {
  int64_t num_values = 0;
  int32_t encoding = 0;
  int32_t definition_level_encoding = 0;  // v1: how the levels at the start of the body are encoded
  bool v2 = false;                        // v2: levels are RLE without a length prefix, outside the body
  const uint8_t* v2_levels = nullptr;
  size_t v2_levels_size = 0;
};

class ChunkReader {
 public:
  ChunkReader(const ParsedFile& file, const Leaf& leaf, const fmt::ColumnChunk& chunk, int64_t num_rows,
              int64_t output_budget)
      : file_(file), leaf_(leaf), chunk_(chunk), num_rows_(num_rows), budget_(output_budget) {}

  // Decodes the chunk: values into `out` (a T* slice of num_rows, or a ByteArrays to append to) and, for
  // optional columns, validity bytes into validity[0..num_rows). Returns the number of nulls.
  template <class T, class Out>
  int64_t read(Out out, uint8_t* validity);

  int64_t page_offset() const { return page_offset_; }

 private:
  template <class T, class Out>
  void read_dictionary_page(const fmt::PageHeader& h, const uint8_t* body, size_t size);
  template <class T, class Out>
  int64_t read_data_page(const PageData& h, const uint8_t* body, size_t size, Out out, int64_t row,
                         uint8_t* validity);
  // Checks the page's sizes against the limits and its CRC when it has one.
  void check_crc(const fmt::PageHeader& h, const uint8_t* data) const;
  // The values of a page, decompressed into scratch unless stored plain (v2 pages may say is_compressed false).
  const uint8_t* values_body(const uint8_t* data, int64_t compressed, int64_t uncompressed, bool is_compressed,
                             size_t* size);
  // check_crc, then values_body of the whole page (data page v1, dictionary page).
  const uint8_t* page_body(const fmt::PageHeader& h, const uint8_t* data, size_t* size);

  const ParsedFile& file_;
  const Leaf& leaf_;
  const fmt::ColumnChunk& chunk_;
  int64_t num_rows_;
  int64_t budget_;
  Codec codec_ = Codec::kUncompressed;
  int64_t page_offset_ = -1;
  bool have_dictionary_ = false;
  // Only one of these is used, per the column's type.
  std::vector<uint8_t> dict_u8_;
  std::vector<int32_t> dict_i32_;
  std::vector<int64_t> dict_i64_;
  std::vector<float> dict_f32_;
  std::vector<double> dict_f64_;
  ByteArrays dict_bytes_;

  template <class T>
  auto& dictionary() {
    if constexpr (std::is_same_v<T, uint8_t>) return dict_u8_;
    else if constexpr (std::is_same_v<T, int32_t>) return dict_i32_;
    else if constexpr (std::is_same_v<T, int64_t>) return dict_i64_;
    else if constexpr (std::is_same_v<T, float>) return dict_f32_;
    else if constexpr (std::is_same_v<T, double>) return dict_f64_;
    else return dict_bytes_;
  }
};

void ChunkReader::check_crc(const fmt::PageHeader& h, const uint8_t* data) const {
  if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0) throw InvalidFile("negative page size");
  if (h.uncompressed_page_size > kMaxPageBytes) {
    throw InvalidFile("page of " + std::to_string(h.uncompressed_page_size) + " bytes exceeds the limit");
  }
  if (h.crc) {
    const uint32_t crc = static_cast<uint32_t>(
        crc32(crc32(0L, Z_NULL, 0), data, static_cast<uInt>(h.compressed_page_size)));
    if (crc != static_cast<uint32_t>(*h.crc)) throw InvalidFile("page checksum mismatch");
  }
}

const uint8_t* ChunkReader::values_body(const uint8_t* data, int64_t compressed, int64_t uncompressed,
                                        bool is_compressed, size_t* size) {
  *size = static_cast<size_t>(uncompressed);
  if (codec_ == Codec::kUncompressed || !is_compressed) {
    if (compressed != uncompressed) {
      throw InvalidFile("uncompressed page sizes differ (" + std::to_string(compressed) + " vs " +
                        std::to_string(uncompressed) + ")");
    }
    return data;  // no copy
  }
  std::vector<uint8_t>& buf = scratch().page;
  // Pad so that fixed-width unpacking may read a little past the end.
  if (buf.size() < *size + 16) buf.resize(*size + 16);
  decompress(codec_, data, static_cast<size_t>(compressed), buf.data(), *size);
  return buf.data();
}

const uint8_t* ChunkReader::page_body(const fmt::PageHeader& h, const uint8_t* data, size_t* size) {
  check_crc(h, data);
  return values_body(data, h.compressed_page_size, h.uncompressed_page_size, true, size);
}

template <class T, class Out>
int64_t ChunkReader::read(Out out, uint8_t* validity) {
  if (chunk_.file_path) throw Unsupported("column data in another file ('" + *chunk_.file_path + "')");
  if (chunk_.encrypted && !chunk_.meta_data) throw Unsupported("encrypted column");
  if (!chunk_.meta_data) throw InvalidFile("column chunk lacks its metadata");
  const fmt::ColumnMetaData& md = *chunk_.meta_data;
  if (md.type != leaf_.physical_type) {
    throw InvalidFile(std::string("chunk type ") + fmt::type_name(md.type) + " differs from the schema's " +
                      fmt::type_name(leaf_.physical_type));
  }
  codec_ = codec_from_thrift(md.codec);
  if (md.num_values != num_rows_) {
    throw InvalidFile("chunk holds " + std::to_string(md.num_values) + " values for " + std::to_string(num_rows_) +
                      " rows");
  }
  if (num_rows_ == 0) return 0;  // some writers leave the offsets of empty chunks at 0
  // Where the chunk starts: the dictionary page if there is one before the data pages. Writers disagree on
  // dictionary_page_offset (absent, 0, or pointing at the data page), so pages are told apart by their type.
  int64_t start = md.data_page_offset;
  if (md.dictionary_page_offset && *md.dictionary_page_offset > 0 && *md.dictionary_page_offset < start) {
    start = *md.dictionary_page_offset;
  }
  const int64_t limit = file_.footer_start;
  if (start < 4 || start >= limit) throw InvalidFile("chunk offset " + std::to_string(start) + " outside the file");
  if (md.total_compressed_size < 0) throw InvalidFile("negative chunk size");
  int64_t length = md.total_compressed_size;
  // parquet-mr up to 1.2.8 left the dictionary page header out of total_compressed_size (PARQUET-816,
  // IMPALA-694): allow for one such header.
  if (file_.old_parquet_mr) length += kMaxDictionaryHeaderBytes;
  const int64_t end = length > limit - start ? limit : start + length;

  const auto* base = reinterpret_cast<const uint8_t*>(file_.data.data());
  int64_t pos = start;
  int64_t row = 0;
  int64_t nulls = 0;
  while (row < num_rows_) {
    if (pos >= end) {
      page_offset_ = pos;
      throw InvalidFile("chunk ends after " + std::to_string(row) + " of " + std::to_string(num_rows_) + " values");
    }
    page_offset_ = pos;
    thrift::CompactReader in(base + pos, static_cast<size_t>(end - pos), pos);
    const fmt::PageHeader h = fmt::read_page_header(in);
    pos += static_cast<int64_t>(in.position());
    if (h.compressed_page_size < 0 || h.compressed_page_size > end - pos) {
      throw InvalidFile("page of " + std::to_string(h.compressed_page_size) + " bytes runs past the chunk");
    }
    const uint8_t* data = base + pos;
    pos += h.compressed_page_size;
    switch (h.type) {
      case fmt::page_type::kDictionaryPage: {
        if (!h.dictionary_page_header) throw InvalidFile("dictionary page without its header");
        if (have_dictionary_) throw InvalidFile("second dictionary page");
        if (row > 0) throw InvalidFile("dictionary page after data pages");
        size_t size;
        const uint8_t* body = page_body(h, data, &size);
        read_dictionary_page<T, Out>(h, body, size);
        break;
      }
      case fmt::page_type::kDataPage: {
        if (!h.data_page_header) throw InvalidFile("data page without its header");
        const int32_t n = h.data_page_header->num_values;
        if (n < 0 || n > num_rows_ - row) {
          throw InvalidFile("data page of " + std::to_string(n) + " values where " +
                            std::to_string(num_rows_ - row) + " remain");
        }
        size_t size;
        const uint8_t* body = page_body(h, data, &size);
        PageData page;
        page.num_values = n;
        page.encoding = h.data_page_header->encoding;
        page.definition_level_encoding = h.data_page_header->definition_level_encoding;
        nulls += read_data_page<T, Out>(page, body, size, out, row, validity);
        row += n;
        break;
      }
      case fmt::page_type::kDataPageV2: {
        if (!h.data_page_header_v2) throw InvalidFile("data page v2 without its header");
        const fmt::DataPageHeaderV2& v2 = *h.data_page_header_v2;
        const int32_t n = v2.num_values;
        if (n < 0 || n > num_rows_ - row || v2.num_rows != n) {
          throw InvalidFile("data page v2 of " + std::to_string(n) + " values and " + std::to_string(v2.num_rows) +
                            " rows where " + std::to_string(num_rows_ - row) + " remain");
        }
        if (v2.repetition_levels_byte_length != 0) throw InvalidFile("repetition levels in a flat column");
        const int64_t levels = v2.definition_levels_byte_length;
        if (levels < 0 || levels > h.compressed_page_size || levels > h.uncompressed_page_size ||
            (leaf_.max_def == 0 && levels != 0)) {
          throw InvalidFile("data page v2 definition levels of " + std::to_string(levels) + " bytes");
        }
        check_crc(h, data);
        PageData page;
        page.num_values = n;
        page.encoding = v2.encoding;
        page.v2 = true;
        page.v2_levels = data;
        page.v2_levels_size = static_cast<size_t>(levels);
        size_t size;
        const uint8_t* body = values_body(data + levels, h.compressed_page_size - levels,
                                          h.uncompressed_page_size - levels, v2.is_compressed, &size);
        nulls += read_data_page<T, Out>(page, body, size, out, row, validity);
        row += n;
        break;
      }
      case fmt::page_type::kIndexPage:
        break;  // nothing we need
      default:
        throw InvalidFile("unknown page type " + std::to_string(h.type));
    }
  }
  return nulls;
}

template <class T, class Out>
void ChunkReader::read_dictionary_page(const fmt::PageHeader& h, const uint8_t* body, size_t size) {
  const fmt::DictionaryPageHeader& d = *h.dictionary_page_header;
  if (d.encoding != fmt::encoding::kPlain && d.encoding != fmt::encoding::kPlainDictionary) {
    throw Unsupported(std::string("dictionary page encoding ") + fmt::encoding_name(d.encoding));
  }
  if (d.num_values < 0) throw InvalidFile("negative dictionary size");
  auto& dict = dictionary<T>();
  if constexpr (std::is_same_v<T, ByteArrays>) {
    dict = ByteArrays();
    decode_plain_byte_arrays(body, size, d.num_values, &dict, size, leaf_.schema.type_length);
  } else {
    // Each value takes at least sizeof(T) bytes (a bit for booleans), so the page bounds the count.
    const uint64_t max_values = std::is_same_v<T, uint8_t> ? uint64_t{size} * 8 : size / sizeof(T);
    if (static_cast<uint64_t>(d.num_values) > max_values) {
      throw InvalidFile("dictionary of " + std::to_string(d.num_values) + " values in " + std::to_string(size) +
                        " bytes");
    }
    dict.resize(static_cast<size_t>(d.num_values));
    if constexpr (std::is_same_v<T, uint8_t>) {
      decode_plain_bool(body, size, d.num_values, dict.data());
    } else {
      decode_plain(body, size, d.num_values, dict.data());
    }
  }
  have_dictionary_ = true;
}

// Fills validity[0..n) from the page's definition levels; returns how many values are present.
int64_t read_levels(int32_t encoding, const uint8_t*& p, const uint8_t* end, int64_t n, uint8_t* validity) {
  if (encoding == fmt::encoding::kRle) {
    if (end - p < 4) throw InvalidFile("definition levels truncated");
    uint32_t len;
    std::memcpy(&len, p, 4);
    p += 4;
    if (len > static_cast<uint64_t>(end - p)) throw InvalidFile("definition levels run past the page");
    RleBitPackedDecoder dec(p, len, 1);
    LevelSink sink{validity};
    dec.decode(n, sink);
    p += len;
    return sink.present;
  }
  if (encoding == fmt::encoding::kBitPacked) {
    // Deprecated BIT_PACKED: most significant bit first, no length prefix.
    const size_t bytes = (static_cast<size_t>(n) + 7) / 8;
    if (bytes > static_cast<size_t>(end - p)) throw InvalidFile("definition levels truncated");
    int64_t present = 0;
    for (int64_t i = 0; i < n; ++i) {
      validity[i] = (p[i / 8] >> (7 - i % 8)) & 1;
      present += validity[i];
    }
    p += bytes;
    return present;
  }
  throw Unsupported(std::string("definition level encoding ") + fmt::encoding_name(encoding));
}

// Moves `present` packed values at out[0..present) to their rows, zeroing null rows, back to front in place.
template <class T>
void spread(T* out, const uint8_t* validity, int64_t n, int64_t present) {
  int64_t k = present;
  for (int64_t i = n - 1; i >= 0; --i) {
    if (validity[i]) {
      out[i] = out[--k];
    } else {
      out[i] = T{};
    }
  }
}

void spread_byte_arrays(ByteArrays* out, size_t base, const uint8_t* validity, int64_t n, int64_t present) {
  // offsets[base - 1] is where the page's first value starts; offsets[base .. base + present) end each value.
  auto& off = out->offsets;
  off.resize(base + static_cast<size_t>(n));
  int64_t k = present;
  for (int64_t i = n - 1; i >= 0; --i) {
    off[base + static_cast<size_t>(i)] = off[base - 1 + static_cast<size_t>(k)];
    if (validity[i]) --k;
  }
}

template <class T, class Out>
int64_t ChunkReader::read_data_page(const PageData& h, const uint8_t* body, size_t size, Out out, int64_t row,
                                    uint8_t* validity) {
  const int64_t n = h.num_values;
  const uint8_t* p = body;
  const uint8_t* end = body + size;
  int64_t present = n;
  uint8_t* page_validity = nullptr;
  if (leaf_.max_def == 1) {
    page_validity = validity + row;
    if (h.v2) {
      RleBitPackedDecoder dec(h.v2_levels, h.v2_levels_size, 1);
      LevelSink sink{page_validity};
      dec.decode(n, sink);
      present = sink.present;
    } else {
      present = read_levels(h.definition_level_encoding, p, end, n, page_validity);
    }
  }
  const size_t remaining = static_cast<size_t>(end - p);

  size_t bytes_base = 0;
  T* dst = nullptr;
  if constexpr (std::is_same_v<T, ByteArrays>) {
    bytes_base = out->offsets.size();
  } else {
    dst = out.values + row;
  }

  switch (h.encoding) {
    case fmt::encoding::kPlain:
      if constexpr (std::is_same_v<T, ByteArrays>) {
        decode_plain_byte_arrays(p, remaining, present, out, static_cast<size_t>(budget_), leaf_.schema.type_length);
      } else if constexpr (std::is_same_v<T, uint8_t>) {
        decode_plain_bool(p, remaining, present, dst);
      } else {
        decode_plain(p, remaining, present, dst);
      }
      break;
    case fmt::encoding::kPlainDictionary:
    case fmt::encoding::kRleDictionary: {
      if (!have_dictionary_) throw InvalidFile("dictionary-encoded page without a dictionary page");
      if (present == 0) break;
      if (remaining < 1) throw InvalidFile("dictionary indices missing");
      const int bit_width = p[0];
      if (bit_width > 32) throw InvalidFile("dictionary index bit width " + std::to_string(bit_width));
      RleBitPackedDecoder dec(p + 1, remaining - 1, bit_width);
      if constexpr (std::is_same_v<T, ByteArrays>) {
        ByteArrayDictionaryGather sink{&dict_bytes_, out, static_cast<size_t>(budget_)};
        out->offsets.reserve(out->offsets.size() + static_cast<size_t>(present));
        dec.decode(present, sink);
      } else {
        const auto& dict = dictionary<T>();
        DictionaryGather<T> sink{dict.data(), static_cast<uint32_t>(dict.size()), dst};
        dec.decode(present, sink);
      }
      break;
    }
    case fmt::encoding::kDeltaBinaryPacked:
      if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
        decode_delta_binary_packed(p, remaining, present, dst);
        break;
      }
      throw InvalidFile("DELTA_BINARY_PACKED on a " + std::string(to_string(leaf_.schema.type)) + " column");
    case fmt::encoding::kDeltaLengthByteArray:
      if constexpr (std::is_same_v<T, ByteArrays>) {
        if (leaf_.schema.type == PhysicalType::kByteArray) {
          decode_delta_length_byte_arrays(p, remaining, present, out, static_cast<size_t>(budget_));
          break;
        }
      }
      throw InvalidFile("DELTA_LENGTH_BYTE_ARRAY on a " + std::string(to_string(leaf_.schema.type)) + " column");
    case fmt::encoding::kDeltaByteArray:
      if constexpr (std::is_same_v<T, ByteArrays>) {
        decode_delta_byte_arrays(p, remaining, present, out, static_cast<size_t>(budget_), leaf_.schema.type_length);
        break;
      }
      throw InvalidFile("DELTA_BYTE_ARRAY on a " + std::string(to_string(leaf_.schema.type)) + " column");
    case fmt::encoding::kByteStreamSplit:
      if constexpr (std::is_same_v<T, ByteArrays>) {
        if (leaf_.schema.type == PhysicalType::kFixedLenByteArray) {
          const auto width = static_cast<size_t>(leaf_.schema.type_length);
          if (present > 0 && static_cast<uint64_t>(present) > remaining / width) {
            throw InvalidFile("BYTE_STREAM_SPLIT data holds " + std::to_string(remaining / width) +
                              " values, page declares " + std::to_string(present));
          }
          const size_t at = out->bytes.size();
          if (at + static_cast<size_t>(present) * width > static_cast<size_t>(budget_)) {
            throw InvalidFile("byte arrays exceed the size limit");
          }
          out->bytes.resize(at + static_cast<size_t>(present) * width);
          decode_byte_stream_split(p, remaining, present, width, reinterpret_cast<uint8_t*>(out->bytes.data() + at));
          int64_t end = out->offsets.back();
          for (int64_t i = 0; i < present; ++i) out->offsets.push_back(end += leaf_.schema.type_length);
          break;
        }
      } else if constexpr (!std::is_same_v<T, uint8_t>) {
        decode_byte_stream_split(p, remaining, present, sizeof(T), reinterpret_cast<uint8_t*>(dst));
        break;
      }
      throw InvalidFile("BYTE_STREAM_SPLIT on a " + std::string(to_string(leaf_.schema.type)) + " column");
    case fmt::encoding::kRle:
      if constexpr (std::is_same_v<T, uint8_t>) {
        // Booleans as RLE with a 4-byte length, bit width 1.
        if (remaining < 4) throw InvalidFile("RLE booleans truncated");
        uint32_t len;
        std::memcpy(&len, p, 4);
        if (len > remaining - 4) throw InvalidFile("RLE booleans run past the page");
        RleBitPackedDecoder dec(p + 4, len, 1);
        LevelSink sink{dst};
        dec.decode(present, sink);
        break;
      }
      [[fallthrough]];
    default:
      throw Unsupported(std::string("encoding ") + fmt::encoding_name(h.encoding) + " (" +
                        std::to_string(h.encoding) + ")");
  }

  if (present < n) {
    if constexpr (std::is_same_v<T, ByteArrays>) {
      spread_byte_arrays(out, bytes_base, page_validity, n, present);
    } else {
      spread(dst, page_validity, n, present);
    }
  }
  return n - present;
}

// ---------------------------------------------------------------------------------------------------------

int64_t value_width(PhysicalType t) {
  switch (t) {
    case PhysicalType::kBoolean: return 1;
    case PhysicalType::kInt32:
    case PhysicalType::kFloat: return 4;
    case PhysicalType::kInt64:
    case PhysicalType::kDouble: return 8;
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: return 8;  // the offset
  }
  return 8;
}

// INT96 timestamps (8 bytes of nanoseconds in the day, then the Julian day as a 4-byte signed integer, as Spark
// and Impala write it; little-endian) as INT64 microseconds since the epoch, rounded down. A value beyond INT64
// microseconds is refused rather than wrapped into a wrong date.
Column int96_to_micros(Column col, const Leaf& leaf, const std::string& path) {
  const ByteArrays& raw = col.byte_arrays();
  std::vector<int64_t> micros(static_cast<size_t>(raw.size()));
  for (int64_t r = 0; r < raw.size(); ++r) {
    const std::string_view v = raw.at(r);
    if (v.size() != 12) continue;  // a null
    int64_t nanos;
    int32_t julian;
    std::memcpy(&nanos, v.data(), 8);
    std::memcpy(&julian, v.data() + 8, 4);
    constexpr int64_t kUnixEpochJulianDay = 2440588, kMicrosPerDay = 86'400'000'000;
    __int128 us = static_cast<__int128>(static_cast<int64_t>(julian) - kUnixEpochJulianDay) * kMicrosPerDay;
    us += nanos >= 0 ? nanos / 1000 : -((-(nanos + 1)) / 1000) - 1;
    if (us > INT64_MAX || us < INT64_MIN) {
      throw InvalidFile(path + ": column '" + leaf.name + "' row " + std::to_string(r) +
                        ": INT96 timestamp (Julian day " + std::to_string(julian) + ", " + std::to_string(nanos) +
                        " ns) beyond the range of 64-bit microseconds");
    }
    micros[static_cast<size_t>(r)] = static_cast<int64_t>(us);
  }
  Column out = make_column(output_schema(leaf));
  out.values = std::move(micros);
  out.validity = std::move(col.validity);
  return out;
}

void check_leaf_supported(const ParsedFile& f, const Leaf& leaf) {
  if (!leaf.unsupported.empty()) throw Unsupported(f.path + ": column '" + leaf.name + "': " + leaf.unsupported);
}

}  // namespace

Table read_table(const std::string& path, const ReadOptions& options) {
  const ParsedFile f = parse(path);

  // Which leaves, in the order asked for.
  std::vector<size_t> selected;
  if (options.columns.empty()) {
    for (size_t i = 0; i < f.leaves.size(); ++i) selected.push_back(i);
  } else {
    std::unordered_map<std::string, size_t> by_name;
    for (size_t i = 0; i < f.leaves.size(); ++i) by_name.emplace(f.leaves[i].name, i);
    for (const std::string& name : options.columns) {
      auto it = by_name.find(name);
      if (it == by_name.end()) throw InvalidArgument(path + ": no column named '" + name + "'");
      if (std::find(selected.begin(), selected.end(), it->second) != selected.end()) {
        throw InvalidArgument(path + ": column '" + name + "' asked for twice");
      }
      selected.push_back(it->second);
    }
  }
  for (size_t leaf : selected) check_leaf_supported(f, f.leaves[leaf]);

  const int64_t num_rows = f.md.num_rows;
  const int64_t budget =
      std::max(kMinOutputBudget, static_cast<int64_t>(f.data.size()) * kMaxExpansion);
  {
    // A small hostile file must not make us allocate without bound: fixed-width output counts against budget.
    int64_t need = 0;
    for (size_t leaf : selected) {
      const int64_t w = value_width(f.leaves[leaf].schema.type) + (f.leaves[leaf].max_def ? 1 : 0);
      if (num_rows > (budget - need) / w) {
        throw InvalidFile(path + ": " + std::to_string(num_rows) + " rows of " + std::to_string(selected.size()) +
                          " columns would exceed the memory limit for a file of " + std::to_string(f.data.size()) +
                          " bytes");
      }
      need += num_rows * w;
    }
  }

  Table table;
  table.num_rows = num_rows;
  table.columns.resize(selected.size());
  const int threads = resolve_threads(options.num_threads);

  // Allocate (and so touch) the output in parallel: for wide tables this is a good share of the work.
  parallel_for(selected.size(), threads, [&](size_t c) {
    const Leaf& leaf = f.leaves[selected[c]];
    Column& col = table.columns[c];
    col = make_column(leaf.schema);
    std::visit(
        [&](auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (!std::is_same_v<V, ByteArrays>) v.resize(static_cast<size_t>(num_rows));
        },
        col.values);
    if (leaf.max_def == 1) col.validity.resize(static_cast<size_t>(num_rows));
  });

  std::vector<int64_t> rg_first_row(f.md.row_groups.size() + 1, 0);
  for (size_t g = 0; g < f.md.row_groups.size(); ++g) {
    rg_first_row[g + 1] = rg_first_row[g] + f.md.row_groups[g].num_rows;
  }
  const size_t num_groups = f.md.row_groups.size();
  // Byte arrays decode per chunk into their own buffers, joined afterwards (unless there is one row group).
  std::vector<ByteArrays> byte_parts;
  std::vector<size_t> byte_part_of(selected.size(), SIZE_MAX);
  if (num_groups > 1) {
    size_t parts = 0;
    for (size_t c = 0; c < selected.size(); ++c) {
      if (value_index(f.leaves[selected[c]].schema.type) == value_index(PhysicalType::kByteArray)) {
        byte_part_of[c] = parts++;
      }
    }
    byte_parts.resize(parts * num_groups);
  }
  std::vector<int64_t> nulls(selected.size() * num_groups, 0);

  parallel_for(selected.size() * num_groups, threads, [&](size_t task) {
    // Column-major task order: one column's row groups run back to back, which keeps byte arrays in order.
    const size_t c = task / num_groups, g = task % num_groups;
    const Leaf& leaf = f.leaves[selected[c]];
    Column& col = table.columns[c];
    const int64_t rows = f.md.row_groups[g].num_rows;
    const int64_t first = rg_first_row[g];
    ChunkReader reader(f, leaf, f.md.row_groups[g].columns[leaf.index], rows, budget);
    uint8_t* validity = leaf.max_def == 1 ? col.validity.data() + first : nullptr;
    try {
      int64_t n = 0;
      switch (leaf.schema.type) {
        case PhysicalType::kBoolean: n = reader.read<uint8_t>(FixedOut<uint8_t>{col.as<uint8_t>().data() + first}, validity); break;
        case PhysicalType::kInt32: n = reader.read<int32_t>(FixedOut<int32_t>{col.as<int32_t>().data() + first}, validity); break;
        case PhysicalType::kInt64: n = reader.read<int64_t>(FixedOut<int64_t>{col.as<int64_t>().data() + first}, validity); break;
        case PhysicalType::kFloat: n = reader.read<float>(FixedOut<float>{col.as<float>().data() + first}, validity); break;
        case PhysicalType::kDouble: n = reader.read<double>(FixedOut<double>{col.as<double>().data() + first}, validity); break;
        case PhysicalType::kByteArray:
        case PhysicalType::kFixedLenByteArray: {
          ByteArrays* out = num_groups > 1 ? &byte_parts[byte_part_of[c] * num_groups + g]
                                           : &std::get<ByteArrays>(col.values);
          n = reader.read<ByteArrays>(out, validity);
          break;
        }
      }
      nulls[task] = n;
    } catch (const Error&) {
      std::string where = path + ": column '" + leaf.name + "', row group " + std::to_string(g);
      if (reader.page_offset() >= 0) where += ", page at offset " + std::to_string(reader.page_offset());
      rethrow_with(where + ": ");
    }
  });

  for (size_t c = 0; c < selected.size(); ++c) {
    Column& col = table.columns[c];
    if (byte_part_of[c] != SIZE_MAX) {
      ByteArrays& dst = std::get<ByteArrays>(col.values);
      size_t total = 0;
      for (size_t g = 0; g < num_groups; ++g) total += byte_parts[byte_part_of[c] * num_groups + g].bytes.size();
      dst.bytes.reserve(total);
      dst.offsets.reserve(static_cast<size_t>(num_rows) + 1);
      for (size_t g = 0; g < num_groups; ++g) {
        ByteArrays& part = byte_parts[byte_part_of[c] * num_groups + g];
        const int64_t shift = static_cast<int64_t>(dst.bytes.size());
        dst.bytes.append(part.bytes);
        for (size_t i = 1; i < part.offsets.size(); ++i) dst.offsets.push_back(part.offsets[i] + shift);
        part = ByteArrays();
      }
    }
    int64_t col_nulls = 0;
    for (size_t g = 0; g < num_groups; ++g) col_nulls += nulls[c * num_groups + g];
    if (col_nulls == 0) std::vector<uint8_t>().swap(col.validity);
    if (f.leaves[selected[c]].int96) col = int96_to_micros(std::move(col), f.leaves[selected[c]], path);
  }
  return table;
}

FileInfo read_file_info(const std::string& path) {
  const ParsedFile f = parse(path);
  FileInfo info;
  info.num_rows = f.md.num_rows;
  for (const Leaf& leaf : f.leaves) {
    check_leaf_supported(f, leaf);
    info.schema.push_back(output_schema(leaf));
  }
  for (const fmt::KeyValue& kv : f.md.key_value_metadata) info.key_value_metadata.emplace_back(kv.key, kv.value.value_or(""));
  info.created_by = f.md.created_by.value_or("");
  for (const fmt::RowGroup& rg : f.md.row_groups) {
    RowGroupInfo rgi;
    rgi.num_rows = rg.num_rows;
    for (size_t c = 0; c < rg.columns.size(); ++c) {
      const fmt::ColumnChunk& chunk = rg.columns[c];
      ColumnChunkInfo ci;
      if (chunk.meta_data) {
        const fmt::ColumnMetaData& md = *chunk.meta_data;
        std::string codec = fmt::codec_name(md.codec);
        for (char& ch : codec) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        ci.codec = codec;
        for (int32_t e : md.encodings) ci.encodings.emplace_back(fmt::encoding_name(e));
        ci.compressed_bytes = md.total_compressed_size;
        ci.uncompressed_bytes = md.total_uncompressed_size;
        if (md.statistics && !f.leaves[c].int96) {  // INT96 has no defined sort order
          const fmt::Statistics& s = *md.statistics;
          ci.null_count = s.null_count.value_or(-1);
          if (s.min_value && s.max_value) {
            ci.min = *s.min_value;
            ci.max = *s.max_value;
          } else if (s.min && s.max && legacy_statistics_usable(f.leaves[c])) {
            ci.min = *s.min;
            ci.max = *s.max;
          }
        }
      }
      rgi.columns.push_back(std::move(ci));
    }
    info.row_groups.push_back(std::move(rgi));
  }
  return info;
}

}  // namespace feedline::parquet
