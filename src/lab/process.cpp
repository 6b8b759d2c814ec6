#include "lab/process.h"

#include <sys/wait.h>

#include <fmt/core.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

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

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    const auto colon = line.find(':');
    if (line.rfind("model name", 0) == 0 && colon != std::string::npos) {
      return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown CPU";
}

std::string load_averages() {
  std::ifstream f("/proc/loadavg");
  double a = 0, b = 0, c = 0;
  if (!(f >> a >> b >> c)) return "unknown";
  return fmt::format("{:.2f} {:.2f} {:.2f}", a, b, c);
}

std::string find_bench_script(const std::string& given, const std::string& program, const std::string& file,
                              const std::string& bench) {
  namespace fs = std::filesystem;
  if (!given.empty()) {
    if (!fs::is_regular_file(given)) throw IoError(bench + ": script " + given + ": not found");
    return given;
  }
  const fs::path dir = fs::path(program).parent_path();
  for (const fs::path& p : {fs::path("scripts/python") / file, dir / "../scripts/python" / file,
                            dir / "../share/feedline/scripts" / file}) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.lexically_normal().string();
  }
  return "";
}

}  // namespace feedline::lab
