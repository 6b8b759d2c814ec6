// `feedline bench remote`: an epoch of tar shards and a Parquet projection from local disk, an S3 server and a web
// server, beside curl, and again through a shaped link.
#include "feedline/lab/remote_bench.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "feedline/dataset/image_dataset.h"
#include "feedline/dataset/image_sources.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "feedline/io/remote.h"
#include "feedline/loader/loader.h"
#include "io/parallel.h"
#include "lab/process.h"
#include "lab/remote_report.h"
#include "lab/remote_setup.h"

namespace feedline::lab {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

constexpr const char* kBucket = "feedline-bench";

// tests/remote/servers.py (or another file of the checkout): `given`, else under the current folder, else under the
// program's build folder's parent.
std::string find_checkout_file(const std::string& given, const std::string& program, const std::string& relative,
                               const std::string& option) {
  if (!given.empty()) {
    if (!fs::is_regular_file(given)) throw IoError("bench remote: " + option + " " + given + ": not found");
    return fs::absolute(given).string();
  }
  for (const fs::path& p : {fs::path(relative), fs::path(program).parent_path() / ".." / relative}) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return fs::absolute(p).lexically_normal().string();
  }
  throw IoError("bench remote: " + relative + " not found in the current folder or beside the program; run it from "
                "the checkout or give its path (" + option + ")");
}

// The steps of `bench images`' C++ rows.
std::vector<ImageStep> bench_steps(int64_t size) {
  return {image_steps::RandomResizedCrop{size, size}, image_steps::RandomHorizontalFlip{},
          image_steps::PILToTensor{}};
}

// CPU seconds used so far: by this process (getrusage), and by the whole machine (/proc/stat: every state but idle
// and iowait; 0 where it cannot be read).
struct CpuClock {
  double self = 0, machine = 0;
  static CpuClock now() {
    CpuClock c;
    rusage u{};
    if (::getrusage(RUSAGE_SELF, &u) == 0) {
      c.self = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
    }
    std::ifstream stat("/proc/stat");
    std::string cpu;
    int64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    if (stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal && cpu == "cpu") {
      c.machine = static_cast<double>(user + nice + system + irq + softirq + steal) /
                  static_cast<double>(::sysconf(_SC_CLK_TCK));
    }
    return c;
  }
};

// What the remote layer counted between two moments, as a run.
void add_stats(RemoteRun& run, const remote::RemoteStats& before) {
  const remote::RemoteStats after = remote::stats();
  run.requests = after.requests - before.requests;
  run.bytes = after.bytes - before.bytes;
  run.retries = after.retries - before.retries;
  run.cache_hits = after.cache_hits - before.cache_hits;
}

// The `{first..last}` brace pattern of shards under `base`, as the datasets take it.
std::string shard_pattern(const std::string& base, const ShardSet& shards) {
  const auto stem = [](const std::string& name) { return name.substr(6, 6); };  // train-NNNNNN.tar
  if (shards.files.size() == 1) return base + "/" + shards.files.front();
  return fmt::format("{}/train-{{{}..{}}}.tar", base, stem(shards.files.front()), stem(shards.files.back()));
}

// The process's remote options as they were, put back when it goes.
class RestoreRemoteOptions {
 public:
  RestoreRemoteOptions() : saved_(remote::options()) {}
  ~RestoreRemoteOptions() { remote::set_options(saved_); }
  RestoreRemoteOptions(const RestoreRemoteOptions&) = delete;
  RestoreRemoteOptions& operator=(const RestoreRemoteOptions&) = delete;

 private:
  remote::RemoteOptions saved_;
};

// A row and how to run it once.
struct Plan {
  RemoteBenchRow row;
  std::function<RemoteRun()> run;
};

class RemoteBench {
 public:
  RemoteBench(const RemoteBenchOptions& o, const std::string& program, Reporter& reporter)
      : o_(o), program_(program), reporter_(reporter) {}

  RemoteBenchResult run();

 private:
  void check_options() const;
  void make_data();
  void plan_unshaped();
  void plan_shaped();
  void plan_images(const std::string& source, bool shaped, const std::string& pattern, const std::string& endpoint,
                   int64_t prefetch);
  void plan_parquet(const std::string& source, bool shaped, const std::string& url, const std::string& endpoint);
  void plan_curl(const std::string& part, const std::string& source, bool shaped, const std::string& base,
                 bool s3);
  RemoteRun image_epoch(const std::shared_ptr<const SampleSource>& source, int64_t prefetch);
  RemoteRun parquet_read(const std::string& path);
  std::shared_ptr<const SampleSource> open_shards(const std::string& pattern, RemoteBenchRow& row);
  void run_rounds();
  void announce(const RemoteBenchRow& row, const RemoteRun& r);

  const RemoteBenchOptions& o_;
  std::string program_;
  Reporter& reporter_;
  RemoteBenchResult result_;
  // Destroyed from the bottom up, also on an error: the sources the plans hold, the environment and the remote
  // options put back, the link and the servers stopped, and only then the work folder that holds their state removed.
  std::unique_ptr<WorkDir> work_;
  ShardSet shards_;
  std::string shard_dir_, parquet_path_;
  ProjectionRanges projection_;
  std::unique_ptr<BenchServers> servers_;
  std::unique_ptr<ShapedLink> link_;
  AwsEnvironment aws_;
  RestoreRemoteOptions restore_options_;
  std::vector<Plan> plans_;
};

void RemoteBench::check_options() const {
  if (o_.images < 1 || o_.shard_images < 1 || o_.batch_size < 1 || o_.image_size < 1 || o_.repeat < 1 ||
      o_.workers < 0 || o_.parquet_mb < 1 || o_.delay_ms < 0) {
    throw InvalidArgument("bench remote: images, shard_images, batch_size, image_size, repeat and parquet_mb "
                          "must be at least 1, workers and delay_ms 0 or more");
  }
  for (const int64_t p : o_.prefetch_blocks) {
    if (p < 0) throw InvalidArgument("bench remote: prefetch_blocks takes depths of 0 or more");
  }
  std::error_code ec;
  if (!fs::is_directory(o_.photos_dir, ec)) {
    throw IoError("bench remote: " + o_.photos_dir + ": no such folder (photos_dir: a folder of class folders of "
                  "JPEGs, as `feedline prepare` writes under <data-dir>/photos/jpeg/train)");
  }
  if (!o_.parquet.empty() && (is_remote_path(o_.parquet) || !fs::is_regular_file(o_.parquet, ec))) {
    throw IoError("bench remote: parquet " + o_.parquet + ": not a local file");
  }
}

void RemoteBench::make_data() {
  const auto start = Clock::now();
  shard_dir_ = work_->path() + "/data/shards";
  shards_ = write_shards(o_.photos_dir, o_.images, o_.shard_images, shard_dir_);
  check_stop(o_.stop);
  parquet_path_ = o_.parquet;
  std::vector<std::string> columns = o_.columns;
  if (parquet_path_.empty()) {
    parquet_path_ = work_->path() + "/data/table.parquet";
    write_bench_parquet(parquet_path_, o_.parquet_mb, o_.seed);
    if (columns.empty()) columns = {"label", "f0"};
  } else if (columns.empty()) {
    const parquet::FileInfo info = parquet::read_file_info(parquet_path_);
    for (size_t c = 0; c < std::min<size_t>(2, info.schema.size()); ++c) columns.push_back(info.schema[c].name);
  }
  projection_ = projection_ranges(parquet_path_, columns);
  result_.images = shards_.images;
  result_.shards = static_cast<int64_t>(shards_.files.size());
  result_.shard_bytes = shards_.bytes;
  result_.parquet = parquet_path_;
  result_.columns = columns;
  result_.parquet_bytes = projection_.file_bytes;
  result_.parquet_rows = projection_.rows;
  result_.row_groups = projection_.row_groups;
  result_.column_chunks = projection_.chunks;
  result_.merged_ranges = static_cast<int64_t>(projection_.merged.size());
  result_.projected_bytes = projection_.bytes();
  reporter_.line(fmt::format("Data: {} images in {} tar shards ({:.1f} MB); {} ({:.1f} MB, {} rows, {} row groups), "
                             "columns {}: {} chunks in {} merged ranges, {:.1f} MB with the footer's tail ({:.1f} s)",
                             shards_.images, shards_.files.size(), shards_.bytes / 1e6, parquet_path_,
                             projection_.file_bytes / 1e6, projection_.rows, projection_.row_groups,
                             fmt::format("{}", fmt::join(columns, ",")), projection_.chunks,
                             projection_.merged.size(), projection_.bytes() / 1e6, since(start)));
}

std::shared_ptr<const SampleSource> RemoteBench::open_shards(const std::string& pattern, RemoteBenchRow& row) {
  const auto start = Clock::now();
  auto source = std::make_shared<const TarShardSource>(expand_shard_pattern(pattern));
  row.open_seconds = since(start);
  return source;
}

RemoteRun RemoteBench::image_epoch(const std::shared_ptr<const SampleSource>& source, int64_t prefetch) {
  const auto dataset = make_image_dataset(source, bench_steps(o_.image_size));
  Loader loader(dataset, LoaderOptions(o_.batch_size).shuffle(true).seed(o_.seed).num_workers(result_.workers)
                             .persistent_workers(true).prefetch_blocks(prefetch));
  RemoteRun run;
  const remote::RemoteStats before = remote::stats();
  const CpuClock cpu = CpuClock::now();
  const auto start = Clock::now();
  Epoch epoch = loader.epoch();
  while (auto batch = epoch.next()) {
    if (run.items == 0) {
      run.first_batch_seconds = since(start);
      run.first_batch_wait_seconds = remote::stats().wait_seconds - before.wait_seconds;
    }
    run.items += batch->target.size(0);
    check_stop(o_.stop);
  }
  run.seconds = since(start);
  const CpuClock used = CpuClock::now();
  run.cpu_seconds = used.self - cpu.self;
  run.machine_cpu_seconds = used.machine - cpu.machine;
  run.fetch_wait_seconds = epoch.stats().fetch_wait_seconds;
  add_stats(run, before);
  return run;
}

RemoteRun RemoteBench::parquet_read(const std::string& path) {
  parquet::ReadOptions options;
  options.columns = result_.columns;
  RemoteRun run;
  const remote::RemoteStats before = remote::stats();
  const auto start = Clock::now();
  const Table table = parquet::read_table(path, options);
  run.seconds = since(start);
  run.items = table.num_rows;
  add_stats(run, before);
  run.fetch_wait_seconds = remote::stats().wait_seconds - before.wait_seconds;
  return run;
}

void RemoteBench::plan_images(const std::string& source, bool shaped, const std::string& pattern,
                              const std::string& endpoint, int64_t prefetch) {
  Plan p;
  p.row.part = "images";
  p.row.source = source;
  p.row.shaped = shaped;
  p.row.prefetch_blocks = source == "local" ? -1 : prefetch;
  p.row.key = "images " + source + (shaped ? fmt::format(" shaped p{}", prefetch) : "");
  const size_t index = plans_.size();
  auto opened = std::make_shared<std::shared_ptr<const SampleSource>>();
  p.run = [this, index, opened, pattern, endpoint, prefetch] {
    if (!endpoint.empty()) aws_.point_at(servers_->s3(), endpoint);
    if (!*opened) *opened = open_shards(pattern, plans_[index].row);
    return image_epoch(*opened, prefetch);
  };
  plans_.push_back(std::move(p));
}

void RemoteBench::plan_parquet(const std::string& source, bool shaped, const std::string& url,
                               const std::string& endpoint) {
  Plan p;
  p.row.part = "parquet";
  p.row.source = source;
  p.row.shaped = shaped;
  p.row.key = "parquet " + source + (shaped ? " shaped" : "");
  p.run = [this, url, endpoint] {
    if (!endpoint.empty()) aws_.point_at(servers_->s3(), endpoint);
    return parquet_read(url);
  };
  plans_.push_back(std::move(p));
}

void RemoteBench::plan_curl(const std::string& part, const std::string& source, bool shaped, const std::string& base,
                            bool s3) {
  Plan p;
  p.row.part = part;
  p.row.source = source;
  p.row.shaped = shaped;
  p.row.key = part + " " + source + (shaped ? " shaped" : "");
  std::vector<CurlTransfer> transfers;
  if (part == "images") {
    for (const std::string& f : shards_.files) transfers.push_back({base + "/shards/" + f, {}});
  } else {
    const std::string url = base + "/parquet/" + fs::path(parquet_path_).filename().string();
    transfers.push_back({url, projection_.tail});
    for (const remote::ByteRange& r : projection_.merged) transfers.push_back({url, r});
  }
  // As many at once as the remote layer allows itself.
  const int parallel = std::min<int>(static_cast<int>(transfers.size()), remote::options().max_in_flight);
  const std::string config = work_->path() + "/curl.conf";
  p.run = [this, transfers, s3, parallel, config] {
    const CurlResult c = curl_fetch(transfers, s3 ? &servers_->s3() : nullptr, parallel, config);
    RemoteRun run;
    run.seconds = c.seconds;
    run.items = c.transfers;
    run.requests = c.transfers;
    run.bytes = c.bytes;
    return run;
  };
  plans_.push_back(std::move(p));
}

void RemoteBench::plan_unshaped() {
  const std::string s3_base = std::string("s3://") + kBucket;
  const std::string endpoint = servers_->s3().endpoint;
  const std::string table = "/parquet/" + fs::path(parquet_path_).filename().string();
  const int64_t prefetch = LoaderOptions().prefetch_blocks();
  plan_images("local", false, shard_pattern(shard_dir_, shards_), "", prefetch);
  plan_images("s3", false, shard_pattern(s3_base + "/shards", shards_), endpoint, prefetch);
  plan_images("http", false, shard_pattern(servers_->http_url() + "/shards", shards_), "", prefetch);
  plan_curl("images", "curl s3", false, endpoint + "/" + kBucket, true);
  plan_curl("images", "curl http", false, servers_->http_url(), false);
  plan_parquet("local", false, parquet_path_, "");
  plan_parquet("s3", false, s3_base + table, endpoint);
  plan_parquet("http", false, servers_->http_url() + table, "");
  plan_curl("parquet", "curl s3", false, endpoint + "/" + kBucket, true);
  plan_curl("parquet", "curl http", false, servers_->http_url(), false);
}

void RemoteBench::plan_shaped() {
  if (!o_.shaped) {
    result_.shaped_note = "left out (--skip-shaped)";
    return;
  }
  if (::geteuid() != 0) {
    result_.shaped_note = "skipped: the shaped link needs root (a network namespace, a veth pair and tc)";
    return;
  }
  try {
    const std::string script = find_bench_script(o_.link_script, program_, "shaped_link.py", "bench remote");
    if (script.empty()) throw IoError("scripts/python/shaped_link.py not found: give its path (link_script)");
    link_ = std::make_unique<ShapedLink>(o_.python_program, script,
                                         std::vector<std::string>{servers_->s3_proxy(), servers_->http_proxy()},
                                         o_.rate, work_->path() + "/shaped-link.log", o_.stop);
    servers_->set_proxy_delay(o_.delay_ms);
  } catch (const IoError& e) {
    result_.shaped_note = std::string("skipped: ") + e.what();
    link_.reset();
    return;
  }
  const std::string s3_base = std::string("s3://") + kBucket;
  const std::string s3_link = link_->url(0), http_link = link_->url(1);
  const std::string table = "/parquet/" + fs::path(parquet_path_).filename().string();
  for (const int64_t p : o_.prefetch_blocks) {
    plan_images("s3", true, shard_pattern(s3_base + "/shards", shards_), s3_link, p);
  }
  for (const int64_t p : o_.prefetch_blocks) {
    plan_images("http", true, shard_pattern(http_link + "/shards", shards_), "", p);
  }
  plan_curl("images", "curl s3", true, s3_link + "/" + kBucket, true);
  plan_curl("images", "curl http", true, http_link, false);
  plan_parquet("s3", true, s3_base + table, s3_link);
  plan_parquet("http", true, http_link + table, "");
  plan_curl("parquet", "curl s3", true, s3_link + "/" + kBucket, true);
  plan_curl("parquet", "curl http", true, http_link, false);
}

void RemoteBench::announce(const RemoteBenchRow& row, const RemoteRun& r) {
  std::string text = fmt::format("  ({}) {:.3f} s", row.key, r.seconds);
  if (row.part == "images" && row.source.rfind("curl", 0) != 0) {
    text += fmt::format(", {:.0f} images/s, loader wait {:.3f} s", r.items / std::max(r.seconds, 1e-9),
                        r.fetch_wait_seconds);
  }
  if (row.source != "local") text += fmt::format(", {} requests, {:.1f} MB", r.requests, r.bytes / 1e6);
  if (r.retries > 0) text += fmt::format(", {} retries", r.retries);
  reporter_.line(text);
}

void RemoteBench::run_rounds() {
  // Untimed: the local files into the page cache, the code paths and the allocator warmed, as the other benches do.
  reporter_.note("Warm-up: one local epoch and one local projection");
  for (Plan& p : plans_) {
    if (p.row.source == "local") (void)p.run();
  }
  std::vector<size_t> order(plans_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (int64_t round = 0; round < o_.repeat; ++round) {
    reporter_.note(fmt::format("Round {} of {}{}", round + 1, o_.repeat, round % 2 == 1 ? " (reversed)" : ""));
    // Every other round reversed, so that no row always follows the same one.
    for (size_t k = 0; k < order.size(); ++k) {
      check_stop(o_.stop);
      Plan& p = plans_[round % 2 == 0 ? order[k] : order[order.size() - 1 - k]];
      const RemoteRun r = p.run();
      p.row.runs.push_back(r);
      announce(p.row, r);
    }
  }
}

RemoteBenchResult RemoteBench::run() {
  check_options();
  if (o_.max_in_flight > 0) {
    remote::RemoteOptions ro = remote::options();
    ro.max_in_flight = static_cast<int>(o_.max_in_flight);
    remote::set_options(ro);
  }
  const std::string servers_script =
      find_checkout_file(o_.servers_script, program_, "tests/remote/servers.py", "servers_script");
  result_.workers = o_.workers > 0 ? o_.workers : resolve_threads(0);
  const std::string started = utc_now(), load_before = load_averages();
  reporter_.section("Remote data: an epoch of tar shards and a Parquet projection, local against S3 and HTTP");
  work_ = std::make_unique<WorkDir>(o_.work_dir, o_.keep_work_dir);
  reporter_.line("Work folder: " + work_->path() + (o_.work_dir.empty() && !o_.keep_work_dir ? " (removed at the end)"
                                                                                            : ""));
  make_data();
  check_stop(o_.stop);
  servers_ = std::make_unique<BenchServers>(o_.python_program, servers_script, work_->path() + "/servers", o_.stop);
  reporter_.line(fmt::format("Servers: radosgw at {}, nginx at {}, up in {:.1f} s", servers_->s3().endpoint,
                             servers_->http_url(), servers_->start_seconds()));
  const auto upload = Clock::now();
  servers_->put_dir(kBucket, "shards/", shard_dir_, shards_.files);
  check_stop(o_.stop);
  servers_->put(kBucket, "parquet/" + fs::path(parquet_path_).filename().string(), parquet_path_);
  reporter_.line(fmt::format("Uploaded to s3://{} and nginx in {:.1f} s", kBucket, since(upload)));

  plan_unshaped();
  plan_shaped();
  reporter_.line(result_.shaped_note.empty()
                     ? fmt::format("Shaped link: {} each way through veth {}, {} ms added to every request by the "
                                   "fault proxy; image epochs at prefetch_blocks {}",
                                   o_.rate, link_->device(), o_.delay_ms,
                                   fmt::format("{}", fmt::join(o_.prefetch_blocks, ", ")))
                     : "Shaped link: " + result_.shaped_note);
  reporter_.line(fmt::format("Images: RandomResizedCrop({}), RandomHorizontalFlip(), PILToTensor(), batch {}, "
                             "shuffled, {} workers; {} round{}, one epoch a row a round (a row's figure: its median)",
                             o_.image_size, o_.batch_size, result_.workers, o_.repeat, o_.repeat == 1 ? "" : "s"));
  run_rounds();
  // The servers and the link go before the tables are written, so that a Ctrl-C there leaves nothing running.
  link_.reset();
  servers_.reset();
  for (Plan& p : plans_) result_.rows.push_back(std::move(p.row));
  summarize(result_);
  const std::string load_after = load_averages();
  reporter_.table(remote_bench_tables(result_));
  reporter_.line(fmt::format("Load average before: {}, after: {}", load_before, load_after));
  if (!o_.out_dir.empty()) {
    RemoteContext context{started, o_.command, cpu_model(), resolve_threads(0), load_before, load_after};
    for (const std::string& path : write_remote_outputs(result_, o_, context)) reporter_.line("Wrote " + path);
  }
  return result_;
}

}  // namespace

const RemoteBenchRow* RemoteBenchResult::find(const std::string& key) const {
  for (const RemoteBenchRow& r : rows) {
    if (r.key == key) return &r;
  }
  return nullptr;
}

RemoteBenchResult run_remote_bench(const RemoteBenchOptions& options, const std::string& program,
                                   Reporter& reporter) {
  try {
    RemoteBench bench(options, program, reporter);
    return bench.run();
  } catch (const Error&) {
    // A stop also ends the programs the bench was running (curl, s3tool.py share its terminal's signal): what failed
    // then is the stop.
    check_stop(options.stop);
    throw;
  }
}

}  // namespace feedline::lab
