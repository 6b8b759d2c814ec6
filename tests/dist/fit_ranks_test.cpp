// fit() on the ranks of a data-parallel job (threads of this process over Gloo): any model, stopped by one rank's
// request mid-epoch, resumed on the same world size from the checkpoint rank 0 wrote, ends with the weights of an
// uninterrupted job bit for bit.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "dist/thread_ranks.h"
#include "feedline/dist/data_parallel.h"
#include "feedline/dist/dist.h"
#include "feedline/train/train.h"
#include "test_paths.h"
#include "train/fit_support.h"

namespace feedline {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kRanks = 2;

// One job of kRanks ranks over fit(): `options` for every rank (rank 0 alone writes checkpoints); `stop_at`
// above 0: rank 1 asks to stop after that many steps. Returns each rank's run.
std::vector<testing::TinyRun> job(const TrainOptions& options, int64_t stop_at = 0, uint64_t model_seed = 7) {
  testing::TestStore store;
  std::vector<testing::TinyRun> runs(kRanks);
  testing::on_ranks(kRanks, [&](int64_t rank) {
    dist::GroupOptions go;
    go.timeout = 60s;
    dist::ProcessGroup group(store.world(rank, kRanks), torch::kCPU, go);
    std::optional<dist::DataParallel> parallel;
    std::atomic<int64_t> steps{0};
    runs[static_cast<size_t>(rank)] = testing::tiny_run(
        options, model_seed + static_cast<uint64_t>(rank), 16, testing::tiny_recipe(), {},
        [&](testing::TinyNet& model, TrainOptions& o) {
          parallel.emplace(group, *model);  // rank 0's weights on every rank
          parallel->apply(o);
          o.write_checkpoints = rank == 0;
          if (stop_at > 0 && rank == 1) o.stop_requested = [&steps, stop_at] { return ++steps == stop_at; };
        },
        rank, kRanks, /*dropout=*/0);
    group.barrier();
  });
  return runs;
}

TEST(FitRanks, AStoppedJobOfAnyModelResumesToTheUninterruptedJobBitForBit) {
  const auto whole = job(testing::tiny_options());
  // Every rank holds the same parameters. The buffers are rank 0's before each step's forward pass, which then
  // updates each rank's batch-norm statistics from its own share of the batch, as DistributedDataParallel does.
  for (size_t r = 1; r < whole.size(); ++r) {
    ASSERT_EQ(whole[r].parameters, whole[0].parameters);
    for (size_t i = 0; i < whole[0].parameters; ++i) {
      EXPECT_TRUE(torch::equal(whole[0].state[i], whole[r].state[i])) << "rank " << r << ", parameter " << i;
    }
  }

  const std::string dir = testing::scratch_dir("fit_ranks_stop");
  TrainOptions stop = testing::tiny_options();
  stop.checkpoint_dir = dir;
  const auto stopped = job(stop, /*stop_at=*/14);
  for (const auto& run : stopped) EXPECT_TRUE(run.results.back().interrupted);
  const CheckpointInfo info = read_checkpoint_info(dir);
  EXPECT_EQ(info.steps_done, 14);
  EXPECT_EQ(info.train_loader.world_size, kRanks);

  TrainOptions resume = testing::tiny_options();
  resume.resume_dir = dir;
  const auto resumed = job(resume, 0, /*model_seed=*/50);
  for (size_t r = 0; r < resumed.size(); ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    testing::expect_same_state(whole[r], resumed[r]);
    EXPECT_EQ(resumed[r].results.back().test_loss, whole[r].results.back().test_loss);
  }
}

}  // namespace
}  // namespace feedline
