// Training that survives preemption: the stop flag agreed in the gradients' allreduce, `--checkpoint-every` and
// `--resume auto` on the command line, SIGTERM to a job and to its launcher, and a checkpoint resumed on another
// number of ranks.
#include <gtest/gtest.h>
#include <signal.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_support.h"
#include "dist/processes.h"
#include "feedline/dataset/dataset.h"
#include "feedline/dist/data_parallel.h"
#include "feedline/dist/dist.h"
#include "feedline/dist/train_job.h"
#include "feedline/io/error.h"
#include "feedline/loader/loader.h"
#include "feedline/train/models.h"
#include "feedline/train/train.h"
#include "train/float_drift.h"

namespace feedline {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::Child;
using testing::ended;
using testing::prepared;
using testing::saved_weights;
using testing::start;
using testing::torch_program;
using testing::train_args;

// ------------------------------------------------------------------------------------- the agreed stop

TEST(Preemption, OneRanksStopReachesEveryRankThroughTheGradientAllreduce) {
  const std::string file = testing::scratch_dir("preemption_flag") + "/store";
  constexpr int64_t kRanks = 2;
  // Per rank: what after_backward answered at each of three steps, and the averaged gradient of the last.
  std::vector<std::vector<bool>> answers(kRanks);
  std::vector<torch::Tensor> grads(kRanks);
  std::vector<std::exception_ptr> errors(kRanks);
  std::vector<std::thread> threads;
  for (int64_t rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        dist::WorldInfo w;
        w.rank = rank;
        w.world_size = kRanks;
        w.store_file = file;
        dist::GroupOptions o;
        o.timeout = 30s;
        dist::ProcessGroup group(w, torch::kCPU, o);
        torch::manual_seed(1);
        SimpleCNN model(SimpleCNNOptions().channels(1).height(8).width(8).classes(3));
        dist::DataParallel parallel(group, *model);
        TrainOptions options;
        parallel.apply(options);
        ASSERT_TRUE(options.after_backward);
        for (int step = 0; step < 3; ++step) {
          for (auto& p : model->parameters()) p.mutable_grad() = torch::full_like(p, static_cast<float>(rank + 1));
          // Only rank 1 asks, and only at step 1.
          answers[static_cast<size_t>(rank)].push_back(options.after_backward(rank == 1 && step == 1));
        }
        grads[static_cast<size_t>(rank)] = model->parameters().front().grad().clone();
        group.barrier();
      } catch (...) {
        errors[static_cast<size_t>(rank)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  for (int64_t rank = 0; rank < kRanks; ++rank) {
    EXPECT_EQ(answers[static_cast<size_t>(rank)], (std::vector<bool>{false, true, false})) << "rank " << rank;
    // The flag shares the last bucket and leaves the gradients alone: the mean of 1 and 2.
    EXPECT_TRUE(torch::equal(grads[static_cast<size_t>(rank)], torch::full_like(grads[0], 1.5f))) << "rank " << rank;
  }
}

// ------------------------------------------------------------------------------------- the flags

TEST(Preemption, CheckpointEveryTakesStepsOrADuration) {
  const auto every = [](const std::string& text) { return dist::parse_checkpoint_every(text); };
  EXPECT_EQ(every("100").steps, 100);
  EXPECT_EQ(every("100").seconds, 0);
  EXPECT_EQ(every("90s").seconds, 90);
  EXPECT_EQ(every("10m").seconds, 600);
  EXPECT_EQ(every("1h").seconds, 3600);
  EXPECT_EQ(every("1h").steps, 0);
  for (const char* bad : {"10x", "-5", "0m", "0", "", "m", "1.5h", "10 m", "1000000000000000h"}) {
    try {
      every(bad);
      ADD_FAILURE() << "'" << bad << "' was taken";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("'" + std::string(bad) + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("90s, 10m, 1h"), std::string::npos) << e.what();
    }
  }
}

TEST(Preemption, TheCommandLineRefusesABadIntervalAndResumeAutoWithoutAFolder) {
  auto r = testing::run_cli("train --checkpoint ck --checkpoint-every 10x");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--checkpoint-every: '10x' is neither a number of steps"), std::string::npos) << r.output;
  r = testing::run_cli("train --checkpoint ck --checkpoint-every -5");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("'-5'"), std::string::npos) << r.output;
  r = testing::run_cli("train --resume auto");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("--resume auto resumes from the --checkpoint folder"), std::string::npos) << r.output;
}

// ------------------------------------------------------------------------------------- stopped jobs

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& extra) {
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Runs to the end; expects exit code 0.
void run_through(const std::vector<std::string>& args, const std::string& out) {
  auto run = start(args, {}, out);
  const auto status = run->wait_for(180s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << ended(status) << "\n" << run->output();
}

// The checkpoint file a stopped job names in its "Stopped by" line.
std::string stopped_checkpoint(const std::string& output) {
  const size_t at = output.find("; checkpoint ");
  if (at == std::string::npos) return "";
  const size_t from = at + std::string("; checkpoint ").size();
  return output.substr(from, output.find(' ', from) - from);
}

void expect_same_weights(const std::string& a_path, const std::string& b_path) {
  const auto a = saved_weights(a_path);
  const auto b = saved_weights(b_path);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
}

// FashionMNIST prepared in a folder of the test's; fashion_args() trains on the first `limit` images of each split.
std::string fashion_mnist(const std::string& name) {
  const std::string dir = testing::scratch_dir(name);
  const auto prepare = testing::run_cli("prepare --dataset fashion-mnist --data-dir " + dir + "/data");
  EXPECT_EQ(prepare.status, 0) << prepare.output;
  return dir;
}

std::vector<std::string> fashion_args(const std::string& program, const std::string& dir, int64_t epochs,
                                      int64_t limit) {
  return {program, "train", "--dataset", "fashion-mnist", "--data-dir", dir + "/data", "--device", "cpu",
          "--threads", "1", "--batch-size", "64", "--epochs", std::to_string(epochs), "--limit", std::to_string(limit)};
}

// SIGTERM to the launcher of a 2-rank job mid-epoch: every rank stops after the same step, rank 0 writes a
// checkpoint there and the job ends with 143. The same command line with --resume auto then ends with the
// uninterrupted run's weights, bit for bit.
TEST(PreemptionProcesses, ASignalledJobResumesWhereItStoppedBitForBit) {
  const std::string dir = fashion_mnist("preemption_job");
  const auto plain = with(fashion_args(FEEDLINE_CLI, dir, 3, 3200), {"--nproc", "2"});  // 50 steps an epoch
  run_through(with(plain, {"--save", dir + "/whole.pt"}), dir + "/whole.out");

  const auto job = with(plain, {"--checkpoint", dir + "/ck", "--checkpoint-every", "10", "--resume", "auto",
                                "--save", dir + "/resumed.pt"});
  auto run = start(job, {}, dir + "/stopped.out");
  ASSERT_TRUE(run->wait_for_output("Checkpoint: epoch 1, step 20", 120s)) << run->output();
  ::kill(run->pid, SIGTERM);
  const auto status = run->wait_for(60s);
  ASSERT_TRUE(status.has_value()) << "the job still runs 60 s after SIGTERM\n" << run->output();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 128 + SIGTERM) << ended(status) << "\n" << run->output();
  const std::string output = run->output();
  EXPECT_NE(output.find("Stopped by SIGTERM at epoch "), std::string::npos) << output;
  const std::string stopped_at = stopped_checkpoint(output);
  ASSERT_FALSE(stopped_at.empty()) << output;
  EXPECT_TRUE(std::filesystem::is_regular_file(stopped_at)) << stopped_at;
  EXPECT_EQ(latest_checkpoint(dir + "/ck"), stopped_at);
  EXPECT_FALSE(std::filesystem::exists(dir + "/resumed.pt")) << "a stopped job saved its model";

  run = start(job, {}, dir + "/resumed.out");
  const auto done = run->wait_for(180s);
  ASSERT_TRUE(done && WIFEXITED(*done) && WEXITSTATUS(*done) == 0) << ended(done) << "\n" << run->output();
  EXPECT_NE(run->output().find("Resuming from " + stopped_at), std::string::npos) << run->output();
  expect_same_weights(dir + "/whole.pt", dir + "/resumed.pt");
}

// The global batches (the sorted sample indices of each step, over every rank) that loaders of `world` ranks hand
// out from `state` to the end of its epoch and through the next, with the training job's loader options.
std::vector<std::vector<int64_t>> global_batches_from(const LoaderState& state, int64_t world) {
  const auto indices = torch::arange(state.samples, torch::kInt64).reshape({state.samples, 1}).to(torch::kFloat32);
  auto ds = std::make_shared<TensorDataset>(indices, torch::zeros({state.samples}, torch::kInt64));
  std::vector<std::vector<int64_t>> out;
  for (int64_t rank = 0; rank < world; ++rank) {
    Loader loader(ds, LoaderOptions(state.batch_size * state.world_size / world)
                          .rank(rank)
                          .world_size(world)
                          .even_shards(true)
                          .shuffle(true)
                          .seed(state.seed));
    loader.load_state_dict(state);
    size_t k = 0;
    for (int pass = 0; pass < 2; ++pass) {
      auto epoch = loader.epoch();
      for (auto& batch : epoch) {
        if (out.size() <= k) out.emplace_back();
        const auto values = batch.data.flatten().to(torch::kInt64).contiguous();
        out[k].insert(out[k].end(), values.data_ptr<int64_t>(), values.data_ptr<int64_t>() + values.numel());
        ++k;
      }
    }
  }
  for (auto& b : out) std::sort(b.begin(), b.end());
  return out;
}

// A 2-rank job's checkpoint resumed on one rank with the same global batch. What is exact is tested exactly: the
// checkpoint's position, the samples of every global batch after it, and the weights the resumed rank starts from.
// The weights at the end are not exact: one rank adds a batch's gradients in another order than two ranks do, and
// over many steps Adam carries those last-bit differences far above rounding, by an amount that depends on the
// machine's float kernels. So the test measures that amount here, as the distance between two uninterrupted runs
// that differ only in their number of ranks, and the resumed run (half of its steps on one rank) must end no
// further from the 2-rank run than a small multiple of it. A streamed split refuses another world size, saying why.
TEST(PreemptionProcesses, ACheckpointResumesOnAnotherNumberOfRanksWithTheSameGlobalBatch) {
  const std::string dir = fashion_mnist("preemption_elastic");
  // 20 steps an epoch, 60 in all; the checkpoints after steps 10, 20, ... 60 all kept.
  run_through(with(fashion_args(FEEDLINE_CLI, dir, 3, 1280),
                   {"--nproc", "2", "--checkpoint", dir + "/ck", "--checkpoint-every", "10", "--keep-checkpoints",
                    "10", "--save", dir + "/whole.pt"}),
              dir + "/whole.out");
  ASSERT_EQ(list_checkpoints(dir + "/ck").size(), 6u);
  const std::string mid = checkpoint_file(dir + "/ck", 30);  // epoch 2, step 10
  ASSERT_TRUE(std::filesystem::is_regular_file(mid));
  std::filesystem::create_directories(dir + "/one");
  std::filesystem::copy_file(mid, dir + "/one/" + std::filesystem::path(mid).filename().string());

  // Exact: where the checkpoint stands, and the samples of each global batch from there on, one rank or two.
  const CheckpointInfo info = read_checkpoint_info(mid);
  EXPECT_EQ(info.epoch, 2);
  EXPECT_EQ(info.step, 10);
  EXPECT_EQ(info.steps_done, 30);
  EXPECT_EQ(info.train_loader.world_size, 2);
  EXPECT_EQ(info.train_loader.batch_size, 32);
  EXPECT_EQ(info.train_loader.batch, 10);
  const auto two_ranks = global_batches_from(info.train_loader, 2);
  EXPECT_EQ(two_ranks.size(), 10u + 20u) << "the rest of epoch 2 and all of epoch 3";
  EXPECT_EQ(global_batches_from(info.train_loader, 1), two_ranks);

  // Exact: the weights the resumed rank starts from. The last checkpoint, resumed on one rank with nothing left to
  // train, saves the 2-rank job's final weights bit for bit.
  const std::string last = checkpoint_file(dir + "/ck", 60);
  std::filesystem::create_directories(dir + "/last");
  std::filesystem::copy_file(last, dir + "/last/" + std::filesystem::path(last).filename().string());
  run_through(with(fashion_args(torch_program(), dir, 3, 1280), {"--resume", dir + "/last", "--save",
                                                                 dir + "/loaded.pt"}),
              dir + "/loaded.out");
  expect_same_weights(dir + "/whole.pt", dir + "/loaded.pt");

  // The yardstick: the same job on one rank from the start.
  run_through(with(fashion_args(torch_program(), dir, 3, 1280), {"--save", dir + "/single.pt"}), dir + "/single.out");
  const double ranks_apart =
      testing::relative_distance(saved_weights(dir + "/whole.pt"), saved_weights(dir + "/single.pt"));

  auto run = start(with(fashion_args(torch_program(), dir, 3, 1280), {"--resume", dir + "/one", "--save",
                                                                      dir + "/one_rank.pt"}),
                   {}, dir + "/one_rank.out");
  auto status = run->wait_for(180s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << ended(status) << "\n" << run->output();
  EXPECT_NE(run->output().find("epoch 2, step 10 of 20 (resuming a 2-rank checkpoint on 1 rank)"), std::string::npos)
      << run->output();
  const double resumed_apart =
      testing::relative_distance(saved_weights(dir + "/whole.pt"), saved_weights(dir + "/one_rank.pt"));
  // Half the steps on one rank drift no further than a few times what all of them on one rank drift; where one
  // rank and two give the same bits, so must the resumed run.
  EXPECT_LE(resumed_apart, testing::kDriftFactor * ranks_apart)
      << "resumed on 1 rank: " << resumed_apart << " from the 2-rank run; 1 rank from the start: " << ranks_apart;
  std::cout << "[ weights  ] resumed on 1 rank " << resumed_apart << " from the 2-rank run, 1 rank from the start "
            << ranks_apart << " (relative L2)" << std::endl;

  // Another global batch, and a streamed split: refused before any training, saying why.
  auto half_batch = with(fashion_args(torch_program(), dir, 3, 1280), {"--resume", dir + "/one"});
  *(std::find(half_batch.begin(), half_batch.end(), "--batch-size") + 1) = "32";
  run = start(half_batch, {}, dir + "/batch.out");
  status = run->wait_for(120s);
  ASSERT_TRUE(status && WIFEXITED(*status)) << ended(status);
  EXPECT_EQ(WEXITSTATUS(*status), 1) << run->output();
  EXPECT_NE(run->output().find("another number of ranks resumes with the same global batch"), std::string::npos)
      << run->output();
  run = start(with(fashion_args(torch_program(), dir, 3, 1280), {"--resume", dir + "/one", "--dataset-mode",
                                                                 "stream"}),
              {}, dir + "/stream.out");
  status = run->wait_for(120s);
  ASSERT_TRUE(status && WIFEXITED(*status)) << ended(status);
  EXPECT_EQ(WEXITSTATUS(*status), 1) << run->output();
  EXPECT_NE(run->output().find("a streamed training split (dataset mode stream) cannot change its number of ranks"),
            std::string::npos)
      << run->output();
}

// SIGTERM to one rank of a --nproc job (an orchestrator that signals a process of its choosing): the other rank
// stops after the same step, rank 0 writes the checkpoint, and the launcher ends with 143 rather than as a failure.
TEST(PreemptionProcesses, ASignalToOneRankStopsTheWholeJob) {
  const std::string idx = prepared("preemption_one_rank", 2000, 100);
  auto run = start(with(train_args(FEEDLINE_CLI, idx, 1000),
                        {"--nproc", "2", "--checkpoint", idx + "/ck", "--checkpoint-every", "10"}),
                   {}, idx + "/job.out");
  ASSERT_TRUE(run->wait_for_output("Checkpoint: epoch 1, step 10", 120s)) << run->output();
  const auto ranks = testing::children_of(run->pid);
  ASSERT_EQ(ranks.size(), 2u) << run->output();
  ::kill(ranks[1], SIGTERM);
  const auto status = run->wait_for(60s);
  ASSERT_TRUE(status.has_value()) << "the job still runs 60 s after SIGTERM to rank 1\n" << run->output();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 128 + SIGTERM) << ended(status) << "\n" << run->output();
  const std::string output = run->output();
  EXPECT_NE(output.find("(another rank of the job was signalled); checkpoint "), std::string::npos) << output;
  const std::string stopped_at = stopped_checkpoint(output);
  EXPECT_TRUE(!stopped_at.empty() && std::filesystem::is_regular_file(stopped_at)) << output;
  EXPECT_EQ(output.find("exited with code"), std::string::npos) << "the launcher took the stop for a failure\n"
                                                                 << output;
}

// One process: SIGINT stops it with 130; a second signal while it stops ends it at once, by that signal.
TEST(PreemptionProcesses, OneProcessStopsOnSigintAndASecondSignalEndsItAtOnce) {
  const std::string idx = prepared("preemption_one", 2000, 100);
  const auto args = with(train_args(torch_program(), idx, 1000), {"--checkpoint", idx + "/ck", "--checkpoint-every",
                                                                  "10"});
  auto run = start(args, {}, idx + "/sigint.out");
  ASSERT_TRUE(run->wait_for_output("Checkpoint: epoch 1, step 10", 120s)) << run->output();
  ::kill(run->pid, SIGINT);
  auto status = run->wait_for(60s);
  ASSERT_TRUE(status.has_value()) << "still running 60 s after SIGINT\n" << run->output();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 128 + SIGINT) << ended(status) << "\n" << run->output();
  EXPECT_NE(run->output().find("Stopped by SIGINT"), std::string::npos) << run->output();

  // Held still, it gets SIGTERM and then SIGINT: once it goes on, the first asks for the stop and the second ends
  // it.
  run = start(args, {}, idx + "/twice.out");
  ASSERT_TRUE(run->wait_for_output("Checkpoint: epoch 1, step 10", 120s)) << run->output();
  ::kill(run->pid, SIGSTOP);
  ::kill(run->pid, SIGTERM);
  ::kill(run->pid, SIGINT);
  ::kill(run->pid, SIGCONT);
  status = run->wait_for(60s);
  ASSERT_TRUE(status.has_value()) << "still running 60 s after two signals\n" << run->output();
  EXPECT_TRUE(WIFSIGNALED(*status)) << ended(status) << "\n" << run->output();
}

TEST(PreemptionProcesses, ResumeAutoStartsAfreshOnAnEmptyFolderAndRefusesACorruptCheckpoint) {
  const std::string idx = prepared("preemption_auto", 640, 100);
  const auto args = with(train_args(torch_program(), idx, 1), {"--checkpoint", idx + "/ck", "--resume", "auto"});
  auto run = start(args, {}, idx + "/fresh.out");
  auto status = run->wait_for(120s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << ended(status) << "\n" << run->output();
  EXPECT_EQ(run->output().find("Resuming"), std::string::npos) << run->output();
  EXPECT_NE(run->output().find("Epoch 1/1"), std::string::npos) << run->output();
  EXPECT_FALSE(list_checkpoints(idx + "/ck").empty());

  // The newest checkpoint is corrupt: refused by name, never passed over for an older one.
  const std::string corrupt = checkpoint_file(idx + "/ck", 999);
  std::ofstream(corrupt) << "not a checkpoint";
  run = start(args, {}, idx + "/corrupt.out");
  status = run->wait_for(120s);
  ASSERT_TRUE(status && WIFEXITED(*status)) << ended(status) << "\n" << run->output();
  EXPECT_EQ(WEXITSTATUS(*status), 1) << run->output();
  EXPECT_NE(run->output().find(corrupt), std::string::npos) << run->output();
}

}  // namespace
}  // namespace feedline
