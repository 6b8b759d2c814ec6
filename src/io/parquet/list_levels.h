// Internal to the Parquet reader: what the readers of level entries share (lists, lists of lists, raw levels): a
// page's repetition and definition levels, and its values appended into their element slots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "feedline/io/table.h"
#include "io/memory.h"
#include "io/parquet/levels.h"
#include "io/parquet/page_data.h"
#include "io/parquet/schema.h"
#include "io/parquet/values.h"

namespace feedline::parquet::detail {

// A list page's repetition and definition levels, one byte an entry in this thread's scratch, beside room for a
// byte an entry (slot_valid) for the page's walk; `values`: where the page's values begin (after a v1 page's
// levels).
struct ListPageLevels {
  uint8_t *rep, *def, *slot_valid;
  const uint8_t* values;
};
ListPageLevels read_list_levels(const Leaf& leaf, const PageData& page, const uint8_t* body, size_t size);

// Decodes a list page's values (after its levels, at p) into `col`: page_slots element slots from first_slot on,
// slot_valid[i] saying whether slot first_slot + i holds a value (nullptr: every slot does).
template <class T>
void append_list_values(const ValueDecoder& decoder, int32_t encoding, const uint8_t* p, const uint8_t* end,
                        const uint8_t* slot_valid, int64_t first_slot, int64_t page_slots, Column* col) {
  using Values = std::conditional_t<std::is_same_v<T, ByteArrays>, ByteArrays, std::vector<T>>;
  Values& values = std::get<Values>(col->values);
  const int64_t present = slot_valid == nullptr ? page_slots : count_present(slot_valid, page_slots);
  if constexpr (std::is_same_v<T, ByteArrays>) {
    const size_t base = values.offsets.size();
    decoder.decode_values<T>(encoding, p, static_cast<size_t>(end - p), present, &values, nullptr);
    if (present < page_slots) spread_byte_arrays(&values, base, slot_valid, page_slots, present);
  } else {
    grow_populated(values, static_cast<size_t>(first_slot + page_slots));
    T* dst = values.data() + first_slot;
    decoder.decode_values<T>(encoding, p, static_cast<size_t>(end - p), present, FixedOut<T>{values.data()}, dst);
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

}  // namespace feedline::parquet::detail
