// Ranks started by torchrun (Debian's torch, through tests/dist/torchrun.py): a rank killed mid-training, the
// launcher restarts the group, `--resume auto` continues from the newest checkpoint, and the model ends as an
// uninterrupted run's, bit for bit.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <torch/types.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_support.h"
#include "dist/processes.h"
#include "test_paths.h"

namespace feedline {
namespace {

using namespace std::chrono_literals;
using testing::ended;
using testing::start;
using testing::torch_program;
using testing::train_args;

constexpr const char* kPython = "/usr/bin/python3";

// Why torchrun cannot run here, or "".
std::string torchrun_missing() {
  if (::access(kPython, X_OK) != 0) return std::string(kPython) + " is missing";
  const auto r = testing::run_command(std::string(kPython) + " -c 'import torch.distributed.run'");
  if (r.status != 0) return std::string(kPython) + " cannot import torch.distributed.run: " + r.output;
  return "";
}

// The checkpoint files (checkpoint-<steps>.pt) in `dir`.
std::vector<std::string> checkpoints_in(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("checkpoint-", 0) == 0 && name.size() > 3 && name.compare(name.size() - 3, 3, ".pt") == 0) {
      out.push_back(name);
    }
  }
  ::closedir(d);
  return out;
}

// Waits until `done()` (true), or `limit` passes or `child` ends (false).
template <class Done>
bool wait_until(const testing::Child& child, Done done, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != 0) {
      return done();
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(Torchrun, AKilledRankIsRestartedAndTheJobResumesBitForBit) {
  if (const std::string why = torchrun_missing(); !why.empty()) GTEST_SKIP() << why;
  // 3,200 samples, batch 64: 50 steps an epoch, 100 in all; a checkpoint every 20.
  const std::string idx = testing::prepared("torchrun_restart", 3200, 100);
  const auto flags = [&](const std::string& program) { return train_args(program, idx, 2); };

  auto whole = flags(torch_program());
  whole.insert(whole.end(), {"--nproc", "2", "--save", idx + "/whole.pt"});
  auto run = start(whole, {}, idx + "/whole.out");
  auto status = run->wait_for(180s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << ended(status) << "\n" << run->output();

  const std::string ck = idx + "/ck";
  std::vector<std::string> job = {kPython,
                                  testing::source_dir() + "/tests/dist/torchrun.py",
                                  "--standalone",
                                  "--nproc_per_node",
                                  "2",
                                  "--max_restarts",
                                  "1",
                                  "--monitor_interval",
                                  "1",
                                  "--no_python"};
  const auto train = flags(torch_program());
  job.insert(job.end(), train.begin(), train.end());
  job.insert(job.end(), {"--checkpoint", ck, "--checkpoint-every", "20", "--resume", "auto", "--save",
                         idx + "/m.pt", "--dist-timeout", "30"});
  run = start(job, {}, idx + "/torchrun.out");
  ASSERT_TRUE(wait_until(*run, [&] { return !checkpoints_in(ck).empty(); }, 180s))
      << "no checkpoint appeared in " << ck << "\n" << run->output();
  const auto ranks = testing::children_of(run->pid);
  ASSERT_EQ(ranks.size(), 2u) << "torchrun's children: its ranks\n" << run->output();
  ASSERT_EQ(::kill(ranks[1], SIGKILL), 0);

  status = run->wait_for(300s);
  const std::string log = run->output();
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << ended(status) << "\n" << log;
  // The second start of the group says so, and continues from the checkpoint rather than from the start.
  EXPECT_NE(log.find("started by torchrun, restart 1"), std::string::npos) << log;
  EXPECT_NE(log.find("Resuming from " + ck + "/checkpoint-"), std::string::npos) << log;

  const auto a = testing::saved_weights(idx + "/whole.pt");
  const auto b = testing::saved_weights(idx + "/m.pt");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
}

}  // namespace
}  // namespace feedline
