// A flat column's chunk: its data pages decoded in order into the column, or, for a large chunk of fixed-width
// values or FIXED_LEN_BYTE_ARRAY, a window of pages at a time on several threads and joined in page order.
#include <algorithm>

#include "feedline/io/parallel.h"
#include "io/memory.h"
#include "io/parquet/chunk_reader.h"
#include "io/parquet/pages.h"
#include "io/parquet/values.h"

namespace feedline::parquet::detail {

template <class T, class Out>
int64_t ChunkReader::read_apart(Out out, uint8_t* validity) {
  // Fixed-width values go straight to their rows. Byte arrays of a fixed length go, back to back, to where the
  // page's first row would put them (no earlier than their place: a null takes no bytes), and are moved down as
  // the pages join. (A page of an encoding that FIXED_LEN_BYTE_ARRAY cannot have fails as on one thread.)
  constexpr bool kBytes = std::is_same_v<T, ByteArrays>;
  const auto width = static_cast<size_t>(leaf_.schema.type_length);
  const size_t window = static_cast<size_t>(4 * threads_);
  std::vector<PageRef> pages;
  int64_t pos = start_, seen = 0, first = 0, total_nulls = 0;
  next_window<T>(&pages, window, &pos, &seen, num_rows_);
  if (pages.empty()) rethrow_header_error();  // (the first header's, since num_rows_ > 0)
  if (pages.size() == 1) {  // a chunk of one page (or one before a bad header): decoded as on one thread
    page_offset_ = pages[0].offset;
    PageData page;
    size_t size;
    const uint8_t* body = open_page(pages[0], &page, &size);
    total_nulls = read_data_page<T>(page, body, size, out, 0, validity);
    rethrow_header_error();
    return total_nulls;
  }
  if constexpr (kBytes) {
    resize_populated(out->bytes, static_cast<size_t>(num_rows_) * width);
    reserve_populated(out->offsets, static_cast<size_t>(num_rows_) + 1);
  }
  std::vector<std::exception_ptr> errors;
  std::vector<int64_t> nulls, rows;  // per page of the window: nulls found, first row
  std::vector<size_t> value_bytes;   // (byte arrays) per page of the window: its values' bytes
  size_t bytes = 0;  // joined so far
  for (; !pages.empty(); next_window<T>(&pages, window, &pos, &seen, num_rows_)) {
    const size_t n = pages.size();
    errors.assign(n, nullptr);
    nulls.assign(n, 0);
    if constexpr (kBytes) value_bytes.assign(n, 0);
    rows.resize(n);
    for (size_t k = 0; k < n; ++k) rows[k] = k == 0 ? first : rows[k - 1] + pages[k - 1].num_values;
    parallel_for(n, threads_, [&](size_t k) {
      const int64_t row = rows[k];
      try {
        PageData page;
        size_t size;
        const uint8_t* body = open_page(pages[k], &page, &size);
        if constexpr (kBytes) {
          if (!decodes_fixed_bytes(page.encoding)) {
            // An encoding FIXED_LEN_BYTE_ARRAY cannot have: decoded as on one thread, to fail as it fails there.
            ByteArrays refused;
            read_data_page<T>(page, body, size, &refused, row, validity);
            throw InvalidFile(std::string("encoding ") + format::encoding_name(page.encoding) +
                              " on a FIXED_LEN_BYTE_ARRAY column");
          }
          // Straight to where the page's first row puts them.
          const auto values = static_cast<size_t>(pages[k].num_values);
          nulls[k] = read_data_page<T>(page, body, size,
                                       FixedBytesOut{out->bytes.data() + static_cast<size_t>(row) * width}, row,
                                       validity);
          value_bytes[k] = (values - static_cast<size_t>(nulls[k])) * width;
        } else {
          nulls[k] = read_data_page<T>(page, body, size, out, row, validity);
        }
      } catch (const Error&) {
        errors[k] = std::current_exception();
      }
    });
    for (size_t k = 0; k < n; ++k) {
      page_offset_ = pages[k].offset;
      if (errors[k]) std::rethrow_exception(errors[k]);
      total_nulls += nulls[k];
      if constexpr (kBytes) {
        // The page's offsets follow from its rows' validity: `width` bytes a value, none a null.
        const size_t moved = value_bytes[k], at = static_cast<size_t>(first) * width;
        if (bytes != at && moved > 0) std::memmove(out->bytes.data() + bytes, out->bytes.data() + at, moved);
        const size_t joined = out->offsets.size(), count = static_cast<size_t>(pages[k].num_values);
        out->offsets.resize(joined + count);
        int64_t* dst = out->offsets.data() + joined;
        auto end = static_cast<int64_t>(bytes);
        const auto w = static_cast<int64_t>(width);
        if (nulls[k] == 0) {
          for (size_t i = 0; i < count; ++i) dst[i] = end + static_cast<int64_t>(i + 1) * w;
        } else {
          const uint8_t* valid = validity + first;  // (nulls come only with a validity byte a row)
          for (size_t i = 0; i < count; ++i) dst[i] = end += valid[i] != 0 ? w : 0;
        }
        bytes += moved;
      }
      first += pages[k].num_values;
    }
  }
  rethrow_header_error();
  if constexpr (kBytes) out->bytes.resize(bytes);
  return total_nulls;
}

template <class T, class Out>
int64_t ChunkReader::read(Out out, uint8_t* validity) {
  if (load() == 0) return 0;
  if (threads_ > 1) {
    if constexpr (!std::is_same_v<T, ByteArrays>) {
      return read_apart<T, Out>(out, validity);
    } else if (leaf_.schema.type_length > 0 && out->offsets.size() == 1 &&
               num_rows_ <= budget_ / leaf_.schema.type_length) {
      return read_apart<T, Out>(out, validity);
    }
  }
  if constexpr (std::is_same_v<T, ByteArrays>) {
    // One offset a row, and a FIXED_LEN_BYTE_ARRAY's bytes, are known before the pages: reserved once (the bytes
    // with room for what copy_byte_array may write past the last value).
    reserve_offsets(out, static_cast<size_t>(num_rows_));
    populate_for_writing(out->offsets.data() + out->offsets.size(), static_cast<size_t>(num_rows_) * sizeof(int64_t));
    const int64_t width = leaf_.schema.type_length;
    if (width > 0 && num_rows_ <= budget_ / width) {
      reserve_populated(out->bytes, out->bytes.size() + static_cast<size_t>(num_rows_ * width) + kShortCopyBytes);
    }
  }
  int64_t row = 0;
  int64_t nulls = 0;
  size_t bytes_at_start = 0;
  if constexpr (std::is_same_v<T, ByteArrays>) bytes_at_start = out->bytes.size();
  walk_pages<T>(num_rows_, [&](const PageData& page, const uint8_t* body, size_t size) {
    nulls += read_data_page<T, Out>(page, body, size, out, row, validity);
    row += page.num_values;
    if constexpr (std::is_same_v<T, ByteArrays>) {
      if (leaf_.schema.type_length <= 0) {
        make_room_for_rest(out, bytes_at_start, row, num_rows_ - row, static_cast<size_t>(budget_));
      }
    }
    return page.num_values;
  });
  return nulls;
}

// The columns read_parsed reads.
template int64_t ChunkReader::read<uint8_t, FixedOut<uint8_t>>(FixedOut<uint8_t>, uint8_t*);
template int64_t ChunkReader::read<int32_t, FixedOut<int32_t>>(FixedOut<int32_t>, uint8_t*);
template int64_t ChunkReader::read<int64_t, FixedOut<int64_t>>(FixedOut<int64_t>, uint8_t*);
template int64_t ChunkReader::read<float, FixedOut<float>>(FixedOut<float>, uint8_t*);
template int64_t ChunkReader::read<double, FixedOut<double>>(FixedOut<double>, uint8_t*);
template int64_t ChunkReader::read<ByteArrays, ByteArrays*>(ByteArrays*, uint8_t*);

}  // namespace feedline::parquet::detail
