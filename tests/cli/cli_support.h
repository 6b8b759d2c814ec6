// What the tests of the `feedline` executable and of the installed package share: running a command, and a
// tiny MNIST-shaped dataset as IDX files.
#pragma once

#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "test_paths.h"

namespace feedline::testing {

struct CliRun {
  int status;
  std::string output;  // stdout and stderr together
};

// Runs a shell command line; returns its exit status and what it printed.
inline CliRun run_command(const std::string& command) {
  const std::string cmd = command + " 2>&1";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = ::pclose(p);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out};
}

// Runs the tool with these arguments; `env` (e.g. "NAME=value") goes before it on the shell's command line.
inline CliRun run_cli(const std::string& args, const std::string& env = "") {
  return run_command((env.empty() ? "" : env + " ") + std::string(FEEDLINE_CLI) + " " + args);
}

inline void write_idx(const std::string& path, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::ofstream f(path, std::ios::binary);
  const uint8_t head[4] = {0, 0, 8, static_cast<uint8_t>(dims.size())};
  f.write(reinterpret_cast<const char*>(head), 4);
  for (uint32_t d : dims) {
    const uint8_t b[4] = {static_cast<uint8_t>(d >> 24), static_cast<uint8_t>(d >> 16), static_cast<uint8_t>(d >> 8),
                          static_cast<uint8_t>(d)};
    f.write(reinterpret_cast<const char*>(b), 4);
  }
  f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

// A tiny MNIST-shaped dataset: class c has a bright square at a class-specific place.
inline std::string make_idx_dir(const std::string& name, uint32_t train, uint32_t test) {
  const std::string dir = testing::scratch_dir(name);
  std::mt19937 gen(5);
  for (auto [prefix, count] : {std::pair<std::string, uint32_t>{"train", train}, {"t10k", test}}) {
    std::vector<uint8_t> images(count * 784), labels(count);
    for (uint32_t i = 0; i < count; ++i) {
      labels[i] = static_cast<uint8_t>(i % 10);
      for (int p = 0; p < 784; ++p) images[i * 784 + p] = static_cast<uint8_t>(gen() % 40);
      const int r0 = 2 + 2 * labels[i];
      for (int r = r0; r < r0 + 4; ++r)
        for (int c = 10; c < 16; ++c) images[i * 784 + r * 28 + c] = 250;
    }
    write_idx(dir + "/" + prefix + "-images-idx3-ubyte", {count, 28, 28}, images);
    write_idx(dir + "/" + prefix + "-labels-idx1-ubyte", {count}, labels);
  }
  return dir;
}

// Whether the tool's output holds `needle`, and how many times.
inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

inline size_t count_of(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace feedline::testing
