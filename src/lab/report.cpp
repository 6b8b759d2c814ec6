#include "lab/report.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <utility>
#include <nlohmann/json.hpp>

#include "lab/stats.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"

namespace feedline::lab {

std::vector<double> FloorCheck::paired_gaps() const {
  std::vector<double> gaps;
  for (size_t k = 0; k < std::min(best_train_seconds.size(), floor_train_seconds.size()); ++k) {
    if (floor_train_seconds[k] > 0) gaps.push_back(best_train_seconds[k] / floor_train_seconds[k] - 1.0);
  }
  return gaps;
}

namespace {

using nlohmann::json;

double mb(int64_t bytes) { return static_cast<double>(bytes) / 1e6; }

std::string percent(double share) { return fmt::format("{:.1f}%", 100.0 * share); }

bool is_floor(const TrainResult& t) { return t.config.is_floor(); }

// The dataset's floor checks, one a floor, in the order they were recorded.
std::vector<const FloorCheck*> floor_checks_of(const LabResults& r, const std::string& dataset) {
  std::vector<const FloorCheck*> out;
  for (const auto& f : r.floor_checks) {
    if (f.dataset == dataset) out.push_back(&f);
  }
  return out;
}

// The pairs' median gap and its confidence interval, in words (no final full stop).
std::string paired_line(const FloorCheck& f) {
  const std::vector<double> gaps = f.paired_gaps();
  const std::string line = fmt::format(
      "Run by run, each best run against the floor run beside it: {:+.1f}% (median of {} pairs",
      100.0 * quantile(gaps, 0.5), gaps.size());
  if (const auto ci = median_interval(gaps)) {
    return line + fmt::format("; with {:.1f}% confidence the median gap lies between {:+.1f}% and {:+.1f}%)",
                              100.0 * ci->coverage, 100.0 * ci->low, 100.0 * ci->high);
  }
  return line + "; too few for a 95% confidence interval, which takes 6 pairs: --floor-repeats 6 or more)";
}

std::string floor_line(const FloorCheck& f) {
  return fmt::format("Best pipeline ({}) vs the compute floor ({}): {:+.1f}% train time per epoch (medians of {} "
                     "alternating runs each: {:.2f}s vs {:.2f}s; the floor's own runs spread {:.1f}% between "
                     "quartiles). {}",
                     f.best_rung, f.floor_rung, 100.0 * f.gap(), f.best_train_seconds.size(), f.best_median,
                     f.floor_median, 100.0 * f.floor_spread, paired_line(f));
}

std::vector<std::string> datasets_of(const LabResults& r, const std::string& group) {
  std::vector<std::string> out;
  auto add = [&](const std::string& d) {
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  };
  if (group == "loader") {
    for (const auto& l : r.loader) add(l.dataset);
  } else {
    for (const auto& t : r.training) {
      if (t.group == group) add(t.dataset);
    }
  }
  return out;
}

json config_json(const PipelineConfig& c) {
  return {{"name", c.name},
          {"dataset_mode", c.dataset_mode},
          {"batch_size", c.batch_size},
          {"num_workers", c.num_workers},
          {"persistent_workers", c.persistent_workers},
          {"pin_memory", c.pin_memory},
          {"batch_fetch", c.batch_fetch},
          {"cuda_graph", c.cuda_graph}};
}

// A quoted gnuplot string (labels may hold spaces and '+').
std::string gp_quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// A single-quoted gnuplot string: no escapes inside, a quote is doubled.
std::string gp_path(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// Runs `gnuplot script` without a shell, its messages going to `log`. True when it exits 0.
bool run_gnuplot(const std::string& script, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::string program = "gnuplot";
  std::vector<char*> argv{program.data(), const_cast<char*>(script.c_str()), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return false;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void write_text(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  f.write(text);
  f.commit();
}

}  // namespace

std::string PipelineConfig::describe() const {
  std::string s;
  if (dataset_mode == "synthetic") {
    s = fmt::format("synthetic batches on the device, batch {}, no loader", batch_size);
  } else if (dataset_mode == "in-order") {
    s = fmt::format("the dataset's images on the device, in order, batch {}, no loader", batch_size);
  } else {
    s = fmt::format("{} dataset, batch {}", dataset_mode, batch_size);
    if (dataset_mode == "device") {
      s += ", gathered on the device";
    } else {
      s += fmt::format(", {} worker{}", num_workers, num_workers == 1 ? "" : "s");
      if (persistent_workers) s += ", persistent";
      if (pin_memory) s += ", pinned";
      s += batch_fetch ? ", batch fetch" : ", per-sample get + stack";
    }
  }
  if (cuda_graph) s += ", CUDA graph";
  return s;
}

void TrainResult::summarise() {
  if (epochs.empty()) return;
  double train = 0, test = 0, wait = 0;
  int64_t samples = 0;
  for (const auto& e : epochs) {
    train += e.train_seconds;
    test += e.test_seconds;
    wait += e.train_wait_seconds;
    samples += e.train_samples;
  }
  const auto n = static_cast<double>(epochs.size());
  avg_train_seconds = train / n;
  avg_test_seconds = test / n;
  total_seconds = train + test;
  wait_share = train > 0 ? wait / train : 0;
  test_accuracy = epochs.back().test_accuracy;
  samples_per_second = train > 0 ? static_cast<double>(samples) / train : 0;
}

std::string storage_table(const LabResults& r) {
  std::string out = fmt::format("{:<13} {:<5} {:<18} {:>9} {:>8} {:>9} {:>9}\n", "Dataset", "Split", "Format", "MB",
                                "vs CSV", "Write", "Read");
  for (const auto& s : r.storage) {
    out += fmt::format("{:<13} {:<5} {:<18} {:>9.1f} {:>7.1f}x {:>8.2f}s {:>8.2f}s\n", s.dataset, s.split, s.format,
                       mb(s.bytes), s.ratio_to_csv, s.write_seconds, s.read_seconds);
  }
  for (const auto& z : r.idx_zstd) {
    for (const auto& s : r.storage) {
      if (s.dataset == z.dataset && s.split == z.split && s.format == "parquet-row-major") {
        out += fmt::format("{} {}: row-major Parquet {:.2f} MB vs zstd -3 of the raw IDX images {:.2f} MB ({:+.1f}%)\n",
                           z.dataset, z.split, mb(s.bytes), mb(z.zstd3_bytes),
                           100.0 * (static_cast<double>(s.bytes) / static_cast<double>(z.zstd3_bytes) - 1.0));
      }
    }
  }
  return out;
}

std::string loader_table(const LabResults& r) {
  std::string out = fmt::format("{:<13} {:<40} {:>13} {:>9} {:>10}\n", "Dataset", "Rung", "Samples/s", "Speed-up",
                                "Wait share");
  for (const auto& l : r.loader) {
    double wait = 0, secs = 0;
    for (size_t i = 0; i < l.epoch_seconds.size(); ++i) {
      secs += l.epoch_seconds[i];
      wait += l.epoch_wait_seconds[i];
    }
    out += fmt::format("{:<13} {:<40} {:>13.0f} {:>8.1f}x {:>10}\n", l.dataset, l.config.name, l.samples_per_second,
                       l.speedup, percent(secs > 0 ? wait / secs : 0));
  }
  return out;
}

std::string training_table(const LabResults& r, const std::string& group) {
  std::string out;
  const bool sweep = group != "ladder";
  for (const auto& dataset : datasets_of(r, group)) {
    out += fmt::format("{}{}\n", dataset, sweep ? fmt::format(" ({})", group) : "");
    out += fmt::format("{:<40} {:>11} {:>10} {:>9} {:>9} {:>10} {:>9}\n", sweep ? "Pipeline" : "Rung",
                       "Train/epoch", "Test/epoch", "Total", "Speed-up", "Data wait", "Accuracy");
    for (const auto& t : r.training) {
      if (t.group != group || t.dataset != dataset) continue;
      const std::string label = sweep ? fmt::format("{}: {}", t.pipeline, t.config.name) : t.config.name;
      if (t.skipped) {
        out += fmt::format("{:<40} skipped: {}\n", label, t.note);
        continue;
      }
      out += fmt::format("{:<40} {:>10.2f}s {:>9.2f}s {:>8.2f}s {:>8.1f}x {:>10} {:>9}\n", label, t.avg_train_seconds,
                         t.avg_test_seconds, t.total_seconds, t.speedup, is_floor(t) ? "-" : percent(t.wait_share),
                         is_floor(t) ? "n/a" : percent(t.test_accuracy));
    }
    if (!sweep) {
      for (const FloorCheck* f : floor_checks_of(r, dataset)) out += floor_line(*f) + "\n";
    }
  }
  return out;
}

namespace {

// results.json's fields of where and how the lab ran.
void put_context(json& j, const LabContext& c) {
  j["tool"] = "feedline bench";
  j["date"] = c.date;
  j["command"] = c.command;
  j["machine"] = {{"cpu", c.cpu}, {"cores", c.cores}, {"memory_gib", c.memory_gib}};
  j["libtorch_version"] = c.libtorch;
  j["device"] = {{"name", c.device}, {"description", c.device_name}};
  j["threads"] = c.threads;
  j["allocator"] = c.allocator;
  j["blas"] = c.blas;
  j["protocol"] = {{"description", c.protocol},
                   {"epochs", c.epochs},
                   {"train_limit", c.train_limit},
                   {"test_limit", c.test_limit},
                   {"sweep_train_limit", c.sweep_train_limit},
                   {"sweep_test_limit", c.sweep_test_limit},
                   {"loader_epochs", c.loader_epochs},
                   {"loader_min_seconds", c.loader_min_seconds}};
  j["notes"] = c.notes;
}

json storage_json(const StorageResult& s) {
  return {{"dataset", s.dataset},
          {"split", s.split},
          {"format", s.format},
          {"layout", s.layout},
          {"bytes", s.bytes},
          {"ratio_to_csv", s.ratio_to_csv},
          {"write_seconds", s.write_seconds},
          {"read_to_tensor_seconds", s.read_seconds}};
}

json loader_json(const LoaderResult& l) {
  return {{"dataset", l.dataset},
          {"rung", l.config.name},
          {"config", config_json(l.config)},
          {"samples_per_epoch", l.samples_per_epoch},
          {"epoch_seconds", l.epoch_seconds},
          {"epoch_wait_seconds", l.epoch_wait_seconds},
          {"samples_per_second", l.samples_per_second},
          {"speedup", l.speedup}};
}

json epoch_json(const EpochFigures& f) {
  return {{"train_seconds", f.train_seconds},
          {"test_seconds", f.test_seconds},
          {"train_loss", f.train_loss},
          {"test_loss", f.test_loss},
          {"test_accuracy", f.test_accuracy},
          {"train_wait_seconds", f.train_wait_seconds},
          {"test_wait_seconds", f.test_wait_seconds},
          {"train_samples", f.train_samples},
          {"train_graph_replays", f.train_graph_replays},
          {"test_graph_replays", f.test_graph_replays}};
}

// A training run, as a row of the training ladder or a point of a sweep (which also says which sweep and pipeline).
json training_json(const TrainResult& t) {
  json epochs = json::array();
  for (const auto& f : t.epochs) epochs.push_back(epoch_json(f));
  json row = {{"dataset", t.dataset},
              {"rung", t.config.name},
              {"config", config_json(t.config)},
              {"skipped", t.skipped},
              {"note", t.note},
              {"capture_seconds", t.capture_seconds},
              {"epochs", epochs},
              {"avg_train_seconds", t.avg_train_seconds},
              {"avg_test_seconds", t.avg_test_seconds},
              {"total_seconds", t.total_seconds},
              {"speedup", t.speedup},
              {"wait_share", t.wait_share},
              {"test_accuracy", t.test_accuracy},
              {"train_samples_per_second", t.samples_per_second}};
  if (t.group != "ladder") {
    row["sweep"] = t.group == "sweep-batch" ? "batch_size" : "num_workers";
    row["pipeline"] = t.pipeline;
  }
  return row;
}

json floor_check_json(const FloorCheck& f) {
  json out = {{"dataset", f.dataset},
              {"best_rung", f.best_rung},
              {"floor_rung", f.floor_rung},
              {"best_train_seconds", f.best_train_seconds},
              {"floor_train_seconds", f.floor_train_seconds},
              {"best_median", f.best_median},
              {"floor_median", f.floor_median},
              {"floor_spread", f.floor_spread},
              {"gap", f.gap()}};
  // Derived from the runs, as gap is; --from computes them again rather than reading them.
  const std::vector<double> gaps = f.paired_gaps();
  out["paired_gaps"] = gaps;
  out["paired_gap_median"] = quantile(gaps, 0.5);
  const auto ci = median_interval(gaps);
  out["paired_gap_interval"] =
      ci ? json{{"low", ci->low}, {"high", ci->high}, {"coverage", ci->coverage}} : json(nullptr);
  return out;
}

json image_bench_json(const ImageBenchResult& r) {
  json rows = json::array();
  for (const auto& row : r.rows) {
    rows.push_back({{"key", row.key}, {"name", row.name}, {"skipped", row.skipped}, {"note", row.note},
                    {"runs_images_per_second", row.rates}, {"images_per_run", row.images_per_run},
                    {"images_per_second", row.images_per_second}, {"peak_rss_mib", row.peak_rss_mib},
                    {"worker_peak_rss_mib", row.worker_peak_rss_mib}});
  }
  const ImageBreakdown& b = r.breakdown;
  return {{"images", r.images}, {"workers", r.workers}, {"rows", rows},
          {"breakdown_seconds_per_image", {{"sample", b.sample}, {"read", b.read}, {"decode", b.decode},
                                           {"resize", b.resize}, {"rest", b.rest}, {"assembly", b.assembly}}}};
}

}  // namespace

std::string to_json(const LabResults& r) {
  json j;
  put_context(j, r.context);
  j["storage"] = json::array();
  for (const auto& s : r.storage) j["storage"].push_back(storage_json(s));
  j["idx_zstd3"] = json::array();
  for (const auto& z : r.idx_zstd) {
    j["idx_zstd3"].push_back(
        {{"dataset", z.dataset}, {"split", z.split}, {"raw_bytes", z.raw_bytes}, {"zstd3_bytes", z.zstd3_bytes}});
  }
  j["loader_ladder"] = json::array();
  for (const auto& l : r.loader) j["loader_ladder"].push_back(loader_json(l));
  j["training_ladder"] = json::array();
  j["sweeps"] = json::array();
  for (const auto& t : r.training) j[t.group == "ladder" ? "training_ladder" : "sweeps"].push_back(training_json(t));
  j["floor_check"] = json::array();
  for (const auto& f : r.floor_checks) j["floor_check"].push_back(floor_check_json(f));
  if (!r.images.rows.empty()) j["images"] = image_bench_json(r.images);
  return j.dump(2) + "\n";
}

namespace {

PipelineConfig config_from_json(const json& j) {
  PipelineConfig c;
  c.name = j.at("name").get<std::string>();
  c.dataset_mode = j.at("dataset_mode").get<std::string>();
  c.batch_size = j.at("batch_size").get<int64_t>();
  c.num_workers = j.at("num_workers").get<int64_t>();
  c.persistent_workers = j.at("persistent_workers").get<bool>();
  c.pin_memory = j.at("pin_memory").get<bool>();
  c.batch_fetch = j.at("batch_fetch").get<bool>();
  c.cuda_graph = j.at("cuda_graph").get<bool>();
  return c;
}

TrainResult train_from_json(const json& j, std::string group, std::string pipeline) {
  TrainResult t;
  t.dataset = j.at("dataset").get<std::string>();
  t.group = std::move(group);
  t.pipeline = std::move(pipeline);
  t.config = config_from_json(j.at("config"));
  t.skipped = j.at("skipped").get<bool>();
  t.note = j.at("note").get<std::string>();
  t.capture_seconds = j.at("capture_seconds").get<double>();
  for (const json& e : j.at("epochs")) {
    EpochFigures f;
    f.train_seconds = e.at("train_seconds").get<double>();
    f.test_seconds = e.at("test_seconds").get<double>();
    f.train_loss = e.at("train_loss").get<double>();
    f.test_loss = e.at("test_loss").get<double>();
    f.test_accuracy = e.at("test_accuracy").get<double>();
    f.train_wait_seconds = e.at("train_wait_seconds").get<double>();
    f.test_wait_seconds = e.at("test_wait_seconds").get<double>();
    f.train_samples = e.at("train_samples").get<int64_t>();
    f.train_graph_replays = e.at("train_graph_replays").get<int64_t>();
    f.test_graph_replays = e.at("test_graph_replays").get<int64_t>();
    t.epochs.push_back(f);
  }
  // As written, not summarised again: a skipped row has no epochs but may carry figures of its own.
  t.avg_train_seconds = j.at("avg_train_seconds").get<double>();
  t.avg_test_seconds = j.at("avg_test_seconds").get<double>();
  t.total_seconds = j.at("total_seconds").get<double>();
  t.speedup = j.at("speedup").get<double>();
  t.wait_share = j.at("wait_share").get<double>();
  t.test_accuracy = j.at("test_accuracy").get<double>();
  t.samples_per_second = j.at("train_samples_per_second").get<double>();
  return t;
}

LabResults results_from_json(const json& j) {
  if (!j.is_object() || j.value("tool", "") != "feedline bench") {
    throw std::runtime_error("not the results.json of feedline bench (its \"tool\" is not \"feedline bench\")");
  }
  LabResults r;
  LabContext& c = r.context;
  c.date = j.at("date").get<std::string>();
  c.command = j.at("command").get<std::string>();
  const json& machine = j.at("machine");
  c.cpu = machine.at("cpu").get<std::string>();
  c.cores = machine.at("cores").get<int>();
  c.memory_gib = machine.at("memory_gib").get<double>();
  c.libtorch = j.at("libtorch_version").get<std::string>();
  c.device = j.at("device").at("name").get<std::string>();
  c.device_name = j.at("device").at("description").get<std::string>();
  c.threads = j.at("threads").get<int>();
  c.allocator = j.at("allocator").get<std::string>();
  c.blas = j.at("blas").get<std::string>();
  const json& protocol = j.at("protocol");
  c.protocol = protocol.at("description").get<std::string>();
  c.epochs = protocol.at("epochs").get<int64_t>();
  c.train_limit = protocol.at("train_limit").get<int64_t>();
  c.test_limit = protocol.at("test_limit").get<int64_t>();
  c.sweep_train_limit = protocol.at("sweep_train_limit").get<int64_t>();
  c.sweep_test_limit = protocol.at("sweep_test_limit").get<int64_t>();
  c.loader_epochs = protocol.at("loader_epochs").get<int64_t>();
  c.loader_min_seconds = protocol.at("loader_min_seconds").get<double>();
  c.notes = j.at("notes").get<std::vector<std::string>>();
  for (const json& s : j.at("storage")) {
    r.storage.push_back({s.at("dataset").get<std::string>(), s.at("split").get<std::string>(),
                         s.at("format").get<std::string>(), s.at("layout").get<std::string>(),
                         s.at("bytes").get<int64_t>(), s.at("ratio_to_csv").get<double>(),
                         s.at("write_seconds").get<double>(), s.at("read_to_tensor_seconds").get<double>()});
  }
  for (const json& z : j.at("idx_zstd3")) {
    r.idx_zstd.push_back({z.at("dataset").get<std::string>(), z.at("split").get<std::string>(),
                          z.at("raw_bytes").get<int64_t>(), z.at("zstd3_bytes").get<int64_t>()});
  }
  for (const json& l : j.at("loader_ladder")) {
    LoaderResult x;
    x.dataset = l.at("dataset").get<std::string>();
    x.config = config_from_json(l.at("config"));
    x.samples_per_epoch = l.at("samples_per_epoch").get<int64_t>();
    x.epoch_seconds = l.at("epoch_seconds").get<std::vector<double>>();
    x.epoch_wait_seconds = l.at("epoch_wait_seconds").get<std::vector<double>>();
    x.samples_per_second = l.at("samples_per_second").get<double>();
    x.speedup = l.at("speedup").get<double>();
    r.loader.push_back(std::move(x));
  }
  for (const json& t : j.at("training_ladder")) r.training.push_back(train_from_json(t, "ladder", ""));
  for (const json& t : j.at("sweeps")) {
    const std::string sweep = t.at("sweep").get<std::string>();
    if (sweep != "batch_size" && sweep != "num_workers") {
      throw std::runtime_error("a sweep of \"" + sweep + "\", not of batch_size or num_workers");
    }
    r.training.push_back(train_from_json(t, sweep == "batch_size" ? "sweep-batch" : "sweep-workers",
                                         t.at("pipeline").get<std::string>()));
  }
  if (j.contains("images")) {
    const json& im = j.at("images");
    r.images.images = im.at("images").get<int64_t>();
    r.images.workers = im.at("workers").get<int64_t>();
    for (const json& row : im.at("rows")) {
      ImageBenchRow x;
      x.key = row.at("key").get<std::string>();
      x.name = row.at("name").get<std::string>();
      x.skipped = row.at("skipped").get<bool>();
      x.note = row.at("note").get<std::string>();
      x.rates = row.at("runs_images_per_second").get<std::vector<double>>();
      x.images_per_run = row.at("images_per_run").get<int64_t>();
      x.images_per_second = row.at("images_per_second").get<double>();
      x.peak_rss_mib = row.at("peak_rss_mib").get<double>();
      x.worker_peak_rss_mib = row.at("worker_peak_rss_mib").get<double>();
      r.images.rows.push_back(std::move(x));
    }
    const json& b = im.at("breakdown_seconds_per_image");
    r.images.breakdown = {b.at("sample").get<int64_t>(), b.at("read").get<double>(), b.at("decode").get<double>(),
                          b.at("resize").get<double>(), b.at("rest").get<double>(), b.at("assembly").get<double>()};
  }
  for (const json& f : j.at("floor_check")) {
    r.floor_checks.push_back({f.at("dataset").get<std::string>(), f.at("best_rung").get<std::string>(),
                              f.at("floor_rung").get<std::string>(),
                              f.at("best_train_seconds").get<std::vector<double>>(),
                              f.at("floor_train_seconds").get<std::vector<double>>(),
                              f.at("best_median").get<double>(), f.at("floor_median").get<double>(),
                              f.at("floor_spread").get<double>()});
  }
  return r;
}

}  // namespace

LabResults from_json(const std::string& text, const std::string& path) {
  try {
    return results_from_json(json::parse(text));
  } catch (const json::exception& e) {
    throw Error(path + ": not a results.json that feedline bench wrote: " + e.what());
  } catch (const std::runtime_error& e) {
    throw Error(path + ": " + e.what());
  }
}

std::string to_markdown(const LabResults& r) {
  const auto& c = r.context;
  std::string md = "# feedline bench results\n\n";
  md += fmt::format("- Date: {}\n- Command: `{}`\n- Machine: {}, {} cores, {:.0f} GiB\n- LibTorch {}, device {} ({}), "
                    "{} threads\n- Allocator: {}\n- BLAS: {}\n- Protocol: {}\n",
                    c.date, c.command, c.cpu, c.cores, c.memory_gib, c.libtorch, c.device, c.device_name, c.threads,
                    c.allocator, c.blas, c.protocol);
  for (const auto& n : c.notes) md += fmt::format("- Note: {}\n", n);
  if (!r.storage.empty()) {
    md += "\n## Storage\n\n| Dataset | Split | Format | MB | vs CSV | Write s | Read to tensor s |\n"
          "|---|---|---|---:|---:|---:|---:|\n";
    for (const auto& s : r.storage) {
      md += fmt::format("| {} | {} | {} | {:.1f} | {:.1f}x | {:.2f} | {:.2f} |\n", s.dataset, s.split, s.format,
                        mb(s.bytes), s.ratio_to_csv, s.write_seconds, s.read_seconds);
    }
    for (const auto& z : r.idx_zstd) {
      md += fmt::format("\n`zstd -3` of the raw {} {} IDX images: {:.2f} MB (raw {:.2f} MB).", z.dataset, z.split,
                        mb(z.zstd3_bytes), mb(z.raw_bytes));
    }
    if (!r.idx_zstd.empty()) md += "\n";
  }
  if (!r.loader.empty()) {
    md += "\n## Loader ladder (no model)\n\n| Dataset | Rung | Pipeline | Samples/s | Speed-up |\n"
          "|---|---|---|---:|---:|\n";
    for (const auto& l : r.loader) {
      md += fmt::format("| {} | {} | {} | {:.0f} | {:.1f}x |\n", l.dataset, l.config.name, l.config.describe(),
                        l.samples_per_second, l.speedup);
    }
  }
  for (const std::string group : {"ladder", "sweep-batch", "sweep-workers"}) {
    for (const auto& dataset : datasets_of(r, group)) {
      md += group == "ladder" ? fmt::format("\n## Training ladder: {}\n\n", dataset)
                              : fmt::format("\n## Sweep {}: {}\n\n", group == "sweep-batch" ? "of batch size" : "of workers", dataset);
      md += "| Pipeline | Configuration | Train s/epoch | Test s/epoch | Total s | Speed-up | Data wait | Accuracy |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|\n";
      for (const auto& t : r.training) {
        if (t.group != group || t.dataset != dataset) continue;
        const std::string label = t.pipeline.empty() ? t.config.name : t.pipeline + ": " + t.config.name;
        if (t.skipped) {
          md += fmt::format("| {} | {} | skipped: {} | | | | | |\n", label, t.config.describe(), t.note);
          continue;
        }
        md += fmt::format("| {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.1f}x | {} | {} |\n", label, t.config.describe(),
                          t.avg_train_seconds, t.avg_test_seconds, t.total_seconds, t.speedup,
                          is_floor(t) ? "-" : percent(t.wait_share), is_floor(t) ? "n/a" : percent(t.test_accuracy));
      }
      if (group == "ladder") {
        for (const FloorCheck* f : floor_checks_of(r, dataset)) md += "\n" + floor_line(*f) + ".\n";
      }
    }
  }
  if (!r.images.rows.empty()) {
    md += fmt::format("\n## Images: decoding and augmentation\n\n{} images, {} workers; RandomResizedCrop(224), "
                      "RandomHorizontalFlip(), PILToTensor(), batch 256; one round of one epoch a pipeline "
                      "(`feedline bench images` measures more)\n\n",
                      r.images.images, r.images.workers);
    md += image_bench_table(r.images.rows);
  }
  return md;
}

std::vector<std::string> all_tables(const LabResults& r) {
  std::vector<std::string> out;
  if (!r.storage.empty()) out.push_back(storage_table(r));
  if (!r.loader.empty()) out.push_back(loader_table(r));
  for (const char* group : {"ladder", "sweep-batch", "sweep-workers"}) {
    std::string table = training_table(r, group);
    if (!table.empty()) out.push_back(std::move(table));
  }
  if (!r.images.rows.empty()) out.push_back(image_bench_table(r.images.rows));
  return out;
}

void write_lab_outputs(const LabResults& r, const std::string& out_dir, bool plots, Reporter& reporter) {
  std::filesystem::create_directories(out_dir);
  const std::string json_path = out_dir + "/results.json";
  const std::string md_path = out_dir + "/results.md";
  for (const auto& [path, text] : {std::pair{json_path, to_json(r)}, std::pair{md_path, to_markdown(r)}}) {
    AtomicFile f(path);
    f.write(text);
    f.commit();
  }
  reporter.note(fmt::format("Wrote {} and {}", json_path, md_path));
  if (plots) {
    std::string problem;
    const auto files = write_plots(r, out_dir + "/plots", &problem);
    if (!problem.empty()) {
      reporter.line("Plots: " + problem);
    } else {
      reporter.line(fmt::format("Plots: {} files in {}/plots", files.size(), out_dir));
    }
  }
}

namespace {

// A gnuplot script's name (its files' stem) and the commands that draw it.
struct Plot {
  std::string name, script;
};

const char* const kBarStyle =
    "set grid ytics\nset key outside top center horizontal\nset style fill solid 0.8 border -1\n"
    "set xtics rotate by -50 left font ',9'\nset bmargin 13\nset rmargin 12\n";

// The loader ladder's samples per second: rungs in order, one column per dataset.
Plot loader_plot(const LabResults& r) {
  const auto sets = datasets_of(r, "loader");
  std::vector<std::string> rungs;
  std::map<std::pair<std::string, std::string>, double> rate;
  for (const auto& l : r.loader) {
    if (std::find(rungs.begin(), rungs.end(), l.config.name) == rungs.end()) rungs.push_back(l.config.name);
    rate[{l.dataset, l.config.name}] = l.samples_per_second;
  }
  std::string s = "$data << EOD\n";
  for (const auto& rung : rungs) {
    s += gp_quote(rung);
    for (const auto& d : sets) s += fmt::format(" {:.1f}", rate.count({d, rung}) ? rate[{d, rung}] : 0.0);
    s += "\n";
  }
  s += std::string("EOD\n") + kBarStyle +
       "set title 'Loader ladder: samples per second, no model (log scale)'\nset logscale y\nset ylabel 'samples/s'\n"
       "set style data histograms\nset style histogram clustered gap 1\n";
  s += "plot ";
  for (size_t i = 0; i < sets.size(); ++i) {
    s += fmt::format("{}$data using {}{} title {}", i ? ", " : "", i + 2, i == 0 ? ":xtic(1)" : "", gp_quote(sets[i]));
  }
  return {"loader_ladder", s + "\n"};
}

// One dataset's training ladder: train and test seconds per epoch of each rung that ran.
Plot training_ladder_plot(const LabResults& r, const std::string& dataset) {
  std::string s = "$data << EOD\n";
  for (const auto& t : r.training) {
    if (t.group != "ladder" || t.dataset != dataset || t.skipped) continue;
    s += fmt::format("{} {:.4f} {:.4f}\n", gp_quote(t.config.name), t.avg_train_seconds, t.avg_test_seconds);
  }
  s += std::string("EOD\n") + kBarStyle +
       fmt::format("set title 'Training ladder, {}: seconds per epoch (log scale)'\n", dataset) +
       "set logscale y\nset ylabel 'seconds per epoch'\nset style data histograms\n"
       "set style histogram clustered gap 1\n"
       "plot $data using 2:xtic(1) title 'train', '' using 3 title 'test'\n";
  return {"training_ladder_" + dataset, s};
}

// One dataset's sweep (`group`: sweep-batch or sweep-workers): a line of train seconds per pipeline.
Plot sweep_plot(const LabResults& r, const std::string& group, const std::string& dataset) {
  const bool batch = group == "sweep-batch";
  std::string s;
  std::vector<std::string> pipelines;
  for (const auto& t : r.training) {
    if (t.group == group && t.dataset == dataset &&
        std::find(pipelines.begin(), pipelines.end(), t.pipeline) == pipelines.end()) {
      pipelines.push_back(t.pipeline);
    }
  }
  for (size_t p = 0; p < pipelines.size(); ++p) {
    s += fmt::format("$p{} << EOD\n", p);
    for (const auto& t : r.training) {
      if (t.group != group || t.dataset != dataset || t.pipeline != pipelines[p] || t.skipped) continue;
      s += fmt::format("{} {:.4f}\n", batch ? t.config.batch_size : t.config.num_workers, t.avg_train_seconds);
    }
    s += "EOD\n";
  }
  s += "set grid\nset key top right\n";
  s += fmt::format("set title 'Sweep of {}, {}: train seconds per epoch'\n", batch ? "batch size" : "workers", dataset);
  s += batch ? "set logscale x 2\nset xlabel 'batch size'\n" : "set xlabel 'workers'\nset xtics 1\n";
  s += "set logscale y\nset ylabel 'train seconds per epoch (log scale)'\nplot ";
  for (size_t p = 0; p < pipelines.size(); ++p) {
    s += fmt::format("{}$p{} using 1:2 with linespoints lw 2 pt 7 title {}", p ? ", " : "", p, gp_quote(pipelines[p]));
  }
  return {fmt::format("{}_{}", batch ? "sweep_batch" : "sweep_workers", dataset), s + "\n"};
}

// The image bench: images per second of each pipeline that ran, a bar each, labelled with its key and a short name.
Plot image_plot(const ImageBenchResult& r) {
  const std::map<std::string, std::string> short_names{
      {"a", "torchvision"}, {"a-totensor", "ToTensor"},    {"b", "Python"},          {"c", "C++"},
      {"d", "decode only"}, {"e", "C++, window"}, {"f", "recipe: tv"}, {"g", "recipe: feedline"}};
  std::string s = "$data << EOD\n";
  for (const auto& row : r.rows) {
    if (row.skipped) continue;
    const auto name = short_names.find(row.key);
    std::string label = gp_quote("(" + row.key + ")");  // then the name on a second line, inside the quotes
    if (name != short_names.end()) label.insert(label.size() - 1, "\\n" + name->second);
    s += fmt::format("{} {:.1f}\n", label, row.images_per_second);
  }
  s += "EOD\nset grid ytics\nunset key\nset style fill solid 0.8 border -1\nset boxwidth 0.6\nset yrange [0:*]\n"
       "set offsets 0, 0, graph 0.08, 0\nset bmargin 4\n"
       "set title 'Images: RandomResizedCrop, flip, to tensor: images per second (higher is better)'\n"
       "set ylabel 'images/s'\n"
       "plot $data using 0:2:xtic(1) with boxes, '' using 0:2:(sprintf('%.0f', $2)) with labels offset 0,1\n";
  return {"images", s};
}

// Writes the plot's script into `dir` and runs gnuplot on it for an SVG and a PNG file. False when gnuplot fails.
bool draw(const Plot& p, const std::string& dir, std::vector<std::string>& made) {
  const std::string base = dir + "/" + p.name;
  const std::string script = "set terminal svg size 960,600 dynamic font 'sans,11'\nset output " +
                             gp_path(base + ".svg") + "\n" + p.script +
                             "set terminal pngcairo size 960,600 font 'sans,10'\nset output " + gp_path(base + ".png") +
                             "\nreplot\nunset output\n";
  write_text(base + ".gp", script);
  if (!run_gnuplot(base + ".gp", base + ".log")) return false;
  std::filesystem::remove(base + ".log");
  made.push_back(base + ".svg");
  made.push_back(base + ".png");
  return true;
}

}  // namespace

std::vector<std::string> write_plots(const LabResults& r, const std::string& dir, std::string* problem) {
  std::filesystem::create_directories(dir);
  std::vector<Plot> plots;
  if (!r.loader.empty()) plots.push_back(loader_plot(r));
  for (const auto& dataset : datasets_of(r, "ladder")) plots.push_back(training_ladder_plot(r, dataset));
  for (const std::string group : {"sweep-batch", "sweep-workers"}) {
    for (const auto& dataset : datasets_of(r, group)) plots.push_back(sweep_plot(r, group, dataset));
  }
  if (!r.images.rows.empty()) plots.push_back(image_plot(r.images));
  std::vector<std::string> made;
  for (const auto& p : plots) {
    if (!draw(p, dir, made)) {
      const std::string base = dir + "/" + p.name;
      *problem = "gnuplot failed on " + base + ".gp (see " + base + ".log; install gnuplot-nox)";
      return made;
    }
  }
  return made;
}

std::vector<std::string> write_image_plot(const ImageBenchResult& r, const std::string& dir, std::string* problem) {
  LabResults only;
  only.images = r;
  return write_plots(only, dir, problem);
}

}  // namespace feedline::lab
