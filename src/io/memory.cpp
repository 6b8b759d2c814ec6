#include "io/memory.h"

#include <cstdint>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace feedline {

void populate_for_writing(void* p, size_t bytes) {
#if defined(__linux__)
  constexpr size_t kMinBytes = size_t{64} << 10;
  constexpr int kPopulateWrite = 23;  // MADV_POPULATE_WRITE, which older headers lack
  if (bytes < kMinBytes) return;
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(p) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(page - 1);
  if (end <= first) return;
  // Memory that malloc hands back from its free lists is in place already, and populating it again costs a walk
  // over its pages: the last page tells. (Fresh memory from the kernel is absent throughout.)
  unsigned char resident = 0;
  if (mincore(reinterpret_cast<void*>(end - page), page, &resident) == 0 && (resident & 1) != 0) return;
  // Errors (EINVAL before Linux 5.14, ENOMEM) leave the pages to fault in on first write, as without the call.
  madvise(reinterpret_cast<void*>(first), end - first, kPopulateWrite);
#else
  (void)p;
  (void)bytes;
#endif
}

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

bool huge_scratch(size_t bytes) {
#if defined(__linux__)
  return !kSanitized && bytes >= kMinHugeScratchBytes;
#else
  (void)bytes;
  return false;
#endif
}

}  // namespace

size_t scratch_capacity(size_t bytes) {
  if (!huge_scratch(bytes)) return bytes;
  return bytes > SIZE_MAX - kHugePage ? bytes : (bytes + kHugePage - 1) / kHugePage * kHugePage;
}

void* allocate_scratch(size_t bytes) {
#if defined(__linux__)
  if (huge_scratch(bytes)) {
    const size_t size = scratch_capacity(bytes);
    if (size > SIZE_MAX - kHugePage) throw std::bad_alloc();
    // A mapping one block larger than asked, so that an aligned run of `size` bytes lies inside it; the rest goes
    // back at once.
    void* raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const auto first = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t start = (first + kHugePage - 1) & ~(kHugePage - 1);
    if (start > first) munmap(raw, start - first);
    const uintptr_t end = first + size + kHugePage;
    if (end > start + size) munmap(reinterpret_cast<void*>(start + size), end - (start + size));
    // Without transparent huge pages (EINVAL) the block takes 4 KiB pages as it is written, as any other memory.
    madvise(reinterpret_cast<void*>(start), size, MADV_HUGEPAGE);
    return reinterpret_cast<void*>(start);
  }
#endif
  return ::operator new(bytes);
}

void free_scratch(void* p, size_t bytes) noexcept {
#if defined(__linux__)
  if (huge_scratch(bytes)) {
    munmap(p, scratch_capacity(bytes));
    return;
  }
#endif
  ::operator delete(p);
}

}  // namespace feedline
