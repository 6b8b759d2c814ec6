// List columns: one level of lists (read_list: its pages' levels and values found page by page, on several threads
// for a large chunk, and joined in page order), lists of lists (read_nested_list), and any column as its raw level
// entries (read_raw, for VARIANT groups).
#include <algorithm>
#include <cstring>

#include "feedline/io/parallel.h"
#include "io/memory.h"
#include "io/parquet/chunk_reader.h"
#include "io/parquet/pages.h"
#include "io/parquet/values.h"

namespace feedline::parquet::detail {

ChunkReader::ListPageLevels ChunkReader::read_list_levels(const PageData& page, const uint8_t* body, size_t size) {
  const int64_t n = page.num_values;
  std::vector<uint8_t>& levels = scratch().levels;
  if (levels.size() < static_cast<size_t>(3 * n)) levels.resize(static_cast<size_t>(3 * n));
  ListPageLevels out{levels.data(), levels.data() + n, levels.data() + 2 * n, body};
  if (page.v2) {
    read_levels_v2(page.v2_rep_levels, page.v2_rep_size, n, leaf_.max_rep, out.rep);
    read_levels_v2(page.v2_def_levels, page.v2_def_size, n, leaf_.max_def, out.def);
  } else {
    const uint8_t* end = body + size;
    read_levels(page.repetition_level_encoding, out.values, end, n, leaf_.max_rep, out.rep);
    read_levels(page.definition_level_encoding, out.values, end, n, leaf_.max_def, out.def);
  }
  return out;
}

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

}  // namespace

int64_t ChunkReader::find_list_rows(const ListPageLevels& levels, int64_t n, ListPage* out) const {
  const uint8_t* rep = levels.rep;
  const uint8_t* def = levels.def;
  uint8_t* slot_valid = levels.slot_valid;
  const int list_def = leaf_.list_def, max_def = leaf_.max_def;
  const bool nullable = leaf_.schema.nullable;
  // Enough row starts to find more rows than the row group holds, whichever page this is; no more. Each entry
  // starts at most one row, so room for n (or that many) is made once.
  const int64_t max_starts = std::min(n, num_rows_ + 1);
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
    // overwrites it otherwise). The first entry may continue the page before's list: read_list judges that.
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

void ChunkReader::note_malformed_list_page(const ListPageLevels& levels, int64_t n, ListPage* out) const {
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
void ChunkReader::decode_list_page_values(const PageData& page, const ListPageLevels& levels, const uint8_t* end,
                                          int64_t present, T* values, Column* col, ListPage* out) {
  const int64_t slots = out->slots;
  const uint8_t* slot_valid = levels.slot_valid;
  const uint8_t* p = levels.values;
  const auto remaining = static_cast<size_t>(end - p);
  try {
    if constexpr (std::is_same_v<T, ByteArrays>) {
      ByteArrays& arrays = std::get<ByteArrays>(col->values);
      const size_t base = arrays.offsets.size();
      decode_values<T>(page.encoding, p, remaining, present, &arrays, nullptr);
      if (present < slots) spread_byte_arrays(&arrays, base, slot_valid, slots, present);
    } else {
      if (values == nullptr) {
        std::vector<T>& column_values = std::get<std::vector<T>>(col->values);
        column_values.resize(static_cast<size_t>(out->entries_before + page.num_values));
        values = column_values.data();
      }
      T* dst = values + out->entries_before;
      decode_values<T>(page.encoding, p, remaining, present, FixedOut<T>{values}, dst);
      if (present < slots) spread(dst, slot_valid, slots, present);
    }
  } catch (const Error&) {
    out->values_error = std::current_exception();
    return;
  }
  if (present < slots) out->slot_valid.assign(slot_valid, slot_valid + slots);
}

template <class T>
void ChunkReader::read_list_page(const PageRef& ref, T* values, Column* col, ListPage* out) {
  PageData page;
  size_t size;
  const uint8_t* body;
  ListPageLevels levels;
  try {
    body = open_page(ref, &page, &size);
    levels = read_list_levels(page, body, size);
  } catch (const Error&) {
    out->levels_error = std::current_exception();
    return;
  }
  if (page.num_values == 0) return;
  const int64_t present = find_list_rows(levels, page.num_values, out);
  if (out->malformed != ListPage::Malformed::kNone) return;
  decode_list_page_values<T>(page, levels, body + size, present, values, col, out);
}

template <class T>
void ChunkReader::reserve_list_values(int64_t entries, int threads, Column* col) const {
  // At most one value and one row start per level entry, and three scratch bytes (levels, slot) per entry of a
  // page.
  const int64_t width = std::is_same_v<T, ByteArrays> ? 8 : static_cast<int64_t>(sizeof(T));
  if (entries > budget_ / (width + 8)) {
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
  col->list_offsets.resize(static_cast<size_t>(num_rows_) + 1);
  if (leaf_.schema.nullable) col->validity.resize(static_cast<size_t>(num_rows_));
}

template <class T>
void ChunkReader::read_list_window(const std::vector<PageRef>& pages, bool apart, int threads, int64_t next_end,
                                   Column* col, std::vector<ListPage>* parts) {
  if (!apart) {
    for (size_t k = 0; k < pages.size(); ++k) read_list_page<T>(pages[k], nullptr, col, &(*parts)[k]);
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
        read_list_page<T>(pages[k - 1], base, col, &(*parts)[k - 1]);
      }
    });
  }
}

void ChunkReader::check_list_page(const ListPage& part, const ListJoin& join) const {
  // A repetition level of 1 continues the current row's list, which must have begun with an element.
  const auto repetition_error = [&](bool first) {
    return InvalidFile(first && join.row < 0 ? "repetition level 1 starts the chunk"
                                             : "repetition level 1 on a null or empty list");
  };
  if (part.levels_error) std::rethrow_exception(part.levels_error);
  if (join.row + part.rows >= num_rows_) {
    throw InvalidFile("list levels start more rows than the row group's " + std::to_string(num_rows_));
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
void ChunkReader::join_list_page(const ListPage& part, ListJoin* join, Column* col) {
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
  if (join->any_null_element && page_nulls) element_valid.insert(element_valid.end(), part.slot_valid.begin(), part.slot_valid.end());
  if (join->any_null_element && !page_nulls) element_valid.insert(element_valid.end(), static_cast<size_t>(part.slots), 1);
  join->slots = slots + part.slots;
  if (part.has_entries) join->open = part.open_after;
}

template <class T>
Column ChunkReader::read_list() {
  const int64_t entries = load();
  Column col = make_column(leaf_.schema);
  if (entries == 0) return col;
  // Fixed-width values decode straight to where their page's first level entry would put them (no earlier
  // than their slot: an entry makes at most one slot), so pages decode apart; the join below moves them down
  // when null or empty lists came before. Byte arrays append, so their pages decode in order, on one thread.
  // Room for every entry is reserved, so the values never move while pages decode into them. On one thread its
  // pages are faulted in at once; on several, one thread faults them in while the others decode (below).
  constexpr bool kFixed = !std::is_same_v<T, ByteArrays>;
  const int threads = kFixed ? threads_ : 1;
  reserve_list_values<T>(entries, threads, &col);
  size_t bytes_at_start = 0;  // (byte arrays: room for the rest of the chunk is made as its pages come)
  int64_t seen = 0, pos = start_;
  ListJoin join;

  // A window of pages at a time (bounding what is held for a chunk of many pages): their headers in order,
  // then the pages decoded (levels: rows, element slots; values), then joined in order. Every error is thrown
  // as reading the pages one after another would meet it. The next window's headers are read first: with
  // several threads (and pages), one of them makes (and so zeroes) the room for its values while the others
  // decode this window; on one, each page makes its own room as it decodes, which keeps it in cache.
  const size_t window = threads > 1 ? static_cast<size_t>(4 * threads) : 1;
  std::vector<PageRef> pages, next;
  std::vector<ListPage> parts;
  next_window<T>(&pages, window, &pos, &seen, entries);
  const bool apart = pages.size() > 1;  // (a chunk of one page decodes as on one thread)
  if constexpr (kFixed) {
    if (apart) std::get<std::vector<T>>(col.values).resize(static_cast<size_t>(seen));
  }
  int64_t first_entry = 0;  // level entries before the window
  while (!pages.empty()) {
    next_window<T>(&next, window, &pos, &seen, entries);
    parts.assign(pages.size(), ListPage());
    for (size_t k = 0; k < pages.size(); ++k) {
      parts[k].entries_before = first_entry;
      first_entry += pages[k].num_values;
    }
    read_list_window<T>(pages, apart, threads, seen, &col, &parts);
    for (size_t k = 0; k < pages.size(); ++k) {
      page_offset_ = pages[k].offset;
      join_list_page<T>(parts[k], &join, &col);
      if constexpr (!kFixed) {
        const int64_t done = parts[k].entries_before + pages[k].num_values;
        make_room_for_rest(&std::get<ByteArrays>(col.values), bytes_at_start, done, entries - done,
                           static_cast<size_t>(budget_));
      }
    }
    pages.swap(next);
  }
  rethrow_header_error();
  if (join.row + 1 != num_rows_) {
    throw InvalidFile("list levels start " + std::to_string(join.row + 1) + " rows, the row group holds " +
                      std::to_string(num_rows_));
  }
  col.list_offsets[static_cast<size_t>(num_rows_)] = join.slots;
  if constexpr (kFixed) std::get<std::vector<T>>(col.values).resize(static_cast<size_t>(join.slots));
  if (!col.validity.empty() && count_present(col.validity.data(), num_rows_) == num_rows_) {
    std::vector<uint8_t>().swap(col.validity);
  }
  return col;
}

template <class T>
void ChunkReader::append_list_values(int32_t encoding, const uint8_t* p, const uint8_t* end, const uint8_t* slot_valid,
                                     int64_t first_slot, int64_t page_slots, Column* col) {
  using Values = std::conditional_t<std::is_same_v<T, ByteArrays>, ByteArrays, std::vector<T>>;
  Values& values = std::get<Values>(col->values);
  const int64_t present = slot_valid == nullptr ? page_slots : count_present(slot_valid, page_slots);
  if constexpr (std::is_same_v<T, ByteArrays>) {
    const size_t base = values.offsets.size();
    decode_values<T>(encoding, p, static_cast<size_t>(end - p), present, &values, nullptr);
    if (present < page_slots) spread_byte_arrays(&values, base, slot_valid, page_slots, present);
  } else {
    grow_populated(values, static_cast<size_t>(first_slot + page_slots));
    T* dst = values.data() + first_slot;
    decode_values<T>(encoding, p, static_cast<size_t>(end - p), present, FixedOut<T>{values.data()}, dst);
    if (present < page_slots) spread(dst, slot_valid, page_slots, present);
  }
  // element_validity stays empty until the first null element (and from then on is never empty).
  std::vector<uint8_t>& element_valid = col->element_validity;
  if (present == page_slots && element_valid.empty()) return;
  if (element_valid.empty()) element_valid.assign(static_cast<size_t>(first_slot), 1);
  if (slot_valid == nullptr) {
    element_valid.insert(element_valid.end(), static_cast<size_t>(page_slots), 1);
  } else {
    element_valid.insert(element_valid.end(), slot_valid, slot_valid + page_slots);
  }
}

// What read_nested_list knows of a chunk's lists as it walks their level entries, page by page.
struct ChunkReader::NestedWalk {
  int depth = 0;
  int max_def = 0;
  // empty_def[k]: the definition level of a present but empty list at level k (0: the rows' lists). Below it the
  // list is null, above it the list holds an element: the next level's list, or a value slot.
  std::vector<int> empty_def;
  // innermost[d]: the innermost level an entry of definition level d reaches, the first whose list it leaves null
  // or empty, or depth for a value slot.
  std::vector<int> innermost;
  // begun[j]: the lists begun so far at level j + 1, each with its offset (and validity) in col.inner_lists[j].
  // Lists begun at level k (0 < k < depth) and at the innermost level index the next level's lists / the slots.
  std::vector<int64_t> begun;
  int64_t row = -1, slots = 0;
  int open = 0;  // how many levels, from the rows' lists in, have a current list holding an element
  // The page being walked. Each entry begins at most one list at each inner level: room for n a level is made in
  // the thread's scratch, and the column's levels grow by what the page used once it is walked. Level k's lists
  // of this page go to inner_offsets(k)[j - base[k - 1]], j counting the level's lists from the chunk's first.
  std::vector<int64_t> base;
  int64_t page_entries = 0;
  int64_t* page_offsets = nullptr;
  uint8_t* page_valid = nullptr;

  int64_t lists_below(int k) const { return k + 1 < depth ? begun[static_cast<size_t>(k)] : slots; }
  int64_t* inner_offsets(int k) const { return page_offsets + static_cast<size_t>(k - 1) * page_entries; }
  uint8_t* inner_valid(int k) const { return page_valid + static_cast<size_t>(k - 1) * page_entries; }
};

ChunkReader::NestedWalk ChunkReader::start_nested_walk() const {
  NestedWalk w;
  w.depth = leaf_.max_rep;
  w.max_def = leaf_.max_def;
  w.empty_def.push_back(leaf_.list_def);
  w.empty_def.insert(w.empty_def.end(), leaf_.inner_list_defs.begin(), leaf_.inner_list_defs.end());
  w.innermost.resize(static_cast<size_t>(w.max_def) + 1);
  for (int d = 0; d <= w.max_def; ++d) {
    int k = 0;
    while (k < w.depth && d > w.empty_def[static_cast<size_t>(k)]) ++k;
    w.innermost[static_cast<size_t>(d)] = k;
  }
  w.begun.assign(static_cast<size_t>(w.depth - 1), 0);
  return w;
}

template <class T>
void ChunkReader::reserve_nested_list(int64_t entries, Column* col) const {
  const int depth = leaf_.max_rep;
  // Each level entry begins at most depth - 1 inner lists (an offset and a validity byte each), besides what
  // read_list allows it.
  const int64_t width = (std::is_same_v<T, ByteArrays> ? 8 : static_cast<int64_t>(sizeof(T))) + 4 + 9 * (depth - 1);
  if (entries > budget_ / width) {
    throw InvalidFile(std::to_string(entries) + " list values would exceed the memory limit");
  }
  col->list_offsets.resize(static_cast<size_t>(num_rows_) + 1);
  if (leaf_.schema.nullable) col->validity.resize(static_cast<size_t>(num_rows_));
  // Inner levels collect the start of each list as it begins, and their end once every list has. An entry begins
  // at most one list at each level and one value: room for every entry is reserved (not touched), so that pages
  // grow them without moving them (and populate what they use as they grow: the levels and slots are often far
  // fewer than the entries).
  for (int k = 1; k < depth; ++k) {
    ListLevel& level = col->inner_lists[static_cast<size_t>(k - 1)];
    level.offsets.clear();
    level.offsets.reserve(static_cast<size_t>(entries) + 1);
    if (leaf_.schema.inner_list_nullable[static_cast<size_t>(k - 1)]) {
      level.validity.reserve(static_cast<size_t>(entries));
    }
  }
  if constexpr (!std::is_same_v<T, ByteArrays>) {
    std::get<std::vector<T>>(col->values).reserve(static_cast<size_t>(entries));
  }
}

void ChunkReader::throw_malformed_nested(const NestedWalk& w, const uint8_t* rep, const uint8_t* def, int64_t n,
                                         int open_at, int64_t row_at) const {
  for (int64_t i = 0; i < n; ++i) {
    const int r = rep[i], d = def[i];
    if (r > w.depth) {
      throw InvalidFile("repetition level " + std::to_string(r) + " above the column's maximum " +
                        std::to_string(w.depth));
    }
    if (d > w.max_def) {
      throw InvalidFile("definition level " + std::to_string(d) + " above the column's maximum " +
                        std::to_string(w.max_def));
    }
    if (r > open_at) {
      throw InvalidFile("repetition level " + std::to_string(r) +
                        (row_at < 0 ? " starts the chunk" : " on a null, empty or absent list"));
    }
    if (r > 0 && d <= w.empty_def[static_cast<size_t>(r - 1)]) {
      throw InvalidFile("repetition level " + std::to_string(r) + " with definition level " + std::to_string(d) +
                        ", which adds no element");
    }
    if (r == 0 && ++row_at >= num_rows_) {
      throw InvalidFile("list levels start more rows than the row group's " + std::to_string(num_rows_));
    }
    open_at = w.innermost[static_cast<size_t>(d)];
  }
  throw InvalidFile("malformed list levels");  // (not reached: called on a page with a malformed entry)
}

bool ChunkReader::walk_lists_of_lists(NestedWalk& w, const ListPageLevels& levels, int64_t n, Column* col) const {
  const uint8_t* rep = levels.rep;
  const uint8_t* def = levels.def;
  uint8_t* slot_valid = levels.slot_valid;
  const int max_def = w.max_def, depth = w.depth;
  int64_t* row_offsets = col->list_offsets.data();
  uint8_t* row_valid = col->validity.empty() ? nullptr : col->validity.data();
  int64_t* inner = w.inner_offsets(1);
  uint8_t* inner_ok = leaf_.schema.inner_list_nullable[0] ? w.inner_valid(1) : nullptr;
  const int64_t first_list = w.base[0], first_slot = w.slots;
  const int row_empty = w.empty_def[0], inner_empty = w.empty_def[1];
  const int* innermost = w.innermost.data();
  int64_t lists = w.begun[0], slot = w.slots, at_row = w.row;
  int at_open = w.open;
  bool bad = false;
  for (int64_t i = 0; i < n; ++i) {
    const int r = rep[i], d = def[i];
    const int last = innermost[std::min(d, max_def)];
    bad |= (r > depth) | (d > max_def) | (r > at_open) | (r > last);
    if (r == 0) {
      row_offsets[++at_row] = lists;
      if (row_valid != nullptr) row_valid[at_row] = d >= row_empty;
    }
    if (r <= 1 && last >= 1) {  // an inner list begins
      if (inner_ok != nullptr) inner_ok[lists - first_list] = d >= inner_empty;
      inner[(lists++) - first_list] = slot;
    }
    if (last == 2) slot_valid[(slot++) - first_slot] = d == max_def;
    at_open = last;
  }
  w.begun[0] = lists;
  w.slots = slot;
  w.row = at_row;
  w.open = at_open;
  return bad;
}

bool ChunkReader::walk_nested_lists(NestedWalk& w, const ListPageLevels& levels, int64_t n, Column* col) const {
  const uint8_t* rep = levels.rep;
  const uint8_t* def = levels.def;
  uint8_t* slot_valid = levels.slot_valid;
  const int max_def = w.max_def, depth = w.depth;
  const std::vector<bool>& nullable = leaf_.schema.inner_list_nullable;
  const int64_t first_slot = w.slots;
  bool bad = false;
  for (int64_t i = 0; i < n; ++i) {
    const int r = rep[i], d = def[i];
    const int last = w.innermost[static_cast<size_t>(std::min(d, max_def))];
    bad |= (r > depth) | (d > max_def) | (r > w.open) | (r > last);
    if (r == 0) {
      ++w.row;
      col->list_offsets[static_cast<size_t>(w.row)] = w.lists_below(0);
      if (!col->validity.empty()) col->validity[static_cast<size_t>(w.row)] = d >= w.empty_def[0];
    }
    for (int k = std::max(r, 1); k <= std::min(last, depth - 1); ++k) {  // a list begins at level k
      const auto at = static_cast<size_t>(w.begun[static_cast<size_t>(k - 1)]++ - w.base[static_cast<size_t>(k - 1)]);
      w.inner_offsets(k)[at] = w.lists_below(k);
      if (nullable[static_cast<size_t>(k - 1)]) w.inner_valid(k)[at] = d >= w.empty_def[static_cast<size_t>(k)];
    }
    if (last == depth) {  // a value slot, null below the maximum definition level
      slot_valid[w.slots - first_slot] = d == max_def;
      ++w.slots;
    }
    w.open = last;
  }
  return bad;
}

void ChunkReader::join_inner_lists(const NestedWalk& w, Column* col) const {
  for (int k = 1; k < w.depth; ++k) {
    ListLevel& level = col->inner_lists[static_cast<size_t>(k - 1)];
    const auto used = static_cast<size_t>(w.begun[static_cast<size_t>(k - 1)] - w.base[static_cast<size_t>(k - 1)]);
    const size_t at = level.offsets.size();
    grow_populated(level.offsets, at + used);
    std::memcpy(level.offsets.data() + at, w.inner_offsets(k), used * sizeof(int64_t));
    if (leaf_.schema.inner_list_nullable[static_cast<size_t>(k - 1)]) {
      grow_populated(level.validity, at + used);
      std::memcpy(level.validity.data() + at, w.inner_valid(k), used);
    }
  }
}

template <class T>
void ChunkReader::read_nested_page(const PageData& page, const uint8_t* body, size_t size, NestedWalk* w,
                                   Column* col) {
  const int64_t n = page.num_values;
  Scratch& scr = scratch();
  const auto room = static_cast<size_t>(n) * static_cast<size_t>(w->depth - 1);
  if (scr.inner_offsets.size() < room) scr.inner_offsets.resize(room);
  if (scr.inner_valid.size() < room) scr.inner_valid.resize(room);
  w->base = w->begun;
  w->page_entries = n;
  w->page_offsets = scr.inner_offsets.data();
  w->page_valid = scr.inner_valid.data();
  const ListPageLevels levels = read_list_levels(page, body, size);
  const int64_t first_slot = w->slots;
  // Repetition level r > 0 adds an element to the current list at level r - 1, which must hold one already;
  // r = 0 begins a row. The new element is a list at level r (or a value slot when r = depth), which holds a
  // list at the next level while the definition level reaches past its empty_def, and so on, up to level
  // innermost[d]. Malformed levels are noted without a branch and found again, in order, for the message;
  // meanwhile every write stays in bounds (at most one row, list per level and slot per entry; rows counted
  // first).
  int64_t rows_here = 0;
  for (int64_t i = 0; i < n; ++i) rows_here += levels.rep[i] == 0;
  if (w->row + rows_here >= num_rows_) throw_malformed_nested(*w, levels.rep, levels.def, n, w->open, w->row);
  const int open_before = w->open;
  const int64_t row_before = w->row;
  // Lists of lists, the common case, walk with their state in locals.
  const bool bad = w->depth == 2 ? walk_lists_of_lists(*w, levels, n, col) : walk_nested_lists(*w, levels, n, col);
  if (bad) throw_malformed_nested(*w, levels.rep, levels.def, n, open_before, row_before);
  join_inner_lists(*w, col);
  append_list_values<T>(page.encoding, levels.values, body + size, levels.slot_valid, first_slot, w->slots - first_slot,
                        col);
}

template <class T>
Column ChunkReader::read_nested_list() {
  const int64_t entries = load();
  Column col = make_column(leaf_.schema);
  if (entries == 0) return col;
  reserve_nested_list<T>(entries, &col);
  int64_t entries_done = 0;
  size_t bytes_at_start = 0;  // (byte arrays: room for the rest of the chunk is made as its pages come)
  NestedWalk walk = start_nested_walk();
  walk_pages<T>(entries, [&](const PageData& page, const uint8_t* body, size_t size) {
    read_nested_page<T>(page, body, size, &walk, &col);
    entries_done += page.num_values;
    if constexpr (std::is_same_v<T, ByteArrays>) {
      make_room_for_rest(&std::get<ByteArrays>(col.values), bytes_at_start, entries_done, entries - entries_done,
                         static_cast<size_t>(budget_));
    }
    return page.num_values;
  });
  if (walk.row + 1 != num_rows_) {
    throw InvalidFile("list levels start " + std::to_string(walk.row + 1) + " rows, the row group holds " +
                      std::to_string(num_rows_));
  }
  // Outside in, so that each level's end is taken before the level below it gets its own.
  col.list_offsets[static_cast<size_t>(num_rows_)] = walk.lists_below(0);
  for (int k = 1; k < walk.depth; ++k) col.inner_lists[static_cast<size_t>(k - 1)].offsets.push_back(walk.lists_below(k));
  drop_validity_without_nulls(&col);
  return col;
}

// The columns read_parsed reads.
template <class T>
RawChunk ChunkReader::read_raw() {
  const int64_t entries = load();
  ColumnSchema flat = leaf_.schema;
  flat.is_list = false;
  flat.inner_list_nullable.clear();
  RawChunk raw{{}, {}, make_column(flat)};
  if (entries == 0) return raw;
  const int64_t width = (std::is_same_v<T, ByteArrays> ? 8 : static_cast<int64_t>(sizeof(T))) + 3;
  if (entries > budget_ / width) throw InvalidFile(std::to_string(entries) + " values would exceed the memory limit");
  raw.rep.reserve(static_cast<size_t>(entries));
  raw.def.reserve(static_cast<size_t>(entries));
  const int max_rep = leaf_.max_rep, max_def = leaf_.max_def;
  int64_t rows = 0;
  walk_pages<T>(entries, [&](const PageData& page, const uint8_t* body, size_t size) {
    const int64_t n = page.num_values;
    std::vector<uint8_t>& levels = scratch().levels;
    if (levels.size() < static_cast<size_t>(3 * n)) levels.resize(static_cast<size_t>(3 * n));
    uint8_t* rep = levels.data();
    uint8_t* def = rep + n;
    uint8_t* valid = def + n;
    const uint8_t* p = body;
    const uint8_t* end = body + size;
    if (max_rep == 0) std::memset(rep, 0, static_cast<size_t>(n));
    if (max_def == 0) std::memset(def, 0, static_cast<size_t>(n));
    if (page.v2) {
      if (max_rep > 0) read_levels_v2(page.v2_rep_levels, page.v2_rep_size, n, max_rep, rep);
      if (max_def > 0) read_levels_v2(page.v2_def_levels, page.v2_def_size, n, max_def, def);
    } else {
      if (max_rep > 0) read_levels(page.repetition_level_encoding, p, end, n, max_rep, rep);
      if (max_def > 0) read_levels(page.definition_level_encoding, p, end, n, max_def, def);
    }
    for (int64_t i = 0; i < n; ++i) {
      if (rep[i] > max_rep || def[i] > max_def) {
        throw InvalidFile("level entry " + std::to_string(i) + " above the column's maximum levels");
      }
      valid[i] = def[i] == max_def;
      rows += rep[i] == 0;
    }
    append_list_values<T>(page.encoding, p, end, valid, static_cast<int64_t>(raw.def.size()), n, &raw.values);
    raw.rep.insert(raw.rep.end(), rep, rep + n);
    raw.def.insert(raw.def.end(), def, def + n);
    return n;
  });
  if (rows != num_rows_) {
    throw InvalidFile("levels start " + std::to_string(rows) + " rows, the row group holds " + std::to_string(num_rows_));
  }
  return raw;
}

template Column ChunkReader::read_list<uint8_t>();
template Column ChunkReader::read_nested_list<uint8_t>();
template Column ChunkReader::read_list<int32_t>();
template Column ChunkReader::read_nested_list<int32_t>();
template Column ChunkReader::read_list<int64_t>();
template Column ChunkReader::read_nested_list<int64_t>();
template Column ChunkReader::read_list<float>();
template Column ChunkReader::read_nested_list<float>();
template Column ChunkReader::read_list<double>();
template Column ChunkReader::read_nested_list<double>();
template Column ChunkReader::read_list<ByteArrays>();
template Column ChunkReader::read_nested_list<ByteArrays>();
template RawChunk ChunkReader::read_raw<uint8_t>();
template RawChunk ChunkReader::read_raw<int32_t>();
template RawChunk ChunkReader::read_raw<int64_t>();
template RawChunk ChunkReader::read_raw<float>();
template RawChunk ChunkReader::read_raw<double>();
template RawChunk ChunkReader::read_raw<ByteArrays>();

}  // namespace feedline::parquet::detail
