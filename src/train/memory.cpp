#include "train/memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <climits>

namespace feedline {

bool keep_freed_memory(size_t trim_bytes) {
#if defined(__GLIBC__)
  // No block gets a mapping of its own (each would be unmapped on free), and freed heap stays until trim_bytes of
  // it pile up at the top. A setting glibc refuses leaves its default; the others still apply.
  const int trim = trim_bytes > static_cast<size_t>(INT_MAX) ? INT_MAX : static_cast<int>(trim_bytes);
  const bool mmap_off = mallopt(M_MMAP_MAX, 0) == 1;
  const bool trim_set = mallopt(M_TRIM_THRESHOLD, trim) == 1;
  return mmap_off && trim_set;
#else
  (void)trim_bytes;
  return false;
#endif
}

}  // namespace feedline
