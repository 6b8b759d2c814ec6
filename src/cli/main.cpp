// The `feedline` tool: the only place, with feedline-torch, that prints and chooses exit codes. It parses every
// command's flags and runs those that need no LibTorch (prepare, inspect, cat, convert, --help, --version) itself,
// so they start in milliseconds; train, bench and inspect of image files, which need LibTorch, it hands to
// feedline-torch by exec, with the same arguments (exit codes and signals are then that program's).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/convert.h"
#include "cli/inspect.h"
#include "cli/prepare.h"
#include "feedline/io/error.h"

namespace feedline::cli {
namespace {

// feedline-torch beside this program (a build tree), or in <prefix>/libexec/feedline (an installed one).
std::string torch_program() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir = ec ? std::filesystem::path(".") : self.parent_path();
  const std::filesystem::path candidates[] = {dir / "feedline-torch", dir / ".." / "libexec" / "feedline" / "feedline-torch"};
  for (const auto& c : candidates) {
    if (::access(c.c_str(), X_OK) == 0) return c.string();
  }
  throw IoError("train, bench and inspect of image files run in feedline-torch, which is not at " +
                candidates[0].string() + " nor at " + candidates[1].lexically_normal().string() +
                " (build or install feedline again)");
}

int run(int argc, char** argv) {
  Commands commands(argc, argv);
  if (const int exit_code = commands.parse(argc, argv); exit_code >= 0) return exit_code;
  if (commands.needs_torch()) {
    const std::string program = torch_program();
    std::fflush(stdout);
    ::execv(program.c_str(), argv);
    throw IoError(program + ": cannot run: " + std::strerror(errno));
  }
  switch (commands.command()) {
    case Command::kPrepare: return run_prepare(commands.prepare);
    case Command::kInspect: return run_inspect(commands.inspect);
    case Command::kCat: return run_cat(commands.cat);
    case Command::kConvert: return run_convert(commands.convert);
    default: throw std::logic_error("a LibTorch command reached the tool without LibTorch");
  }
}

}  // namespace
}  // namespace feedline::cli

int main(int argc, char** argv) {
  try {
    return feedline::cli::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "feedline: error: %s\n", e.what());
  }
  return 1;
}
