// Internal: output memory faulted in ahead of its first writes. A read that fills hundreds of megabytes of fresh
// memory otherwise takes one page fault per 4 KiB page as its writes land, which on a virtual machine costs
// microseconds each; asking the kernel for the pages in one call (Linux 5.14's MADV_POPULATE_WRITE) costs a
// fraction of that. Elsewhere, or on an older kernel, the call does nothing and the pages fault in as written.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

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

// Gives v's memory back, leaving it as a new one: a swap with a new one, since a move assignment from one may keep
// a std::string's buffer (libstdc++ copies a short string into the room it has).
template <class V>
void release_memory(V& v) {
  V empty;
  std::swap(v, empty);
}

// Memory for a thread's scratch buffers (a column chunk as read, a page as decompressed), which the thread keeps
// for its later reads. A request of kMinHugeScratchBytes or more gets whole 2 MiB blocks, 2 MiB-aligned and marked
// for transparent huge pages (where the kernel offers them): a process's first read then takes its scratch a 2 MiB
// page at a time rather than in 4 KiB faults, each of which the kernel zeroes apart. Smaller requests, other
// systems and sanitizer builds (which must see every byte's bounds) use operator new.
constexpr size_t kMinHugeScratchBytes = size_t{256} << 10;
void* allocate_scratch(size_t bytes);
void free_scratch(void* p, size_t bytes) noexcept;
// The bytes a request of `bytes` is given, all of them usable.
size_t scratch_capacity(size_t bytes);

template <class T>
struct ScratchAllocator {
  using value_type = T;
  ScratchAllocator() = default;
  template <class U>
  ScratchAllocator(const ScratchAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(allocate_scratch(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { free_scratch(p, n * sizeof(T)); }
  friend bool operator==(const ScratchAllocator&, const ScratchAllocator&) { return true; }
  friend bool operator!=(const ScratchAllocator&, const ScratchAllocator&) { return false; }
};

template <class T>
using ScratchVector = std::vector<T, ScratchAllocator<T>>;

// Makes v at least n long for a new use, its old contents dropped: room is made, when it must be, for all that
// the allocator gives, so that a scratch buffer grows seldom and never copies what it held.
template <class T>
void size_scratch(ScratchVector<T>& v, size_t n) {
  if (n <= v.size()) return;
  if (n > v.capacity()) {
    v.clear();
    v.shrink_to_fit();
    v.reserve(scratch_capacity(n * sizeof(T)) / sizeof(T));
  }
  v.resize(n);
}

}  // namespace feedline
