// The process-wide settings under which feedline trains on the CPU: glibc's malloc keeps the memory a step frees for
// the next one, and OpenBLAS runs one thread inside each of LibTorch's. The feedline tool applies them at start; a
// program of its own that trains with feedline calls apply_process_settings() once, before other threads start. The
// library never changes them by itself.
#pragma once

#include <string>

namespace feedline {

// What holds after apply_process_settings(), in words, for a benchmark's record.
struct ProcessSettings {
  std::string allocator;
  std::string blas;
};

// Applies both settings unless the environment chooses otherwise: FEEDLINE_MALLOC=system keeps the system's malloc
// settings (FEEDLINE_MALLOC=feedline or unset applies them), and OPENBLAS_NUM_THREADS, when set, is left to OpenBLAS.
// A setting that does not apply (not glibc, not OpenBLAS) changes nothing and says so. Throws InvalidArgument for
// another FEEDLINE_MALLOC.
ProcessSettings apply_process_settings();

}  // namespace feedline
