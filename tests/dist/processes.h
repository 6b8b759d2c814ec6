// What the tests that run the tool's ranks as processes share: a child process whose output goes to a file, the
// children of a launcher, a tiny prepared dataset, the train flags over it and a saved model's weights.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <torch/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_support.h"
#include "feedline/train/models.h"

namespace feedline::testing {

// The LibTorch half of the tool (train), beside FEEDLINE_CLI.
inline std::string torch_program() {
  std::string cli = FEEDLINE_CLI;
  return cli.substr(0, cli.rfind('/') + 1) + "feedline-torch";
}

// A process of the test's, its output going to a file.
struct Child {
  using Clock = std::chrono::steady_clock;
  pid_t pid = -1;
  std::string out;

  // Waits up to `limit`; returns the exit status, or nullopt on timeout.
  std::optional<int> wait_for(std::chrono::milliseconds limit) {
    const auto end = Clock::now() + limit;
    while (Clock::now() < end) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }
  // What it wrote so far; "" before it opened its output file.
  std::string output() const { return ::access(out.c_str(), F_OK) == 0 ? file_bytes(out) : ""; }
  // Waits until the output holds `text` (true) or `limit` passes or the process ends (false).
  bool wait_for_output(const std::string& text, std::chrono::milliseconds limit) const {
    const auto end = Clock::now() + limit;
    while (Clock::now() < end) {
      if (output().find(text) != std::string::npos) return true;
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != 0) {
        return output().find(text) != std::string::npos;  // it ended
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  ~Child() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

inline std::unique_ptr<Child> start(const std::vector<std::string>& args, const std::vector<std::string>& env,
                                    const std::string& out) {
  auto child = std::make_unique<Child>();
  child->out = out;
  std::vector<std::string> a = args;
  std::vector<char*> argv;
  for (auto& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> e;
  for (char** p = environ; *p != nullptr; ++p) e.emplace_back(*p);
  for (const auto& kv : env) e.push_back(kv);
  std::vector<char*> envp;
  for (auto& s : e) envp.push_back(s.data());
  envp.push_back(nullptr);
  child->pid = ::fork();
  if (child->pid == 0) {
    std::FILE* f = std::freopen(out.c_str(), "w", stdout);
    if (f == nullptr || ::dup2(::fileno(stdout), 2) < 0) ::_exit(126);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  return child;
}

// How a child ended, in words, for a failure's message: a crash at exit shows in no output.
inline std::string ended(const std::optional<int>& status) {
  if (!status) return "(still running)";
  if (WIFSIGNALED(*status)) return "(killed by signal " + std::to_string(WTERMSIG(*status)) + ")";
  return "(exit code " + std::to_string(WEXITSTATUS(*status)) + ")";
}

// A tiny MNIST-shaped dataset, prepared as `feedline prepare` does; returns its folder (IDX files beside).
inline std::string prepared(const std::string& name, uint32_t train, uint32_t test) {
  const std::string idx = make_idx_dir(name, train, test);
  const auto r = run_cli("prepare --dataset mnist --mnist-idx " + idx + " --data-dir " + idx + "/data");
  EXPECT_EQ(r.status, 0) << r.output;
  return idx;
}

// Train flags over a prepared dataset; with many epochs, long enough to be mid-training when a test strikes.
inline std::vector<std::string> train_args(const std::string& program, const std::string& dir, int64_t epochs) {
  return {program, "train", "--dataset", "mnist", "--data-dir", dir + "/data", "--device", "cpu", "--threads", "1",
          "--batch-size", "64", "--epochs", std::to_string(epochs)};
}

inline std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  pid_t c;
  while (f >> c) out.push_back(c);
  return out;
}

inline std::vector<torch::Tensor> saved_weights(const std::string& path) {
  SimpleCNN model{SimpleCNNOptions()};
  load_module(*model, path);
  std::vector<torch::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
  return out;
}

}  // namespace feedline::testing
