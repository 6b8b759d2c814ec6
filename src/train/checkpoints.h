// Checkpoints of one training run (TrainOptions::checkpoint_dir, resume_dir): when one is due, what it holds (the
// model with its layout, the optimizer, the weights' average and the loss scale when there are, torch's CPU generator, and the
// position with the training loader's state), writing it (on the training thread, or copied there and written by
// a background thread) and reading it back. Internal to fit(). Not thread-safe: the training thread drives a Checkpoints; its background write touches only the
// copy it was handed.
#pragma once

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <string>

#include "feedline/loader/loader.h"
#include "feedline/train/train.h"

namespace torch::optim {
class Optimizer;
}

namespace feedline::detail {

class LossScaler;
class WeightAverage;

// The checkpoints of one run. The references and pointers given must outlive it. `optimizer` null: a run that
// keeps no checkpoints (its options ask for none); `average` null: no weights' average; `scaler` null: no loss
// scaling (Precision::kFloat16 has one).
class Checkpoints {
 public:
  Checkpoints(torch::nn::Module& model, torch::optim::Optimizer* optimizer, WeightAverage* average, Loader& train,
              const TrainOptions& options, LossScaler* scaler = nullptr);
  // Waits for a write in flight; its failure is dropped (the run is failing already when this is what ends it).
  ~Checkpoints();
  Checkpoints(const Checkpoints&) = delete;
  Checkpoints& operator=(const Checkpoints&) = delete;

  // Loads the newest checkpoint in options.resume_dir into the model, the optimizer, the average, the generator
  // and the training loader; returns where training stood. A loss scaler takes the saved scale, or keeps its
  // initial one when the checkpoint holds none (written by a run of another precision, or before scales were kept). Throws InvalidFile naming the file and the first
  // parameter or buffer that differs when it was written by a model of another layout.
  CheckpointInfo resume();

  // After each training step: takes a checkpoint when one is due by count or by time, or when `stopping`, and
  // reports a background write that has ended. `step` counts the epoch's steps, `steps_done` all of them.
  void after_step(int64_t epoch, int64_t step, int64_t steps_done, bool stopping, const TrainCallbacks& callbacks);
  // Reports a background write that has ended (on_checkpoint), rethrowing its failure; does not wait.
  void poll(const TrainCallbacks& callbacks);
  // Waits for the write in flight, if any, and reports it.
  void finish(const TrainCallbacks& callbacks);

 private:
  struct Pending;
  class Writer;

  void take(const CheckpointInfo& info, const TrainCallbacks& callbacks);
  void report(const TrainCallbacks& callbacks);

  torch::nn::Module& model_;
  torch::optim::Optimizer* optimizer_;
  WeightAverage* average_;
  LossScaler* scaler_;
  Loader& train_;
  const TrainOptions& options_;
  std::chrono::steady_clock::time_point last_;  // when the last checkpoint was taken (or the run started)
  std::unique_ptr<Writer> writer_;              // made for the first background write
  std::unique_ptr<Pending> pending_;            // the background write in flight
};

}  // namespace feedline::detail
