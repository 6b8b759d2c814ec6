#include "train/checkpoints.h"

#include <ATen/core/Generator.h>
#include <ATen/CPUGeneratorImpl.h>
#include <c10/util/Exception.h>
#include <torch/optim/adam.h>
#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <filesystem>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <system_error>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "train/loss_scale.h"
#include "train/weight_average.h"

namespace feedline {
namespace {

// Version 1 kept the optimizer as an archive of its own; version 2 keeps its bytes (any optimizer) and the
// model's layout. Both are read. A float16 run's loss scale is an optional entry of its own ("loss_scale"), so
// that it needs no new version: files without it are read as before.
constexpr int64_t kCheckpointVersion = 2;
constexpr const char* kPrefix = "checkpoint-";
constexpr const char* kSuffix = ".pt";

// The steps a checkpoint file's name says it was taken after, or -1 for any other name (a temporary file of an
// unfinished write among them: "checkpoint-000000100.pt.tmp-<pid>-<n>").
int64_t steps_in_name(const std::string& name) {
  const std::string prefix = kPrefix, suffix = kSuffix;
  if (name.size() < prefix.size() + 9 + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return -1;
  }
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -1;
  }
  return std::stoll(digits);
}

bool is_temporary(const std::string& name) {
  return name.rfind(kPrefix, 0) == 0 && name.find(std::string(kSuffix) + ".tmp-") != std::string::npos;
}

// What a failed load says, on one line: LibTorch's message without its backtrace.
std::string load_failure(const std::exception& e) {
  const auto* c = dynamic_cast<const c10::Error*>(&e);
  const std::string why = c != nullptr ? c->what_without_backtrace() : e.what();
  return why.substr(0, why.find('\n'));
}

// A module's parameters and buffers, cloned, in the layout torch::nn::Module::save() writes.
struct ModuleCopy {
  std::vector<std::pair<std::string, torch::Tensor>> parameters, buffers;
  std::vector<std::pair<std::string, ModuleCopy>> children;
};

ModuleCopy copy_module(const torch::nn::Module& module) {
  ModuleCopy copy;
  for (const auto& p : module.named_parameters(/*recurse=*/false)) {
    copy.parameters.emplace_back(p.key(), p.value().detach().clone());
  }
  for (const auto& b : module.named_buffers(/*recurse=*/false)) {
    copy.buffers.emplace_back(b.key(), b.value().detach().clone());
  }
  for (const auto& c : module.named_children()) {
    if (c.value()->is_serializable()) copy.children.emplace_back(c.key(), copy_module(*c.value()));
  }
  return copy;
}

void write_module(const ModuleCopy& copy, torch::serialize::OutputArchive& archive) {
  for (const auto& [key, t] : copy.parameters) archive.write(key, t);
  for (const auto& [key, t] : copy.buffers) archive.write(key, t, /*is_buffer=*/true);
  for (const auto& [key, child] : copy.children) {
    torch::serialize::OutputArchive child_archive(archive.compilation_unit());
    write_module(child, child_archive);
    archive.write(key, child_archive);
  }
}

// A copy of an optimizer's state as it is now, which training does not change, to be serialized later.
class OptimizerCopy {
 public:
  virtual ~OptimizerCopy() = default;
  // What torch::optim::Optimizer::save() writes, as the bytes of an archive.
  virtual std::string bytes() const = 0;
};

std::string archive_bytes(torch::serialize::OutputArchive& archive) {
  std::ostringstream out;
  archive.save_to(out);
  return out.str();
}

// Any optimizer: serialized now, on the training thread.
class SerializedCopy : public OptimizerCopy {
 public:
  explicit SerializedCopy(const torch::optim::Optimizer& from) {
    torch::serialize::OutputArchive archive;
    from.save(archive);
    bytes_ = archive_bytes(archive);
  }
  std::string bytes() const override { return bytes_; }

 private:
  std::string bytes_;
};

// torch's Adam, the common case, made cheaper: its moments cloned now and serialized by the background write.
class AdamCopy : public OptimizerCopy {
 public:
  explicit AdamCopy(const torch::optim::Adam& from) : adam_(groups_of(from), defaults_of(from)) {
    const auto& to_groups = adam_.param_groups();
    for (size_t g = 0; g < from.param_groups().size(); ++g) {
      const auto& params = from.param_groups()[g].params();
      for (size_t i = 0; i < params.size(); ++i) {
        const auto it = from.state().find(c10::guts::to_string(params[i].unsafeGetTensorImpl()));
        if (it == from.state().end()) continue;
        const auto& s = static_cast<const torch::optim::AdamParamState&>(*it->second);
        auto c = std::make_unique<torch::optim::AdamParamState>(s);
        c->exp_avg(s.exp_avg().clone());
        c->exp_avg_sq(s.exp_avg_sq().clone());
        if (s.max_exp_avg_sq().defined()) c->max_exp_avg_sq(s.max_exp_avg_sq().clone());
        adam_.state()[c10::guts::to_string(to_groups[g].params()[i].unsafeGetTensorImpl())] = std::move(c);
      }
    }
  }

  std::string bytes() const override {
    torch::serialize::OutputArchive archive;
    adam_.save(archive);
    return archive_bytes(archive);
  }

 private:
  // The same groups with the same options, over placeholders: only the parameters' order counts in a save.
  static std::vector<torch::optim::OptimizerParamGroup> groups_of(const torch::optim::Adam& from) {
    std::vector<torch::optim::OptimizerParamGroup> groups;
    for (const auto& g : from.param_groups()) {
      std::vector<torch::Tensor> placeholders;
      for (size_t i = 0; i < g.params().size(); ++i) placeholders.push_back(torch::empty({0}));
      groups.emplace_back(std::move(placeholders), g.options().clone());
    }
    return groups;
  }
  static torch::optim::AdamOptions defaults_of(const torch::optim::Adam& from) {
    return static_cast<const torch::optim::AdamOptions&>(from.defaults());
  }

  torch::optim::Adam adam_;
};

std::unique_ptr<OptimizerCopy> copy_optimizer(const torch::optim::Optimizer& optimizer) {
  if (const auto* adam = dynamic_cast<const torch::optim::Adam*>(&optimizer)) return std::make_unique<AdamCopy>(*adam);
  return std::make_unique<SerializedCopy>(optimizer);
}

torch::Tensor bytes_tensor(const std::string& bytes) {
  auto t = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

std::string tensor_bytes(const torch::Tensor& t) {
  const auto c = t.cpu().contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.numel()));
}

// A module's layout: one line a parameter ("p <name> <sizes>") and a buffer ("b <name> <sizes>"), in order.
std::string layout_of(const torch::nn::Module& module) {
  std::string text;
  for (const auto& p : module.named_parameters()) text += "p " + p.key() + " " + c10::str(p.value().sizes()) + "\n";
  for (const auto& b : module.named_buffers()) text += "b " + b.key() + " " + c10::str(b.value().sizes()) + "\n";
  return text;
}

// The first difference between a checkpoint's layout and the model's, in words; empty when they agree.
std::string layout_difference(const std::string& saved, const std::string& model) {
  struct Entry {
    std::string kind, sizes;
  };
  const auto parse = [](const std::string& text) {
    std::vector<std::pair<std::string, Entry>> entries;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      const size_t a = line.find(' '), b = line.find(' ', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      entries.push_back({line.substr(a + 1, b - a - 1), {line.substr(0, a) == "p" ? "parameter" : "buffer",
                                                         line.substr(b + 1)}});
    }
    return entries;
  };
  const auto ours = parse(model), theirs = parse(saved);
  const auto find = [](const auto& entries, const std::string& name) {
    return std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.first == name; });
  };
  for (const auto& [name, e] : ours) {
    const auto it = find(theirs, name);
    if (it == theirs.end()) return "it holds no " + e.kind + " '" + name + "' (" + e.sizes + " in this model)";
    if (it->second.sizes != e.sizes) {
      return e.kind + " '" + name + "' is " + it->second.sizes + " in it and " + e.sizes + " in this model";
    }
  }
  for (const auto& [name, e] : theirs) {
    if (find(ours, name) == ours.end()) return "it holds " + e.kind + " '" + name + "' " + e.sizes + ", which this model lacks";
  }
  return {};
}

// Removes the temporary files that unfinished writes left in `dir`. Best effort.
void remove_temporaries(const std::string& dir) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (is_temporary(it->path().filename().string())) {
      std::error_code ignored;
      std::filesystem::remove(it->path(), ignored);
    }
  }
}

// Keeps the newest `keep` checkpoints in `dir` (and `written`, the one just made whole); removes the others.
void prune(const std::string& dir, int64_t keep, const std::string& written) {
  const auto files = list_checkpoints(dir);
  const int64_t old = static_cast<int64_t>(files.size()) - keep;
  for (int64_t i = 0; i < old; ++i) {
    if (files[static_cast<size_t>(i)] == written) continue;
    std::error_code ec;
    std::filesystem::remove(files[static_cast<size_t>(i)], ec);
    if (ec) throw IoError(files[static_cast<size_t>(i)] + ": cannot remove an old checkpoint: " + ec.message());
  }
}

// Reads a checkpoint's position; `path` is a checkpoint file.
CheckpointInfo read_info(const std::string& path) {
  torch::Tensor p;
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    archive.read("position", p);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw InvalidFile(path + ": not a feedline checkpoint (" + load_failure(e) + ")");
  }
  if (p.dim() != 1 || p.size(0) != 11 || p.scalar_type() != torch::kInt64 || p[0].item<int64_t>() < 1 ||
      p[0].item<int64_t>() > kCheckpointVersion) {
    throw InvalidFile(path + ": not a feedline checkpoint of version 1 to " + std::to_string(kCheckpointVersion));
  }
  const auto at = [&](int64_t i) { return p[i].item<int64_t>(); };
  CheckpointInfo info;
  info.epoch = at(1);
  info.step = at(2);
  info.steps_done = at(3);
  info.train_loader = LoaderState{at(4), at(5), at(6), static_cast<uint64_t>(at(7)), at(8), at(9), at(10)};
  if (info.epoch < 1 || info.step < 0 || info.steps_done < info.step) {
    throw InvalidFile(path + ": a checkpoint at an impossible position (epoch " + std::to_string(info.epoch) +
                      ", step " + std::to_string(info.step) + ")");
  }
  return info;
}

}  // namespace

std::string checkpoint_file(const std::string& dir, int64_t steps_done) {
  if (steps_done < 0) throw InvalidArgument("a checkpoint's step count must not be negative");
  char digits[32];
  std::snprintf(digits, sizeof digits, "%09lld", static_cast<long long>(steps_done));
  return (std::filesystem::path(dir) / (std::string(kPrefix) + digits + kSuffix)).string();
}

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return {};
  std::vector<std::pair<int64_t, std::string>> found;
  std::filesystem::directory_iterator it(dir, ec);
  for (std::filesystem::directory_iterator end; !ec && it != end; it.increment(ec)) {
    const int64_t steps = steps_in_name(it->path().filename().string());
    std::error_code type_ec;
    if (steps >= 0 && it->is_regular_file(type_ec)) found.emplace_back(steps, it->path().string());
  }
  if (ec) throw IoError(dir + ": cannot list the checkpoints: " + ec.message());
  std::sort(found.begin(), found.end());
  std::vector<std::string> files;
  for (auto& f : found) files.push_back(std::move(f.second));
  return files;
}

std::string latest_checkpoint(const std::string& dir) {
  const auto files = list_checkpoints(dir);
  return files.empty() ? std::string() : files.back();
}

CheckpointInfo read_checkpoint_info(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    const std::string file = latest_checkpoint(path);
    if (file.empty()) throw IoError(path + ": holds no checkpoint (no checkpoint-<steps>.pt)");
    return read_info(file);
  }
  if (!std::filesystem::exists(path, ec)) throw IoError(path + ": not found (no checkpoint file or folder)");
  return read_info(path);
}

namespace detail {

namespace {

// What a checkpoint holds, copied on the training thread so that training may go on while it is written.
struct Snapshot {
  CheckpointInfo info;
  ModuleCopy model;
  std::string layout;
  std::unique_ptr<OptimizerCopy> optimizer;
  std::vector<torch::Tensor> average;  // empty: no weights' average
  int64_t average_updates = 0;
  torch::Tensor loss_scale;  // undefined: no loss scaling
  torch::Tensor cpu_rng;
};

// Serializes `s` and writes it to its file in `dir` (a temporary file, renamed), then removes the temporary files
// of unfinished writes and the checkpoints beyond the newest `keep`. Returns the file.
std::string write_snapshot(const Snapshot& s, const std::string& dir, int64_t keep) {
  torch::serialize::OutputArchive archive, model;
  write_module(s.model, model);
  archive.write("model", model);
  archive.write("layout", bytes_tensor(s.layout));
  archive.write("optimizer_state", bytes_tensor(s.optimizer->bytes()));
  if (!s.average.empty()) {
    torch::serialize::OutputArchive average;
    WeightAverage::save(s.average, s.average_updates, average);
    archive.write("average", average);
  }
  if (s.loss_scale.defined()) archive.write("loss_scale", s.loss_scale);
  archive.write("cpu_rng", s.cpu_rng);
  const LoaderState& l = s.info.train_loader;
  archive.write("position",
                torch::tensor({kCheckpointVersion, s.info.epoch, s.info.step, s.info.steps_done, l.version, l.epoch,
                               l.batch, static_cast<int64_t>(l.seed), l.world_size, l.batch_size, l.samples},
                              torch::kInt64));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(dir + ": cannot make the checkpoint folder: " + ec.message());
  remove_temporaries(dir);
  const std::string file = checkpoint_file(dir, s.info.steps_done);
  AtomicFile out(file);
  archive.save_to([&out](const void* data, size_t size) {
    out.write(data, size);
    return size;
  });
  out.commit();
  prune(dir, keep, file);
  return file;
}

}  // namespace

struct Checkpoints::Pending {
  CheckpointInfo info;
  std::future<std::string> file;
};

// The thread that writes checkpoints in the background: one for the run, so that the memory a write takes is
// there again for the next (a thread of its own for each write would start from scratch every time).
class Checkpoints::Writer {
 public:
  Writer() : thread_([this] { run(); }) {}
  ~Writer() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  // Runs `job` on the thread; the caller waits for the last job's future before handing over the next.
  std::future<std::string> submit(std::function<std::string()> job) {
    std::packaged_task<std::string()> task(std::move(job));
    auto future = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = std::move(task);
    }
    wake_.notify_one();
    return future;
  }

 private:
  void run() {
    for (;;) {
      std::packaged_task<std::string()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return done_ || task_.valid(); });
        if (!task_.valid()) return;
        task = std::move(task_);
      }
      task();  // a failure goes to the future
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::packaged_task<std::string()> task_;
  bool done_ = false;
  std::thread thread_;
};

Checkpoints::Checkpoints(torch::nn::Module& model, torch::optim::Optimizer* optimizer, WeightAverage* average,
                         Loader& train, const TrainOptions& options, LossScaler* scaler)
    : model_(model), optimizer_(optimizer), average_(average), scaler_(scaler), train_(train), options_(options),
      last_(std::chrono::steady_clock::now()) {}

Checkpoints::~Checkpoints() {
  if (pending_ && pending_->file.valid()) pending_->file.wait();
}  // and the writer's thread ends

void Checkpoints::after_step(int64_t epoch, int64_t step, int64_t steps_done, bool stopping,
                             const TrainCallbacks& callbacks) {
  if (options_.checkpoint_dir.empty() || !options_.write_checkpoints) return;
  poll(callbacks);
  const bool due =
      stopping || (options_.checkpoint_every > 0 && steps_done % options_.checkpoint_every == 0) ||
      (options_.checkpoint_interval > 0 &&
       std::chrono::duration<double>(std::chrono::steady_clock::now() - last_).count() >= options_.checkpoint_interval);
  if (!due) return;
  CheckpointInfo info;
  info.epoch = epoch;
  info.step = step;
  info.steps_done = steps_done;
  info.train_loader = train_.state_dict();
  take(info, callbacks);
}

void Checkpoints::take(const CheckpointInfo& info, const TrainCallbacks& callbacks) {
  finish(callbacks);  // one write at a time
  auto s = std::make_shared<Snapshot>();
  s->info = info;
  if (optimizer_ == nullptr) throw Unsupported("this run keeps no checkpoints");
  s->model = copy_module(model_);
  s->layout = layout_of(model_);
  s->optimizer = copy_optimizer(*optimizer_);
  if (average_ != nullptr) {
    s->average = average_->snapshot();
    s->average_updates = average_->updates();
  }
  if (scaler_ != nullptr) s->loss_scale = scaler_->state();
  s->cpu_rng = at::detail::getDefaultCPUGenerator().get_state();
  last_ = std::chrono::steady_clock::now();
  const std::string dir = options_.checkpoint_dir;
  const int64_t keep = options_.keep_checkpoints;
  if (!options_.async_checkpoints) {
    const std::string file = write_snapshot(*s, dir, keep);
    if (callbacks.on_checkpoint) callbacks.on_checkpoint(info, file);
    return;
  }
  if (!writer_) writer_ = std::make_unique<Writer>();
  pending_ = std::make_unique<Pending>();
  pending_->info = info;
  pending_->file = writer_->submit([s, dir, keep] { return write_snapshot(*s, dir, keep); });
}

void Checkpoints::report(const TrainCallbacks& callbacks) {
  const auto pending = std::move(pending_);
  const std::string file = pending->file.get();  // rethrows the write's failure
  if (callbacks.on_checkpoint) callbacks.on_checkpoint(pending->info, file);
}

void Checkpoints::poll(const TrainCallbacks& callbacks) {
  if (pending_ && pending_->file.wait_for(std::chrono::seconds(0)) == std::future_status::ready) report(callbacks);
}

void Checkpoints::finish(const TrainCallbacks& callbacks) {
  if (pending_) report(callbacks);
}

CheckpointInfo Checkpoints::resume() {
  const std::string path = latest_checkpoint(options_.resume_dir);
  if (path.empty()) throw IoError(options_.resume_dir + ": holds no checkpoint to resume from");
  CheckpointInfo info = read_info(path);
  if (optimizer_ == nullptr) throw Unsupported("this run keeps no checkpoints");
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path, options_.device);
    const auto keys = archive.keys();
    const auto has = [&keys](const char* key) { return std::find(keys.begin(), keys.end(), key) != keys.end(); };
    if (has("layout")) {
      torch::Tensor layout;
      archive.read("layout", layout);
      const std::string difference = layout_difference(tensor_bytes(layout), layout_of(model_));
      if (!difference.empty()) throw InvalidFile(path + ": a checkpoint of another model: " + difference);
    }
    torch::serialize::InputArchive model;
    archive.read("model", model);
    model_.load(model);
    if (has("optimizer_state")) {
      torch::Tensor bytes;
      archive.read("optimizer_state", bytes);
      const std::string b = tensor_bytes(bytes);
      torch::serialize::InputArchive optimizer;
      optimizer.load_from(b.data(), b.size(), options_.device);
      optimizer_->load(optimizer);
    } else {
      torch::serialize::InputArchive optimizer;
      archive.read("optimizer", optimizer);
      optimizer_->load(optimizer);
    }
    if (average_ != nullptr) {
      if (!has("average")) throw InvalidFile(path + ": holds no average of the weights to resume it from");
      torch::serialize::InputArchive average;
      archive.read("average", average);
      try {
        average_->load(average);
      } catch (const InvalidArgument& e) {
        throw InvalidFile(path + ": " + e.what());
      }
    }
    if (scaler_ != nullptr && has("loss_scale")) {
      torch::Tensor scale;
      archive.read("loss_scale", scale);
      try {
        scaler_->load_state(scale);
      } catch (const InvalidArgument& e) {
        throw InvalidFile(path + ": " + e.what());
      }
    }
    torch::Tensor rng;
    archive.read("cpu_rng", rng);
    at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle: shares the default's state
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(rng.cpu());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw InvalidFile(path + ": not a checkpoint of this model and optimizer (" + load_failure(e) + ")");
  }
  try {
    train_.load_state_dict(info.train_loader);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(path + ": cannot resume this run from it: " + e.what());
  }
  return info;
}

}  // namespace detail
}  // namespace feedline
