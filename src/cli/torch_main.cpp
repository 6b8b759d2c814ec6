// feedline-torch: the `feedline` commands that need LibTorch (train, bench), run by the feedline tool with the
// command line it was given. Parses it with the same definitions, applies the process-wide CPU settings and runs
// the command. Also runs those commands when started directly.
#include <fmt/core.h>
#include <torch/types.h>

#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "cli/train.h"
#include "feedline/io/error.h"
#include "feedline/lab/lab.h"

namespace feedline::cli {
namespace {

int run(int argc, char** argv) {
  Commands commands(argc, argv);
  if (const int exit_code = commands.parse(argc, argv); exit_code >= 0) return exit_code;
  if (!commands.needs_torch()) {
    throw InvalidArgument("feedline-torch runs train and bench; run the others with feedline");
  }
  // After parsing, so that --help and --version answer whatever the environment says; before any thread starts.
  commands.lab.allocator = configure_allocator();
  commands.lab.blas = configure_blas();
  switch (commands.command()) {
    case Command::kTrain: return run_train(commands.train);
    case Command::kBenchLoader: return lab::run_loader_bench(commands.loader_bench);
    case Command::kBenchFrom: return lab::run_lab_from(commands.bench_from, commands.lab.out_dir, !commands.lab.skip_plots);
    default: return lab::run_lab(commands.lab);
  }
}

}  // namespace
}  // namespace feedline::cli

int main(int argc, char** argv) {
  try {
    return feedline::cli::run(argc, argv);
  } catch (const feedline::Error& e) {
    std::fprintf(stderr, "feedline: error: %s\n", e.what());
  } catch (const c10::Error& e) {
    std::fprintf(stderr, "feedline: error: %s\n", e.what_without_backtrace());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "feedline: error: %s\n", e.what());
  }
  return 1;
}
