// Checkpoints of train_model: numbered files kept by count, taken by count and by time, written on the training
// thread or in the background with the same contents, an early stop that resumes to an uninterrupted run's
// weights, and corrupt or unfinished files.
#include <gtest/gtest.h>
#include <torch/optim/adam.h>
#include <torch/serialize.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "fashion_split.h"
#include "feedline/dataset/dataset.h"
#include "feedline/io/error.h"
#include "feedline/io/idx.h"
#include "feedline/loader/loader.h"
#include "feedline/train/models.h"
#include "feedline/train/train.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace fs = std::filesystem;

using testing::fashion_slice;

// 640 training samples in shuffled batches of 64: 10 steps an epoch.
LoaderOptions train_options(int64_t batch = 64) { return LoaderOptions(batch).shuffle(true).seed(3); }

struct TrainRun {
  std::vector<EpochResult> results;
  std::vector<torch::Tensor> weights;
  std::vector<std::pair<CheckpointInfo, std::string>> checkpoints;  // as on_checkpoint saw them
};

// A fresh model (seed 7) trained on the first 640 samples, tested on the next 128.
TrainRun train_run(TrainOptions options, const LoaderOptions& loader = train_options(), uint64_t model_seed = 7) {
  torch::manual_seed(model_seed);
  SimpleCNN model;
  Loader train(fashion_slice(0, 640), loader);
  Loader test(fashion_slice(640, 128), LoaderOptions(64));
  options.device = torch::kCPU;
  TrainRun run;
  TrainCallbacks callbacks;
  callbacks.on_checkpoint = [&](const CheckpointInfo& info, const std::string& file) {
    EXPECT_TRUE(fs::is_regular_file(file)) << file << " reported before it was whole";
    run.checkpoints.emplace_back(info, file);
  };
  run.results = train_model(model, train, test, options, callbacks);
  for (const auto& p : model->parameters()) run.weights.push_back(p.detach().clone());
  return run;
}

TrainOptions epochs(int64_t n) {
  TrainOptions o;
  o.epochs = n;
  return o;
}

std::vector<std::string> names(const std::vector<std::string>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(fs::path(f).filename().string());
  return out;
}

void expect_same_weights(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
}

// What a checkpoint file holds, in a form that two runs' files can be compared by.
struct Contents {
  std::vector<torch::Tensor> model;      // parameters, in order
  std::vector<torch::Tensor> optimizer;  // each parameter's Adam step, exp_avg and exp_avg_sq, in order
  torch::Tensor cpu_rng, position;
};

Contents contents(const std::string& file) {
  torch::serialize::InputArchive archive;
  archive.load_from(file);
  torch::serialize::InputArchive model_archive, optimizer_archive;
  archive.read("model", model_archive);
  torch::Tensor optimizer_bytes;
  archive.read("optimizer_state", optimizer_bytes);
  optimizer_archive.load_from(static_cast<const char*>(optimizer_bytes.data_ptr()),
                              static_cast<size_t>(optimizer_bytes.numel()));
  Contents c;
  SimpleCNN model;
  model->load(model_archive);
  torch::optim::Adam adam(model->parameters());
  adam.load(optimizer_archive);
  for (const auto& p : model->parameters()) {
    c.model.push_back(p.detach().clone());
    const auto& s = static_cast<const torch::optim::AdamParamState&>(
        *adam.state().at(c10::guts::to_string(p.unsafeGetTensorImpl())));
    c.optimizer.push_back(torch::tensor(s.step()));
    c.optimizer.push_back(s.exp_avg());
    c.optimizer.push_back(s.exp_avg_sq());
  }
  archive.read("cpu_rng", c.cpu_rng);
  archive.read("position", c.position);
  return c;
}

void expect_same_contents(const std::string& a, const std::string& b) {
  const Contents x = contents(a), y = contents(b);
  SCOPED_TRACE(a + " and " + b);
  expect_same_weights(x.model, y.model);
  expect_same_weights(x.optimizer, y.optimizer);
  EXPECT_TRUE(torch::equal(x.cpu_rng, y.cpu_rng));
  EXPECT_TRUE(torch::equal(x.position, y.position));
}

// The test names the file in the message it expects a throw of `E` with.
template <typename E, typename F>
void expect_error_naming(F&& f, const std::string& name) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one naming " << name;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
  }
}

TEST(Checkpoints, FilesAreNumberedByStepsAndListedOldestFirst) {
  const std::string dir = testing::scratch_dir("checkpoint_names");
  EXPECT_EQ(checkpoint_file(dir, 120), dir + "/checkpoint-000000120.pt");
  EXPECT_EQ(checkpoint_file(dir, 1234567890), dir + "/checkpoint-1234567890.pt");
  EXPECT_TRUE(list_checkpoints(dir + "/missing").empty());
  EXPECT_EQ(latest_checkpoint(dir + "/missing"), "");
  for (const char* name : {"checkpoint-000000120.pt", "checkpoint-000000009.pt", "checkpoint-1234567890.pt",
                           "checkpoint-000000130.pt.tmp-77-0", "checkpoint-12.pt", "checkpoint-00000001x.pt",
                           "notes.txt", "model.pt"}) {
    std::ofstream(dir + "/" + name) << "x";
  }
  fs::create_directories(dir + "/checkpoint-000000500.pt");  // a folder is no checkpoint
  EXPECT_EQ(names(list_checkpoints(dir)), (std::vector<std::string>{"checkpoint-000000009.pt",
                                                                     "checkpoint-000000120.pt",
                                                                     "checkpoint-1234567890.pt"}));
  EXPECT_EQ(latest_checkpoint(dir), dir + "/checkpoint-1234567890.pt");
  EXPECT_THROW(list_checkpoints(dir + "/notes.txt"), IoError);
}

TEST(Checkpoints, TheNewestKAreKept) {
  for (const bool async : {false, true}) {
    SCOPED_TRACE(async ? "async" : "sync");
    const std::string dir = testing::scratch_dir(async ? "checkpoint_keep_async" : "checkpoint_keep_sync");
    auto o = epochs(2);
    o.checkpoint_dir = dir;
    o.checkpoint_every = 3;  // steps 3, 6, ..., 18 of 20
    o.keep_checkpoints = 3;
    o.async_checkpoints = async;
    const TrainRun run = train_run(o);
    EXPECT_EQ(names(list_checkpoints(dir)), (std::vector<std::string>{"checkpoint-000000012.pt",
                                                                       "checkpoint-000000015.pt",
                                                                       "checkpoint-000000018.pt"}));
    ASSERT_EQ(run.checkpoints.size(), 6u);
    for (size_t i = 0; i < run.checkpoints.size(); ++i) {
      const auto& [info, file] = run.checkpoints[i];
      const int64_t steps = 3 * static_cast<int64_t>(i + 1);
      EXPECT_EQ(info.steps_done, steps);
      EXPECT_EQ(info.epoch, (steps - 1) / 10 + 1);
      EXPECT_EQ(info.step, (steps - 1) % 10 + 1);
      EXPECT_EQ(file, checkpoint_file(dir, steps));
    }
    const CheckpointInfo newest = read_checkpoint_info(dir);
    EXPECT_EQ(newest.steps_done, 18);
    EXPECT_EQ(newest.epoch, 2);
    EXPECT_EQ(newest.step, 8);
    EXPECT_EQ(read_checkpoint_info(checkpoint_file(dir, 12)).steps_done, 12);
    for (const auto& f : fs::directory_iterator(dir)) {
      EXPECT_EQ(f.path().filename().string().find(".tmp"), std::string::npos) << f.path();
    }
  }
  // One by default.
  const std::string dir = testing::scratch_dir("checkpoint_keep_one");
  auto o = epochs(1);
  o.checkpoint_dir = dir;
  o.checkpoint_every = 4;
  train_run(o);
  EXPECT_EQ(names(list_checkpoints(dir)), std::vector<std::string>{"checkpoint-000000008.pt"});

  o.keep_checkpoints = 0;
  EXPECT_THROW(train_run(o), InvalidArgument);
  o.keep_checkpoints = 1;
  o.checkpoint_interval = -1;
  EXPECT_THROW(train_run(o), InvalidArgument);
  o.checkpoint_interval = 10;
  o.checkpoint_dir.clear();
  o.checkpoint_every = 0;
  EXPECT_THROW(train_run(o), InvalidArgument);
}

TEST(Checkpoints, AnIntervalTakesOneAfterTheFirstStepPastIt) {
  const std::string dir = testing::scratch_dir("checkpoint_interval");
  auto o = epochs(1);
  o.checkpoint_dir = dir;
  o.checkpoint_interval = 1e-9;  // past after every step
  o.keep_checkpoints = 100;
  TrainRun run = train_run(o);
  ASSERT_EQ(run.checkpoints.size(), 10u);
  for (size_t i = 0; i < run.checkpoints.size(); ++i) EXPECT_EQ(run.checkpoints[i].first.steps_done, int64_t(i) + 1);
  EXPECT_EQ(list_checkpoints(dir).size(), 10u);

  // Beside a count: one a step still, never two.
  const std::string both = testing::scratch_dir("checkpoint_interval_and_count");
  o.checkpoint_dir = both;
  o.checkpoint_every = 5;
  run = train_run(o);
  EXPECT_EQ(run.checkpoints.size(), 10u);

  // 0 is off: a folder alone, with no count, interval or stop, gets nothing.
  const std::string off = testing::scratch_dir("checkpoint_interval_off");
  o.checkpoint_dir = off;
  o.checkpoint_every = 0;
  o.checkpoint_interval = 0;
  run = train_run(o);
  EXPECT_TRUE(run.checkpoints.empty());
  EXPECT_TRUE(list_checkpoints(off).empty());

  // A long interval: none within a 10-step run; the count alone decides.
  o.checkpoint_interval = 3600;
  o.checkpoint_every = 4;
  run = train_run(o);
  ASSERT_EQ(run.checkpoints.size(), 2u);
  EXPECT_EQ(run.checkpoints[1].first.steps_done, 8);
}

TEST(Checkpoints, BackgroundWritesHoldWhatWritesOnTheTrainingThreadHold) {
  const std::string sync_dir = testing::scratch_dir("checkpoint_sync"),
                    async_dir = testing::scratch_dir("checkpoint_async");
  TrainRun runs[2];
  for (const bool async : {false, true}) {
    auto o = epochs(2);
    o.checkpoint_dir = async ? async_dir : sync_dir;
    o.checkpoint_every = 3;
    o.keep_checkpoints = 100;
    o.async_checkpoints = async;
    runs[async] = train_run(o);
  }
  expect_same_weights(runs[0].weights, runs[1].weights);
  const auto a = list_checkpoints(sync_dir), b = list_checkpoints(async_dir);
  ASSERT_EQ(names(a), names(b));
  ASSERT_EQ(a.size(), 6u);
  for (size_t i = 0; i < a.size(); ++i) expect_same_contents(a[i], b[i]);
  // The files hold the state of their step, not a later one: the first checkpoint's weights differ from the last's.
  EXPECT_FALSE(torch::equal(contents(b.front()).model[0], contents(b.back()).model[0]));
}

// Stopped after `stop_after` steps (polled, as a signal handler's flag would be), then resumed from the stop's
// checkpoint: the final weights equal an uninterrupted run's bit for bit.
void stop_and_resume(int64_t stop_after, bool async, const std::string& name) {
  SCOPED_TRACE(name);
  const TrainRun whole = train_run(epochs(3));
  const std::string dir = testing::scratch_dir(name);
  auto o = epochs(3);
  o.checkpoint_dir = dir;
  o.async_checkpoints = async;
  int64_t polls = 0;
  o.stop_requested = [&] { return ++polls >= stop_after; };
  const TrainRun stopped = train_run(o);
  EXPECT_EQ(polls, stop_after);
  const int64_t epoch = (stop_after - 1) / 10 + 1, step = (stop_after - 1) % 10 + 1;
  ASSERT_EQ(stopped.results.size(), static_cast<size_t>(epoch));
  const EpochResult& last = stopped.results.back();
  EXPECT_TRUE(last.interrupted);
  EXPECT_EQ(last.train_stats.samples, step * 64);
  EXPECT_EQ(last.test_stats.samples, 0);
  for (size_t i = 0; i + 1 < stopped.results.size(); ++i) EXPECT_FALSE(stopped.results[i].interrupted);
  ASSERT_EQ(stopped.checkpoints.size(), 1u);
  EXPECT_EQ(stopped.checkpoints[0].second, checkpoint_file(dir, stop_after));
  EXPECT_EQ(names(list_checkpoints(dir)), names({checkpoint_file(dir, stop_after)}));
  const CheckpointInfo info = read_checkpoint_info(dir);
  EXPECT_EQ(info.epoch, epoch);
  EXPECT_EQ(info.step, step);
  EXPECT_EQ(info.steps_done, stop_after);

  auto r = epochs(3);
  r.resume_dir = dir;
  const TrainRun resumed = train_run(r, train_options(), /*model_seed=*/99);
  ASSERT_FALSE(resumed.results.empty());
  EXPECT_EQ(resumed.results.front().epoch, epoch);
  EXPECT_EQ(resumed.results.back().epoch, 3);
  EXPECT_FALSE(resumed.results.back().interrupted);
  expect_same_weights(resumed.weights, whole.weights);
}

TEST(Checkpoints, AStoppedRunResumesToTheUninterruptedRunsWeightsBitForBit) {
  stop_and_resume(13, /*async=*/false, "checkpoint_stop_13");
  stop_and_resume(13, /*async=*/true, "checkpoint_stop_13_async");
  stop_and_resume(10, /*async=*/true, "checkpoint_stop_10");  // the epoch's last step: its test phase is still due
  stop_and_resume(1, /*async=*/false, "checkpoint_stop_1");
}

TEST(Checkpoints, AStopWithoutAFolderEndsTheRunAndWritesNothing) {
  auto o = epochs(2);
  o.stop_requested = [] { return true; };
  int64_t ended = 0;
  torch::manual_seed(7);
  SimpleCNN model;
  Loader train(fashion_slice(0, 640), train_options());
  Loader test(fashion_slice(640, 128), LoaderOptions(64));
  TrainCallbacks callbacks;
  callbacks.on_epoch_end = [&](const EpochResult& r) {
    ++ended;
    EXPECT_TRUE(r.interrupted);
  };
  const auto results = train_model(model, train, test, o, callbacks);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].interrupted);
  EXPECT_EQ(results[0].train_stats.samples, 64);
  EXPECT_EQ(ended, 1);
}

TEST(Checkpoints, AStopIsAgreedThroughAfterBackward) {
  // A job's after_backward returns whether any rank asked to stop: here "another rank" asks at the fourth step.
  const std::string dir = testing::scratch_dir("checkpoint_agreed_stop");
  auto o = epochs(2);
  o.checkpoint_dir = dir;
  std::vector<bool> passed;
  o.stop_requested = [] { return false; };
  o.after_backward = [&](bool stop) {
    passed.push_back(stop);
    return passed.size() == 4;
  };
  const TrainRun run = train_run(o);
  EXPECT_EQ(passed, std::vector<bool>(4, false));
  ASSERT_EQ(run.results.size(), 1u);
  EXPECT_TRUE(run.results[0].interrupted);
  EXPECT_EQ(latest_checkpoint(dir), checkpoint_file(dir, 4));
}

TEST(Checkpoints, TheNewestIsResumedAndACorruptNewestIsRefusedByName) {
  const std::string dir = testing::scratch_dir("checkpoint_corrupt");
  auto o = epochs(1);
  o.checkpoint_dir = dir;
  o.checkpoint_every = 4;
  o.keep_checkpoints = 2;
  train_run(o);
  ASSERT_EQ(names(list_checkpoints(dir)),
            (std::vector<std::string>{"checkpoint-000000004.pt", "checkpoint-000000008.pt"}));
  auto r = epochs(1);
  r.resume_dir = dir;
  TrainRun resumed = train_run(r);
  ASSERT_EQ(resumed.results.size(), 1u);
  EXPECT_EQ(resumed.results[0].train_stats.samples, 2 * 64);  // steps 9 and 10

  // Truncated: refused, naming the newest; the older one is not taken instead.
  const std::string newest = checkpoint_file(dir, 8);
  fs::resize_file(newest, fs::file_size(newest) / 2);
  expect_error_naming<InvalidFile>([&] { train_run(r); }, newest);
  expect_error_naming<InvalidFile>([&] { read_checkpoint_info(dir); }, newest);
  expect_error_naming<InvalidFile>([&] { read_checkpoint_info(newest); }, newest);
  // Garbage under a newer number.
  const std::string garbage = checkpoint_file(dir, 9);
  std::ofstream(garbage) << "not a checkpoint";
  expect_error_naming<InvalidFile>([&] { train_run(r); }, garbage);
  // Another program's archive: a model file.
  const std::string model_file = checkpoint_file(dir, 10);
  {
    SimpleCNN model;
    torch::serialize::OutputArchive archive;
    model->save(archive);
    archive.save_to(model_file);
  }
  expect_error_naming<InvalidFile>([&] { train_run(r); }, model_file);

  // None at all.
  const std::string empty = testing::scratch_dir("checkpoint_none");
  r.resume_dir = empty;
  expect_error_naming<IoError>([&] { train_run(r); }, empty);
  expect_error_naming<IoError>([&] { read_checkpoint_info(empty); }, empty);
  r.resume_dir = empty + "/missing";
  EXPECT_THROW(train_run(r), IoError);
  EXPECT_THROW(read_checkpoint_info(empty + "/missing"), IoError);
}

TEST(Checkpoints, AnUnfinishedWritesTemporaryFileIsIgnoredAndRemovedByTheNextWrite) {
  const std::string dir = testing::scratch_dir("checkpoint_temporary");
  auto o = epochs(1);
  o.checkpoint_dir = dir;
  o.checkpoint_every = 5;
  train_run(o);
  const std::string whole = checkpoint_file(dir, 10);
  ASSERT_EQ(list_checkpoints(dir), std::vector<std::string>{whole});
  // A write of step 12 that died before its rename: a whole copy, even, under the temporary name.
  const std::string temporary = checkpoint_file(dir, 12) + ".tmp-12345-0";
  fs::copy_file(whole, temporary);
  EXPECT_EQ(list_checkpoints(dir), std::vector<std::string>{whole});
  EXPECT_EQ(latest_checkpoint(dir), whole);
  EXPECT_EQ(read_checkpoint_info(dir).steps_done, 10);
  auto r = epochs(1);
  r.resume_dir = dir;
  EXPECT_NO_THROW(train_run(r));  // from step 10: nothing left to train, no checkpoint written
  EXPECT_TRUE(fs::exists(temporary));
  o.keep_checkpoints = 2;
  o.async_checkpoints = false;
  o.checkpoint_every = 7;
  train_run(o);
  EXPECT_FALSE(fs::exists(temporary));
  EXPECT_EQ(names(list_checkpoints(dir)),
            (std::vector<std::string>{"checkpoint-000000007.pt", "checkpoint-000000010.pt"}));
}

TEST(Checkpoints, ACheckpointOfAnotherWorldSizeWithTheSameGlobalBatchResumes) {
  // Rank 0 of 2 with 32 a rank stops after 3 of its 10 steps; one process with batches of 64 goes on from there.
  const std::string dir = testing::scratch_dir("checkpoint_elastic");
  auto o = epochs(1);
  o.checkpoint_dir = dir;
  o.stop_requested = [polls = 0]() mutable { return ++polls >= 3; };
  train_run(o, train_options(32).rank(0).world_size(2));
  const CheckpointInfo info = read_checkpoint_info(dir);
  EXPECT_EQ(info.train_loader.world_size, 2);
  EXPECT_EQ(info.steps_done, 3);

  auto r = epochs(1);
  r.resume_dir = dir;
  std::vector<int64_t> steps;
  torch::manual_seed(7);
  SimpleCNN model;
  Loader train(fashion_slice(0, 640), train_options(64));
  Loader test(fashion_slice(640, 128), LoaderOptions(64));
  TrainCallbacks callbacks;
  callbacks.on_train_step = [&](int64_t, int64_t step, int64_t, double) { steps.push_back(step); };
  const auto results = train_model(model, train, test, r, callbacks);
  EXPECT_EQ(steps, (std::vector<int64_t>{4, 5, 6, 7, 8, 9, 10}));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].train_stats.samples, 7 * 64);

  // Another global batch is refused, naming the file.
  Loader other(fashion_slice(0, 640), train_options(48));
  expect_error_naming<InvalidArgument>([&] { train_model(model, other, test, r); }, latest_checkpoint(dir));
}

}  // namespace
}  // namespace feedline
