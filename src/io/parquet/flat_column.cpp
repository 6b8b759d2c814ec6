// A flat column's chunk: a window of data pages at a time, decoded (on several threads where their values go
// straight to their rows: fixed-width values, and FIXED_LEN_BYTE_ARRAY) and then joined in page order.
#include <algorithm>

#include "io/memory.h"
#include "io/parallel.h"
#include "io/parquet/byte_arrays_room.h"
#include "io/parquet/chunk_reader.h"
#include "io/parquet/page_data.h"
#include "io/parquet/paged_chunk_reader.h"
#include "io/parquet/pages.h"
#include "io/parquet/typed_reader.h"
#include "io/parquet/values.h"

namespace feedline::parquet::detail {

namespace {

// The largest page of byte arrays decoded apart, small enough that its buffer is mostly still in the cache when it
// is copied into place. A larger one decodes in order, decompressed straight into the column's bytes
// (PageWalk::open_page), which saves the copy.
constexpr int64_t kMaxApartPageBytes = int64_t{4} << 20;

template <class T>
class FlatChunkReader final : public PagedChunkReader {
 public:
  explicit FlatChunkReader(const ChunkSource& source)
      : PagedChunkReader(source), threads_(source.page_threads) {}

  void read(ChunkTarget* target) override;

 private:
  static constexpr bool kBytes = std::is_same_v<T, ByteArrays>;
  // What one page of a window gave: its nulls, its values' bytes (FIXED_LEN_BYTE_ARRAY in place), its error.
  struct PageResult {
    int64_t first_row = 0;
    int64_t nulls = 0;
    size_t value_bytes = 0;
    std::exception_ptr error;
  };
  // Whether a chunk of byte arrays decodes in place, its pages on several threads: FIXED_LEN_BYTE_ARRAY into a
  // column of no values yet, its rows' bytes within the budget. Its values then go, back to back, to where the
  // page's first row would put them (no earlier than their place: a null takes no bytes), and are moved down as
  // the pages join. (On one thread they are appended: the room made in place would be zeroed first.)
  bool fixed_bytes_in_place(const ByteArrays& out) const {
    const int64_t width = leaf_.schema.type_length;
    return threads_ > 1 && width > 0 && out.offsets.size() == 1 && walk_.num_rows() <= walk_.budget() / width;
  }
  // Whether a window of pages of variable-length byte arrays decodes on several threads (decode_apart): each of
  // its pages PLAIN or DELTA_LENGTH_BYTE_ARRAY, whose values take no more than the page holds, so that the pages'
  // sizes, within the budget, bound what their buffers take together.
  bool pages_apart(const std::vector<PageRef>& pages, const ByteArrays& out) const;
  // Decodes a window's pages on the threads, each into a buffer of its own (this thread's scratch), and then,
  // once their sizes are known, copies them on the threads to their places after the column's bytes.
  void decode_apart(const std::vector<PageRef>& pages, ChunkTarget* target, std::vector<PageResult>* results);
  // Makes the room the chunk's byte arrays fill: an offset a row, and a FIXED_LEN_BYTE_ARRAY's bytes.
  void make_room(ByteArrays* out, bool in_place) const;
  // Decodes page `ref` (its first row `result->first_row`) into the column.
  void decode_page(const PageRef& ref, const ChunkTarget& target, bool in_place, PageResult* result) const;
  // Joins a FIXED_LEN_BYTE_ARRAY page decoded in place: its bytes moved down to follow the rows before (`*bytes`
  // of them), its offsets from its rows' validity.
  void join_fixed_bytes(const PageRef& ref, const PageResult& result, const uint8_t* validity, size_t* bytes,
                        ByteArrays* out) const;

  int threads_;
};

template <class T>
void FlatChunkReader<T>::make_room(ByteArrays* out, bool in_place) const {
  const auto rows = static_cast<size_t>(walk_.num_rows());
  const int64_t width = leaf_.schema.type_length;
  if (in_place) {
    resize_populated(out->bytes, rows * static_cast<size_t>(width));
    reserve_populated(out->offsets, rows + 1);
    return;
  }
  // One offset a row, and a FIXED_LEN_BYTE_ARRAY's bytes, are known before the pages: reserved once (the bytes
  // with room for what copy_byte_array may write past the last value).
  reserve_offsets(out, rows);
  populate_for_writing(out->offsets.data() + out->offsets.size(), rows * sizeof(int64_t));
  if (width > 0 && walk_.num_rows() <= walk_.budget() / width) {
    reserve_populated(out->bytes, out->bytes.size() + rows * static_cast<size_t>(width) + kShortCopyBytes);
  }
}

template <class T>
void FlatChunkReader<T>::decode_page(const PageRef& ref, const ChunkTarget& target, bool in_place,
                                     PageResult* result) const {
  const int64_t row = result->first_row;
  try {
    PageData page;
    size_t size;
    // (Byte arrays appended decode one page at a time, so a large page may decompress into the column's bytes.)
    const uint8_t* body = walk_.open_page(ref, &page, &size, kBytes && !in_place ? target.bytes : nullptr);
    if constexpr (kBytes) {
      if (!in_place) {
        result->nulls = values_.read_data_page<T>(page, body, size, target.bytes, row, target.validity);
        return;
      }
      if (!ValueDecoder::decodes_fixed_bytes(page.encoding)) {
        // An encoding FIXED_LEN_BYTE_ARRAY cannot have: decoded as appended values, to fail as they fail.
        ByteArrays refused;
        values_.read_data_page<T>(page, body, size, &refused, row, target.validity);
        throw InvalidFile(std::string("encoding ") + format::encoding_name(page.encoding) +
                          " on a FIXED_LEN_BYTE_ARRAY column");
      }
      const auto width = static_cast<size_t>(leaf_.schema.type_length);
      char* at = target.bytes->bytes.data() + static_cast<size_t>(row) * width;
      result->nulls = values_.read_data_page<T>(page, body, size, FixedBytesOut{at}, row, target.validity);
      result->value_bytes = static_cast<size_t>(ref.num_values - result->nulls) * width;
    } else {
      result->nulls =
          values_.read_data_page<T>(page, body, size, FixedOut<T>{static_cast<T*>(target.values)}, row,
                                    target.validity);
    }
  } catch (const Error&) {
    result->error = std::current_exception();
  }
}

template <class T>
void FlatChunkReader<T>::join_fixed_bytes(const PageRef& ref, const PageResult& result, const uint8_t* validity,
                                          size_t* bytes, ByteArrays* out) const {
  const auto width = static_cast<size_t>(leaf_.schema.type_length);
  const size_t moved = result.value_bytes, at = static_cast<size_t>(result.first_row) * width;
  if (*bytes != at && moved > 0) std::memmove(out->bytes.data() + *bytes, out->bytes.data() + at, moved);
  const size_t joined = out->offsets.size(), count = static_cast<size_t>(ref.num_values);
  out->offsets.resize(joined + count);
  int64_t* dst = out->offsets.data() + joined;
  auto end = static_cast<int64_t>(*bytes);
  const auto w = static_cast<int64_t>(width);
  if (result.nulls == 0) {
    for (size_t i = 0; i < count; ++i) dst[i] = end + static_cast<int64_t>(i + 1) * w;
  } else {
    const uint8_t* valid = validity + result.first_row;  // (nulls come only with a validity byte a row)
    for (size_t i = 0; i < count; ++i) dst[i] = end += valid[i] != 0 ? w : 0;
  }
  *bytes += moved;
}

template <class T>
bool FlatChunkReader<T>::pages_apart(const std::vector<PageRef>& pages, const ByteArrays& out) const {
  // (Stored pages are copied, not decompressed: what threads would share is a copy, and apart they take two.)
  if (threads_ <= 1 || pages.size() < 2 || leaf_.schema.type_length > 0) return false;
  if (walk_.metadata().codec == format::codec::kUncompressed) return false;
  int64_t bytes = 0;
  for (const PageRef& ref : pages) {
    const format::PageHeader& h = ref.header;
    const int32_t encoding = h.data_page_header ? h.data_page_header->encoding
                             : h.data_page_header_v2 ? h.data_page_header_v2->encoding
                                                     : -1;
    if (encoding != format::encoding::kPlain && encoding != format::encoding::kDeltaLengthByteArray) return false;
    if (h.uncompressed_page_size > kMaxApartPageBytes) return false;
    bytes += h.uncompressed_page_size;  // (each at most the budget: the walk checks it)
  }
  return bytes <= walk_.budget() - static_cast<int64_t>(out.bytes.size());
}

template <class T>
void FlatChunkReader<T>::decode_apart(const std::vector<PageRef>& pages, ChunkTarget* target,
                                      std::vector<PageResult>* results) {
  const size_t n = pages.size();
  std::vector<ByteArrays>& buffers = scratch().page_values;
  if (buffers.size() < n) buffers.resize(n);
  parallel_for(n, threads_, [&](size_t k) {
    ByteArrays& buffer = buffers[k];
    buffer.bytes.clear();
    buffer.offsets.assign(1, 0);
    ChunkTarget page_target = *target;
    page_target.bytes = &buffer;
    decode_page(pages[k], page_target, /*in_place=*/false, &(*results)[k]);
  });
  // Where each page's values go, once every page before it has decoded (an error stops the read at its page).
  ByteArrays& out = *target->bytes;
  std::vector<size_t> byte_at(n + 1), row_at(n + 1);
  byte_at[0] = out.bytes.size();
  row_at[0] = out.offsets.size();
  for (size_t k = 0; k < n; ++k) {
    walk_.set_page_offset(pages[k].offset);
    if ((*results)[k].error) std::rethrow_exception((*results)[k].error);
    target->nulls += (*results)[k].nulls;
    walk_.page_done(pages[k]);
    const ByteArrays& buffer = buffers[k];
    byte_at[k + 1] = byte_at[k] + static_cast<size_t>(buffer.offsets.back() - buffer.offsets.front());
    row_at[k + 1] = row_at[k] + static_cast<size_t>(buffer.size());
    // (pages_apart bounds the window within the budget; this holds what a page in order would be held to)
    if (byte_at[k + 1] > static_cast<size_t>(walk_.budget())) throw InvalidFile("byte arrays exceed the size limit");
  }
  out.bytes.resize(byte_at[n]);
  out.offsets.resize(row_at[n]);
  parallel_for(n, threads_, [&](size_t k) {
    const ByteArrays& buffer = buffers[k];
    const int64_t first = buffer.offsets.front();
    const size_t bytes = byte_at[k + 1] - byte_at[k];
    if (bytes > 0) std::memcpy(out.bytes.data() + byte_at[k], buffer.bytes.data() + first, bytes);
    const int64_t shift = static_cast<int64_t>(byte_at[k]) - first;
    int64_t* offsets = out.offsets.data() + row_at[k];
    for (size_t i = 1; i < buffer.offsets.size(); ++i) offsets[i - 1] = buffer.offsets[i] + shift;
  });
}

template <class T>
void FlatChunkReader<T>::read(ChunkTarget* target) {
  target->nulls = 0;
  const int64_t rows = walk_.load();
  if (rows == 0) return;
  // Pages decode apart when their values go straight to their rows; variable-length byte arrays append, in order.
  bool in_place = !kBytes;
  size_t bytes_at_start = 0, bytes = 0;
  if constexpr (kBytes) {
    in_place = fixed_bytes_in_place(*target->bytes);
    make_room(target->bytes, in_place);
    bytes_at_start = target->bytes->bytes.size();
  }
  // (Variable-length byte arrays take windows too, where their pages may decode apart.)
  const bool apart = kBytes && !in_place && threads_ > 1 && leaf_.schema.type_length <= 0;
  const size_t window = (in_place || apart) && threads_ > 1 ? static_cast<size_t>(4 * threads_) : 1;
  std::vector<PageRef> pages;
  std::vector<PageResult> results;
  int64_t first = 0;
  bool room_made = false;  // (byte arrays: from the page headers, or else projected as the pages come)
  while (walk_.next_window<T>(&pages, window)) {
    if constexpr (kBytes) {
      if (first == 0 && !in_place) {
        room_made = make_room_from_headers(walk_, target->bytes);
      }
    }
    const size_t n = pages.size();
    results.assign(n, PageResult());
    for (size_t k = 0; k < n; ++k) {
      results[k].first_row = first;
      first += pages[k].num_values;
    }
    if constexpr (kBytes) {
      if (apart && pages_apart(pages, *target->bytes)) {
        decode_apart(pages, target, &results);
        if (!room_made) {
          make_room_for_rest(target->bytes, bytes_at_start, first, rows - first, static_cast<size_t>(walk_.budget()));
        }
        continue;
      }
    }
    const auto decode = [&](size_t k) { decode_page(pages[k], *target, in_place, &results[k]); };
    if (n == 1) {
      decode(0);
    } else if (in_place) {
      parallel_for(n, threads_, decode);
    } else {
      for (size_t k = 0; k < n; ++k) {  // appended, in order
        decode(k);
        if (results[k].error) break;
      }
    }
    for (size_t k = 0; k < n; ++k) {
      walk_.set_page_offset(pages[k].offset);
      if (results[k].error) std::rethrow_exception(results[k].error);
      target->nulls += results[k].nulls;
      walk_.page_done(pages[k]);
      if constexpr (kBytes) {
        if (in_place) {
          join_fixed_bytes(pages[k], results[k], target->validity, &bytes, target->bytes);
        } else if (leaf_.schema.type_length <= 0 && !room_made) {
          const int64_t done = results[k].first_row + pages[k].num_values;
          make_room_for_rest(target->bytes, bytes_at_start, done, rows - done, static_cast<size_t>(walk_.budget()));
        }
      }
    }
  }
  walk_.rethrow_header_error();
  if constexpr (kBytes) {
    if (in_place) target->bytes->bytes.resize(bytes);
  }
}

}  // namespace

std::unique_ptr<ColumnChunkReader> make_flat_reader(const ChunkSource& source) {
  return make_typed_reader<FlatChunkReader>(source);
}

}  // namespace feedline::parquet::detail
