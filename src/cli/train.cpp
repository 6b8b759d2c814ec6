#include "cli/train.h"

#include <fmt/core.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "feedline/dataset/encoded.h"
#include "feedline/dist/dist.h"
#include "feedline/dist/train_job.h"
#include "feedline/io/error.h"
#include "feedline/io/remote.h"
#include "feedline/train/train.h"
#include "cli/progress.h"

namespace feedline::cli {
namespace {

// ------------------------------------------------------------------------------------------ stopping

// Set by SIGTERM and SIGINT; read by the training loop once a step. Lock-free, so safe in a handler.
std::atomic<bool> g_stop{false};
volatile sig_atomic_t g_stop_signal = 0;
// The process that started a rank (its launcher): the signals it passes on only ask for the stop, so that a
// launcher that got the same signal as its ranks (a terminal's Ctrl-C, a kill of every process) does not end
// them at once. 0: every second signal ends the process.
volatile pid_t g_launcher = 0;
static_assert(std::atomic<bool>::is_always_lock_free);

void on_stop_signal(int sig, siginfo_t* info, void*) {
  const bool from_launcher = g_launcher != 0 && info != nullptr && info->si_pid == g_launcher;
  if (g_stop.load(std::memory_order_relaxed) && !from_launcher) {
    // A second signal: its default action, at once (raised again, it arrives when this handler returns).
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  if (g_stop_signal == 0) g_stop_signal = sig;
  g_stop.store(true, std::memory_order_relaxed);
}

// The handlers of SIGTERM and SIGINT while a job trains, and the previous ones put back after.
class StopSignals {
 public:
  explicit StopSignals(bool ranked) {
    g_launcher = ranked ? ::getppid() : 0;
    struct sigaction sa {};
    sa.sa_sigaction = on_stop_signal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaction(SIGTERM, &sa, &old_term_);
    sigaction(SIGINT, &sa, &old_int_);
  }
  ~StopSignals() {
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGINT, &old_int_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_term_ {}, old_int_ {};
};

std::string signal_name(int sig) { return sig == SIGINT ? "SIGINT" : "SIGTERM"; }

// ------------------------------------------------------------------------------------------ the log

std::string joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// A mixture's train sets: each one's path, samples, weight and samples an epoch.
void print_mixture(const dist::TrainJobSetup& s) {
  fmt::print("Train mixture of {} sets, {} samples an epoch:\n", s.mix_sources.size(), s.mix_epoch_length);
  for (const auto& m : s.mix_sources) {
    fmt::print("  {}: {} samples, {}: {} an epoch\n", m.path, m.size, m.weight, m.per_epoch);
  }
}

// The job's log lines up to the first epoch, as the data is loaded and the model made.
void print_loaded(const dist::TrainJobSetup& s) {
  const std::string train =
      s.mix_sources.empty() ? s.train_path : fmt::format("a mixture of {} sets", s.mix_sources.size());
  if (!s.image_source.empty()) {
    fmt::print("Loaded {} (test: {}; image files, {}): {} train, {} test samples in {:.2f}s\n", train, s.test_path,
               s.image_source, s.train_samples, s.test_samples, s.load_seconds);
    if (!s.mix_sources.empty()) print_mixture(s);
    fmt::print("Train transform: {}\nTest transform: {}\n", joined(s.train_transform), joined(s.test_transform));
    return;
  }
  const std::string what = s.dataset.empty() ? train + " (test: " + s.test_path : s.dataset + " (" + s.format;
  fmt::print("Loaded {}, {} dataset): {} train, {} test samples in {:.2f}s\n", what, dataset_mode_name(s.mode),
             s.train_samples, s.test_samples, s.load_seconds);
  if (!s.mix_sources.empty()) print_mixture(s);
}

void print_ready(const TrainArgs& args, const dist::TrainJobSetup& s) {
  if (args.loader.pin_memory && !s.pinned) {
    fmt::print("Note: --pin-memory has no effect without CUDA; batches stay in ordinary memory.\n");
  }
  if (s.ranks > 1) {
    fmt::print("Data-parallel: {} ranks over {}, {} threads each; global batch {} ({} a rank){}{}\n", s.ranks,
               s.backend, s.threads, args.loader.batch_size, args.loader.batch_size / s.ranks,
               s.launcher.empty() ? "" : "; started by " + s.launcher,
               s.restart > 0 ? fmt::format(", restart {}", s.restart) : "");
  }
  fmt::print("{}: {} parameters; {}x{}x{} images, {} classes; device {}; {} threads; batch {}, "
             "{} workers{}{}{}\n",
             s.model, s.parameters, s.shape.channels, s.shape.height, s.shape.width, s.classes, s.device, s.threads,
             args.loader.batch_size, args.loader.num_workers, args.loader.persistent_workers ? ", persistent" : "",
             s.pinned ? ", pinned" : "", args.cuda_graph ? ", CUDA graph step" : "");
  std::fflush(stdout);
  if (s.resume_at) {
    // Another world size: the same global batches, split another way.
    const std::string elastic =
        s.resume_world_size != s.ranks
            ? fmt::format(" (resuming a {}-rank checkpoint on {} rank{})", s.resume_world_size, s.ranks,
                          s.ranks == 1 ? "" : "s")
            : "";
    fmt::print("Resuming from {}: epoch {}, step {} of {}{}\n", s.resume_file, s.resume_at->first, s.resume_at->second,
               s.batches_per_epoch, elastic);
  }
}

// A mixture: the samples each train set gave this epoch (every rank's), after its epoch line.
void print_source_samples(const TrainArgs& args, const dist::TrainJobSetup& s, const EpochResult& r) {
  const std::vector<int64_t>& counts = r.train_stats.source_samples;
  if (counts.empty() || counts.size() != s.mix_sources.size()) return;
  int64_t total = 0;
  for (const int64_t n : counts) total += n;
  std::string line;
  for (size_t k = 0; k < counts.size(); ++k) {
    line += fmt::format("{}{} {} ({:.1f}%)", k > 0 ? ", " : "", s.mix_sources[k].path, counts[k],
                        total > 0 ? 100.0 * static_cast<double>(counts[k]) / static_cast<double>(total) : 0.0);
  }
  fmt::print("Epoch {}/{}: train samples by set: {}\n", r.epoch, args.epochs, line);
  std::fflush(stdout);
}

void print_epoch(const TrainArgs& args, const EpochResult& r, std::optional<double> allreduce_seconds) {
  // Data-parallel: what averaging the gradients cost this rank in the train phase.
  std::string allreduce;
  if (allreduce_seconds) {
    allreduce = fmt::format(", allreduce {:.3f}s = {:.1f}%", *allreduce_seconds,
                            r.train_seconds > 0 ? 100.0 * *allreduce_seconds / r.train_seconds : 0.0);
  }
  // Remote data: how long the loader's threads waited for bytes.
  if (r.train_stats.fetch_wait_seconds > 0) {
    allreduce += fmt::format(", remote wait {:.2f}s", r.train_stats.fetch_wait_seconds);
  }
  if (r.interrupted) {  // no test phase
    fmt::print("Epoch {}/{}: stopped after {} train step{} in {:.2f}s (loss {:.4f}, data wait {:.1f}%{})\n", r.epoch,
               args.epochs, r.train_stats.batches, r.train_stats.batches == 1 ? "" : "s", r.train_seconds, r.train_loss,
               100.0 * r.data_wait_share(), allreduce);
    std::fflush(stdout);
    return;
  }
  fmt::print("Epoch {}/{}: train {:.2f}s (loss {:.4f}, data wait {:.1f}%{}), test {:.2f}s, test loss {:.4f}, "
             "test accuracy {:.2f}%\n",
             r.epoch, args.epochs, r.train_seconds, r.train_loss, 100.0 * r.data_wait_share(), allreduce,
             r.test_seconds, r.test_loss, 100.0 * r.test_accuracy);
  if (args.model.ema_decay > 0) {
    fmt::print("Epoch {}/{}: the weights' average: test loss {:.4f}, test accuracy {:.2f}%\n", r.epoch, args.epochs,
               r.ema_test_loss, 100.0 * r.ema_test_accuracy);
  }
  std::fflush(stdout);
}

// The experiment's closing lines, and what else the job did.
void print_summary(const TrainArgs& args, const dist::TrainJobSetup& s, const dist::TrainJobResult& result) {
  const auto& first = result.epochs.front();
  if (first.capture_seconds > 0) {
    fmt::print("(warm-up and CUDA graph capture took {:.2f}s before epoch 1, outside its time; {} of {} train steps "
               "replayed from the graph in epoch 1)\n",
               first.capture_seconds, first.train_graph_replays, first.train_stats.batches);
  }
  double train_total = 0, test_total = 0;
  for (const auto& r : result.epochs) {
    train_total += r.train_seconds;
    test_total += r.test_seconds;
  }
  const double n = static_cast<double>(result.epochs.size());
  fmt::print("Average Train Time per Epoch: {:.2f}s\n", train_total / n);
  fmt::print("Average Test Time per Epoch: {:.2f}s\n", test_total / n);
  fmt::print("Total Train Time: {:.2f}s\n", train_total);
  fmt::print("Total Test Time: {:.2f}s\n", test_total);
  fmt::print("Test Accuracy: {:.2f}%\n", 100.0 * result.epochs.back().test_accuracy);
  if (result.streamed) {
    fmt::print("Streamed: {} row group reads of the train {}'s {} row groups, over {} epoch{}\n",
               result.row_group_reads,
               result.files == 1 ? std::string("file") : fmt::format("dataset ({} files)", result.files),
               result.row_groups, args.epochs, args.epochs == 1 ? "" : "s");
  }
  const remote::RemoteStats rs = remote::stats();
  if (rs.requests > 0 || rs.cache_hits > 0) {
    fmt::print("Remote reads: {} requests, {:.1f} MB, {} retries; cache: {} hits, {} downloads, {} evictions; "
               "readers waited {:.2f}s\n",
               rs.requests, static_cast<double>(rs.bytes) / 1e6, rs.retries, rs.cache_hits, rs.cache_misses,
               rs.cache_evictions, rs.wait_seconds);
  }
  if (!result.saved_to.empty()) {
    fmt::print("Saved the trained model to {} (feedline::load_module reads it into a {} of the same options: "
               "{}x{}x{} images, {} classes)\n",
               result.saved_to, s.model, s.shape.channels, s.shape.height, s.shape.width, s.classes);
  }
}

// --on-error skip: what each phase of the epoch left out.
void print_skipped(const SkippedSamples& train, const SkippedSamples& test) {
  using Phase = std::pair<const char*, const SkippedSamples*>;
  for (const auto& [phase, skipped] : {Phase{"train", &train}, Phase{"test", &test}}) {
    if (skipped->count == 0) continue;
    fmt::print("Skipped {} {} sample{} this epoch:\n", skipped->count, phase, skipped->count == 1 ? "" : "s");
    for (const std::string& line : skipped->first) fmt::print("  {}\n", line);
    if (skipped->count > static_cast<int64_t>(skipped->first.size())) {
      fmt::print("  ... and {} more\n", skipped->count - static_cast<int64_t>(skipped->first.size()));
    }
  }
  std::fflush(stdout);
}

// Where a stopped job stopped, and how to go on.
void print_stopped(const TrainArgs& args, const dist::TrainJobResult& result,
                   const std::optional<CheckpointInfo>& checkpoint) {
  // A rank that got no signal itself stopped with the others.
  const std::string by = g_stop_signal != 0 ? " by " + signal_name(g_stop_signal) : "";
  const std::string peer = g_stop_signal != 0 ? "" : " (another rank of the job was signalled)";
  if (!result.checkpoint.empty() && checkpoint) {
    fmt::print("Stopped{} at epoch {}, step {}{}; checkpoint {} (continue with --resume {} or --resume auto)\n", by,
               checkpoint->epoch, checkpoint->step, peer, result.checkpoint, args.checkpoints.dir);
  } else {
    fmt::print("Stopped{} in epoch {}{}{}\n", by, result.epochs.back().epoch, peer,
               args.checkpoints.dir.empty() ? "; no checkpoint (no --checkpoint)" : "");
  }
  std::fflush(stdout);
}

// ------------------------------------------------------------------------------------------ the job's errors

// The flag of `feedline train` that sets each option the job can refuse.
const char* flag_of(dist::JobOption option) {
  using dist::JobOption;
  switch (option) {
    case JobOption::kBatchSize: return "--batch-size";
    case JobOption::kThreads: return "--threads";
    case JobOption::kSave: return "--save";
    case JobOption::kImageSize: return "--image-size";
    case JobOption::kImageShape: return "--image-shape";
    case JobOption::kCropScale: return "--crop-scale";
    case JobOption::kTrainFile: return "--data";
    case JobOption::kTestFile: return "--test-data";
    case JobOption::kResume: return "--resume";
    case JobOption::kCudaGraph: return "--cuda-graph";
    case JobOption::kDistBackend: return "--dist-backend";
    case JobOption::kModel: return "--model";
    case JobOption::kPrecision: return "--precision";
    case JobOption::kMix: return "--mix";
  }
  return "?";
}

// The job's words for an option, with the flag in place of the option's name.
std::string with_flag(dist::JobOption option, const std::string& detail) {
  return flag_of(option) + std::string(!detail.empty() && detail[0] == ':' ? "" : " ") + detail;
}

}  // namespace

dist::TrainJobResult run_train_job_naming_flags(const dist::TrainJobOptions& options,
                                                const dist::TrainJobCallbacks& callbacks) {
  try {
    return dist::run_train_job(options, callbacks);
  } catch (const dist::JobOptionError& e) {
    throw InvalidArgument(with_flag(e.which, e.detail()));
  } catch (const dist::JobFileError& e) {
    throw IoError(with_flag(e.option, e.detail), e.code());
  }
}

std::string resolve_resume_dir_naming_flags(const dist::TrainJobOptions& options) {
  try {
    return dist::resolve_resume_dir(options);
  } catch (const dist::JobOptionError& e) {
    throw InvalidArgument(with_flag(e.which, e.detail()));
  }
}

int run_train(const TrainArgs& args) {
  // Only rank 0 speaks: the job's log lines come once. Errors still reach stderr from every rank.
  const auto world = dist::world_from_environment();
  const bool ranked = world && world->world_size > 1;
  if (ranked && world->rank != 0) {
    if (std::freopen("/dev/null", "w", stdout) == nullptr) {
      throw IoError("rank " + std::to_string(world->rank) + ": cannot quiet stdout");
    }
  }
  // SIGTERM and SIGINT stop the job after the step in progress (every rank at the same one), with a checkpoint.
  const StopSignals signals(ranked);
  dist::TrainJobOptions options = args;
  options.stop = &g_stop;
  ProgressBar bar;
  dist::TrainJobSetup setup;
  dist::TrainJobCallbacks callbacks;
  callbacks.on_loaded = print_loaded;
  callbacks.on_ready = [&](const dist::TrainJobSetup& s) {
    setup = s;
    print_ready(args, s);
  };
  if (bar.enabled()) {
    callbacks.on_train_step = [&](int64_t epoch, int64_t step, int64_t steps, double loss) {
      bar.update(fmt::format("Epoch {}/{}", epoch, args.epochs), step, steps, fmt::format("loss {:.4f}", loss));
    };
  }
  callbacks.on_epoch_end = [&](const EpochResult& r, std::optional<double> allreduce_seconds) {
    bar.clear();
    print_epoch(args, r, allreduce_seconds);
    print_source_samples(args, setup, r);
  };
  callbacks.on_skipped = print_skipped;
  std::optional<CheckpointInfo> last_checkpoint;
  callbacks.on_checkpoint = [&](const CheckpointInfo& c, const std::string& file) {
    last_checkpoint = c;
    if (bar.enabled()) return;
    fmt::print("Checkpoint: epoch {}, step {} -> {}\n", c.epoch, c.step, file);
    std::fflush(stdout);
  };
  const dist::TrainJobResult result = run_train_job_naming_flags(options, callbacks);
  if (result.stopped) {
    bar.clear();
    print_stopped(args, result, last_checkpoint);
    return 128 + (g_stop_signal != 0 ? g_stop_signal : SIGTERM);
  }
  print_summary(args, setup, result);
  return 0;
}

}  // namespace feedline::cli
