// Internal to the Parquet reader: a column chunk's pages (PageWalk): its bytes read from the file, its page headers
// walked in order (a window of them at a time, so that their pages may decode on several threads), each page
// checked against its CRC and decompressed, and the chunk's dictionary page handed to its DictionaryPage
// (dictionary_page.h) on the way. The readers of each column shape (chunk_reader.h) take their data pages from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "feedline/io/error.h"
#include "io/memory.h"
#include "io/parquet/chunk_reader.h"
#include "io/parquet/codec.h"
#include "io/parquet/dictionary_page.h"
#include "io/parquet/limits.h"
#include "io/parquet/metadata.h"
#include "io/parquet/page_data.h"
#include "io/parquet/parsed_file.h"
#include "io/parquet/plain.h"
#include "io/parquet/scratch.h"

namespace feedline::parquet::detail {

// A data page found by the walk over the chunk's page headers.
struct PageRef {
  int64_t offset = 0;  // of its header, in the file
  format::PageHeader header;
  const uint8_t* data = nullptr;  // its stored bytes (after the header) in the chunk's buffer
  int64_t num_values = 0;         // level entries (for a flat column, rows)
};

class PageWalk {
 public:
  explicit PageWalk(const ChunkSource& source)
      : file_(source.file), leaf_(source.leaf), chunk_(source.chunk), num_rows_(source.num_rows),
        budget_(source.budget) {}
  ~PageWalk() { home_.trim(); }
  PageWalk(const PageWalk&) = delete;
  PageWalk& operator=(const PageWalk&) = delete;

  const Leaf& leaf() const { return leaf_; }
  int64_t num_rows() const { return num_rows_; }
  int64_t budget() const { return budget_; }
  // The chunk's column metadata, once load() has checked it.
  const format::ColumnMetaData& metadata() const { return *chunk_.meta_data; }
  // The chunk's dictionary, which the walk fills as it meets the dictionary page.
  DictionaryPage& dictionary() { return dictionary_; }
  const DictionaryPage& dictionary() const { return dictionary_; }
  // The file offset of the page header being read, or of the page a reader names with set_page_offset; -1 first.
  int64_t page_offset() const { return page_offset_; }
  void set_page_offset(int64_t offset) { page_offset_ = offset; }

  // Checks the chunk's metadata against the schema and reads its bytes from the file. Returns the number of
  // level entries (values, nulls included) its pages hold: for a flat column the row group's rows, else what the
  // footer declares; 0 for an empty chunk.
  int64_t load();
  // The next window of data pages (at most `window`), their headers read in order (a dictionary page on the way
  // goes to the chunk's DictionaryPage; index pages are skipped); false when none is left. A header's error is kept
  // for rethrow_header_error() once the pages before it are done, as reading the pages one after another would
  // meet it. T: the type the chunk's values decode as (for its dictionary).
  template <class T>
  bool next_window(std::vector<PageRef>* into, size_t window);
  void rethrow_header_error();
  // Level entries in the data pages the walk has handed out so far.
  int64_t entries_seen() const { return seen_; }
  // Every data page in order, opened, to on_data(page, body, size); throws what the walk meets.
  template <class T, class OnData>
  void walk(OnData on_data);
  // A data page's values (checked against its CRC, and decompressed into this thread's scratch unless stored
  // plain), with what the decoders need of its header in *page. Safe to call from several threads at once.
  // `spare`: the column's byte arrays, when its pages decode in order; a compressed PLAIN page of more than
  // kMaxScratchBytes is then decompressed past the end of their bytes (page->output_base), where its values
  // are decoded in place (ValueDecoder), rather than into a buffer of its own and copied.
  const uint8_t* open_page(const PageRef& ref, PageData* page, size_t* size, ByteArrays* spare = nullptr) const;

  // The headers of the chunk's pages from its first data page on (once a window has found it), read again in
  // order, each to on_header(offset of the header in the file, header). Stops at a header that cannot be read or
  // whose page runs past the chunk, or when on_header returns false; returns whether every header was read and
  // taken (false too before the first data page is found).
  template <class OnHeader>
  bool each_page_header(OnHeader on_header) const;
  // The reader is done with page `ref`: after the last page that uses it, a huge dictionary is given back
  // (DictionaryPage::release_after).
  void page_done(const PageRef& ref) { dictionary_.page_done(ref.offset); }

 private:
  // Reads page headers from file offset *pos on to the next data page, which it checks against the `total`
  // level entries less the `seen` before it, and returns; moves *pos past it.
  template <class T>
  PageRef next_data_page(int64_t* pos, int64_t seen, int64_t total);
  // Checks the page's sizes against the limits and its CRC when it has one.
  void check_crc(const format::PageHeader& h, const uint8_t* data) const;
  // The values of a page, decompressed into scratch (into *large past kMaxScratchBytes) unless stored plain (v2
  // pages may say is_compressed false).
  const uint8_t* values_body(std::vector<uint8_t>* large, const uint8_t* data, int64_t compressed,
                             int64_t uncompressed, bool is_compressed, size_t* size) const;

  const ParsedFile& file_;
  const Leaf& leaf_;
  const format::ColumnChunk& chunk_;
  int64_t num_rows_;
  int64_t budget_;
  Codec codec_ = Codec::kUncompressed;
  int64_t start_ = 0, end_ = 0;  // the chunk's bytes in the file; home_.chunk holds them
  int64_t pos_ = 0;              // the next page header's file offset
  int64_t seen_ = 0, total_ = 0;  // level entries handed out, and in the chunk
  int64_t page_offset_ = -1;
  int64_t first_data_page_ = -1;  // the file offset of the first data page's header
  std::exception_ptr header_error_;  // see next_window
  int64_t header_error_offset_ = -1;
  // The scratch of the thread that made the walk: its chunk buffer and the chunk's dictionary, kept between
  // chunks so that their memory is not faulted in again for each.
  Scratch& home_ = scratch();
  DictionaryPage dictionary_{leaf_, home_};
};

static_assert(kPadding >= kShortCopyBytes, "page buffers must end with what copy_byte_array may read past");

template <class T>
PageRef PageWalk::next_data_page(int64_t* pos, int64_t seen, int64_t total) {
  const uint8_t* base = home_.chunk.data();  // the byte at file offset start_
  for (;;) {
    page_offset_ = *pos;
    if (*pos >= end_) {
      throw InvalidFile("chunk ends after " + std::to_string(seen) + " of " + std::to_string(total) + " values");
    }
    thrift::CompactReader in(base + (*pos - start_), static_cast<size_t>(end_ - *pos), *pos);
    PageRef ref;
    ref.offset = *pos;
    ref.header = format::read_page_header(in);
    const format::PageHeader& h = ref.header;
    *pos += static_cast<int64_t>(in.position());
    if (h.compressed_page_size < 0 || h.compressed_page_size > end_ - *pos) {
      throw InvalidFile("page of " + std::to_string(h.compressed_page_size) + " bytes runs past the chunk");
    }
    ref.data = base + (*pos - start_);
    *pos += h.compressed_page_size;
    switch (h.type) {
      case format::page_type::kDictionaryPage: {
        if (!h.dictionary_page_header) throw InvalidFile("dictionary page without its header");
        if (dictionary_.present()) throw InvalidFile("second dictionary page");
        if (seen > 0) throw InvalidFile("dictionary page after data pages");
        check_crc(h, ref.data);
        if (dictionary_.decompress<T>(h, ref.data, codec_)) break;
        size_t size;
        std::vector<uint8_t> large;
        const uint8_t* body =
            values_body(&large, ref.data, h.compressed_page_size, h.uncompressed_page_size, true, &size);
        dictionary_.read<T>(h, body, size, static_cast<size_t>(end_ - start_));
        break;
      }
      case format::page_type::kDataPage: {
        if (!h.data_page_header) throw InvalidFile("data page without its header");
        const int32_t n = h.data_page_header->num_values;
        if (n < 0 || n > total - seen) {
          throw InvalidFile("data page of " + std::to_string(n) + " values where " + std::to_string(total - seen) +
                            " remain");
        }
        ref.num_values = n;
        if (first_data_page_ < 0) first_data_page_ = ref.offset;
        return ref;
      }
      case format::page_type::kDataPageV2: {
        if (!h.data_page_header_v2) throw InvalidFile("data page v2 without its header");
        const format::DataPageHeaderV2& v2 = *h.data_page_header_v2;
        const int32_t n = v2.num_values;
        if (n < 0 || n > total - seen || v2.num_rows < 0 || v2.num_rows > n ||
            (leaf_.max_rep == 0 && v2.num_rows != n)) {
          throw InvalidFile("data page v2 of " + std::to_string(n) + " values and " + std::to_string(v2.num_rows) +
                            " rows where " + std::to_string(total - seen) + " values remain");
        }
        const int64_t rep = v2.repetition_levels_byte_length, def = v2.definition_levels_byte_length;
        // A flat column's page may still declare repetition-level bytes (some writers always write both
        // sections): they are skipped, as DuckDB and Arrow skip them (open_page reads past them).
        if (rep < 0 || def < 0 || rep + def > h.compressed_page_size || rep + def > h.uncompressed_page_size ||
            (leaf_.max_def == 0 && def != 0)) {
          throw InvalidFile("data page v2 levels of " + std::to_string(rep) + " + " + std::to_string(def) + " bytes");
        }
        ref.num_values = n;
        if (first_data_page_ < 0) first_data_page_ = ref.offset;
        return ref;
      }
      case format::page_type::kIndexPage:
        break;  // nothing we need
      default:
        throw InvalidFile("unknown page type " + std::to_string(h.type));
    }
  }
}

template <class T, class OnData>
void PageWalk::walk(OnData on_data) {
  std::vector<PageRef> pages;
  while (next_window<T>(&pages, 1)) {
    PageData page;
    size_t size;
    const uint8_t* body = open_page(pages[0], &page, &size);
    on_data(page, body, size);
  }
  rethrow_header_error();
}

template <class T>
bool PageWalk::next_window(std::vector<PageRef>* into, size_t window) {
  into->clear();
  while (into->size() < window && seen_ < total_ && !header_error_) {
    try {
      into->push_back(next_data_page<T>(&pos_, seen_, total_));
    } catch (const Error&) {
      header_error_ = std::current_exception();
      header_error_offset_ = page_offset_;
      break;
    }
    seen_ += into->back().num_values;
  }
  return !into->empty();
}

template <class OnHeader>
bool PageWalk::each_page_header(OnHeader on_header) const {
  if (first_data_page_ < 0) return false;
  const uint8_t* base = home_.chunk.data();
  for (int64_t pos = first_data_page_; pos < end_;) {
    const int64_t at = pos;
    format::PageHeader h;
    try {
      thrift::CompactReader in(base + (pos - start_), static_cast<size_t>(end_ - pos), pos);
      h = format::read_page_header(in);
      pos += static_cast<int64_t>(in.position());
    } catch (const Error&) {
      return false;
    }
    if (h.compressed_page_size < 0 || h.compressed_page_size > end_ - pos || h.uncompressed_page_size < 0) {
      return false;
    }
    pos += h.compressed_page_size;
    if (!on_header(at, h)) return false;
  }
  return true;
}

}  // namespace feedline::parquet::detail
