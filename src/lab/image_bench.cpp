// `feedline bench images`: the image pipelines side by side on the same files and cores, and where the C++
// pipeline's time goes.
#include <fmt/core.h>
#include <malloc.h>
#include <torch/cuda.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "feedline/dataset/image_dataset.h"
#include "feedline/dataset/image_sources.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/image_decode.h"
#include "feedline/lab/lab.h"
#include "feedline/loader/loader.h"
#include "io/parallel.h"
#include "lab/process.h"
#include "lab/report.h"

namespace feedline::lab {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string first_line_of(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key, 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "";
}

// The source's samples, `limit` of them spread evenly over it (0: every one).
std::vector<int64_t> spread(int64_t size, int64_t limit) {
  const int64_t n = limit > 0 ? std::min(limit, size) : size;
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = i * size / n;
  return out;
}

// This process's resident memory from /proc/self/status, "VmRSS" (now) or "VmHWM" (the peak since the last
// reset_peak()), in MiB; 0 when unknown.
double status_mib(const std::string& key) {
  const std::string value = first_line_of("/proc/self/status", key);  // "123456 kB"
  try {
    return value.empty() ? 0 : std::stod(value) / 1024.0;
  } catch (const std::exception&) {
    return 0;
  }
}

// Resets VmHWM to the resident memory now (Linux: "5" to clear_refs). False where the kernel refuses.
bool reset_peak() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

// A folder of class folders of links to the chosen files, so that every pipeline, torchvision's too, reads the
// same files. Removed with the object.
class LinkFolder {
 public:
  LinkFolder(const ImageFolderSource& source, const std::vector<int64_t>& chosen) {
    char pattern[] = "/tmp/feedline-bench-images-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw IoError("bench images: cannot make a scratch folder in /tmp");
    root_ = pattern;
    for (const int64_t i : chosen) {
      const auto& [path, label] = source.samples()[static_cast<size_t>(i)];
      const fs::path dir = fs::path(root_) / source.classes()[static_cast<size_t>(label)];
      std::error_code ec;
      fs::create_directories(dir, ec);
      const fs::path target = fs::absolute(path, ec);
      fs::create_symlink(target, dir / fmt::format("{:07d}-{}", i, fs::path(path).filename().string()), ec);
      if (ec) throw IoError("bench images: cannot link " + path + " into " + root_ + ": " + ec.message());
    }
  }
  ~LinkFolder() { remove_tree(root_); }
  LinkFolder(const LinkFolder&) = delete;
  LinkFolder& operator=(const LinkFolder&) = delete;
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

// Some samples of another source.
class SubsetSource : public SampleSource {
 public:
  SubsetSource(std::shared_ptr<const SampleSource> base, std::vector<int64_t> indices)
      : base_(std::move(base)), indices_(std::move(indices)) {}
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  EncodedSample get(int64_t index) const override { return base_->get(indices_.at(static_cast<size_t>(index))); }
  std::vector<int64_t> labels() const override {
    const std::vector<int64_t> all = base_->labels();
    std::vector<int64_t> out;
    for (const int64_t i : indices_) out.push_back(all[static_cast<size_t>(i)]);
    return out;
  }

 private:
  std::shared_ptr<const SampleSource> base_;
  std::vector<int64_t> indices_;
};

std::vector<ImageStep> bench_steps(int64_t size) {
  return {image_steps::RandomResizedCrop{size, size}, image_steps::RandomHorizontalFlip{},
          image_steps::PILToTensor{}};
}

// The Python pipelines' environment: the process settings the feedline tool applies (unless the environment
// chooses otherwise, as apply_process_settings() lets it), and the feedline package on the path.
std::string python_environment(const std::string& python_path) {
  std::string env = process_settings_environment();
  if (!python_path.empty()) {
    const char* old = std::getenv("PYTHONPATH");
    env += "PYTHONPATH=" + quoted(python_path + (old != nullptr && *old != '\0' ? ":" + std::string(old) : "")) + " ";
  }
  return env;
}

std::string find_python_path(const ImageBenchOptions& o, const std::string& program) {
  if (!o.python_path.empty()) return o.python_path;
  const fs::path dir = fs::path(program).parent_path() / "python";
  std::error_code ec;
  return fs::is_directory(dir / "feedline", ec) ? dir.string() : "";
}

// One Python pipeline in a process of its own.
void run_python_row(const ImageBenchOptions& o, const std::string& script, const std::string& python_path,
                    const std::string& root, int64_t workers, const std::string& pipeline, ImageBenchRow& row) {
  const std::string json = root + ".python.json";
  const std::string cmd = python_environment(python_path) + quoted(o.python_program) + " " + quoted(script) +
                          " --data " + quoted(root) + " --pipeline " + pipeline + " --workers " +
                          std::to_string(workers) + " --batch-size " + std::to_string(o.batch_size) +
                          " --image-size " + std::to_string(o.image_size) + " --epochs " +
                          std::to_string(o.epochs) + " --repeat 1 --seed " +
                          std::to_string(o.seed) + " --json " + quoted(json) + " 2>&1";
  const CommandOutput run = run_captured(cmd, "bench images: cannot run " + o.python_program);
  const std::string& out = run.output;
  if (!run.succeeded) {
    row.skipped = true;
    // The last line it printed: Python's error.
    const auto end = out.find_last_not_of("\n ");
    const auto newline = out.rfind('\n', end == std::string::npos ? 0 : end);
    const size_t start = newline == std::string::npos ? 0 : newline + 1;
    row.note = "failed: " + (end == std::string::npos ? std::string("no output") : out.substr(start, end + 1 - start));
    return;
  }
  std::ifstream f(json);
  const nlohmann::json j = nlohmann::json::parse(f);
  std::error_code ec;
  fs::remove(json, ec);
  for (const double rate : j.at("rates")) row.rates.push_back(rate);
  row.images_per_run = j.at("images_per_run").get<int64_t>();
  row.peak_rss_mib = j.value("peak_rss_mib", 0.0);
  row.worker_peak_rss_mib = j.value("worker_peak_rss_mib", 0.0);
  row.note = j.value("version", "");
}

// One run of the C++ Loader: a warm-up epoch, then o.epochs timed epochs.
void run_loader_row(const ImageBenchOptions& o, std::shared_ptr<const SampleSource> source, int64_t workers,
                    bool reduced, ImageBenchRow& row) {
  ImageTransformOptions options;
  options.reduced_decode = reduced;
  const auto dataset = make_image_dataset(std::move(source), bench_steps(o.image_size), options);
  Loader loader(dataset, LoaderOptions(o.batch_size).shuffle(true).seed(o.seed).num_workers(workers)
                             .persistent_workers(true));
  const auto epoch = [&loader] {
    int64_t n = 0;
    for (auto& batch : loader.epoch()) n += batch.target.size(0);
    return n;
  };
  epoch();
  const auto start = Clock::now();
  int64_t n = 0;
  for (int64_t e = 0; e < o.epochs; ++e) n += epoch();
  row.rates.push_back(static_cast<double>(n) / since(start));
  row.images_per_run = n;
}

// The limit: every file read and decoded whole, on `workers` threads.
void run_decode_row(const ImageBenchOptions& o, const SampleSource& source, int64_t workers, ImageBenchRow& row) {
  const auto n = static_cast<size_t>(source.size());
  const auto pass = [&] {
    parallel_for(n, static_cast<int>(workers), [&](size_t i) {
      const EncodedSample s = source.get(static_cast<int64_t>(i));
      decode_image(s.bytes, s.name);
    });
  };
  pass();
  const auto start = Clock::now();
  for (int64_t e = 0; e < o.epochs; ++e) pass();
  row.rates.push_back(static_cast<double>(n) * static_cast<double>(o.epochs) / since(start));
  row.images_per_run = static_cast<int64_t>(n) * o.epochs;
}

// Memory in flight of a C++ loader row at one prefetch factor. The loader keeps at most window = workers x
// prefetch_factor batches submitted and not yet handed out (made or being made); while it hands one out, that one
// and the one the caller still holds are live too: at most min(window + 2, batches of an epoch) batches. Each
// worker also keeps scratch that outlives a sample: its decode buffer and the resampler's buffers.
struct InFlight {
  std::string key;  // the row: c or e
  int64_t prefetch = 0, window = 0, live_batches = 0;
  double batch_mib = 0;     // one batch, data and targets
  double scratch_mib = 0;   // one worker's scratch, measured (worker_scratch_mib)
  double bound_mib = 0;     // live_batches x batch + workers x scratch
  double measured_mib = 0;  // peak resident memory over the epochs less resident memory before; 0: unknown
  std::string dtype;        // the batches' data
  bool pinned = false;      // with pin_memory(true): page-locked (it takes CUDA)
};

// Samples the scratch is measured over (every one of a smaller set), spread over the set.
constexpr int64_t kScratchSamples = 2000;

// While it lives, blocks of 128 KiB and more (batches, decode buffers) are mapped and unmapped whole, glibc's
// default, so that resident memory follows live memory. feedline's process settings (MALLOC_MMAP_MAX_=0) keep
// freed memory in each worker thread's arena instead, where malloc_trim cannot hand it back and a later loader
// reuses it: resident memory measured from before such a loader would leave that memory out.
class MappedBlocks {
 public:
  MappedBlocks() { mallopt(M_MMAP_MAX, kGlibcMmapMax); }
  ~MappedBlocks() {
    const char* choice = std::getenv("FEEDLINE_MALLOC");
    if (choice == nullptr || std::string(choice) != "system") mallopt(M_MMAP_MAX, 0);
  }
  MappedBlocks(const MappedBlocks&) = delete;
  MappedBlocks& operator=(const MappedBlocks&) = delete;

 private:
  static constexpr int kGlibcMmapMax = 65536;  // glibc's DEFAULT_MMAP_MAX
};

// One worker's scratch: how much a fresh thread's transforms of `chosen` samples, one after another into one
// batch slot, grow resident memory by (the decode buffer and the resampler's buffers, with the allocator's room for
// them).
double worker_scratch_mib(const SampleSource& source, const std::vector<int64_t>& chosen,
                          const ImageTransform& transform, uint64_t seed) {
  double grown = 0;
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      const SampleLayout layout = transform.layout();
      const torch::Tensor slot = torch::zeros(layout.sizes, torch::TensorOptions().dtype(layout.dtype));
      malloc_trim(0);
      const double before = status_mib("VmRSS");
      for (const int64_t i : chosen) {
        SampleRng rng(seed, 0, i);
        transform.apply(source.get(i), rng, slot);
      }
      grown = std::max(0.0, status_mib("VmRSS") - before);
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
  return grown;
}

// The (c) or (e) loader for o.epochs epochs at `prefetch`, with pin_memory(true), its peak resident memory against
// the bound. Freed memory is handed back first (malloc_trim); the caller holds a MappedBlocks, so that the epochs'
// batches need pages of their own.
InFlight measure_in_flight(const ImageBenchOptions& o, const std::shared_ptr<const SampleSource>& source,
                           int64_t workers, bool reduced, int64_t prefetch, double scratch_mib) {
  InFlight m;
  m.key = reduced ? "e" : "c";
  m.prefetch = prefetch;
  m.window = workers * prefetch;
  ImageTransformOptions options;
  options.reduced_decode = reduced;
  const SampleLayout layout = ImageTransform(bench_steps(o.image_size), options).layout();
  int64_t sample_bytes = static_cast<int64_t>(c10::elementSize(layout.dtype));
  for (const int64_t n : layout.sizes) sample_bytes *= n;
  m.batch_mib = static_cast<double>(o.batch_size * (sample_bytes + 8)) / (1024.0 * 1024.0);
  const int64_t batches = (source->size() + o.batch_size - 1) / o.batch_size;
  m.live_batches = std::min(m.window + 2, batches);
  m.scratch_mib = scratch_mib;
  m.bound_mib = static_cast<double>(m.live_batches) * m.batch_mib + static_cast<double>(workers) * scratch_mib;
  const auto dataset = make_image_dataset(source, bench_steps(o.image_size), options);
  malloc_trim(0);
  const double before = status_mib("VmRSS");
  const bool reset = reset_peak();
  {
    Loader loader(dataset, LoaderOptions(o.batch_size).shuffle(true).seed(o.seed).num_workers(workers)
                               .prefetch_factor(prefetch).pin_memory(true));
    for (int64_t e = 0; e < o.epochs; ++e) {
      for (auto& batch : loader.epoch()) {
        if (m.dtype.empty()) {
          const auto type = batch.data.scalar_type();
          m.dtype = type == torch::kUInt8 ? "uint8" : type == torch::kFloat32 ? "float32" : c10::toString(type);
          m.pinned = batch.data.is_pinned();
        }
      }
    }
  }
  const double peak = status_mib("VmHWM");
  m.measured_mib = reset && peak > 0 && before > 0 ? std::max(0.0, peak - before) : 0;
  return m;
}

// Where a sample's time goes, on one thread: reading the file, decoding it, the crop's resize, the rest of the
// transform (the crop box, the flip, the copy to planes), and the loader's own work (sampling, batch allocation
// and assembly): what a loader with no workers over the same samples takes beyond the pieces.
ImageBreakdown measure_breakdown(const ImageBenchOptions& o, const std::shared_ptr<const SampleSource>& source) {
  ImageBreakdown b;
  const std::vector<int64_t> chosen = spread(source->size(), o.sample);
  b.sample = static_cast<int64_t>(chosen.size());
  if (chosen.empty()) return b;
  const int size = static_cast<int>(o.image_size);
  std::vector<uint8_t> planes(static_cast<size_t>(3 * size * size));
  double read = 0, decode = 0, resize = 0, rest = 0;
  static volatile uint8_t sink = 0;
  for (size_t k = 0; k < chosen.size(); ++k) {
    auto t = Clock::now();
    const EncodedSample s = source->get(chosen[k]);
    read += since(t);
    t = Clock::now();
    const DecodedImage image = decode_image(s.bytes, s.name);
    decode += since(t);
    SampleRng rng(o.seed, 0, static_cast<int64_t>(k));
    t = Clock::now();
    const CropBox box = image_ops::random_resized_crop_box(image.height, image.width, 0.08, 1.0, 3.0 / 4.0,
                                                           4.0 / 3.0, rng);
    rest += since(t);
    t = Clock::now();
    DecodedImage resized = image_ops::resized_crop(image, box, size, size);
    resize += since(t);
    // The rest: the flip (half the images) and the copy from pixels to planes, channels first.
    t = Clock::now();
    if (rng.uniform() < 0.5) image_ops::hflip(resized);
    const size_t area = static_cast<size_t>(size) * static_cast<size_t>(size);
    for (size_t p = 0; p < area; ++p) {
      for (size_t c = 0; c < 3; ++c) planes[c * area + p] = resized.pixels[p * 3 + c];
    }
    sink = planes[k % planes.size()];  // the copy is used
    rest += since(t);
  }
  auto subset = std::make_shared<SubsetSource>(source, chosen);
  ImageTransformOptions whole;  // the pieces above decode every pixel
  whole.reduced_decode = false;
  Loader loader(make_image_dataset(subset, bench_steps(o.image_size), whole),
                LoaderOptions(std::min<int64_t>(o.batch_size, b.sample)).shuffle(true).seed(o.seed));
  const auto t = Clock::now();
  for (auto& batch : loader.epoch()) (void)batch.data.data_ptr();
  const double loader_seconds = since(t);
  const auto per = [&b](double s) { return s / static_cast<double>(b.sample); };
  b.read = per(read);
  b.decode = per(decode);
  b.resize = per(resize);
  b.rest = per(rest);
  b.assembly = std::max(0.0, per(loader_seconds - read - decode - resize - rest));
  return b;
}

std::string mib(double v) { return v > 0 ? fmt::format("{:.0f} MiB", v) : "-"; }

const ImageBenchRow* find_row(const std::vector<ImageBenchRow>& rows, const std::string& key) {
  for (const auto& r : rows) {
    if (r.key == key && !r.skipped) return &r;
  }
  return nullptr;
}

// x against y run by run: the median over rounds of x's rate over y's in the same round, so that a slow spell of
// the machine weighs on both sides of a ratio. 0 where either is missing.
double paired(const ImageBenchRow* x, const ImageBenchRow* y) {
  if (x == nullptr || y == nullptr) return 0;
  std::vector<double> ratios;
  for (size_t k = 0; k < std::min(x->rates.size(), y->rates.size()); ++k) {
    if (y->rates[k] > 0) ratios.push_back(x->rates[k] / y->rates[k]);
  }
  return median(ratios);
}

std::string ratio(double r) { return r > 0 ? fmt::format("{:.2f}x", r) : "-"; }


// A pipeline's rate over its anchor's, run by run: the Python loader over torchvision's (a), the C++ rows over
// decoding alone (d), the Python loader over the C++ loader it wraps (c), and feedline's training recipe over
// torchvision's (f). 0: not measured.
struct AnchorRatio {
  std::string row, anchor;
  double value = 0;
};

std::vector<AnchorRatio> anchor_ratios(const std::vector<ImageBenchRow>& rows) {
  std::vector<AnchorRatio> out;
  for (const auto& [x, y] :
       {std::pair<const char*, const char*>{"b", "a"}, {"c", "d"}, {"e", "d"}, {"b", "c"}, {"g", "f"}}) {
    out.push_back({x, y, paired(find_row(rows, x), find_row(rows, y))});
  }
  return out;
}

nlohmann::json row_json(const ImageBenchRow& r, const ImageBenchRow* a, const ImageBenchRow* d) {
  nlohmann::json j{{"key", r.key}, {"name", r.name}, {"skipped", r.skipped}, {"note", r.note},
                   {"images_per_second", r.images_per_second}, {"rates", r.rates},
                   {"images_per_run", r.images_per_run}};
  const double vs_a = paired(&r, a), vs_d = paired(&r, d);  // run by run
  j["vs_torchvision"] = vs_a > 0 ? nlohmann::json(vs_a) : nlohmann::json(nullptr);
  j["vs_decode"] = vs_d > 0 ? nlohmann::json(vs_d) : nlohmann::json(nullptr);
  j["peak_rss_mib"] = r.peak_rss_mib;
  j["worker_peak_rss_mib"] = r.worker_peak_rss_mib;
  return j;
}

void write_json(const ImageBenchOptions& o, const ImageBenchResult& r, const nlohmann::json& context,
                const std::vector<AnchorRatio>& ratios, const std::vector<InFlight>& in_flight) {
  const ImageBenchRow* a = find_row(r.rows, "a");
  const ImageBenchRow* d = find_row(r.rows, "d");
  nlohmann::json j;
  j["context"] = context;
  j["rows"] = nlohmann::json::array();
  for (const auto& row : r.rows) {
    j["rows"].push_back(row_json(row, a, d));
  }
  const ImageBreakdown& b = r.breakdown;
  const double total = b.total();
  const auto share = [total](double x) { return total > 0 ? x / total : 0.0; };
  j["breakdown"] = {{"sample", b.sample},
                    {"seconds_per_image", {{"read", b.read}, {"decode", b.decode}, {"resize", b.resize},
                                           {"rest", b.rest}, {"assembly", b.assembly}}},
                    {"shares", {{"read", share(b.read)}, {"decode", share(b.decode)}, {"resize", share(b.resize)},
                                {"rest", share(b.rest)}, {"assembly", share(b.assembly)}}}};
  j["ratios"] = nlohmann::json::array();
  for (const AnchorRatio& x : ratios) {
    j["ratios"].push_back({{"row", x.row}, {"anchor", x.anchor},
                           {"ratio", x.value > 0 ? nlohmann::json(x.value) : nlohmann::json(nullptr)}});
  }
  j["in_flight"] = nlohmann::json::array();
  for (const InFlight& m : in_flight) {
    j["in_flight"].push_back({{"row", m.key}, {"prefetch_factor", m.prefetch}, {"window", m.window},
                              {"live_batches", m.live_batches}, {"batch_mib", m.batch_mib},
                              {"worker_scratch_mib", m.scratch_mib}, {"bound_mib", m.bound_mib},
                              {"measured_mib", m.measured_mib > 0 ? nlohmann::json(m.measured_mib)
                                                                  : nlohmann::json(nullptr)},
                              {"dtype", m.dtype}, {"pinned", m.pinned}});
  }
  AtomicFile f(o.json_path);
  f.write(j.dump(2) + "\n");
  f.commit();
}

void check_options(const ImageBenchOptions& o) {
  if (o.data_dir.empty()) throw InvalidArgument("bench images: no data_dir, a folder of class folders of images");
  std::error_code ec;
  if (!fs::is_directory(o.data_dir, ec)) {
    throw IoError("bench images: " + o.data_dir + ": no such folder (data_dir: a folder of class folders of images, "
                  "as `feedline prepare` writes under <data-dir>/photos/jpeg/train)");
  }
  if (image_source_kind(o.data_dir) != ImageSourceKind::kFolder) {
    throw InvalidArgument("bench images: " + o.data_dir + " is not a folder of class folders of images");
  }
  if (o.batch_size < 1 || o.image_size < 1 || o.epochs < 1 || o.repeat < 1 || o.workers < 0 || o.images < 0 ||
      o.sample < 0) {
    throw InvalidArgument("bench images: batch_size, image_size, epochs and repeat must be at least 1, "
                          "workers, images and sample 0 or more");
  }
}

}  // namespace

std::string image_bench_table(const std::vector<ImageBenchRow>& rows) {
  const ImageBenchRow* a = find_row(rows, "a");
  const ImageBenchRow* d = find_row(rows, "d");
  std::string t = "| | Pipeline | Images/s | vs (a) | vs (d) | Peak memory | Runs (images/s) |\n"
                  "|---|---|---:|---:|---:|---:|---|\n";
  for (const auto& r : rows) {
    std::string runs;
    for (const double x : r.rates) runs += (runs.empty() ? "" : ", ") + fmt::format("{:.0f}", x);
    std::string memory = mib(r.peak_rss_mib);
    if (r.worker_peak_rss_mib > 0) memory += fmt::format(" + workers of up to {:.0f} MiB", r.worker_peak_rss_mib);
    t += r.skipped ? fmt::format("| ({}) | {} | skipped: {} | | | | |\n", r.key, r.name, r.note)
                   : fmt::format("| ({}) | {} | {:.0f} | {} | {} | {} | {} |\n", r.key, r.name, r.images_per_second,
                                 ratio(paired(&r, a)), ratio(paired(&r, d)), memory, runs);
  }
  return t;
}

namespace {

// What every piece of one `bench images` run reads: its options, its workers, the files and the Python side.
struct ImageBenchRun {
  const ImageBenchOptions& o;
  int64_t workers = 0;
  std::shared_ptr<const ImageFolderSource> source;  // the chosen files, through the link folder
  std::string root;                                 // the link folder, which the Python pipelines read
  std::string script, python_path;                  // the Python pipelines' script ("": none) and package
};

void report_header(const ImageBenchRun& run, const ImageFolderSource& all, const ImageBenchResult& result,
                   const std::string& load_before, Reporter& reporter) {
  const ImageBenchOptions& o = run.o;
  reporter.section("Images: decoding and augmentation");
  reporter.line(fmt::format("{}: {} of {} images in {} classes; RandomResizedCrop({}), RandomHorizontalFlip(), "
                            "PILToTensor(), batch {}, shuffled, {} workers; each pipeline a warm-up epoch, then {} "
                            "round{} of {} epoch{} each (a row's figure: its median run)",
                            o.data_dir, result.images, all.size(), run.source->classes().size(), o.image_size,
                            o.batch_size, run.workers, o.repeat, o.repeat == 1 ? "" : "s", o.epochs,
                            o.epochs == 1 ? "" : "s"));
  reporter.line(fmt::format("Load average before: {}", load_before));
}

// The pipelines, in the order each round runs them.
std::vector<ImageBenchRow> pipeline_rows(const ImageBenchOptions& o, int64_t workers) {
  const std::string w = fmt::format("{} worker{}", workers, workers == 1 ? "" : "s");
  std::vector<ImageBenchRow> rows{
      {"a", "torchvision ImageFolder, torch DataLoader, PILToTensor (uint8), " + w + " (processes)"},
      {"a-totensor", "the same with ToTensor (float32)"},
      {"b", "feedline.ImageFolder, feedline.DataLoader (Python), " + w + " (threads), whole decode"},
      {"c", "feedline Loader over make_image_dataset (C++), " + w + ", whole decode (reduced_decode off)"},
      {"d", "limit: read + decode_image of the whole files on " + std::to_string(workers) + " threads"},
      {"e", "(c) with reduced_decode, the default: the crop's window only"},
      {"f", "the recipe in torchvision: (a) + TrivialAugmentWide, float32, Normalize, RandomErasing(0.1)"},
      {"g", "the recipe in feedline: (b) with the same transforms"}};
  if (!o.recipe) rows.resize(rows.size() - 2);
  if (!o.to_tensor) rows.erase(rows.begin() + 1);
  return rows;
}

// One run of one pipeline, its rate added to the row (or the row marked skipped, for good).
void run_pipeline(const ImageBenchRun& run, ImageBenchRow& row) {
  const ImageBenchOptions& o = run.o;
  static const std::map<std::string, std::string> kPythonPipelines{
      {"a", "torchvision"}, {"a-totensor", "torchvision-totensor"}, {"b", "feedline"},
      {"f", "torchvision-recipe"}, {"g", "feedline-recipe"}};
  if (const auto python = kPythonPipelines.find(row.key); python != kPythonPipelines.end()) {
    if (!o.python) {
      row.skipped = true;
      row.note = "the Python rows were left out";
    } else if (run.script.empty()) {
      row.skipped = true;
      row.note = "scripts/python/image_bench.py not found: give --script";
    } else {
      run_python_row(o, run.script, run.python_path, run.root, run.workers, python->second, row);
    }
  } else if (row.key == "c" || row.key == "e") {
    run_loader_row(o, run.source, run.workers, row.key == "e", row);
  } else {
    run_decode_row(o, *run.source, run.workers, row);
  }
}

// In rounds, each pipeline once a round, so that the machine's slower and faster spells fall on all alike.
void run_rounds(const ImageBenchRun& run, std::vector<ImageBenchRow>& rows, Reporter& reporter) {
  const ImageBenchOptions& o = run.o;
  for (int64_t round = 0; round < o.repeat; ++round) {
    if (o.repeat > 1) reporter.note(fmt::format("Round {} of {}", round + 1, o.repeat));
    for (auto& row : rows) {
      if (row.skipped) continue;
      run_pipeline(run, row);
      reporter.line(row.skipped ? fmt::format("  ({}) skipped: {}", row.key, row.note)
                                : fmt::format("  ({}) {:.0f} images/s ({} images)", row.key, row.rates.back(),
                                              row.images_per_run));
    }
  }
  for (auto& row : rows) row.images_per_second = median(row.rates);
}

void report_breakdown(const ImageBenchRun& run, ImageBenchResult& result, Reporter& reporter) {
  reporter.note(fmt::format("Where the time of (c) goes, on one thread over {} images",
                            std::min(run.o.sample, result.images)));
  result.breakdown = measure_breakdown(run.o, run.source);
  const ImageBreakdown& b = result.breakdown;
  const double total = b.total();
  const auto piece = [total](const char* name, double s) {
    return fmt::format("| {} | {:.2f} ms | {:.1f}% |\n", name, 1e3 * s, total > 0 ? 100.0 * s / total : 0.0);
  };
  reporter.table("| Piece | Per image | Share |\n|---|---:|---:|\n" + piece("read the file", b.read) +
                 piece("decode_image (whole)", b.decode) + piece("resize (resized_crop)", b.resize) +
                 piece("the rest of the transform (crop box, flip, copy)", b.rest) +
                 piece("loader: sampling, batch assembly", b.assembly) +
                 fmt::format("| total | {:.2f} ms | |\n", 1e3 * total));
}

// Memory in flight: the C++ rows at two prefetch factors. The caller holds a MappedBlocks.
std::vector<InFlight> report_in_flight(const ImageBenchRun& run, Reporter& reporter) {
  const ImageBenchOptions& o = run.o;
  reporter.note("Memory in flight of the C++ rows (resident memory: the peak during the epochs less before)");
  std::vector<InFlight> in_flight;
  const std::vector<int64_t> every = spread(run.source->size(), kScratchSamples);
  for (const bool reduced : {false, true}) {
    ImageTransformOptions options;
    options.reduced_decode = reduced;
    const double scratch =
        worker_scratch_mib(*run.source, every, ImageTransform(bench_steps(o.image_size), options), o.seed);
    for (const int64_t prefetch : {int64_t{1}, int64_t{2}}) {
      const InFlight m = measure_in_flight(o, run.source, run.workers, reduced, prefetch, scratch);
      in_flight.push_back(m);
      reporter.line(fmt::format("  ({}) prefetch_factor {}: in flight: {}, bound {:.0f} MiB ({} batches of {:.1f} "
                                "MiB + {} workers x {:.1f} MiB of scratch)",
                                m.key, m.prefetch, m.measured_mib > 0 ? fmt::format("{:.0f} MiB", m.measured_mib)
                                                                      : std::string("unknown"),
                                m.bound_mib, m.live_batches, m.batch_mib, run.workers, m.scratch_mib));
    }
  }
  if (!in_flight.empty()) {
    reporter.line(fmt::format("  batches: {}, pinned with pin_memory: {}", in_flight.front().dtype,
                              in_flight.front().pinned       ? "yes"
                              : torch::cuda::is_available() ? "no"
                                                            : "no (no CUDA here: pin_memory takes effect with CUDA)"));
  }
  return in_flight;
}

// The pipelines' table and what goes under it.
std::vector<AnchorRatio> report_table(const ImageBenchResult& result, const std::string& load_after,
                                      const std::string& vm_peak, Reporter& reporter) {
  reporter.table(image_bench_table(result.rows));
  reporter.line("Images/s: the median run; vs (a) and vs (d): the median over rounds of the row's run over theirs "
                "in the same round");
  const std::vector<AnchorRatio> ratios = anchor_ratios(result.rows);
  std::string line;
  for (const AnchorRatio& x : ratios) {
    line += fmt::format("{}({}) over ({}) {}", line.empty() ? "" : ", ", x.row, x.anchor,
                        x.value > 0 ? ratio(x.value) : std::string("not measured"));
  }
  reporter.line("Against their anchors, run by run: " + line);
  reporter.line(fmt::format("Load average after: {}", load_after));
  const ImageBenchRow* e = find_row(result.rows, "e");
  if (e != nullptr) {
    reporter.line("(e): ImageTransformOptions::reduced_decode = true (the default), else as (c)");
  }
  reporter.line("Peak memory of this process (rows c-e): " + (vm_peak.empty() ? "unknown" : vm_peak));
  return ratios;
}

// The JSON file (o.json_path) and the plot (o.plot_dir), where asked for.
void write_outputs(const ImageBenchRun& run, const ImageBenchResult& result, const nlohmann::json& context,
                   const std::vector<AnchorRatio>& ratios, const std::vector<InFlight>& in_flight,
                   Reporter& reporter) {
  const ImageBenchOptions& o = run.o;
  if (!o.json_path.empty()) {
    write_json(o, result, context, ratios, in_flight);
    reporter.line("Wrote " + o.json_path);
  }
  if (!o.plot_dir.empty()) {
    std::string problem;
    const auto files = write_image_plot(result, o.plot_dir, &problem);
    reporter.line(problem.empty() ? fmt::format("Plot: {} files in {}", files.size(), o.plot_dir) : "Plot: " + problem);
  }
}

nlohmann::json context_json(const ImageBenchRun& run, const ImageBenchResult& result, const std::string& load_before,
                            const std::string& load_after, const std::string& vm_peak) {
  const ImageBenchOptions& o = run.o;
  return {{"date", utc_now()},
          {"command", o.command},
          {"cpu", first_line_of("/proc/cpuinfo", "model name")},
          {"cores", resolve_threads(0)},
          {"data", o.data_dir},
          {"images", result.images},
          {"workers", run.workers},
          {"batch_size", o.batch_size},
          {"image_size", o.image_size},
          {"epochs", o.epochs},
          {"repeat", o.repeat},
          {"load_average_before", load_before},
          {"load_average_after", load_after},
          {"peak_rss_cpp", vm_peak}};
}

}  // namespace

ImageBenchResult run_image_bench(const ImageBenchOptions& o, const std::string& program, Reporter& reporter) {
  check_options(o);
  ImageBenchResult result;
  const int64_t workers = o.workers > 0 ? o.workers : resolve_threads(0);
  result.workers = workers;
  const std::string load_before = load_averages();
  const ImageFolderSource all(o.data_dir);
  const LinkFolder folder(all, spread(all.size(), o.images));
  ImageBenchRun run{o, workers, std::make_shared<const ImageFolderSource>(folder.root()), folder.root()};
  result.images = run.source->size();
  run.script = o.python ? find_bench_script(o.script, program, "image_bench.py", "bench images") : "";
  run.python_path = find_python_path(o, program);

  report_header(run, all, result, load_before, reporter);
  // The page cache: every pipeline reads files already in memory.
  parallel_for(static_cast<size_t>(result.images), static_cast<int>(workers),
               [&](size_t i) { (void)run.source->get(static_cast<int64_t>(i)); });
  std::vector<ImageBenchRow> rows = pipeline_rows(o, workers);
  for (const auto& row : rows) reporter.line(fmt::format("  ({}) {}", row.key, row.name));
  run_rounds(run, rows, reporter);
  result.rows = rows;
  report_breakdown(run, result, reporter);

  // The process's peak so far (rows c-e), before the in-flight measurements reset it.
  const std::string vm_peak = first_line_of("/proc/self/status", "VmHWM");
  const MappedBlocks mapped;
  const std::vector<InFlight> in_flight = report_in_flight(run, reporter);

  const std::string load_after = load_averages();
  const std::vector<AnchorRatio> ratios = report_table(result, load_after, vm_peak, reporter);
  const nlohmann::json context =
      o.json_path.empty() ? nlohmann::json() : context_json(run, result, load_before, load_after, vm_peak);
  write_outputs(run, result, context, ratios, in_flight, reporter);
  return result;
}

void run_image_rung(const LabOptions& options, LabResults& results, Reporter& reporter) {
  const std::string dir =
      options.photos_dir.empty() ? (fs::path(options.data_dir) / "photos/jpeg/train").string() : options.photos_dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    const std::string text = "images: skipped, no photo set at " + dir + ": run feedline prepare --photos";
    reporter.line(text);
    results.context.notes.push_back(text);
    return;
  }
  ImageBenchOptions o;
  o.data_dir = dir;
  o.images = options.image_count;
  o.epochs = 1;
  o.repeat = 1;
  o.sample = std::min<int64_t>(o.sample, options.image_count > 0 ? options.image_count : o.sample);
  o.to_tensor = false;
  o.recipe = false;
  o.seed = options.seed;
  o.command = options.command;
  results.images = run_image_bench(o, options.program, reporter);
}

}  // namespace feedline::lab
