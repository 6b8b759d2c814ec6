// A column chunk's bytes and pages: the chunk read from the file, each page's sizes and CRC checked, its values
// decompressed into this thread's scratch (a page over kMaxScratchBytes into a buffer of its own).
#include "io/parquet/pages.h"

#include <algorithm>
#include <string>

namespace feedline::parquet::detail {

void PageWalk::check_crc(const format::PageHeader& h, const uint8_t* data) const {
  if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0) throw InvalidFile("negative page size");
  if (h.uncompressed_page_size > budget_) {
    throw InvalidFile("page of " + std::to_string(h.uncompressed_page_size) +
                      " bytes exceeds the read's memory limit of " + std::to_string(budget_) + " bytes");
  }
  if (h.crc) {
    const uint32_t crc = crc32_of(data, static_cast<size_t>(h.compressed_page_size));
    if (crc != static_cast<uint32_t>(*h.crc)) throw InvalidFile("page checksum mismatch");
  }
}

const uint8_t* PageWalk::values_body(std::vector<uint8_t>* large, const uint8_t* data, int64_t compressed,
                                        int64_t uncompressed, bool is_compressed, size_t* size) const {
  *size = static_cast<size_t>(uncompressed);
  if (codec_ == Codec::kUncompressed || !is_compressed) {
    if (compressed != uncompressed) {
      throw InvalidFile("uncompressed page sizes differ (" + std::to_string(compressed) + " vs " +
                        std::to_string(uncompressed) + ")");
    }
    return data;  // no copy
  }
  // An empty values section (a v2 page of nulls alone, as Spark writes it): nothing was compressed, so there is no
  // codec frame to read, and no value to decode.
  if (compressed == 0 && uncompressed == 0) return data;
  uint8_t* buf = nullptr;
  if (uncompressed > kMaxScratchBytes) {
    if (large->size() < *size + kPadding) large->resize(*size + kPadding);
    buf = large->data();
  } else {
    size_scratch(scratch().page, *size + kPadding);
    buf = scratch().page.data();
  }
  decompress(codec_, data, static_cast<size_t>(compressed), buf, *size);
  return buf;
}

int64_t PageWalk::load() {
  if (chunk_.file_path) throw Unsupported("column data in another file ('" + *chunk_.file_path + "')");
  if (chunk_.encrypted && !chunk_.meta_data) throw Unsupported("encrypted column");
  if (!chunk_.meta_data) throw InvalidFile("column chunk lacks its metadata");
  const format::ColumnMetaData& md = *chunk_.meta_data;
  if (md.type != leaf_.physical_type) {
    throw InvalidFile(std::string("chunk type ") + format::type_name(md.type) + " differs from the schema's " +
                      format::type_name(leaf_.physical_type));
  }
  codec_ = codec_from_thrift(md.codec);
  // A list column has one level entry per element, and one per null or empty list: at least one per row. The
  // chunk's count of them sizes the read, so it must be right.
  if (leaf_.max_rep > 0 && md.num_values < num_rows_) {
    throw InvalidFile("chunk holds " + std::to_string(md.num_values) + " values for " + std::to_string(num_rows_) +
                      " rows");
  }
  // A flat column has one entry per row, whatever the chunk's count says (some writers leave it 0): its pages are
  // read for the row group's rows, and pages that hold another number are refused as they are read.
  const int64_t entries = leaf_.max_rep == 0 ? num_rows_ : md.num_values;
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
  start_ = pos_ = start;
  end_ = length > limit - start ? limit : start + length;
  const auto bytes = static_cast<size_t>(end_ - start_);
  size_scratch(home_.chunk, bytes + kPadding);
  file_.file->read_at(start_, bytes, home_.chunk.data());
  total_ = entries;
  return entries;
}

const uint8_t* PageWalk::open_page(const PageRef& ref, PageData* page, size_t* size, ByteArrays* spare) const {
  const format::PageHeader& h = ref.header;
  page->num_values = ref.num_values;
  const uint8_t* data = ref.data;
  int64_t compressed = h.compressed_page_size, uncompressed = h.uncompressed_page_size;
  bool is_compressed = true;
  if (h.type == format::page_type::kDataPage) {
    page->encoding = h.data_page_header->encoding;
    page->definition_level_encoding = h.data_page_header->definition_level_encoding;
    page->repetition_level_encoding = h.data_page_header->repetition_level_encoding;
  } else {
    const format::DataPageHeaderV2& v2 = *h.data_page_header_v2;
    const int64_t rep = v2.repetition_levels_byte_length, def = v2.definition_levels_byte_length;
    page->num_rows = v2.num_rows;
    page->encoding = v2.encoding;
    page->v2 = true;
    page->v2_rep_levels = data;
    page->v2_rep_size = static_cast<size_t>(rep);
    page->v2_def_levels = data + rep;
    page->v2_def_size = static_cast<size_t>(def);
    data += rep + def;
    compressed -= rep + def;
    uncompressed -= rep + def;
    is_compressed = v2.is_compressed;
  }
  check_crc(h, ref.data);
  if (spare != nullptr && is_compressed && codec_ != Codec::kUncompressed && uncompressed > kMaxScratchBytes &&
      page->encoding == format::encoding::kPlain && leaf_.schema.type_length <= 0) {
    // Past the column's bytes, which the page's values then move down to (their levels read first).
    const size_t base = spare->bytes.size();
    *size = static_cast<size_t>(uncompressed);
    if (base + *size > static_cast<size_t>(budget_)) throw InvalidFile("byte arrays exceed the size limit");
    spare->bytes.resize(base + *size + kPadding);
    uint8_t* at = reinterpret_cast<uint8_t*>(spare->bytes.data()) + base;
    decompress(codec_, data, static_cast<size_t>(compressed), at, *size);
    page->output_base = static_cast<int64_t>(base);
    return at;
  }
  return values_body(&page->large, data, compressed, uncompressed, is_compressed, size);
}

void PageWalk::rethrow_header_error() {
  if (!header_error_) return;
  page_offset_ = header_error_offset_;
  std::rethrow_exception(header_error_);
}

}  // namespace feedline::parquet::detail
