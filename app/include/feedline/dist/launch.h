// Starting the ranks of a one-host job, as `torchrun --standalone --nproc-per-node N` does: the launcher makes
// the rendezvous store, a FileStore in a temporary folder it removes at the end, and starts N copies of a program
// with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1) and
// FEEDLINE_STORE_FILE naming the store, which feedline::dist::world_from_environment() reads.
//
// Thread-safety: one launch at a time in a process (it handles SIGINT and SIGTERM while it runs).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace feedline::dist {

struct LaunchOptions {
  int64_t nproc = 1;
  // After the first rank fails, how long the others have to end on their own before they are killed (a rank that
  // was stopped never ends on its own).
  std::chrono::milliseconds grace = std::chrono::seconds(3);
  // After SIGINT or SIGTERM, how long the ranks have to finish their step, write a checkpoint and end before they
  // are killed (a job's ranks agree to stop within a collective's timeout, or fail).
  std::chrono::milliseconds stop_grace = std::chrono::minutes(5);
  // Extra environment for every rank ("NAME=value").
  std::vector<std::string> env;
};

// Runs `argv` (argv[0]: the program's path) as options.nproc ranks and waits for them. Returns 0 when every rank
// exits with 0. When one fails (a non-zero exit or a signal), says so through `log`, naming the rank, stops the
// others (SIGTERM, then SIGKILL) and returns that rank's exit code (128 + the signal for a signal).
//
// SIGINT or SIGTERM sent to the launcher goes on to every rank, which stop after the same step; those still
// running after options.stop_grace are killed, as they are at once on a second signal; the launcher then returns
// 128 + the first signal. A rank that ends with 128 + SIGINT or SIGTERM on its own (it was signalled itself) is a
// stop too: the others stop at the same step, and get stop_grace to end. Every rank is also killed if the launcher
// dies. Throws InvalidArgument for nproc < 1 and DistError when the store's folder or a process cannot be made.
int launch(const std::vector<std::string>& argv, const LaunchOptions& options,
           const std::function<void(const std::string&)>& log);

}  // namespace feedline::dist
