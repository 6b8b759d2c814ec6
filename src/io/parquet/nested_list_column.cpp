// Lists of lists: a chunk's pages in order, each page's level entries walked into the lists they begin at each
// level, its values appended to their slots.
#include <algorithm>
#include <cstring>

#include "io/memory.h"
#include "io/parquet/chunk_reader.h"
#include "io/parquet/levels.h"
#include "io/parquet/list_levels.h"
#include "io/parquet/page_data.h"
#include "io/parquet/paged_chunk_reader.h"
#include "io/parquet/pages.h"
#include "io/parquet/scratch.h"
#include "io/parquet/typed_reader.h"
#include "io/parquet/values.h"

namespace feedline::parquet::detail {

namespace {

template <class T>
class NestedListChunkReader final : public PagedChunkReader {
 public:
  explicit NestedListChunkReader(const ChunkSource& source) : PagedChunkReader(source) {}

  void read(ChunkTarget* target) override;

 private:
  // The walk over a chunk's level entries, page by page.
  struct NestedWalk;
  NestedWalk start_nested_walk() const;
  // Checks a chunk's `entries` level entries against the budget, and reserves room for its lists and values.
  void reserve_nested_list(int64_t entries, Column* col) const;
  // Reads one data page into `col`: its levels walked, the lists they begin joined, its values appended.
  void read_nested_page(const PageData& page, const uint8_t* body, size_t size, NestedWalk* w, Column* col);
  // Walks a page's n level entries: two levels of lists (walk_lists_of_lists, with its state in locals), or any
  // depth. Rows go to `col`, the inner lists to the page's scratch in *w; returns whether an entry is malformed.
  bool walk_lists_of_lists(NestedWalk& w, const ListPageLevels& levels, int64_t n, Column* col) const;
  bool walk_nested_lists(NestedWalk& w, const ListPageLevels& levels, int64_t n, Column* col) const;
  // The inner lists a page began, from its scratch into the column's levels.
  void join_inner_lists(const NestedWalk& w, Column* col) const;
  // The first malformed entry of a page's levels, given the lists open and the row before it, as an error.
  [[noreturn]] void throw_malformed_nested(const NestedWalk& w, const uint8_t* rep, const uint8_t* def, int64_t n,
                                           int open_at, int64_t row_at) const;
};

// What the reader knows of a chunk's lists as it walks their level entries, page by page.
template <class T>
struct NestedListChunkReader<T>::NestedWalk {
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

template <class T>
typename NestedListChunkReader<T>::NestedWalk NestedListChunkReader<T>::start_nested_walk() const {
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
void NestedListChunkReader<T>::reserve_nested_list(int64_t entries, Column* col) const {
  const int depth = leaf_.max_rep;
  // Each level entry begins at most depth - 1 inner lists (an offset and a validity byte each), besides what
  // a one-level list allows it.
  const int64_t width = (std::is_same_v<T, ByteArrays> ? 8 : static_cast<int64_t>(sizeof(T))) + 4 + 9 * (depth - 1);
  if (entries > walk_.budget() / width) {
    throw InvalidFile(std::to_string(entries) + " list values would exceed the memory limit");
  }
  col->list_offsets.resize(static_cast<size_t>(walk_.num_rows()) + 1);
  if (leaf_.schema.nullable) col->validity.resize(static_cast<size_t>(walk_.num_rows()));
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

template <class T>
void NestedListChunkReader<T>::throw_malformed_nested(const NestedWalk& w, const uint8_t* rep, const uint8_t* def,
                                                      int64_t n, int open_at, int64_t row_at) const {
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
    if (r == 0 && ++row_at >= walk_.num_rows()) {
      throw InvalidFile("list levels start more rows than the row group's " + std::to_string(walk_.num_rows()));
    }
    open_at = w.innermost[static_cast<size_t>(d)];
  }
  throw InvalidFile("malformed list levels");  // (not reached: called on a page with a malformed entry)
}

template <class T>
bool NestedListChunkReader<T>::walk_lists_of_lists(NestedWalk& w, const ListPageLevels& levels, int64_t n,
                                                   Column* col) const {
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

template <class T>
bool NestedListChunkReader<T>::walk_nested_lists(NestedWalk& w, const ListPageLevels& levels, int64_t n,
                                                 Column* col) const {
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

template <class T>
void NestedListChunkReader<T>::join_inner_lists(const NestedWalk& w, Column* col) const {
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
void NestedListChunkReader<T>::read_nested_page(const PageData& page, const uint8_t* body, size_t size, NestedWalk* w,
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
  const ListPageLevels levels = read_list_levels(leaf_, page, body, size);
  const int64_t first_slot = w->slots;
  // Repetition level r > 0 adds an element to the current list at level r - 1, which must hold one already;
  // r = 0 begins a row. The new element is a list at level r (or a value slot when r = depth), which holds a
  // list at the next level while the definition level reaches past its empty_def, and so on, up to level
  // innermost[d]. Malformed levels are noted without a branch and found again, in order, for the message;
  // meanwhile every write stays in bounds (at most one row, list per level and slot per entry; rows counted
  // first).
  int64_t rows_here = 0;
  for (int64_t i = 0; i < n; ++i) rows_here += levels.rep[i] == 0;
  if (w->row + rows_here >= walk_.num_rows()) throw_malformed_nested(*w, levels.rep, levels.def, n, w->open, w->row);
  const int open_before = w->open;
  const int64_t row_before = w->row;
  // Lists of lists, the common case, walk with their state in locals.
  const bool bad = w->depth == 2 ? walk_lists_of_lists(*w, levels, n, col) : walk_nested_lists(*w, levels, n, col);
  if (bad) throw_malformed_nested(*w, levels.rep, levels.def, n, open_before, row_before);
  join_inner_lists(*w, col);
  append_list_values<T>(values_, page.encoding, levels.values, body + size, levels.slot_valid, first_slot,
                        w->slots - first_slot, col);
}

template <class T>
void NestedListChunkReader<T>::read(ChunkTarget* target) {
  const int64_t entries = walk_.load();
  Column& col = *target->list;
  col = make_column(leaf_.schema);
  if (entries == 0) return;
  reserve_nested_list(entries, &col);
  int64_t entries_done = 0;
  size_t bytes_at_start = 0;  // (byte arrays: room for the rest of the chunk is made as its pages come)
  NestedWalk walk = start_nested_walk();
  walk_.walk<T>([&](const PageData& page, const uint8_t* body, size_t size) {
    read_nested_page(page, body, size, &walk, &col);
    entries_done += page.num_values;
    if constexpr (std::is_same_v<T, ByteArrays>) {
      make_room_for_rest(&std::get<ByteArrays>(col.values), bytes_at_start, entries_done, entries - entries_done,
                         static_cast<size_t>(walk_.budget()));
    }
  });
  if (walk.row + 1 != walk_.num_rows()) {
    throw InvalidFile("list levels start " + std::to_string(walk.row + 1) + " rows, the row group holds " +
                      std::to_string(walk_.num_rows()));
  }
  // Outside in, so that each level's end is taken before the level below it gets its own.
  col.list_offsets[static_cast<size_t>(walk_.num_rows())] = walk.lists_below(0);
  for (int k = 1; k < walk.depth; ++k) {
    col.inner_lists[static_cast<size_t>(k - 1)].offsets.push_back(walk.lists_below(k));
  }
  drop_validity_without_nulls(&col);
}

}  // namespace

std::unique_ptr<ColumnChunkReader> make_nested_list_reader(const ChunkSource& source) {
  return make_typed_reader<NestedListChunkReader>(source);
}

}  // namespace feedline::parquet::detail
