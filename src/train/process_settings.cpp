#include "feedline/train/train.h"

#include <cstdlib>
#include <string>

#include "feedline/io/error.h"
#include "train/blas.h"
#include "train/memory.h"

namespace feedline {
namespace {

std::string apply_allocator_setting() {
  const char* env = std::getenv("FEEDLINE_MALLOC");
  const std::string choice = env != nullptr ? env : "";
  if (choice == "system") return "the system's malloc settings (FEEDLINE_MALLOC=system)";
  if (!choice.empty() && choice != "feedline") {
    throw InvalidArgument("FEEDLINE_MALLOC must be 'feedline' (the default) or 'system', not '" + choice + "'");
  }
  if (!keep_freed_memory()) return "the system's malloc settings (not glibc: feedline's setting does not apply)";
  return "glibc malloc keeps freed memory for reuse (feedline's default; FEEDLINE_MALLOC=system turns it off)";
}

std::string apply_blas_setting() {
  const char* env = std::getenv("OPENBLAS_NUM_THREADS");
  const bool chosen = env != nullptr && *env != '\0';
  if (!chosen) set_blas_threads(1);
  const std::string blas = blas_description();
  if (blas.empty()) return "not OpenBLAS (feedline's setting does not apply)";
  return blas + (chosen ? " (OPENBLAS_NUM_THREADS=" + std::string(env) + ")"
                        : " (feedline's default; OPENBLAS_NUM_THREADS overrides)");
}

}  // namespace

ProcessSettings apply_process_settings() {
  ProcessSettings settings;
  settings.allocator = apply_allocator_setting();
  settings.blas = apply_blas_setting();
  return settings;
}

}  // namespace feedline
