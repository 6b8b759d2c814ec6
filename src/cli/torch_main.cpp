// feedline-torch: the `feedline` commands that need LibTorch (train, bench, inspect of image files), run by the
// feedline tool with the command line it was given. Parses it with the same definitions, applies the process-wide
// CPU settings and runs the command. Also runs those commands when started directly.
#include <fmt/core.h>
#include <torch/types.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/inspect_images.h"
#include "cli/terminal_reporter.h"
#include "cli/train.h"
#include "feedline/dist/dist.h"
#include "feedline/dist/launch.h"
#include "feedline/dist/train_job.h"
#include "feedline/io/error.h"
#include "feedline/lab/lab.h"
#include "feedline/lab/remote_bench.h"
#include "feedline/train/train.h"

namespace feedline::cli {
namespace {

// This program's path, to start more of it.
std::string self_path() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw IoError("cannot find this program's own path (/proc/self/exe) to start more of it");
  return std::string(self, static_cast<size_t>(n));
}

// `feedline train --nproc N`: this process becomes the launcher of N ranks, each this program with the same
// command line less --nproc.
int launch_ranks(const Commands& commands, int argc, char** argv, int64_t nproc) {
  if (const auto world = dist::world_from_environment(); world && world->world_size > 1) {
    throw InvalidArgument("--nproc starts ranks of its own, and this process is already rank " +
                          std::to_string(world->rank) + " of a job of " + std::to_string(world->world_size) +
                          " (WORLD_SIZE is set)");
  }
  // What every rank would refuse alike is refused once, here, before any starts.
  const TrainArgs& train = commands.train;
  if (train.loader.batch_size % nproc != 0) {
    throw InvalidArgument("--batch-size " + std::to_string(train.loader.batch_size) + " is the global batch, and it "
                          "does not split evenly between " + std::to_string(nproc) + " ranks");
  }
  const bool nccl = train.distributed.backend == dist::DistBackend::kNccl;
  if (nccl && dist::available_backends().find("nccl") == std::string::npos) {
    throw InvalidArgument("the nccl backend is not in this LibTorch build (it has " + dist::available_backends() +
                          "); use --dist-backend gloo");
  }
  // --resume auto finds no checkpoint on a first start: then there is nothing to check.
  if (const std::string resume = resolve_resume_dir_naming_flags(train); !resume.empty()) read_checkpoint_info(resume);
  std::vector<std::string> args{self_path()};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--nproc") {
      ++i;  // and its value
    } else if (a.rfind("--nproc=", 0) != 0) {
      args.push_back(a);
    }
  }
  dist::LaunchOptions options;
  options.nproc = nproc;
  // Stopped (SIGTERM, SIGINT), the ranks agree within a collective's timeout, then write the checkpoint.
  options.stop_grace =
      std::chrono::milliseconds(static_cast<int64_t>(train.distributed.timeout * 1000.0)) + std::chrono::seconds(30);
  return dist::launch(args, options, [](const std::string& line) {
    std::fprintf(stderr, "feedline: %s\n", line.c_str());
    std::fflush(stderr);
  });
}

// `bench remote` runs servers: the first SIGINT or SIGTERM asks it to stop them and end, a second ends at once.
std::atomic<bool> stop_requested{false};

void request_stop(int sig) {
  if (stop_requested.exchange(true)) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

int run(int argc, char** argv) {
  Commands commands(argc, argv);
  if (const int exit_code = commands.parse(argc, argv); exit_code >= 0) return exit_code;
  if (!commands.needs_torch()) {
    throw InvalidArgument("feedline-torch runs train, bench and inspect of image files; run the others with feedline");
  }
  // After parsing, so that --help and --version answer whatever the environment says; before any thread starts.
  const ProcessSettings settings = apply_process_settings();
  commands.lab.allocator = settings.allocator;
  commands.lab.blas = settings.blas;
  TerminalReporter reporter;
  switch (commands.command()) {
    case Command::kTrain:
      if (commands.train.nproc > 0) return launch_ranks(commands, argc, argv, commands.train.nproc);
      return run_train(commands.train);
    case Command::kInspectImages: return run_inspect_images(commands.inspect);
    case Command::kInspectMixture: return run_inspect_mixture(commands.inspect);
    case Command::kBenchLoader: lab::run_loader_bench(commands.loader_bench, reporter); break;
    case Command::kBenchDist: lab::run_dist_bench(commands.dist_bench, self_path(), reporter); break;
    case Command::kBenchImages: {
      std::string line;
      for (int i = 0; i < argc; ++i) line += (i > 0 ? " " : "") + std::string(i == 0 ? "feedline" : argv[i]);
      commands.image_bench.command = line;
      lab::run_image_bench(commands.image_bench, self_path(), reporter);
      break;
    }
    case Command::kBenchRemote: {
      std::string line;
      for (int i = 0; i < argc; ++i) line += (i > 0 ? " " : "") + std::string(i == 0 ? "feedline" : argv[i]);
      commands.remote_bench.command = line;
      commands.remote_bench.stop = &stop_requested;
      std::signal(SIGINT, request_stop);
      std::signal(SIGTERM, request_stop);
      lab::run_remote_bench(commands.remote_bench, self_path(), reporter);
      break;
    }
    case Command::kBenchFrom:
      lab::run_lab_from(commands.bench_from, commands.lab.out_dir, !commands.lab.skip_plots, reporter);
      break;
    default:
      commands.lab.program = self_path();
      lab::run_lab(commands.lab, reporter);
      break;
  }
  return 0;
}

}  // namespace
}  // namespace feedline::cli

namespace {

// A rank of a job says which it is (its data-parallel errors already do).
void print_error(const std::string& message) {
  const char* rank = std::getenv("RANK");
  const char* world = std::getenv("WORLD_SIZE");
  const bool ranked = rank != nullptr && world != nullptr && std::string(world) != "1" && message.rfind("rank ", 0) != 0;
  std::fprintf(stderr, "feedline: error: %s%s\n", ranked ? ("rank " + std::string(rank) + ": ").c_str() : "",
               message.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return feedline::cli::run(argc, argv);
  } catch (const feedline::Error& e) {
    print_error(e.what());
  } catch (const c10::Error& e) {
    print_error(e.what_without_backtrace());
  } catch (const std::exception& e) {
    print_error(e.what());
  }
  return 1;
}
