#include "io/memory.h"

#include <cstdint>

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

}  // namespace feedline
