#include "lab/process.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "feedline/io/error.h"

namespace feedline::lab {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

CommandOutput run_captured(const std::string& command, const std::string& cannot_run) {
  std::FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) throw IoError(cannot_run);
  CommandOutput result;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) result.output.append(buf, n);
  const int status = ::pclose(p);
  result.succeeded = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return result;
}

std::string process_settings_environment() {
  std::string env;
  const char* choice = std::getenv("FEEDLINE_MALLOC");
  // The trim threshold keep_freed_memory() sets by default (src/train/memory.h).
  if (choice == nullptr || std::string(choice) != "system") {
    env += "MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=1073741824 ";
  }
  const char* blas = std::getenv("OPENBLAS_NUM_THREADS");
  if (blas == nullptr || *blas == '\0') env += "OPENBLAS_NUM_THREADS=1 ";
  return env;
}

}  // namespace feedline::lab
