#include "feedline/lab/lab.h"

#include <fmt/core.h>
#include <torch/torch.h>
#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <memory>
#include <thread>

#include "dataset/image.h"
#include "feedline/catalog/catalog.h"
#include "feedline/dataset/dataset.h"
#include "feedline/dataset/image_file.h"
#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/idx.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"
#include "feedline/loader/loader.h"
#include "feedline/train/train.h"
#include "io/parallel.h"
#include "lab/loader_timing.h"
#include "lab/process.h"
#include "lab/report.h"
#include "lab/stats.h"
#include "train/cuda_support.h"

namespace feedline::lab {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ------------------------------------------------------------------------------------------- the pipelines

PipelineConfig rung(std::string name, std::string mode, int64_t batch, int64_t workers, bool persistent, bool pin,
                    bool batch_fetch) {
  PipelineConfig c;
  c.name = std::move(name);
  c.dataset_mode = std::move(mode);
  c.batch_size = batch;
  c.num_workers = workers;
  c.persistent_workers = persistent;
  c.pin_memory = pin;
  c.batch_fetch = batch_fetch;
  return c;
}

// The experiment's ladder, in its order, then ours. Every rung keeps what the ones above it added.
std::vector<PipelineConfig> loader_rungs() {
  return {
      rung("naive row dataset, batch 16", "row", 16, 0, false, false, false),
      rung("batch 512", "row", 512, 0, false, false, false),
      rung("+ 4 workers", "row", 512, 4, false, false, false),
      rung("+ persistent workers", "row", 512, 4, true, false, false),
      rung("+ pinned memory", "row", 512, 4, true, true, false),
      rung("+ pre-decoded tensor dataset", "tensor", 512, 4, true, true, false),
      rung("+ batch fetch", "tensor", 512, 4, true, true, true),
      rung("+ uint8 storage, normalised on device", "tensor-uint8", 512, 4, true, true, true),
      rung("+ device-resident dataset", "device", 512, 0, false, false, true),
  };
}

PipelineConfig with_cuda_graph(PipelineConfig c) {
  c.cuda_graph = true;
  return c;
}

// Then, on CUDA, the step captured as a CUDA graph; and the compute floors: the same model and optimizer with
// no loader, with the eager step and (CUDA) the captured one. First on synthetic batches (uniform noise made on
// the device); then on the dataset's own images already on the device, in order, since on a CPU what the
// images hold changes what the model costs, and only that floor tells the data path's cost from it.
std::vector<PipelineConfig> training_rungs() {
  auto rungs = loader_rungs();
  rungs.push_back(with_cuda_graph(rung("+ CUDA graph step", "device", 512, 0, false, false, true)));
  rungs.push_back(rung("compute floor (synthetic, no loader)", "synthetic", 512, 0, false, false, false));
  rungs.push_back(with_cuda_graph(rung("compute floor, CUDA graph step", "synthetic", 512, 0, false, false, false)));
  rungs.push_back(rung("compute floor (its images, no loader)", "in-order", 512, 0, false, false, false));
  rungs.push_back(
      with_cuda_graph(rung("compute floor on its images, CUDA graph step", "in-order", 512, 0, false, false, false)));
  return rungs;
}

// The floor check compares like with like: on CUDA the captured step over the device-resident dataset against
// the captured floors; elsewhere the best eager pipeline against the eager floors. The synthetic floor first.
std::pair<PipelineConfig, std::vector<PipelineConfig>> best_and_floors(bool cuda) {
  PipelineConfig best = loader_rungs().back();
  std::vector<PipelineConfig> floors;
  for (const auto& c : training_rungs()) {
    if (c.cuda_graph != cuda) continue;
    if (c.is_floor()) {
      floors.push_back(c);
    } else if (cuda) {
      best = c;
    }
  }
  return {best, floors};
}

// One dataset's tables and the datasets made from them, each decoded once and shared by every run.
class DatasetCache {
 public:
  DatasetCache(std::shared_ptr<const Table> table, ImageTableLayout layout, torch::Device device)
      : table_(std::move(table)), layout_(std::move(layout)), device_(device) {}

  int64_t size() const { return table_->num_rows; }

  std::shared_ptr<const Dataset> get(const std::string& mode) {
    auto& slot = made_[mode];
    if (!slot) slot = make_table_dataset(table_, parse_dataset_mode(mode), layout_, device_);
    return slot;
  }

  // The pre-decoded dataset's images (float, normalised) and labels, copied to the device once: the floor on
  // the dataset's own images.
  const std::pair<torch::Tensor, torch::Tensor>& on_device() {
    if (!on_device_.first.defined()) {
      const auto tensors = std::dynamic_pointer_cast<const TensorDataset>(get("tensor"));
      if (!tensors) throw std::logic_error("the tensor dataset is not a TensorDataset");
      on_device_ = {tensors->images().to(device_), tensors->labels().to(device_)};
    }
    return on_device_;
  }

 private:
  std::shared_ptr<const Table> table_;
  ImageTableLayout layout_;
  torch::Device device_;
  std::map<std::string, std::shared_ptr<const Dataset>> made_;
  std::pair<torch::Tensor, torch::Tensor> on_device_;
};

// The data a ladder runs on: one of the experiment's datasets as `feedline prepare` wrote it, or the user's files.
struct Source {
  std::string name;  // printed and recorded as the dataset
  std::string train_path, test_path;
  ColumnChoice columns;  // what to read of them
  ImageShape shape;
  SimpleCNNOptions model;
};

LoaderOptions loader_options(const PipelineConfig& c, bool shuffle, uint64_t seed) {
  return LoaderOptions(c.batch_size)
      .shuffle(shuffle)
      .num_workers(c.num_workers)
      .persistent_workers(c.persistent_workers)
      .pin_memory(c.pin_memory)
      .batch_fetch(c.batch_fetch)
      .seed(seed);
}

// ------------------------------------------------------------------------------------------- context

double memory_gib() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  double kib = 0;
  if (f >> key >> kib && key == "MemTotal:") return kib / (1024.0 * 1024.0);
  return 0;
}

// ------------------------------------------------------------------------------------------- the lab

class Lab {
 public:
  Lab(const LabOptions& args, Reporter& reporter)
      : args_(args), reporter_(reporter), device_(resolve_device(device_choice_text(args.device))) {}

  LabResults run();

 private:
  void check_inputs() const;
  void describe_context();
  Source source(const std::string& flag) const;
  Source user_source() const;
  void storage();
  void loader_ladder(const std::vector<Source>& sources);
  void training_ladder(const Source& source);
  void sweeps(const Source& source);
  TrainResult train_run(const Source& source, const std::string& group, const std::string& pipeline,
                        const PipelineConfig& config, DatasetCache& train, DatasetCache& test, int64_t index,
                        int64_t count);
  std::vector<EpochResult> train_config(const SimpleCNNOptions& model, const PipelineConfig& c, DatasetCache& train,
                                        DatasetCache& test, TrainOptions options, const TrainCallbacks& callbacks = {});
  void warm_up(const SimpleCNNOptions& model, DatasetCache& train);
  void floor_check(const Source& source, DatasetCache& train, DatasetCache& test);

  // One split of a source, its first `limit` rows (0: all), with the datasets made from it.
  DatasetCache load(const Source& source, const std::string& split, int64_t limit) const {
    const std::string& path = split == "train" ? source.train_path : source.test_path;
    auto table =
        std::make_shared<const Table>(load_image_table(path, source.columns, source.shape, limit, args_.threads));
    return DatasetCache(std::move(table), image_layout(source.columns, source.shape), device_);
  }

  const LabOptions& args_;
  Reporter& reporter_;
  torch::Device device_;
  LabResults results_;
};

Source Lab::source(const std::string& flag) const {
  const DatasetSpec spec = dataset_spec(flag);
  Source s;
  s.name = spec.folder;
  s.train_path = split_path(args_.data_dir, spec, "train", "parquet");
  s.test_path = split_path(args_.data_dir, spec, "test", "parquet");
  return s;
}

// The user's files: their class count from their labels (only the label column is read for it) unless given.
Source Lab::user_source() const {
  Source s;
  s.name = args_.train_file;
  s.train_path = args_.train_file;
  s.test_path = args_.test_file;
  s.columns = args_.columns;
  s.shape = args_.shape;
  std::vector<std::pair<std::string, int64_t>> labels;
  for (const std::string& path : {s.train_path, s.test_path}) {
    labels.emplace_back(path, max_label_in(path, s.columns, 0, args_.threads));
  }
  s.model = SimpleCNNOptions()
                .channels(s.shape.channels)
                .height(s.shape.height)
                .width(s.shape.width)
                .classes(class_count(args_.num_classes, 0, labels));
  return s;
}

void Lab::check_inputs() const {
  // Fail before minutes of work, not after.
  if (!args_.train_file.empty()) {
    if (args_.shape.height < 4 || args_.shape.width < 4) {
      throw InvalidArgument("bench: shape: SimpleCNN needs images of at least 4x4 pixels");
    }
    for (const std::string& path : {args_.train_file, args_.test_file}) {
      if (parquet::is_dataset_spec(path)) {  // Parquet files: listed now, read later
        parquet::list_dataset_files(path);
        continue;
      }
      if (!std::filesystem::is_regular_file(path)) throw IoError(path + ": not found");
      input_format(path);
    }
    return;
  }
  if (!args_.skip_loader || !args_.skip_training || !args_.skip_sweeps) {
    std::vector<std::string> flags = args_.skip_loader ? std::vector<std::string>{} : args_.datasets;
    if (!args_.skip_training || !args_.skip_sweeps) {
      flags.insert(flags.end(), args_.train_datasets.begin(), args_.train_datasets.end());
    }
    for (const auto& flag : flags) {
      const DatasetSpec spec = dataset_spec(flag);
      for (const std::string split : {"train", "test"}) split_path(args_.data_dir, spec, split, "parquet");
    }
  }
  if (!args_.skip_storage) {
    for (const auto& flag : args_.datasets) {
      const DatasetSpec spec = dataset_spec(flag);
      const std::string dir = idx_dir(spec, spec.flag == "mnist" ? args_.mnist_idx : args_.fashion_idx);
      idx_file(dir, "train-images-idx3-ubyte", install_hint(spec));
    }
  }
}

// A row-major image table (`label`, `image`) with each image as a PNG file in `image.bytes`: the columns a
// Hugging Face image struct reads as.
Table png_image_table(const Table& row_major, int64_t height, int64_t width) {
  const ByteArrays& images = row_major.column("image").byte_arrays();
  std::vector<std::string> files(static_cast<size_t>(row_major.num_rows));
  parallel_for_blocks(0, row_major.num_rows, 256, at::get_num_threads(), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      files[static_cast<size_t>(r)] =
          encode_png_gray8(reinterpret_cast<const uint8_t*>(images.at(r).data()), height, width);
    }
  });
  Table out;
  out.num_rows = row_major.num_rows;
  out.columns.push_back(row_major.column("label"));
  Column bytes = make_column(ColumnSchema{"image.bytes", PhysicalType::kByteArray});
  for (const std::string& f : files) std::get<ByteArrays>(bytes.values).push_back(f);
  out.columns.push_back(std::move(bytes));
  return out;
}

// Storage: each split of each dataset as CSV and as each Parquet layout, written and read back to tensors.
void Lab::storage() {
  reporter_.section("Storage: CSV and four Parquet layouts, written and read back into image tensors");
  const std::string tmp = args_.out_dir + "/.storage-tmp";
  std::filesystem::create_directories(tmp);
  // The files written here are scratch: gone however this step ends.
  struct RemoveOnExit {
    std::string dir;
    ~RemoveOnExit() { remove_tree(dir); }
  } cleanup{tmp};
  struct Format {
    std::string name, layout, extension;
    ImageTableLayoutKind kind;
    parquet::WriteOptions options;
    bool png = false;  // the row-major images as PNG files (encoded as part of writing, decoded as part of reading)
  };
  parquet::WriteOptions pandas_like;
  pandas_like.codec = parquet::Codec::kSnappy;
  pandas_like.num_threads = args_.threads;
  parquet::WriteOptions uint8_zstd;
  uint8_zstd.num_threads = args_.threads;
  // The writer's default 1 MiB pages already compress the row-major layout about as well as zstd -3 of the raw
  // images, so the layout keeps the default options (larger pages do not compress it better).
  const parquet::WriteOptions row_major = uint8_zstd;
  const std::vector<Format> formats{
      {"csv", "label,pixel1..pixel784 as text", ".csv", ImageTableLayoutKind::kPixelColumnsUInt8, {}},
      {"parquet-pandas", "785 INT64 columns, SNAPPY, dictionary (pandas-like)", ".parquet",
       ImageTableLayoutKind::kPixelColumnsInt64, pandas_like},
      {"parquet-uint8", "785 INT(8,unsigned) columns, ZSTD 3, dictionary (our default)", ".parquet",
       ImageTableLayoutKind::kPixelColumnsUInt8, uint8_zstd},
      {"parquet-row-major", "label + FIXED_LEN_BYTE_ARRAY(784) image, ZSTD 3", ".parquet",
       ImageTableLayoutKind::kRowMajor, row_major},
      {"parquet-png", "label + one PNG file per image (Hugging Face's encoding), SNAPPY", ".parquet",
       ImageTableLayoutKind::kRowMajor, pandas_like, /*png=*/true},
  };
  for (const auto& flag : args_.datasets) {
    const DatasetSpec spec = dataset_spec(flag);
    const std::string src = idx_dir(spec, spec.flag == "mnist" ? args_.mnist_idx : args_.fashion_idx);
    for (const std::string split : {"train", "test"}) {
      const std::string prefix = split == "train" ? "train" : "t10k";
      const ImageSplit images = read_idx_split(idx_file(src, prefix + "-images-idx3-ubyte", install_hint(spec)),
                                               idx_file(src, prefix + "-labels-idx1-ubyte", install_hint(spec)));
      // The raw IDX image file: its 16-byte header (magic 0x00000803, count, rows, cols, big-endian) and the
      // pixels; compressed as `zstd -3` would.
      std::string raw;
      for (const int64_t word : {int64_t{0x803}, images.count, images.rows, images.cols}) {
        for (int shift = 24; shift >= 0; shift -= 8) raw.push_back(static_cast<char>((word >> shift) & 0xff));
      }
      raw.append(reinterpret_cast<const char*>(images.images.data()), images.images.size());
      std::string packed(ZSTD_compressBound(raw.size()), '\0');
      const size_t z = ZSTD_compress(packed.data(), packed.size(), raw.data(), raw.size(), 3);
      if (ZSTD_isError(z)) throw IoError(std::string("zstd: ") + ZSTD_getErrorName(z));
      results_.idx_zstd.push_back({spec.folder, split, static_cast<int64_t>(raw.size()), static_cast<int64_t>(z)});

      int64_t csv_bytes = 0;
      for (const auto& f : formats) {
        if (reporter_.shows_progress()) {
          reporter_.progress(fmt::format("{} {} {}", spec.folder, split, f.name), 0, 1, "");
        }
        Table table = image_split_to_table(images, f.kind);
        const std::string path = tmp + "/" + spec.folder + "-" + split + "-" + f.name + f.extension;
        StorageResult r{spec.folder, split, f.name, f.layout};
        auto t = Clock::now();
        if (f.png) table = png_image_table(table, images.rows, images.cols);
        if (f.name == "csv") {
          write_csv(path, table);
        } else {
          parquet::write_table(path, table, f.options);
        }
        r.write_seconds = seconds_since(t);
        r.bytes = file_size(path);
        if (f.name == "csv") csv_bytes = r.bytes;
        r.ratio_to_csv = static_cast<double>(csv_bytes) / static_cast<double>(r.bytes);
        t = Clock::now();
        parquet::ReadOptions ropts;
        ropts.num_threads = args_.threads;
        const Table back = f.name == "csv" ? read_csv(path, CsvReadOptions{args_.threads}) : parquet::read_table(path, ropts);
        const ImageTensors tensors = decode_image_table(back);
        r.read_seconds = seconds_since(t);
        if (tensors.images.size(0) != images.count) {
          throw InvalidFile(path + ": read back " + std::to_string(tensors.images.size(0)) + " images, wrote " +
                            std::to_string(images.count));
        }
        std::filesystem::remove(path);
        results_.storage.push_back(r);
      }
    }
  }
  reporter_.table(storage_table(results_));
}

// The loader ladder: the pipeline alone, batches delivered to the device, no model.
void Lab::loader_ladder(const std::vector<Source>& sources) {
  reporter_.section(fmt::format("Loader ladder: the pipeline alone (no model), shuffled epochs of each train split: "
                                 "one warm-up, then at least {} timed and {:g}s",
                                 args_.loader_epochs, args_.loader_min_seconds));
  reporter_.line(fmt::format(
      "Batches are delivered to {}; uint8 rungs leave normalisation to the training step, on the device.",
      device_.str()));
  const auto rungs = loader_rungs();
  for (const Source& source : sources) {
    DatasetCache cache = load(source, "train", 0);
    double first = 0;
    for (size_t i = 0; i < rungs.size(); ++i) {
      const auto& c = rungs[i];
      Loader loader(cache.get(c.dataset_mode), loader_options(c, true, args_.seed));
      LoaderResult r;
      r.dataset = source.name;
      r.config = c;
      const int64_t batches = loader.batches_per_epoch();
      LoaderTimingHooks hooks;
      hooks.consume = [this](Example& batch) {
        auto x = batch.data.to(device_, batch.data.is_pinned());
        auto y = batch.target.to(device_, batch.target.is_pinned());
        return y.size(0);
      };
      hooks.end_epoch = [this] {
        if (device_.is_cuda()) torch::cuda::synchronize();
      };
      if (reporter_.shows_progress()) {  // not even the labels' formatting inside the timed loop otherwise
        hooks.progress = [&](int64_t e, int64_t k) {
          reporter_.progress(fmt::format("{} [{}/{}] {}", source.name, i + 1, rungs.size(), c.name), k, batches,
                             e < 0 ? std::string("warm-up") : fmt::format("epoch {}", e + 1));
        };
      }
      const LoaderTiming t = time_loader_epochs(loader, args_.loader_epochs, args_.loader_min_seconds, hooks);
      r.epoch_seconds = t.epoch_seconds;
      r.epoch_wait_seconds = t.epoch_wait_seconds;
      r.samples_per_epoch = t.samples_per_epoch;
      r.samples_per_second = t.samples_per_second();
      if (i == 0) first = r.samples_per_second;
      r.speedup = r.samples_per_second / first;
      reporter_.line(fmt::format("{} [{}/{}] {:<40} {:>12.0f} samples/s {:>8.1f}x", source.name, i + 1, rungs.size(),
                                 c.name, r.samples_per_second, r.speedup));
      results_.loader.push_back(r);
    }
  }
  reporter_.table(loader_table(results_));
}

// A few untimed steps, so the first timed run does not pay for first-touch allocations and library start-up.
void Lab::warm_up(const SimpleCNNOptions& model_options, DatasetCache& train) {
  torch::manual_seed(args_.seed);
  SimpleCNN model(model_options);
  model->to(device_);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));
  Loader loader(train.get("tensor"), LoaderOptions(512).shuffle(true).seed(args_.seed));
  auto epoch = loader.epoch();
  for (int i = 0; i < 3; ++i) {
    auto batch = epoch.next();
    if (!batch) break;
    optimizer.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(batch->data.to(device_)), batch->target.to(device_));
    loss.backward();
    optimizer.step();
  }
  if (device_.is_cuda()) torch::cuda::synchronize();
}

TrainResult Lab::train_run(const Source& source, const std::string& group, const std::string& pipeline,
                           const PipelineConfig& c, DatasetCache& train, DatasetCache& test, int64_t index,
                           int64_t count) {
  const std::string& dataset = source.name;
  TrainResult r;
  r.dataset = dataset;
  r.group = group;
  r.pipeline = pipeline;
  r.config = c;
  const std::string label = pipeline.empty() ? c.name : pipeline + ": " + c.name;
  reporter_.run_started(index, count, fmt::format("{} {}: {}", dataset, label, c.describe()));
  if (c.cuda_graph && !device_.is_cuda()) {
    r.skipped = true;
    r.note = "needs a CUDA device";
    reporter_.line("skipped: " + r.note);
    return r;
  }
  TrainOptions topts;
  topts.epochs = args_.epochs;
  topts.device = device_;
  TrainCallbacks callbacks;
  if (reporter_.shows_progress()) {  // reading the loss per step would sync the device otherwise
    callbacks.on_train_step = [&](int64_t epoch, int64_t step, int64_t steps, double) {
      reporter_.progress(fmt::format("[{}/{}] epoch {}/{}", index, count, epoch, args_.epochs), step, steps, "");
    };
  }
  callbacks.on_epoch_end = [&](const EpochResult& e) {
    reporter_.line(fmt::format("Epoch {}/{}: train {:.2f}s (data wait {:.1f}%), test {:.2f}s, test accuracy {:.2f}%",
                               e.epoch, args_.epochs, e.train_seconds, 100.0 * e.data_wait_share(), e.test_seconds,
                               100.0 * e.test_accuracy));
  };

  const std::vector<EpochResult> epochs = train_config(source.model, c, train, test, topts, callbacks);
  if (!epochs.empty() && epochs.front().capture_seconds > 0) {
    r.capture_seconds = epochs.front().capture_seconds;
    r.note = fmt::format("warm-up and graph capture took {:.2f}s before epoch 1, outside its time; {} of {} train "
                         "steps replayed from the graph in epoch 1",
                         r.capture_seconds, epochs.front().train_graph_replays, epochs.front().train_stats.batches);
    reporter_.line("(" + r.note + ")");
  }
  for (const auto& e : epochs) {
    EpochFigures f;
    f.train_seconds = e.train_seconds;
    f.test_seconds = e.test_seconds;
    f.train_loss = e.train_loss;
    f.test_loss = e.test_loss;
    f.test_accuracy = e.test_accuracy;
    f.train_wait_seconds = e.train_stats.wait_seconds;
    f.test_wait_seconds = e.test_stats.wait_seconds;
    f.train_samples = e.train_stats.samples;
    f.train_graph_replays = e.train_graph_replays;
    f.test_graph_replays = e.test_graph_replays;
    r.epochs.push_back(f);
  }
  r.summarise();
  // The experiment's own log lines, for every run.
  const double epochs_run = static_cast<double>(r.epochs.size());
  reporter_.line(fmt::format("Average Train Time per Epoch: {:.2f}s", r.avg_train_seconds));
  reporter_.line(fmt::format("Average Test Time per Epoch: {:.2f}s", r.avg_test_seconds));
  reporter_.line(fmt::format("Total Train Time: {:.2f}s", r.avg_train_seconds * epochs_run));
  reporter_.line(fmt::format("Total Test Time: {:.2f}s", r.avg_test_seconds * epochs_run));
  return r;
}

// One run of a rung from a fresh SimpleCNN seeded alike: a compute floor (on synthetic data, or on the dataset's
// images in order), or its datasets through two loaders; options.cuda_graph follows the rung.
std::vector<EpochResult> Lab::train_config(const SimpleCNNOptions& model_options, const PipelineConfig& c,
                                           DatasetCache& train, DatasetCache& test, TrainOptions options,
                                           const TrainCallbacks& callbacks) {
  options.cuda_graph = c.cuda_graph;
  torch::manual_seed(args_.seed);
  SimpleCNN model(model_options);
  if (c.dataset_mode == "synthetic") {
    return train_compute_floor(model, train.size(), test.size(), c.batch_size, options, callbacks);
  }
  if (c.dataset_mode == "in-order") {
    const auto& [train_x, train_y] = train.on_device();
    const auto& [test_x, test_y] = test.on_device();
    return train_compute_floor(model, train_x, train_y, test_x, test_y, c.batch_size, options, callbacks);
  }
  Loader train_loader(train.get(c.dataset_mode), loader_options(c, true, args_.seed));
  Loader test_loader(test.get(c.dataset_mode), loader_options(c, false, args_.seed));
  return train_model(model, train_loader, test_loader, options, callbacks);
}

// The best pipeline (the ladder's last rung that runs here) against the compute floors, in rounds of three runs
// with the best in the middle: synthetic floor, best, images floor; then images floor, best, synthetic floor; and
// so on. Each best run has a run of each floor beside it, and a machine that speeds up or slows down weighs on
// all three alike.
void Lab::floor_check(const Source& source, DatasetCache& train, DatasetCache& test) {
  const auto [best, floors] = best_and_floors(device_.is_cuda());
  std::vector<FloorCheck> checks(floors.size());
  for (size_t f = 0; f < floors.size(); ++f) {
    checks[f].dataset = source.name;
    checks[f].best_rung = best.name;
    checks[f].floor_rung = floors[f].name;
  }
  TrainOptions topts;
  topts.epochs = 1;
  topts.device = device_;
  const int64_t per_round = 1 + static_cast<int64_t>(floors.size());
  reporter_.note(fmt::format("Compute-floor check: {} against {} floors, {} rounds of {} one-epoch runs (the best "
                             "between the floors)",
                             best.name, floors.size(), args_.floor_repeats, per_round));
  const auto one_epoch = [&](const PipelineConfig& c, int64_t done) {
    if (reporter_.shows_progress()) {
      reporter_.progress("compute-floor check", done, per_round * args_.floor_repeats, "");
    }
    return train_config(source.model, c, train, test, topts).front().train_seconds;
  };
  int64_t done = 0;
  for (int64_t round = 0; round < args_.floor_repeats; ++round) {
    std::vector<size_t> order(floors.size());
    for (size_t f = 0; f < floors.size(); ++f) order[f] = round % 2 == 0 ? f : floors.size() - 1 - f;
    // Floors run before the best in this round: half of them (one floor: before it every other round).
    const size_t before = (order.size() + static_cast<size_t>(round % 2)) / 2;
    for (size_t i = 0; i < before; ++i) {
      checks[order[i]].floor_train_seconds.push_back(one_epoch(floors[order[i]], done++));
    }
    const double best_seconds = one_epoch(best, done++);
    for (auto& check : checks) check.best_train_seconds.push_back(best_seconds);
    for (size_t i = before; i < order.size(); ++i) {
      checks[order[i]].floor_train_seconds.push_back(one_epoch(floors[order[i]], done++));
    }
  }
  for (auto& check : checks) {
    check.best_median = quantile(check.best_train_seconds, 0.5);
    check.floor_median = quantile(check.floor_train_seconds, 0.5);
    if (check.floor_median > 0) {
      check.floor_spread = (quantile(check.floor_train_seconds, 0.75) - quantile(check.floor_train_seconds, 0.25)) /
                           check.floor_median;
    }
    results_.floor_checks.push_back(check);
  }
}

// Speed-up of every run of (dataset, group, pipeline) against the first one run.
void set_speedups(std::vector<TrainResult>& runs, size_t from) {
  std::map<std::string, double> first;
  for (size_t i = from; i < runs.size(); ++i) {
    auto& t = runs[i];
    if (t.skipped) continue;
    const std::string key = t.dataset + "/" + t.group + "/" + t.pipeline;
    if (!first.count(key)) first[key] = t.total_seconds;
    t.speedup = t.total_seconds > 0 ? first[key] / t.total_seconds : 0;
  }
}

void Lab::training_ladder(const Source& source) {
  reporter_.section(fmt::format("Training ladder: {}, SimpleCNN ({}x{}x{}, {} classes), Adam lr 1e-3, seed {}, {}",
                                source.name, source.model.channels(), source.model.height(), source.model.width(),
                                source.model.classes(), args_.seed, results_.context.protocol));
  DatasetCache train = load(source, "train", args_.train_limit);
  DatasetCache test = load(source, "test", args_.test_limit);
  warm_up(source.model, train);
  const auto rungs = training_rungs();
  const size_t from = results_.training.size();
  for (size_t i = 0; i < rungs.size(); ++i) {
    results_.training.push_back(train_run(source, "ladder", "", rungs[i], train, test,
                                          static_cast<int64_t>(i + 1), static_cast<int64_t>(rungs.size())));
  }
  set_speedups(results_.training, from);
  floor_check(source, train, test);
  reporter_.table(training_table(results_, "ladder"));
}

// Batch size and worker count, for the naive pipeline and the best one (the device-resident dataset for the
// batch sweep; for the worker sweep, the best pipeline that has workers: uint8 + batch fetch, persistent, pinned).
void Lab::sweeps(const Source& source) {
  reporter_.section(fmt::format("Sweeps: {}, first {} train / {} test samples, {} epoch(s)", source.name,
                                args_.sweep_train_limit > 0 ? std::to_string(args_.sweep_train_limit) : "all",
                                args_.sweep_test_limit > 0 ? std::to_string(args_.sweep_test_limit) : "all",
                                args_.epochs));
  DatasetCache train = load(source, "train", args_.sweep_train_limit);
  DatasetCache test = load(source, "test", args_.sweep_test_limit);
  warm_up(source.model, train);
  struct Point {
    std::string group, pipeline;
    PipelineConfig config;
  };
  std::vector<Point> points;
  for (const int64_t b : {16, 32, 64, 128, 256, 512}) {
    points.push_back({"sweep-batch", "naive", rung(fmt::format("batch {}", b), "row", b, 0, false, false, false)});
  }
  for (const int64_t b : {16, 32, 64, 128, 256, 512}) {
    points.push_back({"sweep-batch", "best", rung(fmt::format("batch {}", b), "device", b, 0, false, false, true)});
  }
  for (const int64_t w : {0, 1, 2, 4, 8}) {
    points.push_back({"sweep-workers", "naive", rung(fmt::format("{} workers", w), "row", 512, w, false, false, false)});
  }
  for (const int64_t w : {0, 1, 2, 4, 8}) {
    points.push_back(
        {"sweep-workers", "best", rung(fmt::format("{} workers", w), "tensor-uint8", 512, w, w > 0, true, true)});
  }
  const size_t from = results_.training.size();
  for (size_t i = 0; i < points.size(); ++i) {
    results_.training.push_back(train_run(source, points[i].group, points[i].pipeline, points[i].config, train,
                                          test, static_cast<int64_t>(i + 1), static_cast<int64_t>(points.size())));
  }
  // Speed-up within each sweep is against its first point of the same pipeline.
  set_speedups(results_.training, from);
  reporter_.table(training_table(results_, "sweep-batch"));
  reporter_.table(training_table(results_, "sweep-workers"));
}

// The run's record: the machine, the LibTorch, the settings and the protocol.
void Lab::describe_context() {
  auto& c = results_.context;
  c.date = utc_now();
  c.command = args_.command;
  c.cpu = cpu_model();
  c.cores = static_cast<int>(std::thread::hardware_concurrency());
  c.memory_gib = memory_gib();
  c.libtorch = TORCH_VERSION;
  c.device = device_.str();
  c.device_name = c.cpu;
  if (device_.is_cuda()) {
    c.device_name = detail::cuda_device_name(device_);
    if (c.device_name.empty()) c.device_name = "CUDA device " + std::to_string(device_.has_index() ? device_.index() : 0);
  }
  c.threads = args_.threads;
  c.allocator = args_.allocator;
  c.blas = args_.blas;
  c.epochs = args_.epochs;
  c.train_limit = args_.train_limit;
  c.test_limit = args_.test_limit;
  c.sweep_train_limit = args_.sweep_train_limit;
  c.sweep_test_limit = args_.sweep_test_limit;
  c.loader_epochs = args_.loader_epochs;
  c.loader_min_seconds = args_.loader_min_seconds;
  const auto limit_text = [](int64_t n) { return n > 0 ? fmt::format("first {}", n) : std::string("all"); };
  c.protocol = fmt::format("{} epoch{}, {} train / {} test samples", args_.epochs, args_.epochs == 1 ? "" : "s",
                           limit_text(args_.train_limit), limit_text(args_.test_limit));
  if (!args_.full) c.protocol += " (a shortened protocol; --full runs the experiment's: 5 epochs, all data)";
  if (!device_.is_cuda()) {
    c.notes.push_back("no CUDA device: pinned memory is a no-op, the device is the CPU, and the CUDA graph rungs are skipped");
  }
}

LabResults Lab::run() {
  const auto start = Clock::now();
  check_inputs();
  describe_context();
  const auto& c = results_.context;
  reporter_.line(fmt::format("feedline bench: {} on {} ({} cores), LibTorch {}, {} threads", c.device, c.cpu, c.cores,
                             c.libtorch, c.threads));
  reporter_.line("Allocator: " + c.allocator);
  reporter_.line("BLAS: " + c.blas);
  reporter_.line("Protocol: " + c.protocol);

  if (!args_.skip_storage && !args_.train_file.empty()) {
    reporter_.note(
        "(No storage table for --data: it compares the experiment's datasets with their packaged IDX files.)");
  } else if (!args_.skip_storage) {
    storage();
  }
  // Your own files are the one source of every table, their labels read once (and only when a table runs).
  const bool ladders = !args_.skip_loader || !args_.skip_training || !args_.skip_sweeps;
  const std::optional<Source> user =
      ladders && !args_.train_file.empty() ? std::optional<Source>(user_source()) : std::nullopt;
  const auto sources = [&](const std::vector<std::string>& flags) {
    if (user) return std::vector<Source>{*user};
    std::vector<Source> out;
    for (const auto& flag : flags) out.push_back(source(flag));
    return out;
  };
  if (!args_.skip_loader) loader_ladder(sources(args_.datasets));
  const std::vector<Source> trained =
      !args_.skip_training || !args_.skip_sweeps ? sources(args_.train_datasets) : std::vector<Source>{};
  if (!args_.skip_training) {
    for (const Source& source : trained) training_ladder(source);
  }
  if (!args_.skip_sweeps) {
    for (const Source& source : trained) sweeps(source);
  }
  if (!args_.skip_images) run_image_rung(args_, results_, reporter_);
  write_lab_outputs(results_, args_.out_dir, !args_.skip_plots, reporter_);
  reporter_.line(fmt::format("feedline bench finished in {:.0f}s", seconds_since(start)));
  return results_;
}

}  // namespace

LabResults run_lab_from(const std::string& results_json, const std::string& out_dir, bool plots, Reporter& reporter) {
  LabResults results = from_json(read_file(results_json), results_json);
  reporter.line(fmt::format("{} (from {}: {}, {} on {})", results.context.command, results_json, results.context.date,
                            results.context.device, results.context.device_name));
  for (const std::string& table : all_tables(results)) reporter.table(table);
  write_lab_outputs(results, out_dir, plots, reporter);
  return results;
}

LabResults run_lab(const LabOptions& args, Reporter& reporter) {
  if (args.threads < 1) throw InvalidArgument("bench: threads must be at least 1");
  if (args.epochs < 1 || args.loader_epochs < 1) throw InvalidArgument("epochs must be at least 1");
  at::set_num_threads(args.threads);
  Lab lab(args, reporter);
  return lab.run();
}

LabResults run_lab(const LabOptions& args) {
  Reporter none;
  return run_lab(args, none);
}

}  // namespace feedline::lab
