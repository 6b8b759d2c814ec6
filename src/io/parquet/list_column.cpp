// One level of lists: a window of a chunk's pages at a time, each page's levels and values found apart (on
// several threads for a large chunk of fixed-width values), then joined in page order.
#include <algorithm>
#include <cstring>

#include "io/memory.h"
#include "io/parallel.h"
#include "io/parquet/byte_arrays_room.h"
#include "io/parquet/chunk_reader.h"
#include "io/parquet/levels.h"
#include "io/parquet/list_levels.h"
#include "io/parquet/page_data.h"
#include "io/parquet/paged_chunk_reader.h"
#include "io/parquet/pages.h"
#include "io/parquet/typed_reader.h"
#include "io/parquet/values.h"

namespace feedline::parquet::detail {

namespace {

// Calls start_row(i, true) for each zero among rep[0..n): where the rows of a page whose every entry is a present
// element (embeddings, images) start. The zeros are found eight levels at a time, and through memchr past eight
// levels without one: a call per row costs short lists more than the scan.
template <class StartRow>
void start_rows_at_zeros(const uint8_t* rep, int64_t n, StartRow&& start_row) {
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full, kHigh = 0x8080808080808080ull;
  int64_t i = 0;
  while (i + 8 <= n) {
    uint64_t eight;
    std::memcpy(&eight, rep + i, 8);
    // The high bit of each zero byte (exactly: no carry crosses a byte).
    uint64_t zeros = ~(((eight & kLow7) + kLow7) | eight) & kHigh;
    if (zeros == 0) {
      const void* z = std::memchr(rep + i + 8, 0, static_cast<size_t>(n - i - 8));
      if (z == nullptr) return;
      i = static_cast<const uint8_t*>(z) - rep;
      continue;
    }
    for (; zeros != 0; zeros &= zeros - 1) start_row(i + (__builtin_ctzll(zeros) >> 3), true);
    i += 8;
  }
  for (; i < n; ++i) {
    if (rep[i] == 0) start_row(i, true);
  }
}


template <class T>
class ListChunkReader final : public PagedChunkReader {
 public:
  explicit ListChunkReader(const ChunkSource& source)
      : PagedChunkReader(source), threads_(source.page_threads) {}

  void read(ChunkTarget* target) override;

 private:
  // What one data page holds, found page by page (on several threads, for a large chunk) and joined in page order
  // by read, which also judges what depends on the pages before.
  struct ListPage {
    int64_t entries_before = 0;  // level entries in the pages before: where the page's values are decoded
    int64_t slots = 0;           // element slots
    int64_t rows = 0;            // rows started; row_starts holds the first num_rows + 1 of them
    std::vector<int32_t> row_starts;  // the page's slot at which each row starts
    std::vector<uint8_t> row_valid;   // (nullable lists) whether each row's list is not null
    std::vector<uint8_t> slot_valid;  // (when some slot is a null element) each slot's validity
    bool has_entries = false;
    bool continues = false;   // the first entry has repetition 1: it continues the list open before the page
    bool open_after = false;  // the last entry leaves its list open
    std::exception_ptr levels_error;  // opening the page or reading its levels failed
    enum class Malformed { kNone, kDefinition, kRepetition, kOther } malformed = Malformed::kNone;
    int64_t malformed_at = -1;   // the entry
    int malformed_level = 0;     // kDefinition: the level
    std::exception_ptr values_error;  // decoding the values failed
  };
  // Where the join of the pages has come to.
  struct ListJoin {
    int64_t row = -1;   // the last row started
    int64_t slots = 0;  // element slots joined
    bool open = false;  // the current row's list has elements (a repetition level of 1 may continue it)
    bool any_null_element = false;
  };
  // Reads one data page into *out and its values into *col (see ListPage): byte arrays appended; fixed-width
  // values at values + out->entries_before, where `values` is the column's, sized for them, or nullptr to make
  // room in it first (only when no other page decodes at the same time).
  void read_list_page(const PageRef& ref, T* values, Column* col, ListPage* out);
  // A page's rows and element slots, from its n level entries, into *out (with each slot's validity in
  // levels.slot_valid). Returns how many slots hold a value; a malformed entry is noted in *out.
  int64_t find_list_rows(const ListPageLevels& levels, int64_t n, ListPage* out) const;
  // Finds the first malformed entry of a page for its message (ListPage::malformed and what follows it).
  void note_malformed_list_page(const ListPageLevels& levels, int64_t n, ListPage* out) const;
  // Decodes a page's `present` values into their slots (see read_list_page); a failure goes to
  // out->values_error.
  void decode_list_page_values(const PageData& page, const ListPageLevels& levels, const uint8_t* end,
                               int64_t present, T* values, Column* col, ListPage* out);
  // Checks a chunk's `entries` level entries against the budget, and makes the room read fills.
  void reserve_list_values(int64_t entries, int threads, Column* col) const;
  // Reads a window of pages into `parts`: on `threads` threads when they decode apart, while one of them grows
  // the values to `next_end` entries.
  void read_list_window(const std::vector<PageRef>& pages, bool apart, int threads, int64_t next_end, Column* col,
                        std::vector<ListPage>* parts);
  // Throws the error of a page, if it has one, as reading the pages one after another would meet it.
  void check_list_page(const ListPage& part, const ListJoin& join) const;
  // Joins the next page in order into `col`: its values moved down to follow the slots before, its rows' offsets
  // and validity, its slots' validity.
  void join_list_page(const ListPage& part, ListJoin* join, Column* col);

  int threads_;
};

template <class T>
int64_t ListChunkReader<T>::find_list_rows(const ListPageLevels& levels, int64_t n, ListPage* out) const {
  const uint8_t* rep = levels.rep;
  const uint8_t* def = levels.def;
  uint8_t* slot_valid = levels.slot_valid;
  const int list_def = leaf_.list_def, max_def = leaf_.max_def;
  const bool nullable = leaf_.schema.nullable;
  // Enough row starts to find more rows than the row group holds, whichever page this is; no more. Each entry
  // starts at most one row, so room for n (or that many) is made once.
  const int64_t max_starts = std::min(n, walk_.num_rows() + 1);
  out->row_starts.resize(static_cast<size_t>(max_starts));
  if (nullable) out->row_valid.resize(static_cast<size_t>(max_starts));
  int32_t* row_starts = out->row_starts.data();
  uint8_t* row_valid = nullable ? out->row_valid.data() : nullptr;
  const auto start_row = [&](int64_t slot, bool valid) {
    const int64_t at = out->rows++;
    if (at >= max_starts) return;
    row_starts[at] = static_cast<int32_t>(slot);
    if (row_valid != nullptr) row_valid[at] = valid;
  };
  out->has_entries = true;
  out->continues = rep[0] != 0;
  // Fast path for pages where every entry is a present element: rows start at the zeros of the repetition
  // levels, and every slot is valid.
  int64_t elements = 0;
  for (int64_t i = 0; i < n; ++i) elements += def[i] == max_def;
  const bool all_elements = elements == n;
  int64_t slots = 0;
  bool bad = false;
  if (all_elements) {
    start_rows_at_zeros(rep, n, start_row);
    slots = n;
    out->open_after = true;
  } else {
    // One pass without early exits: a slot is written before it is known to be an element (the next element
    // overwrites it otherwise). The first entry may continue the page before's list: the join judges that.
    bool open = true;
    for (int64_t i = 0; i < n; ++i) {
      const int dl = def[i];
      bad |= dl > max_def;
      if (rep[i] == 0) {
        start_row(slots, dl >= list_def);
      } else {
        bad |= !open || dl <= list_def;
      }
      open = dl > list_def;
      slot_valid[slots] = dl == max_def;
      slots += dl > list_def;
    }
    out->open_after = open;
  }
  out->slots = slots;
  out->row_starts.resize(static_cast<size_t>(std::min(out->rows, max_starts)));
  if (nullable) out->row_valid.resize(out->row_starts.size());
  if (bad) {
    note_malformed_list_page(levels, n, out);
    return 0;
  }
  return all_elements ? n : count_present(slot_valid, slots);
}

template <class T>
void ListChunkReader<T>::note_malformed_list_page(const ListPageLevels& levels, int64_t n, ListPage* out) const {
  const uint8_t* rep = levels.rep;
  const uint8_t* def = levels.def;
  const int list_def = leaf_.list_def, max_def = leaf_.max_def;
  bool was_open = true;
  for (int64_t i = 0; i < n && out->malformed == ListPage::Malformed::kNone; ++i) {
    if (def[i] > max_def) {
      out->malformed = ListPage::Malformed::kDefinition;
      out->malformed_level = def[i];
    } else if (rep[i] != 0 && (!was_open || def[i] <= list_def)) {
      out->malformed = ListPage::Malformed::kRepetition;
    }
    out->malformed_at = i;
    was_open = def[i] > list_def;
  }
  if (out->malformed == ListPage::Malformed::kNone) out->malformed = ListPage::Malformed::kOther;
}

template <class T>
void ListChunkReader<T>::decode_list_page_values(const PageData& page, const ListPageLevels& levels, const uint8_t* end,
                                          int64_t present, T* values, Column* col, ListPage* out) {
  const int64_t slots = out->slots;
  const uint8_t* slot_valid = levels.slot_valid;
  const uint8_t* p = levels.values;
  const auto remaining = static_cast<size_t>(end - p);
  try {
    if constexpr (std::is_same_v<T, ByteArrays>) {
      ByteArrays& arrays = std::get<ByteArrays>(col->values);
      const size_t base = arrays.offsets.size();
      values_.decode_byte_arrays(page, p, remaining, present, &arrays);
      if (present < slots) spread_byte_arrays(&arrays, base, slot_valid, slots, present);
    } else {
      if (values == nullptr) {
        std::vector<T>& column_values = std::get<std::vector<T>>(col->values);
        column_values.resize(static_cast<size_t>(out->entries_before + page.num_values));
        values = column_values.data();
      }
      T* dst = values + out->entries_before;
      values_.decode_values<T>(page.encoding, p, remaining, present, FixedOut<T>{values}, dst);
      if (present < slots) spread(dst, slot_valid, slots, present);
    }
  } catch (const Error&) {
    out->values_error = std::current_exception();
    return;
  }
  if (present < slots) out->slot_valid.assign(slot_valid, slot_valid + slots);
}

template <class T>
void ListChunkReader<T>::read_list_page(const PageRef& ref, T* values, Column* col, ListPage* out) {
  PageData page;
  size_t size;
  const uint8_t* body;
  ListPageLevels levels;
  try {
    ByteArrays* spare = nullptr;
    if constexpr (std::is_same_v<T, ByteArrays>) spare = &std::get<ByteArrays>(col->values);  // (pages in order)
    body = walk_.open_page(ref, &page, &size, spare);
    levels = read_list_levels(leaf_, page, body, size);
  } catch (const Error&) {
    out->levels_error = std::current_exception();
    return;
  }
  if (page.num_values == 0) return;
  const int64_t present = find_list_rows(levels, page.num_values, out);
  if (out->malformed != ListPage::Malformed::kNone) return;
  decode_list_page_values(page, levels, body + size, present, values, col, out);
}

template <class T>
void ListChunkReader<T>::reserve_list_values(int64_t entries, int threads, Column* col) const {
  // At most one value and one row start per level entry, and three scratch bytes (levels, slot) per entry of a
  // page.
  const int64_t width = std::is_same_v<T, ByteArrays> ? 8 : static_cast<int64_t>(sizeof(T));
  if (entries > walk_.budget() / (width + 8)) {
    throw InvalidFile(std::to_string(entries) + " list values would exceed the memory limit");
  }
  if constexpr (!std::is_same_v<T, ByteArrays>) {
    std::vector<T>& values = std::get<std::vector<T>>(col->values);
    if (threads > 1) {
      values.reserve(static_cast<size_t>(entries));
    } else {
      reserve_populated(values, static_cast<size_t>(entries));
    }
  }
  col->list_offsets.resize(static_cast<size_t>(walk_.num_rows()) + 1);
  if (leaf_.schema.nullable) col->validity.resize(static_cast<size_t>(walk_.num_rows()));
}

template <class T>
void ListChunkReader<T>::read_list_window(const std::vector<PageRef>& pages, bool apart, int threads, int64_t next_end,
                                   Column* col, std::vector<ListPage>* parts) {
  if (!apart) {
    for (size_t k = 0; k < pages.size(); ++k) read_list_page(pages[k], nullptr, col, &(*parts)[k]);
    return;
  }
  if constexpr (!std::is_same_v<T, ByteArrays>) {  // (byte arrays have one thread, so a window of one page)
    // Task 0 grows the values to the next window's end: room reserved, so they stay where the others write.
    std::vector<T>& values = std::get<std::vector<T>>(col->values);
    T* base = values.data();
    parallel_for(pages.size() + 1, threads, [&](size_t k) {
      if (k == 0) {
        values.resize(static_cast<size_t>(next_end));
      } else {
        read_list_page(pages[k - 1], base, col, &(*parts)[k - 1]);
      }
    });
  }
}

template <class T>
void ListChunkReader<T>::check_list_page(const ListPage& part, const ListJoin& join) const {
  // A repetition level of 1 continues the current row's list, which must have begun with an element.
  const auto repetition_error = [&](bool first) {
    return InvalidFile(first && join.row < 0 ? "repetition level 1 starts the chunk"
                                             : "repetition level 1 on a null or empty list");
  };
  if (part.levels_error) std::rethrow_exception(part.levels_error);
  if (join.row + part.rows >= walk_.num_rows()) {
    throw InvalidFile("list levels start more rows than the row group's " + std::to_string(walk_.num_rows()));
  }
  const bool continues_closed = part.continues && !join.open;
  if (part.malformed != ListPage::Malformed::kNone && (part.malformed_at == 0 || !continues_closed)) {
    switch (part.malformed) {
      case ListPage::Malformed::kDefinition:
        throw InvalidFile("definition level " + std::to_string(part.malformed_level) +
                          " above the column's maximum " + std::to_string(leaf_.max_def));
      case ListPage::Malformed::kRepetition: throw repetition_error(part.malformed_at == 0);
      default: throw InvalidFile("malformed list levels");
    }
  }
  if (continues_closed) throw repetition_error(true);
  if (part.values_error) std::rethrow_exception(part.values_error);
}

template <class T>
void ListChunkReader<T>::join_list_page(const ListPage& part, ListJoin* join, Column* col) {
  // Repetition 0 starts a row; a definition below list_def is a null list, list_def an empty one, above it an
  // element slot, null unless it reaches max_def.
  check_list_page(part, *join);
  const int64_t slots = join->slots;
  if constexpr (!std::is_same_v<T, ByteArrays>) {
    T* values = std::get<std::vector<T>>(col->values).data();
    if (slots != part.entries_before && part.slots > 0) {
      std::memmove(values + slots, values + part.entries_before, static_cast<size_t>(part.slots) * sizeof(T));
    }
  }
  int64_t* offsets = col->list_offsets.data();
  uint8_t* row_valid = col->validity.empty() ? nullptr : col->validity.data();
  int64_t row = join->row;
  for (size_t j = 0; j < part.row_starts.size(); ++j) {
    offsets[++row] = slots + part.row_starts[j];
    if (row_valid != nullptr) row_valid[row] = part.row_valid.empty() ? 1 : part.row_valid[j];
  }
  join->row = row;
  // element_validity is made at the first null element.
  std::vector<uint8_t>& element_valid = col->element_validity;
  const bool page_nulls = !part.slot_valid.empty();
  if (page_nulls && !join->any_null_element) {
    join->any_null_element = true;
    element_valid.assign(static_cast<size_t>(slots), 1);
  }
  if (join->any_null_element && page_nulls) {
    element_valid.insert(element_valid.end(), part.slot_valid.begin(), part.slot_valid.end());
  } else if (join->any_null_element) {
    element_valid.insert(element_valid.end(), static_cast<size_t>(part.slots), 1);
  }
  join->slots = slots + part.slots;
  if (part.has_entries) join->open = part.open_after;
}

template <class T>
void ListChunkReader<T>::read(ChunkTarget* target) {
  const int64_t entries = walk_.load();
  Column& col = *target->list;
  col = make_column(leaf_.schema);
  if (entries == 0) return;
  // Fixed-width values decode straight to where their page's first level entry would put them (no earlier
  // than their slot: an entry makes at most one slot), so pages decode apart; the join below moves them down
  // when null or empty lists came before. Byte arrays append, so their pages decode in order, on one thread.
  // Room for every entry is reserved, so the values never move while pages decode into them. On one thread its
  // pages are faulted in at once; on several, one thread faults them in while the others decode (below).
  constexpr bool kFixed = !std::is_same_v<T, ByteArrays>;
  const int threads = kFixed ? threads_ : 1;
  reserve_list_values(entries, threads, &col);
  size_t bytes_at_start = 0;  // (byte arrays: room for the rest of the chunk is made as its pages come)
  ListJoin join;

  // A window of pages at a time (bounding what is held for a chunk of many pages): their headers in order,
  // then the pages decoded (levels: rows, element slots; values), then joined in order. Every error is thrown
  // as reading the pages one after another would meet it. The next window's headers are read first: with
  // several threads (and pages), one of them makes (and so zeroes) the room for its values while the others
  // decode this window; on one, each page makes its own room as it decodes, which keeps it in cache.
  const size_t window = threads > 1 ? static_cast<size_t>(4 * threads) : 1;
  std::vector<PageRef> pages, next;
  std::vector<ListPage> parts;
  walk_.next_window<T>(&pages, window);
  const bool apart = pages.size() > 1;  // (a chunk of one page decodes as on one thread)
  bool room_made = false;  // (byte arrays: from the page headers, or else projected as the pages come)
  if constexpr (kFixed) {
    if (apart) std::get<std::vector<T>>(col.values).resize(static_cast<size_t>(walk_.entries_seen()));
  } else {
    ByteArrays& values = std::get<ByteArrays>(col.values);
    room_made = make_room_from_headers(walk_, &values);
    if (room_made) reserve_populated(values.offsets, static_cast<size_t>(entries) + 1);  // (an offset a slot)
  }
  int64_t first_entry = 0;  // level entries before the window
  while (!pages.empty()) {
    walk_.next_window<T>(&next, window);
    parts.assign(pages.size(), ListPage());
    for (size_t k = 0; k < pages.size(); ++k) {
      parts[k].entries_before = first_entry;
      first_entry += pages[k].num_values;
    }
    read_list_window(pages, apart, threads, walk_.entries_seen(), &col, &parts);
    for (size_t k = 0; k < pages.size(); ++k) {
      walk_.set_page_offset(pages[k].offset);
      join_list_page(parts[k], &join, &col);
      walk_.page_done(pages[k]);
      if constexpr (!kFixed) {
        const int64_t done = parts[k].entries_before + pages[k].num_values;
        if (!room_made) {
          make_room_for_rest(&std::get<ByteArrays>(col.values), bytes_at_start, done, entries - done,
                             static_cast<size_t>(walk_.budget()));
        }
      }
    }
    pages.swap(next);
  }
  walk_.rethrow_header_error();
  if (join.row + 1 != walk_.num_rows()) {
    throw InvalidFile("list levels start " + std::to_string(join.row + 1) + " rows, the row group holds " +
                      std::to_string(walk_.num_rows()));
  }
  col.list_offsets[static_cast<size_t>(walk_.num_rows())] = join.slots;
  if constexpr (kFixed) std::get<std::vector<T>>(col.values).resize(static_cast<size_t>(join.slots));
  if (!col.validity.empty() && count_present(col.validity.data(), walk_.num_rows()) == walk_.num_rows()) {
    std::vector<uint8_t>().swap(col.validity);
  }
}

}  // namespace

std::unique_ptr<ColumnChunkReader> make_list_reader(const ChunkSource& source) {
  return make_typed_reader<ListChunkReader>(source);
}

}  // namespace feedline::parquet::detail
