// `feedline train` and `feedline inspect` on mixtures: several --data sets read as one, weighed by --mix. The epoch
// log shows the samples each set gave; a job resumed from a mid-epoch checkpoint ends with the uninterrupted run's
// model byte for byte; flags that cannot weigh the sets are refused by name.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_support.h"
#include "dist/processes.h"
#include "test_paths.h"

namespace feedline {
namespace {

using testing::CliRun;
using testing::contains;
using testing::make_idx_dir;
using testing::run_cli;

// `prepare --images` of a tiny MNIST-shaped dataset (labels i % 10): its MNIST folder, with the tables
// (train.parquet, train.csv, test.parquet) and the image layouts under images/.
std::string prepare_mnist(const std::string& name, uint32_t train, uint32_t test) {
  const std::string idx = make_idx_dir(name + "_idx", train, test);
  const std::string data = testing::scratch_dir(name + "_data");
  const CliRun r = run_cli("prepare --images --dataset mnist --mnist-idx " + idx + " --data-dir " + data);
  EXPECT_EQ(r.status, 0) << r.output;
  return data + "/MNIST";
}

// Two class folders of the same 200 digits (JPEG and PNG), mixed 0.8/0.2 over an epoch of 400 samples: 320 and 80,
// in batches of 40 (10 steps an epoch).
std::string mixture_args(const std::string& mnist, const std::string& extra, int epochs = 2) {
  const std::string images = mnist + "/images";
  return "train --device cpu --data " + images + "/jpeg/train --data " + images + "/png/train --mix 0.8,0.2 " +
         "--test-data " + images + "/png/test --image-size 28 --batch-size 40 --epochs " + std::to_string(epochs) +
         " --num-workers 2 --threads 2 " + extra;
}

TEST(MixtureCli, TrainsOnTwoImageFoldersAndResumesMidEpochToTheSameModel) {
  const std::string mnist = prepare_mnist("mixture_train", 200, 40);
  const std::string jpeg = mnist + "/images/jpeg/train", png = mnist + "/images/png/train";
  const std::string whole = testing::scratch_dir("mixture_whole");
  CliRun r = run_cli(mixture_args(mnist, "--save " + whole + "/model.pt"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Train mixture of 2 sets, 400 samples an epoch:")) << r.output;
  EXPECT_TRUE(contains(r.output, "  " + jpeg + ": 200 samples, proportion 0.8: 320 an epoch")) << r.output;
  EXPECT_TRUE(contains(r.output, "  " + png + ": 200 samples, proportion 0.2: 80 an epoch")) << r.output;
  for (const std::string epoch : {"1", "2"}) {
    EXPECT_TRUE(contains(r.output, "Epoch " + epoch + "/2: train samples by set: " + jpeg + " 320 (80.0%), " + png +
                                       " 80 (20.0%)"))
        << r.output;
  }
  EXPECT_TRUE(contains(r.output, "3x28x28 images, 10 classes")) << r.output;

  // The same run with checkpoints every 3 steps; only step 12's is kept, as a job killed in epoch 2 leaves it.
  const std::string parts = testing::scratch_dir("mixture_parts");
  const std::string ck = parts + "/ck";
  r = run_cli(mixture_args(mnist, "--checkpoint " + ck + " --checkpoint-every 3 --keep-checkpoints 9"));
  ASSERT_EQ(r.status, 0) << r.output;
  r = testing::run_command("cd " + ck + " && for f in checkpoint-*.pt; do [ \"$f\" = checkpoint-000000012.pt ] || "
                           "rm \"$f\"; done && ls");
  ASSERT_EQ(r.status, 0) << r.output;
  ASSERT_TRUE(contains(r.output, "checkpoint-000000012.pt")) << r.output;
  const std::string resumed = testing::scratch_dir("mixture_resumed");
  r = run_cli(mixture_args(mnist, "--resume " + ck + " --save " + resumed + "/model.pt"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Resuming from " + ck + "/checkpoint-000000012.pt: epoch 2, step 2")) << r.output;
  EXPECT_EQ(testing::file_bytes(resumed + "/model.pt"), testing::file_bytes(whole + "/model.pt"));
}

// The same job killed outright (SIGKILL, no chance to stop cleanly) after its first checkpoints, then run again
// with the same command line: --resume auto takes the newest checkpoint, and the job ends with the uninterrupted
// run's model byte for byte.
TEST(MixtureCli, AKilledJobRunAgainEndsWithTheUninterruptedModel) {
  using namespace std::chrono_literals;
  const std::string mnist = prepare_mnist("mixture_kill", 200, 40);
  const std::string dir = testing::scratch_dir("mixture_kill_runs");
  CliRun r = run_cli(mixture_args(mnist, "--save " + dir + "/whole.pt"));
  ASSERT_EQ(r.status, 0) << r.output;

  std::vector<std::string> job{FEEDLINE_CLI};
  std::istringstream words(mixture_args(mnist, "--checkpoint " + dir + "/ck --checkpoint-every 3 --resume auto "
                                               "--save " + dir + "/resumed.pt"));
  for (std::string w; words >> w;) job.push_back(w);
  auto run = testing::start(job, {}, dir + "/killed.out");
  ASSERT_TRUE(run->wait_for_output("Checkpoint: epoch 1, step 3 ", 120s)) << run->output();
  ::kill(run->pid, SIGKILL);
  const auto killed = run->wait_for(60s);
  ASSERT_TRUE(killed && WIFSIGNALED(*killed) && WTERMSIG(*killed) == SIGKILL) << testing::ended(killed);
  ASSERT_FALSE(std::filesystem::exists(dir + "/resumed.pt")) << "the job ended before the kill\n" << run->output();

  run = testing::start(job, {}, dir + "/resumed.out");
  const auto done = run->wait_for(180s);
  ASSERT_TRUE(done && WIFEXITED(*done) && WEXITSTATUS(*done) == 0) << testing::ended(done) << "\n" << run->output();
  EXPECT_TRUE(contains(run->output(), "Resuming from " + dir + "/ck/checkpoint-")) << run->output();
  EXPECT_EQ(testing::file_bytes(dir + "/resumed.pt"), testing::file_bytes(dir + "/whole.pt"));
}

TEST(MixtureCli, DataParallelRanksReportTheEpochsSamplesBySet) {
  const std::string mnist = prepare_mnist("mixture_ranks", 200, 40);
  const std::string jpeg = mnist + "/images/jpeg/train", png = mnist + "/images/png/train";
  const CliRun r = run_cli(mixture_args(mnist, "--nproc 2 --dist-backend gloo", 1));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Data-parallel: 2 ranks")) << r.output;
  // Both ranks' samples, summed: the whole epoch's.
  EXPECT_TRUE(contains(r.output, "Epoch 1/1: train samples by set: " + jpeg + " 320 (80.0%), " + png + " 80 (20.0%)"))
      << r.output;
}

TEST(MixtureCli, TablesMixByRepeatAndCount) {
  const std::string mnist = prepare_mnist("mixture_tables", 120, 40);
  const std::string parquet = mnist + "/train.parquet", csv = mnist + "/train.csv";
  const std::string common = "train --device cpu --data " + parquet + " --data " + csv + " --test-data " + mnist +
                             "/test.parquet --batch-size 30 --epochs 1 ";
  CliRun r = run_cli(common + "--mix-by repeat --mix 1,0.5");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Train mixture of 2 sets, 180 samples an epoch:")) << r.output;
  EXPECT_TRUE(contains(r.output, "  " + csv + ": 120 samples, repeat 0.5: 60 an epoch")) << r.output;
  EXPECT_TRUE(contains(r.output, "Epoch 1/1: train samples by set: " + parquet + " 120 (66.7%), " + csv +
                                     " 60 (33.3%)"))
      << r.output;

  r = run_cli(common + "--mix-by count --mix 90,30");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Epoch 1/1: train samples by set: " + parquet + " 90 (75.0%), " + csv +
                                     " 30 (25.0%)"))
      << r.output;

  // Without --mix: each set once an epoch, one after another's samples in the shuffle.
  r = run_cli(common);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Train mixture of 2 sets, 240 samples an epoch:")) << r.output;
  EXPECT_TRUE(contains(r.output, "  " + parquet + ": 120 samples, repeat 1: 120 an epoch")) << r.output;
}

TEST(MixtureCli, WeightsThatCannotWorkAreRefusedByName) {
  const std::string mnist = prepare_mnist("mixture_refused", 60, 20);
  const std::string a = mnist + "/images/jpeg/train", b = mnist + "/images/png/train";
  const std::string test = " --test-data " + mnist + "/images/png/test --image-size 28 --device cpu --epochs 1";
  CliRun r = run_cli("train --data " + a + " --mix 1" + test);
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--mix weighs the sets of a mixture: give --data more than once")) << r.output;
  r = run_cli("train --data " + a + " --data " + b + " --mix 0.8" + test);
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--mix has 1 value and --data is given 2 times")) << r.output;
  r = run_cli("train --data " + a + " --data " + b + " --mix 0.8,-1" + test);
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--mix")) << r.output;
  r = run_cli("train --data " + a + " --data " + b + " --mix-by count --mix 10.5,3" + test);
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--mix-by count takes whole numbers of samples, not 10.5")) << r.output;
  r = run_cli("train --data " + a + " --epoch-size 100" + test);
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--epoch-size sets a mixture's samples an epoch")) << r.output;
  // A set that is not there is named.
  r = run_cli("train --data " + a + " --data " + mnist + "/no-such-folder" + test);
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--data " + mnist + "/no-such-folder")) << r.output;
}

TEST(MixtureCli, InspectShowsEachSetsShareOfTheEpoch) {
  const std::string mnist = prepare_mnist("mixture_inspect", 60, 20);
  const std::string a = mnist + "/images/jpeg/train", b = mnist + "/images/shards/train-000000.tar";
  CliRun r = run_cli("inspect " + a + " " + b + " " + mnist + "/train.parquet --mix 0.5,0.3,0.2 --epoch-size 100");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Mixture of 3 sets: 100 samples an epoch (of 180 in all)")) << r.output;
  EXPECT_TRUE(contains(r.output, "proportion 0.5")) << r.output;
  EXPECT_TRUE(contains(r.output, "50.0%")) << r.output;
  EXPECT_TRUE(contains(r.output, "30.0%")) << r.output;

  r = run_cli("inspect " + a + " " + b + " --mix-by repeat --mix 1,2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Mixture of 2 sets: 180 samples an epoch (of 120 in all)")) << r.output;

  r = run_cli("inspect " + a + " --mix 1");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "give more than one file")) << r.output;
  r = run_cli("inspect " + a + " " + b + " --mix 1,2,3");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--mix has 3 values for 2 files")) << r.output;
}

}  // namespace
}  // namespace feedline
