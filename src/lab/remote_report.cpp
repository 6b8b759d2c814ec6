// `bench remote`'s figures, tables and files.
#include "lab/remote_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "feedline/io/file.h"
#include "feedline/io/remote.h"

namespace feedline::lab {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool is_curl(const RemoteBenchRow& r) { return r.source.rfind("curl", 0) == 0; }
bool is_loader(const RemoteBenchRow& r) { return r.part == "images" && !is_curl(r); }

std::string runs_text(const RemoteBenchRow& r) {
  std::string out;
  for (const RemoteRun& run : r.runs) out += (out.empty() ? "" : ", ") + fmt::format("{:.2f}", run.seconds);
  return out;
}

std::string link_text(const RemoteBenchRow& r) {
  if (r.source == "local") return "local disk";
  return r.shaped ? "shaped" : "loopback";
}

std::string ratio_text(double x) { return x > 0 ? fmt::format("{:.2f}", x) : "—"; }

std::string images_table(const RemoteBenchResult& result) {
  std::string t = "| Row | Link | Prefetch | Epoch (s) | Images/s | vs local | First batch (s) | Loader wait (s): "
                  "all, to the first batch | Wait share | CPU (s): feedline, machine | Requests | MB | MB/s | "
                  "Runs (s) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  for (const RemoteBenchRow& r : result.rows) {
    if (r.part != "images") continue;
    const bool loader = is_loader(r);
    const double mb = r.bytes / 1e6;
    t += fmt::format("| {} | {} | {} | {:.3f} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.source,
                     link_text(r), r.prefetch_blocks >= 0 ? std::to_string(r.prefetch_blocks) : "—", r.seconds,
                     loader && r.seconds > 0 ? fmt::format("{:.0f}", result.images / r.seconds) : "—",
                     loader ? ratio_text(r.vs_local) : "—",
                     loader ? fmt::format("{:.3f}", r.first_batch_seconds) : "—",
                     loader && r.source != "local"
                         ? fmt::format("{:.3f}, {:.3f}", r.fetch_wait_seconds, r.first_batch_wait_seconds)
                         : "—",
                     loader && r.source != "local" ? fmt::format("{:.1f}%", 100 * r.wait_share) : "—",
                     loader ? fmt::format("{:.2f}, {:.2f}", r.cpu_seconds, r.machine_cpu_seconds) : "—",
                     r.source == "local" ? "—" : std::to_string(r.requests),
                     r.source == "local" ? "—" : fmt::format("{:.1f}", mb),
                     r.source == "local" || r.seconds <= 0 ? "—" : fmt::format("{:.0f}", mb / r.seconds),
                     runs_text(r));
  }
  return t;
}

std::string parquet_table(const RemoteBenchResult& result) {
  std::string t = "| Row | Link | Seconds | vs local | Requests | Bound (2 + ranges) | MB | MB/s | Runs (s) |\n"
                  "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const RemoteBenchRow& r : result.rows) {
    if (r.part != "parquet") continue;
    const bool remote = r.source != "local";
    const double mb = r.bytes / 1e6;
    t += fmt::format("| {} | {} | {:.3f} | {} | {} | {} | {} | {} | {} |\n", r.source, link_text(r), r.seconds,
                     is_curl(r) ? "—" : ratio_text(r.vs_local), remote ? std::to_string(r.requests) : "—",
                     remote && !is_curl(r) ? std::to_string(2 + result.merged_ranges) : "—",
                     remote ? fmt::format("{:.1f}", mb) : "—",
                     remote && r.seconds > 0 ? fmt::format("{:.0f}", mb / r.seconds) : "—", runs_text(r));
  }
  return t;
}

nlohmann::json run_json(const RemoteRun& r) {
  return {{"seconds", r.seconds},          {"items", r.items},           {"requests", r.requests},
          {"bytes", r.bytes},              {"retries", r.retries},       {"cache_hits", r.cache_hits},
          {"fetch_wait_seconds", r.fetch_wait_seconds}, {"first_batch_seconds", r.first_batch_seconds},
          {"first_batch_wait_seconds", r.first_batch_wait_seconds}, {"cpu_seconds", r.cpu_seconds},
          {"machine_cpu_seconds", r.machine_cpu_seconds}};
}

nlohmann::json row_json(const RemoteBenchRow& r) {
  nlohmann::json runs = nlohmann::json::array();
  for (const RemoteRun& run : r.runs) runs.push_back(run_json(run));
  return {{"key", r.key},
          {"part", r.part},
          {"source", r.source},
          {"shaped", r.shaped},
          {"prefetch_blocks", r.prefetch_blocks >= 0 ? nlohmann::json(r.prefetch_blocks) : nlohmann::json(nullptr)},
          {"skipped", r.skipped},
          {"note", r.note},
          {"seconds", r.seconds},
          {"open_seconds", r.open_seconds},
          {"fetch_wait_seconds", r.fetch_wait_seconds},
          {"first_batch_seconds", r.first_batch_seconds},
          {"first_batch_wait_seconds", r.first_batch_wait_seconds},
          {"cpu_seconds", r.cpu_seconds},
          {"machine_cpu_seconds", r.machine_cpu_seconds},
          {"wait_share", r.wait_share},
          {"vs_local", r.vs_local > 0 ? nlohmann::json(r.vs_local) : nlohmann::json(nullptr)},
          {"requests", r.requests},
          {"bytes", r.bytes},
          {"runs", runs}};
}

void write_whole(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  f.write(text);
  f.commit();
}

}  // namespace

void summarize(RemoteBenchResult& result) {
  const auto local_of = [&result](const std::string& part) { return result.find(part + " local"); };
  for (RemoteBenchRow& r : result.rows) {
    if (r.runs.empty()) continue;
    std::vector<double> seconds, waits, shares, firsts, first_waits, cpu, machine_cpu;
    for (const RemoteRun& run : r.runs) {
      cpu.push_back(run.cpu_seconds);
      machine_cpu.push_back(run.machine_cpu_seconds);
      seconds.push_back(run.seconds);
      waits.push_back(run.fetch_wait_seconds);
      firsts.push_back(run.first_batch_seconds);
      first_waits.push_back(run.first_batch_wait_seconds);
      if (run.seconds > 0 && result.workers > 0) {
        shares.push_back(run.fetch_wait_seconds / (static_cast<double>(result.workers) * run.seconds));
      }
    }
    r.seconds = median(seconds);
    r.fetch_wait_seconds = median(waits);
    r.first_batch_seconds = median(firsts);
    r.first_batch_wait_seconds = median(first_waits);
    r.cpu_seconds = median(cpu);
    r.machine_cpu_seconds = median(machine_cpu);
    r.wait_share = is_loader(r) ? median(shares) : 0;
    r.requests = r.runs.back().requests;
    r.bytes = r.runs.back().bytes;
    const RemoteBenchRow* local = local_of(r.part);
    if (local != nullptr && local != &r) {
      std::vector<double> ratios;
      for (size_t k = 0; k < std::min(r.runs.size(), local->runs.size()); ++k) {
        if (local->runs[k].seconds > 0) ratios.push_back(r.runs[k].seconds / local->runs[k].seconds);
      }
      r.vs_local = median(ratios);
    }
  }
}

std::string remote_bench_tables(const RemoteBenchResult& result) {
  return images_table(result) + "\n" + parquet_table(result);
}

std::vector<std::string> write_remote_outputs(const RemoteBenchResult& result, const RemoteBenchOptions& o,
                                              const RemoteContext& c) {
  std::filesystem::create_directories(o.out_dir);
  nlohmann::json j;
  j["context"] = {{"date", c.date},
                  {"command", c.command},
                  {"cpu", c.cpu},
                  {"cores", c.cores},
                  {"load_average_before", c.load_before},
                  {"load_average_after", c.load_after},
                  {"images", result.images},
                  {"shards", result.shards},
                  {"shard_bytes", result.shard_bytes},
                  {"workers", result.workers},
                  {"batch_size", o.batch_size},
                  {"image_size", o.image_size},
                  {"repeat", o.repeat},
                  {"parquet", result.parquet},
                  {"parquet_bytes", result.parquet_bytes},
                  {"parquet_rows", result.parquet_rows},
                  {"row_groups", result.row_groups},
                  {"columns", result.columns},
                  {"column_chunks", result.column_chunks},
                  {"merged_ranges", result.merged_ranges},
                  {"projected_bytes", result.projected_bytes},
                  {"rate", o.rate},
                  {"delay_ms", o.delay_ms},
                  {"max_in_flight", remote::options().max_in_flight},
                  {"shaped", result.shaped_note.empty()},
                  {"shaped_note", result.shaped_note}};
  j["rows"] = nlohmann::json::array();
  for (const RemoteBenchRow& r : result.rows) j["rows"].push_back(row_json(r));
  const std::string json_path = o.out_dir + "/remote.json", md_path = o.out_dir + "/remote.md";
  write_whole(json_path, j.dump(2) + "\n");
  std::string md = fmt::format("# feedline bench remote\n\n{} on {} ({} cores), load average {} before, {} after.\n\n"
                               "`{}`\n\n",
                               c.date, c.cpu, c.cores, c.load_before, c.load_after, c.command);
  md += fmt::format("{} images in {} tar shards ({:.1f} MB), {} workers, batch {}. Parquet: {} ({:.1f} MB, {} row "
                    "groups), columns {}: {} chunks in {} merged ranges, {:.1f} MB with the footer's tail.\n\n",
                    result.images, result.shards, result.shard_bytes / 1e6, result.workers, o.batch_size,
                    result.parquet, result.parquet_bytes / 1e6, result.row_groups,
                    fmt::format("{}", fmt::join(result.columns, ",")), result.column_chunks, result.merged_ranges,
                    result.projected_bytes / 1e6);
  md += result.shaped_note.empty()
            ? fmt::format("Shaped link: {} each way, {} ms added to every request.\n\n", o.rate, o.delay_ms)
            : "Shaped link: " + result.shaped_note + "\n\n";
  md += "## Images\n\n" + images_table(result) + "\n## Parquet projection\n\n" + parquet_table(result);
  write_whole(md_path, md);
  return {json_path, md_path};
}

}  // namespace feedline::lab
