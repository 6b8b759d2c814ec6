// Internal: output memory faulted in ahead of its first writes. A read that fills hundreds of megabytes of fresh
// memory otherwise takes one page fault per 4 KiB page as its writes land, which on a virtual machine costs
// microseconds each; asking the kernel for the pages in one call (Linux 5.14's MADV_POPULATE_WRITE) costs a
// fraction of that. Elsewhere, or on an older kernel, the call does nothing and the pages fault in as before.
#pragma once

#include <cstddef>

namespace feedline {

// Faults in the whole pages of [p, p + bytes) for writing, when they are at least 64 KiB.
void populate_for_writing(void* p, size_t bytes);

// v.reserve(n), with the room past v's size populated for writing (std::vector or std::string).
template <class V>
void reserve_populated(V& v, size_t n) {
  v.reserve(n);
  if (n > v.size()) populate_for_writing(v.data() + v.size(), (n - v.size()) * sizeof(*v.data()));
}

// v.resize(n), the new elements' pages populated before they are zeroed.
template <class V>
void resize_populated(V& v, size_t n) {
  reserve_populated(v, n);
  v.resize(n);
}

// v.resize(n) for a vector that grows piece by piece (a page at a time): room made geometrically, as resize would,
// and the new elements' pages populated before they are zeroed.
template <class V>
void grow_populated(V& v, size_t n) {
  if (n > v.capacity()) v.reserve(n > 2 * v.capacity() ? n : 2 * v.capacity());
  if (n > v.size()) populate_for_writing(v.data() + v.size(), (n - v.size()) * sizeof(*v.data()));
  v.resize(n);
}

}  // namespace feedline
