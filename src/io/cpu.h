// Internal: what the CPU offers beyond the build's baseline, for the few routines that pick a vector version at
// run time (compiled with a function's target attribute, so that the build itself assumes nothing).
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FEEDLINE_X86_AVX2 1
#endif

namespace feedline {

// Whether AVX2 can be used (x86-64 with GCC or Clang); false elsewhere.
inline bool cpu_has_avx2() {
#if defined(FEEDLINE_X86_AVX2)
  __builtin_cpu_init();  // (callers may run before the constructor that would do it)
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

}  // namespace feedline
