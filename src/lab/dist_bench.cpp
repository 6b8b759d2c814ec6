// `feedline bench dist`: data-parallel CPU training against one process, feedline's and PyTorch's DDP side by side
// in one run.
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
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

namespace fs = std::filesystem;

// One run of one configuration: a run's epoch time, or why there is none.
struct RunResult {
  double epoch_seconds = 0;      // the median of the epochs after the first (of the one epoch when alone)
  double allreduce_share = 0;    // feedline's processes: allreduce's median over the epoch's median
  double accuracy = 0;           // on the test set, after the last epoch
  std::string failure;           // PyTorch's runs: the reason the run gave none
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

// The epochs after the first (a warm-up), or the one epoch of a single-epoch run.
std::vector<double> timed_epochs(const std::vector<double>& epochs) {
  if (epochs.size() < 2) return epochs;
  return {epochs.begin() + 1, epochs.end()};
}

// The last line a program printed, for the reason it failed.
std::string last_line(const std::string& out) {
  const auto end = out.find_last_not_of("\n ");
  if (end == std::string::npos) return "no output";
  const auto newline = out.rfind('\n', end);
  const size_t start = newline == std::string::npos ? 0 : newline + 1;
  return out.substr(start, end + 1 - start);
}

// feedline's run: `program` training with `nproc` processes of `threads` threads, its epoch lines read.
RunResult run_feedline(const std::string& program, const DistBenchOptions& o, int64_t nproc, int threads) {
  std::string cmd = quoted(program) + " train --device cpu --data-dir " + quoted(o.data_dir) + " --dataset " +
                    o.dataset + " --format " + file_format_name(o.format) + " --dataset-mode " +
                    dataset_mode_name(o.mode) + " --limit " + std::to_string(o.limit) + " --batch-size " +
                    std::to_string(o.batch_size) + " --epochs " + std::to_string(o.epochs) + " --threads " +
                    std::to_string(threads);
  if (nproc > 1) cmd += " --nproc " + std::to_string(nproc);
  const CommandOutput run = run_captured(cmd + " 2>&1", "bench dist: cannot run " + program);
  const std::string& out = run.output;
  if (!run.succeeded) throw Error("bench dist: the training run failed (" + cmd + "):\n" + out);
  static const std::regex epoch(R"(Epoch (\d+)/\d+: train ([0-9.]+)s.*test accuracy ([0-9.]+)%)");
  static const std::regex allreduce(R"(allreduce ([0-9.]+)s)");
  std::vector<double> seconds, allreduce_seconds;
  RunResult r;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m, a;
    if (!std::regex_search(line, m, epoch)) continue;
    seconds.push_back(std::stod(m[2].str()));
    allreduce_seconds.push_back(std::regex_search(line, a, allreduce) ? std::stod(a[1].str()) : 0.0);
    r.accuracy = std::stod(m[3].str()) / 100.0;
  }
  if (seconds.empty()) throw Error("bench dist: no epoch lines in the output of " + cmd + ":\n" + out);
  r.epoch_seconds = median(timed_epochs(seconds));
  r.allreduce_share = median(timed_epochs(allreduce_seconds)) / std::max(1e-9, r.epoch_seconds);
  return r;
}

// PyTorch's run: `script` (ddp_bench.py) with `nproc` processes (1: no DDP) of `threads` threads, under the process
// settings feedline applies. A run that fails gives its last line as the reason.
RunResult run_pytorch(const DistBenchOptions& o, const std::string& script, int64_t nproc, int threads,
                      std::string* version) {
  const std::string json = (fs::path(o.out_dir) / ".ddp_bench.run.json").string();
  const std::string cmd = process_settings_environment() + quoted(o.python_program) + " " + quoted(script) +
                          " --data-dir " + quoted(o.data_dir) + " --dataset " + o.dataset + " --format " +
                          file_format_name(o.format) + " --limit " + std::to_string(o.limit) + " --batch-size " +
                          std::to_string(o.batch_size) + " --epochs " + std::to_string(o.epochs) + " --nproc " +
                          std::to_string(nproc) + " --threads " + std::to_string(threads) + " --json " + quoted(json) +
                          " 2>&1";
  const CommandOutput run = run_captured(cmd, "bench dist: cannot run " + o.python_program);
  RunResult r;
  if (!run.succeeded) {
    r.failure = last_line(run.output);
    return r;
  }
  nlohmann::json j;
  try {
    std::ifstream f(json);
    j = nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidFile(json + ": not what " + script + " writes: " + e.what());
  }
  std::error_code ec;
  fs::remove(json, ec);
  const std::vector<double> seconds = j.at("epoch_seconds").get<std::vector<double>>();
  if (seconds.empty()) throw InvalidFile(json + ": no epochs");
  r.epoch_seconds = median(timed_epochs(seconds));
  r.accuracy = j.value("test_accuracy", 0.0);
  *version = j.value("version", "");
  return r;
}


void check_options(const DistBenchOptions& o) {
  if (o.nproc < 2) throw InvalidArgument("bench dist: nproc must be at least 2");
  if (o.threads < o.nproc || o.threads % o.nproc != 0) {
    throw InvalidArgument("bench dist: threads " + std::to_string(o.threads) + " must split evenly between " +
                          std::to_string(o.nproc) + " processes");
  }
  if (o.batch_size % o.nproc != 0) {
    throw InvalidArgument("bench dist: batch_size " + std::to_string(o.batch_size) + " must split evenly between " +
                          std::to_string(o.nproc) + " processes");
  }
  if (o.repeat < 1) throw InvalidArgument("bench dist: repeat must be at least 1");
}

bool is_pytorch(DistConfig c) { return c == DistConfig::kPyTorchSingle || c == DistConfig::kPyTorchDdp; }

std::vector<DistBenchRow> make_rows(const DistBenchOptions& o) {
  const int per_rank = o.threads / static_cast<int>(o.nproc);
  const auto shape = [](int64_t processes, int threads) {
    return fmt::format("{} process{} x {} thread{}", processes, processes == 1 ? "" : "es", threads,
                       threads == 1 ? "" : "s");
  };
  std::vector<DistBenchRow> rows(kDistConfigs);
  const auto set = [&](DistConfig c, const std::string& who, int64_t processes, int threads) {
    DistBenchRow& r = rows[static_cast<size_t>(c)];
    r.config = c;
    r.name = who + ", " + shape(processes, threads);
    r.processes = processes;
    r.threads = threads;
  };
  set(DistConfig::kFeedlineSingle, "feedline", 1, per_rank);
  set(DistConfig::kPyTorchSingle, "PyTorch", 1, per_rank);
  set(DistConfig::kFeedlineThreads, "feedline", 1, o.threads);
  set(DistConfig::kFeedlineProcesses, "feedline", o.nproc, per_rank);
  set(DistConfig::kPyTorchDdp, "PyTorch DDP", o.nproc, per_rank);
  return rows;
}

// num's epoch over den's x scale, in each round both ran (the rounds of a row that was skipped count for none).
RoundRatio over(const DistBenchRow& num, const DistBenchRow& den, double scale) {
  RoundRatio r;
  const size_t n = std::min(num.epoch_seconds.size(), den.epoch_seconds.size());
  for (size_t k = 0; k < n; ++k) {
    if (num.epoch_seconds[k] > 0 && den.epoch_seconds[k] > 0) {
      r.rounds.push_back(num.epoch_seconds[k] / (den.epoch_seconds[k] * scale));
    }
  }
  r.median = median(r.rounds);
  return r;
}

std::string rounds_text(const RoundRatio& r) {
  std::string out;
  for (const double v : r.rounds) out += (out.empty() ? "" : ", ") + fmt::format("{:.3f}", v);
  return out;
}

// The table of medians, in Markdown, and the ratios under it.
std::string dist_table(const DistBenchOptions& o, const DistBenchResult& r) {
  const auto& f1 = r.row(DistConfig::kFeedlineSingle);
  const auto& p1 = r.row(DistConfig::kPyTorchSingle);
  std::string t = fmt::format(
      "| Configuration | Epoch (median) | Speed-up over its 1 process | Scaling efficiency | Allreduce share | Test "
      "accuracy |\n|---|---:|---:|---:|---:|---:|\n");
  for (const DistBenchRow& row : r.rows) {
    if (row.skipped) {
      t += fmt::format("| {} | skipped: {} | | | | |\n", row.name, row.note);
      continue;
    }
    const DistBenchRow& base = is_pytorch(row.config) ? p1 : f1;
    const bool scale = row.config != DistConfig::kFeedlineSingle && row.config != DistConfig::kPyTorchSingle;
    const RoundRatio speedup = over(base, row, 1.0);
    t += fmt::format("| {} | {:.3f} s | {} | {} | {} | {:.2f}% |\n", row.name, median(row.epoch_seconds),
                     !scale ? "1.00x" : base.skipped ? "" : fmt::format("{:.2f}x", speedup.median),
                     !scale || base.skipped ? "" : fmt::format("{:.1f}%", 100.0 * speedup.median / o.nproc),
                     row.config == DistConfig::kFeedlineProcesses
                         ? fmt::format("{:.1f}%", 100.0 * median(row.allreduce_shares))
                         : "-",
                     100.0 * row.test_accuracy);
  }
  const std::string many = fmt::format("{} processes", o.nproc);
  if (!r.processes_over_ddp.rounds.empty()) {
    t += fmt::format("\nfeedline's {} over DDP's: {:.3f} (the median of the rounds: {})\n", many,
                     r.processes_over_ddp.median, rounds_text(r.processes_over_ddp));
  }
  t += fmt::format("\nScaling efficiency, T1 / ({} x T{}): feedline {:.1f}% (rounds: {})", o.nproc, o.nproc,
                   100.0 * r.feedline_efficiency.median, rounds_text(r.feedline_efficiency));
  if (!r.ddp_efficiency.rounds.empty()) {
    t += fmt::format(", DDP {:.1f}% (rounds: {})", 100.0 * r.ddp_efficiency.median, rounds_text(r.ddp_efficiency));
  }
  t += fmt::format("\n\nfeedline's 1 process x {} threads over its {}: {:.3f} (rounds: {})\n", o.threads, many,
                   r.threads_over_processes.median, rounds_text(r.threads_over_processes));
  return t;
}

nlohmann::json ratio_json(const RoundRatio& r) { return {{"rounds", r.rounds}, {"median", r.median}}; }

// dist.json and dist.md in o.out_dir, each written whole, then renamed.
void write_dist_outputs(const DistBenchOptions& o, const DistBenchResult& r, const nlohmann::json& context,
                        const std::string& table) {
  nlohmann::json j = context;
  j["dataset"] = o.dataset;
  j["format"] = file_format_name(o.format);
  j["dataset_mode"] = dataset_mode_name(o.mode);
  j["train_samples"] = o.limit;
  j["batch_size"] = o.batch_size;
  j["epochs"] = o.epochs;
  j["rounds"] = o.repeat;
  j["configurations"] = nlohmann::json::array();
  for (const DistBenchRow& row : r.rows) {
    nlohmann::json c{{"name", row.name},       {"processes", row.processes},
                     {"threads", row.threads}, {"pytorch", is_pytorch(row.config)},
                     {"skipped", row.skipped}, {"note", row.note},
                     {"epoch_seconds", row.epoch_seconds}};
    if (!row.skipped) c["test_accuracy"] = row.test_accuracy;
    if (row.config == DistConfig::kFeedlineProcesses) c["allreduce_share"] = row.allreduce_shares;
    j["configurations"].push_back(c);
  }
  j["processes_over_ddp"] = ratio_json(r.processes_over_ddp);
  j["threads_over_processes"] = ratio_json(r.threads_over_processes);
  j["feedline_efficiency"] = ratio_json(r.feedline_efficiency);
  j["ddp_efficiency"] = ratio_json(r.ddp_efficiency);
  for (const auto& [name, text] :
       {std::pair<std::string, std::string>{"dist.json", j.dump(2) + "\n"},
        {"dist.md", "# Data-parallel training on the CPU: feedline and PyTorch DDP\n\n" + table}}) {
    AtomicFile f((fs::path(o.out_dir) / name).string());
    f.write(text);
    f.commit();
  }
}

// Runs PyTorch's rows the way a round asks, or marks them skipped once for good.
struct PyTorchRunner {
  const DistBenchOptions& o;
  std::string script;
  std::string version;

  void run(DistBenchRow& row) {
    if (row.skipped) return;
    if (!o.python || script.empty()) {
      row.skipped = true;
      row.note = !o.python ? "left out (--no-python)" : "scripts/python/ddp_bench.py not found: give --script";
      return;
    }
    const RunResult run = run_pytorch(o, script, row.processes, row.threads, &version);
    if (!run.failure.empty()) {
      row.skipped = true;
      row.note = run.failure;
      row.epoch_seconds.clear();
      return;
    }
    row.note = version;
    row.epoch_seconds.push_back(run.epoch_seconds);
    row.test_accuracy = run.accuracy;
  }
};

std::string round_line(int64_t k, const DistBenchResult& r) {
  std::string line = fmt::format("  round {}:", k + 1);
  for (const DistBenchRow& row : r.rows) {
    line += row.skipped ? fmt::format(" {} skipped;", row.name)
                        : fmt::format(" {} {:.3f}s;", row.name, row.epoch_seconds.back());
  }
  const auto& fp = r.row(DistConfig::kFeedlineProcesses);
  const auto& ddp = r.row(DistConfig::kPyTorchDdp);
  if (!ddp.skipped) line += fmt::format(" feedline/DDP {:.3f}", fp.epoch_seconds.back() / ddp.epoch_seconds.back());
  return line;
}

}  // namespace

DistBenchResult run_dist_bench(const DistBenchOptions& o, const std::string& program, Reporter& reporter) {
  check_options(o);
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec) throw IoError(o.out_dir + ": cannot make the results folder: " + ec.message());
  reporter.line(fmt::format("Data-parallel training on the CPU: SimpleCNN on {} ({} train samples, {}, {} dataset), "
                            "global batch {}, Adam 1e-3, {} epochs a run (the first a warm-up); feedline and "
                            "PyTorch ({}), {} rounds of the five configurations in turns",
                            o.dataset, o.limit, file_format_name(o.format), dataset_mode_name(o.mode), o.batch_size,
                            o.epochs, o.python_program, o.repeat));
  const nlohmann::json context{{"date", utc_now()}, {"cpu", cpu_model()}, {"load_average_before", load_averages()},
                               {"python", o.python_program}};
  DistBenchResult r;
  r.rows = make_rows(o);
  PyTorchRunner pytorch{o, o.python ? find_bench_script(o.script, program, "ddp_bench.py", "bench dist") : ""};
  for (int64_t k = 0; k < o.repeat; ++k) {
    // Every other round runs the configurations in the opposite order, so that a machine slowing down or speeding
    // up over the run favours none of them.
    for (int i = 0; i < kDistConfigs; ++i) {
      DistBenchRow& row = r.rows[static_cast<size_t>(k % 2 == 0 ? i : kDistConfigs - 1 - i)];
      if (is_pytorch(row.config)) {
        pytorch.run(row);
        continue;
      }
      const RunResult run = run_feedline(program, o, row.processes, row.threads);
      row.epoch_seconds.push_back(run.epoch_seconds);
      row.test_accuracy = run.accuracy;
      if (row.config == DistConfig::kFeedlineProcesses) row.allreduce_shares.push_back(run.allreduce_share);
    }
    reporter.line(round_line(k, r));
  }
  const auto& f1 = r.row(DistConfig::kFeedlineSingle);
  const auto& fp = r.row(DistConfig::kFeedlineProcesses);
  const auto& p1 = r.row(DistConfig::kPyTorchSingle);
  const auto& ddp = r.row(DistConfig::kPyTorchDdp);
  const double n = static_cast<double>(o.nproc);
  r.processes_over_ddp = over(fp, ddp, 1.0);
  r.threads_over_processes = over(r.row(DistConfig::kFeedlineThreads), fp, 1.0);
  r.feedline_efficiency = over(f1, fp, n);
  r.ddp_efficiency = over(p1, ddp, n);
  for (const DistBenchRow& row : r.rows) {
    if (row.skipped) reporter.line(fmt::format("  {}: skipped: {}", row.name, row.note));
  }
  const std::string table = dist_table(o, r);
  reporter.table(table);
  nlohmann::json full = context;
  full["load_average_after"] = load_averages();
  write_dist_outputs(o, r, full, table);
  reporter.line(fmt::format("Wrote {}/dist.json and dist.md", o.out_dir));
  return r;
}

}  // namespace feedline::lab
