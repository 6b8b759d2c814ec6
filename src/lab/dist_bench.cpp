// `feedline bench dist`: threads against processes for CPU training, side by side in one run.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/lab/lab.h"
#include "lab/process.h"

namespace feedline::lab {
namespace {

struct RunResult {
  std::vector<double> epoch_seconds, allreduce_seconds;
  double accuracy = 0;
};

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Runs one training and reads its epoch lines.
RunResult run_training(const std::string& program, const DistBenchOptions& o, int64_t nproc, int threads) {
  std::string cmd = quoted(program) + " train --device cpu --data-dir " + quoted(o.data_dir) + " --dataset " +
                    o.dataset + " --format " + o.format + " --dataset-mode " + o.mode + " --limit " +
                    std::to_string(o.limit) + " --batch-size " + std::to_string(o.batch_size) + " --epochs " +
                    std::to_string(o.epochs) + " --threads " + std::to_string(threads);
  if (nproc > 1) cmd += " --nproc " + std::to_string(nproc);
  const CommandOutput run = run_captured(cmd + " 2>&1", "bench dist: cannot run " + program);
  const std::string& out = run.output;
  if (!run.succeeded) {
    throw Error("bench dist: the training run failed (" + cmd + "):\n" + out);
  }
  static const std::regex epoch(R"(Epoch (\d+)/\d+: train ([0-9.]+)s.*test accuracy ([0-9.]+)%)");
  static const std::regex allreduce(R"(allreduce ([0-9.]+)s)");
  RunResult r;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m, a;
    if (!std::regex_search(line, m, epoch)) continue;
    if (std::stoll(m[1].str()) == 1 && o.epochs > 1) continue;  // the warm-up epoch
    r.epoch_seconds.push_back(std::stod(m[2].str()));
    r.allreduce_seconds.push_back(std::regex_search(line, a, allreduce) ? std::stod(a[1].str()) : 0.0);
    r.accuracy = std::stod(m[3].str()) / 100.0;
  }
  if (r.epoch_seconds.empty()) throw Error("bench dist: no epoch lines in the output of " + cmd + ":\n" + out);
  return r;
}

}  // namespace

namespace {

void check_options(const DistBenchOptions& o) {
  if (o.nproc < 2) throw InvalidArgument("bench dist: --nproc must be at least 2");
  if (o.threads < o.nproc || o.threads % o.nproc != 0) {
    throw InvalidArgument("bench dist: --threads " + std::to_string(o.threads) + " must split evenly between " +
                          std::to_string(o.nproc) + " processes");
  }
  if (o.batch_size % o.nproc != 0) {
    throw InvalidArgument("bench dist: --batch-size " + std::to_string(o.batch_size) + " must split evenly between " +
                          std::to_string(o.nproc) + " processes");
  }
}

// The three configurations' names.
struct Names {
  std::string single, one, many;
};

// The table of the best runs, in Markdown.
std::string dist_table(const DistBenchResult& r, const Names& n) {
  const double best_single = *std::min_element(r.single_seconds.begin(), r.single_seconds.end());
  const double best_one = *std::min_element(r.threads_seconds.begin(), r.threads_seconds.end());
  const auto best_k = static_cast<size_t>(std::min_element(r.processes_seconds.begin(), r.processes_seconds.end()) -
                                          r.processes_seconds.begin());
  const double best_many = r.processes_seconds[best_k];
  return fmt::format(
      "| Configuration | Epoch (best run) | vs {} | vs {} | Allreduce share | Test accuracy |\n"
      "|---|---:|---:|---:|---:|---:|\n"
      "| {} | {:.3f} s | 1.00x | | - | |\n"
      "| {} | {:.3f} s | {:.2f}x | 1.00x | - | {:.2f}% |\n"
      "| {} | {:.3f} s | {:.2f}x | {:.2f}x | {:.1f}% | {:.2f}% |\n",
      n.single, n.one, n.single, best_single, n.one, best_one, best_single / best_one, 100.0 * r.threads_accuracy,
      n.many, best_many, best_single / best_many, r.speedup, 100.0 * r.allreduce_shares[best_k],
      100.0 * r.processes_accuracy);
}

// dist.json and dist.md in o.out_dir, each written whole, then renamed.
void write_dist_outputs(const DistBenchOptions& o, const DistBenchResult& r, const Names& n, int per_rank,
                        const std::string& table) {
  nlohmann::json j;
  j["dataset"] = o.dataset;
  j["train_samples"] = o.limit;
  j["batch_size"] = o.batch_size;
  j["epochs"] = o.epochs;
  j["configurations"] = {
      {{"name", n.single}, {"processes", 1}, {"threads", per_rank}, {"epoch_seconds", r.single_seconds}},
      {{"name", n.one}, {"processes", 1}, {"threads", o.threads}, {"epoch_seconds", r.threads_seconds},
       {"test_accuracy", r.threads_accuracy}},
      {{"name", n.many}, {"processes", o.nproc}, {"threads", per_rank}, {"epoch_seconds", r.processes_seconds},
       {"allreduce_share", r.allreduce_shares}, {"test_accuracy", r.processes_accuracy}}};
  j["speedup"] = r.speedup;
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) throw IoError(o.out_dir + ": cannot make the results folder: " + ec.message());
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"dist.json", j.dump(2) + "\n"},
                                   {"dist.md", "# Threads or processes\n\n" + table}}) {
    AtomicFile f((std::filesystem::path(o.out_dir) / name).string());
    f.write(text);
    f.commit();
  }
}

}  // namespace

DistBenchResult run_dist_bench(const DistBenchOptions& o, const std::string& program, Reporter& reporter) {
  check_options(o);
  const int per_rank = o.threads / static_cast<int>(o.nproc);
  const Names names{fmt::format("1 process x {} thread{}", per_rank, per_rank == 1 ? "" : "s"),
                    fmt::format("1 process x {} threads", o.threads),
                    fmt::format("{} processes x {} thread{}", o.nproc, per_rank, per_rank == 1 ? "" : "s")};
  reporter.line(fmt::format("Threads or processes: SimpleCNN on {} ({} train samples, {}, {} dataset), global batch "
                            "{}, {} epochs a run (the first a warm-up), {} runs each in turns, CPU",
                            o.dataset, o.limit, o.format, o.mode, o.batch_size, o.epochs, o.repeat));
  DistBenchResult r;
  for (int64_t k = 0; k < o.repeat; ++k) {
    const RunResult s = run_training(program, o, 1, per_rank);
    const RunResult a = run_training(program, o, 1, o.threads);
    const RunResult b = run_training(program, o, o.nproc, per_rank);
    r.single_seconds.push_back(median(s.epoch_seconds));
    r.threads_seconds.push_back(median(a.epoch_seconds));
    r.processes_seconds.push_back(median(b.epoch_seconds));
    r.allreduce_shares.push_back(median(b.allreduce_seconds) / std::max(1e-9, median(b.epoch_seconds)));
    r.threads_accuracy = a.accuracy;
    r.processes_accuracy = b.accuracy;
    reporter.line(fmt::format("  run {}: {} {:.3f}s an epoch, {} {:.3f}s, {} {:.3f}s ({:.2f}x the threads), allreduce "
                              "{:.1f}% of the step",
                              k + 1, names.single, r.single_seconds.back(), names.one, r.threads_seconds.back(),
                              names.many, r.processes_seconds.back(),
                              r.threads_seconds.back() / r.processes_seconds.back(),
                              100.0 * r.allreduce_shares.back()));
  }
  r.speedup = *std::min_element(r.threads_seconds.begin(), r.threads_seconds.end()) /
              *std::min_element(r.processes_seconds.begin(), r.processes_seconds.end());
  const std::string table = dist_table(r, names);
  reporter.table(table);
  write_dist_outputs(o, r, names, per_rank, table);
  reporter.line(fmt::format("Wrote {}/dist.json and dist.md", o.out_dir));
  return r;
}

}  // namespace feedline::lab
