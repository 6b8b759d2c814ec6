// Internal to the Parquet reader: a column chunk's dictionary (DictionaryPage), read from its dictionary page into
// the scratch of the thread that reads the chunk, and given back, when it is huge, after the last data page that
// uses it. The page walk (pages.h) meets the page, checks it and hands it over; the value decoder (values.h) reads
// the dictionary through its view (ChunkDictionary), from any thread that decodes the chunk's pages.
#pragma once

#include <cstddef>
#include <cstdint>

#include "feedline/io/parquet.h"
#include "feedline/io/table.h"
#include "io/parquet/metadata.h"
#include "io/parquet/schema.h"
#include "io/parquet/scratch.h"

namespace feedline::parquet::detail {

// The chunk's dictionary, once its dictionary page is read: fixed-width values (a FIXED_LEN_BYTE_ARRAY's bytes)
// `count` of them at `fixed`, with kShortCopyBytes readable past them; variable-length byte arrays in `bytes`.
struct ChunkDictionary {
  bool present = false;
  const uint8_t* fixed = nullptr;
  size_t count = 0;
  const ByteArrays* bytes = nullptr;
};

// One chunk's dictionary, used by the thread that reads the chunk (helpers only read the view). Its values live in
// `home` (Scratch::dict, Scratch::dict_bytes), or, for a FIXED_LEN_BYTE_ARRAY page stored uncompressed, where the
// page lies in home.chunk. T, in each call: the type the chunk's values decode as (a byte a BOOLEAN, int32_t,
// int64_t, float, double, ByteArrays).
class DictionaryPage {
 public:
  DictionaryPage(const Leaf& leaf, Scratch& home) : leaf_(leaf), home_(home) { view_.bytes = &home_.dict_bytes; }
  DictionaryPage(const DictionaryPage&) = delete;
  DictionaryPage& operator=(const DictionaryPage&) = delete;

  const ChunkDictionary& view() const { return view_; }
  bool present() const { return view_.present; }

  // A dictionary page `h` (its sizes and CRC checked) whose stored bytes at `data` are compressed with `codec`,
  // decompressed straight into the dictionary where that spares a copy: fixed-width values that the page holds
  // exactly (PLAIN), or byte arrays of more than kMaxScratchBytes (PLAIN: decompressed into the dictionary's bytes
  // and moved down in place). Returns false, reading nothing, for any other page.
  template <class T>
  bool decompress(const format::PageHeader& h, const uint8_t* data, Codec codec);
  // The dictionary page `h`'s values from its uncompressed `body` of `size` bytes. `chunk_bytes`: the bytes of
  // home.chunk that hold the chunk (a page that lies among them is read there).
  template <class T>
  void read(const format::PageHeader& h, const uint8_t* body, size_t size, size_t chunk_bytes);

  // Gives the dictionary back once the reader is done with the data page whose header is at file offset
  // `last_page`, the last that uses it; now, for -1.
  void release_after(int64_t last_page);
  // The reader is done with the data page whose header is at file offset `page`.
  void page_done(int64_t page) {
    if (last_page_ >= 0 && page >= last_page_) release();
  }

 private:
  // decompress for fixed-width values (and FIXED_LEN_BYTE_ARRAY's).
  template <class T>
  bool decompress_fixed(const format::PageHeader& h, const uint8_t* data, Codec codec);
  // decompress for variable-length byte arrays larger than kMaxScratchBytes.
  template <class T>
  bool decompress_in_place(const format::PageHeader& h, const uint8_t* data, Codec codec);
  // The fixed-width dictionary made `values` long in home_.dict (for FIXED_LEN_BYTE_ARRAY, their bytes), the room
  // of the thread's chunks before kept; returns where its values go.
  template <class T>
  uint8_t* size_fixed(size_t values);
  // Gives the dictionary of byte arrays back (its pages have used it).
  void release();

  const Leaf& leaf_;
  Scratch& home_;
  ChunkDictionary view_;
  int64_t last_page_ = -1;  // see release_after
};

}  // namespace feedline::parquet::detail
