// Data-parallel training on c10d: ranks as threads of this process (a store of the test's own on a free loopback
// port) for the arithmetic, and as processes of the feedline tool for launching, faults and resume.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_support.h"
#include "dist/processes.h"
#include "dist/tcp_store.h"
#include "dist/thread_ranks.h"
#include "feedline/dataset/dataset.h"
#include "feedline/dist/data_parallel.h"
#include "feedline/dist/dist.h"
#include "feedline/loader/loader.h"
#include "feedline/train/models.h"
#include "feedline/train/train.h"
#include "train/float_drift.h"

namespace feedline {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::Child;
using testing::children_of;
using testing::ended;
using testing::prepared;
using testing::saved_weights;
using testing::start;
using testing::torch_program;
using testing::train_args;
using testing::on_ranks;
using testing::TestStore;

class EnvGuard {
 public:
  using Vars = std::vector<std::pair<std::string, std::string>>;
  explicit EnvGuard(const Vars& vars) {
    for (const auto& [k, v] : vars) {
      const char* old = std::getenv(k.c_str());
      saved_.emplace_back(k, old != nullptr ? std::optional<std::string>(old) : std::nullopt);
      ::setenv(k.c_str(), v.c_str(), 1);
    }
  }
  ~EnvGuard() {
    for (const auto& [k, v] : saved_) {
      if (v) {
        ::setenv(k.c_str(), v->c_str(), 1);
      } else {
        ::unsetenv(k.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(Dist, WorldComesFromTorchrunsEnvironment) {
  {
    EnvGuard env({{"WORLD_SIZE", "4"}, {"RANK", "2"}, {"LOCAL_RANK", "0"}, {"MASTER_ADDR", "10.0.0.7"},
                  {"MASTER_PORT", "29555"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                  {"TORCHELASTIC_RESTART_COUNT", "3"}});
    const auto w = dist::world_from_environment();
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->world_size, 4);
    EXPECT_EQ(w->rank, 2);
    EXPECT_EQ(w->local_rank, 0);
    EXPECT_EQ(w->master_addr, "10.0.0.7");
    EXPECT_EQ(w->master_port, 29555);
    EXPECT_TRUE(w->launcher_hosts_store);
    EXPECT_EQ(w->attempt, 3);
  }
  {
    EnvGuard env({{"WORLD_SIZE", "2"}, {"RANK", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29555"}});
    try {
      dist::world_from_environment();
      FAIL() << "a rank outside the world was taken";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("RANK=2"), std::string::npos) << e.what();
    }
  }
  {
    EnvGuard env(EnvGuard::Vars{{"WORLD_SIZE", "two"}});
    try {
      dist::world_from_environment();
      FAIL() << "WORLD_SIZE=two was taken";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("WORLD_SIZE='two'"), std::string::npos) << e.what();
    }
  }
  {
    EnvGuard env({{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_ADDR", ""}, {"MASTER_PORT", ""}});
    EXPECT_THROW(dist::world_from_environment(), InvalidArgument);
  }
}

TEST(Dist, AnUnknownOrMissingBackendIsRefusedByName) {
  TestStore store;
  dist::GroupOptions o;
  o.backend = "mpi";
  try {
    dist::ProcessGroup group(store.world(0, 1), torch::kCPU, o);
    FAIL() << "backend mpi was taken";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'mpi'"), std::string::npos) << e.what();
  }
  if (dist::available_backends().find("nccl") == std::string::npos) {
    o.backend = "nccl";
    try {
      dist::ProcessGroup group(store.world(0, 1), torch::kCPU, o);
      FAIL() << "backend nccl was taken by a LibTorch without it";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("nccl"), std::string::npos) << e.what();
    }
  }
}

TEST(Dist, RanksOnOneHostMeetInAFileStore) {
  const std::string file = testing::scratch_dir("dist_file_store") + "/store";
  {
    EnvGuard env({{"WORLD_SIZE", "2"}, {"RANK", "1"}, {"FEEDLINE_STORE_FILE", file}, {"MASTER_ADDR", ""},
                  {"MASTER_PORT", ""}});
    const auto w = dist::world_from_environment();
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->store_file, file);
  }
  std::vector<float> sums(3);
  on_ranks(3, [&](int64_t rank) {
    dist::WorldInfo w;
    w.rank = rank;
    w.world_size = 3;
    w.store_file = file;
    dist::GroupOptions o;
    o.timeout = 30s;
    dist::ProcessGroup group(w, torch::kCPU, o);
    auto t = torch::full({4}, static_cast<float>(rank + 1));
    group.allreduce_sum(t);
    sums[static_cast<size_t>(rank)] = t[3].item<float>();
    group.barrier();
  });
  for (const float v : sums) EXPECT_EQ(v, 6.0f);
}

TEST(Dist, GradientsAreAveragedOverRanksInBuckets) {
  TestStore store;
  constexpr int64_t kRanks = 3;
  std::vector<std::vector<torch::Tensor>> grads(kRanks);
  std::vector<int64_t> buckets(kRanks);
  on_ranks(kRanks, [&](int64_t rank) {
    dist::GroupOptions o;
    o.timeout = 30s;
    o.bucket_bytes = 64;  // 16 floats: the 10- and 12-float parameters land in buckets of their own
    dist::ProcessGroup group(store.world(rank, kRanks), torch::kCPU, o);
    std::vector<torch::Tensor> params{torch::zeros({2, 5}, torch::requires_grad()),
                                      torch::zeros({12}, torch::requires_grad()),
                                      torch::zeros({3}, torch::requires_grad())};
    for (size_t i = 0; i < 2; ++i) {
      params[i].mutable_grad() = torch::full(params[i].sizes(), static_cast<float>(rank * 10 + i));
    }
    // params[2] has no gradient on any rank: it takes part as zeros.
    dist::GradientAverager averager(group, params);
    buckets[static_cast<size_t>(rank)] = averager.buckets();
    averager.average();
    for (const auto& p : params) grads[static_cast<size_t>(rank)].push_back(p.grad().clone());
    group.barrier();
  });
  for (int64_t r = 0; r < kRanks; ++r) {
    EXPECT_EQ(buckets[static_cast<size_t>(r)], 2);  // {10 floats}, {12 + 3 floats}: 64 bytes hold no more
    // mean over ranks of rank*10 + i = 10 + i
    EXPECT_TRUE(torch::equal(grads[static_cast<size_t>(r)][0], torch::full({2, 5}, 10.0f)));
    EXPECT_TRUE(torch::equal(grads[static_cast<size_t>(r)][1], torch::full({12}, 11.0f)));
    EXPECT_TRUE(torch::equal(grads[static_cast<size_t>(r)][2], torch::zeros({3})));
  }
}

// A learnable little dataset: class c brightens row 2c of a 1x12x12 image.
std::shared_ptr<Dataset> little_dataset(int64_t n, uint64_t seed) {
  torch::manual_seed(seed);
  auto images = torch::rand({n, 1, 12, 12}) * 0.3;
  auto labels = torch::arange(n, torch::kInt64).remainder(5);
  for (int64_t i = 0; i < n; ++i) images[i][0][labels[i].item<int64_t>() * 2] += 0.7;
  return std::make_shared<TensorDataset>(images, labels);
}

// Ranks are threads that share the process's CPU generator: each seeds it and draws its weights from it alone.
SimpleCNN little_model(uint64_t seed) {
  static std::mutex generator;
  std::lock_guard<std::mutex> lock(generator);
  torch::manual_seed(seed);
  return SimpleCNN(SimpleCNNOptions().channels(1).height(12).width(12).classes(5));
}

// `ranks` ranks (threads of this process) on `device` over `backend` train as one process does on the same global
// batches: the same weights on every rank bit for bit, and one process's to the order of float additions, measured
// against the same process's training with its batches reordered (train/float_drift.h).
void check_ranks_train_as_one_process(int64_t ranks, torch::Device device, const std::string& backend) {
  torch::set_num_threads(1);
  const auto train_set = little_dataset(96, 1);
  const auto test_set = little_dataset(37, 2);  // odd: the ranks' test shares differ by one sample
  constexpr int64_t kGlobalBatch = 16;
  TrainOptions options;
  options.epochs = 2;
  options.device = device;

  const auto one_process = [&](const BatchTransform& reorder, std::vector<torch::Tensor>* weights) {
    SimpleCNN model = little_model(7);
    model->to(device);
    auto train_options = LoaderOptions(kGlobalBatch).shuffle(true).seed(3);
    auto test_options = LoaderOptions(kGlobalBatch);
    if (reorder) {
      train_options.transform(reorder);
      test_options.transform(reorder);
    }
    Loader train(train_set, train_options);
    Loader test(test_set, test_options);
    const auto results = train_model(model, train, test, options);
    for (const auto& p : model->parameters()) weights->push_back(p.detach().cpu().clone());
    return results;
  };
  std::vector<torch::Tensor> single_weights;
  const auto expected = one_process(nullptr, &single_weights);
  // The yardstick: the largest drift of one process's training with its batches reordered, and of its figures.
  double yardstick_drift = 0;
  std::vector<double> train_loss_gap(expected.size()), test_loss_gap(expected.size());
  for (const auto& reorder : testing::reorderings()) {
    std::vector<torch::Tensor> reordered_weights;
    const auto reordered = one_process(reorder, &reordered_weights);
    yardstick_drift = std::max(yardstick_drift, testing::relative_distance(single_weights, reordered_weights));
    for (size_t e = 0; e < expected.size(); ++e) {
      train_loss_gap[e] = std::max(train_loss_gap[e], std::abs(reordered[e].train_loss - expected[e].train_loss));
      test_loss_gap[e] = std::max(test_loss_gap[e], std::abs(reordered[e].test_loss - expected[e].test_loss));
    }
  }

  TestStore store;
  std::vector<std::vector<EpochResult>> results(static_cast<size_t>(ranks));
  std::vector<std::vector<torch::Tensor>> weights(static_cast<size_t>(ranks));
  std::vector<std::string> backends(static_cast<size_t>(ranks));
  on_ranks(ranks, [&](int64_t rank) {
    dist::GroupOptions go;
    go.timeout = 60s;
    go.backend = backend;
    dist::ProcessGroup group(store.world(rank, ranks), device, go);
    backends[static_cast<size_t>(rank)] = group.backend();
    // Ranks after the first start from other weights: the broadcast must give them rank 0's.
    SimpleCNN model = little_model(rank == 0 ? 7 : 8);
    model->to(device);
    dist::DataParallel parallel(group, *model);
    TrainOptions o = options;
    parallel.apply(o);
    Loader train(train_set,
                 LoaderOptions(kGlobalBatch / ranks).shuffle(true).seed(3).rank(rank).world_size(ranks));
    Loader test(test_set, LoaderOptions(kGlobalBatch / ranks).rank(rank).world_size(ranks).even_shards(false));
    results[static_cast<size_t>(rank)] = train_model(model, train, test, o);
    for (const auto& p : model->parameters()) weights[static_cast<size_t>(rank)].push_back(p.detach().cpu().clone());
    group.barrier();
  });

  for (size_t r = 0; r < static_cast<size_t>(ranks); ++r) {
    EXPECT_EQ(backends[r], backend == "auto" ? backends[0] : backend);
    ASSERT_EQ(weights[r].size(), single_weights.size());
    // Every rank holds the same weights, bit for bit: they took the same averaged steps.
    for (size_t i = 0; i < weights[r].size(); ++i) {
      EXPECT_TRUE(torch::equal(weights[r][i], weights[0][i])) << "rank " << r << ", parameter " << i;
    }
    // And one process's, to the order of float additions (a sum of two halves against one sum).
    const double drift = testing::relative_distance(single_weights, weights[r]);
    EXPECT_LE(drift, testing::kDriftFactor * yardstick_drift)
        << "rank " << r << ": " << drift << " from one process's weights; one process with its batches reordered: "
        << yardstick_drift;
    ASSERT_EQ(results[r].size(), expected.size());
    for (size_t e = 0; e < expected.size(); ++e) {
      const auto& got = results[r][e];
      EXPECT_EQ(got.test_accuracy, results[0][e].test_accuracy);  // summed counts: the same on every rank
      EXPECT_NEAR(got.test_accuracy, expected[e].test_accuracy, 1.0 / 37 + 1e-9);
      EXPECT_NEAR(got.train_loss, expected[e].train_loss, testing::allowed_gap(train_loss_gap[e], expected[e].train_loss))
          << "epoch " << e + 1;
      EXPECT_NEAR(got.test_loss, expected[e].test_loss, testing::allowed_gap(test_loss_gap[e], expected[e].test_loss))
          << "epoch " << e + 1;
    }
  }
}

TEST(Dist, TwoRanksTrainAsOneProcessOnTheSameGlobalBatches) {
  check_ranks_train_as_one_process(2, torch::kCPU, "auto");
}

// On a GPU, Gloo carries CUDA tensors: two ranks sharing one GPU (as a machine with one GPU runs a job of two).
TEST(Dist, TwoRanksOnOneGpuOverGlooTrainAsOneProcess) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  check_ranks_train_as_one_process(2, torch::Device(torch::kCUDA, 0), "gloo");
}

// NCCL takes one GPU a rank: on a machine of one GPU, a group of one, whose broadcast and allreduce go through
// NCCL all the same.
TEST(Dist, ARankOnNcclTrainsAsOneProcess) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  if (dist::available_backends().find("nccl") == std::string::npos) {
    GTEST_SKIP() << "this LibTorch build has no NCCL (it has " << dist::available_backends() << ")";
  }
  check_ranks_train_as_one_process(1, torch::Device(torch::kCUDA, 0), "nccl");
}

// ------------------------------------------------------------------------------------- ranks as processes

// Rank `victim` of two is killed (or stopped) mid-training; the other must end non-zero, in well under 30 s,
// naming it.
void strike_a_rank(int sig, int64_t victim) {
  const std::string idx = prepared("dist_strike_" + std::to_string(sig) + "_" + std::to_string(victim), 2000, 100);
  TestStore store;
  std::vector<std::unique_ptr<Child>> ranks;
  for (int64_t r = 0; r < 2; ++r) {
    auto args = train_args(torch_program(), idx, 1000);
    args.insert(args.end(), {"--dist-timeout", "5"});
    ranks.push_back(start(args,
                          {"RANK=" + std::to_string(r), "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1",
                           "MASTER_PORT=" + std::to_string(store.store->getPort()), "TORCHELASTIC_USE_AGENT_STORE=True"},
                          idx + "/rank" + std::to_string(r) + ".out"));
  }
  ASSERT_TRUE(ranks[0]->wait_for_output("Epoch 1/", 60s)) << ranks[0]->output() << ranks[1]->output();
  ::kill(ranks[static_cast<size_t>(victim)]->pid, sig);
  const auto struck = Clock::now();
  auto& survivor = *ranks[static_cast<size_t>(1 - victim)];
  const auto status = survivor.wait_for(30s);
  ASSERT_TRUE(status.has_value()) << "rank " << 1 - victim << " still runs 30 s after rank " << victim << " was struck";
  EXPECT_LT(Clock::now() - struck, 30s);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) != 0) << ended(status) << "\n" << survivor.output();
  EXPECT_NE(survivor.output().find("rank " + std::to_string(victim)), std::string::npos) << survivor.output();
}

TEST(DistProcesses, AKilledRankEndsTheJobNamingIt) {
  strike_a_rank(SIGKILL, 1);
  strike_a_rank(SIGKILL, 0);  // rank 0 here is not the store's host: the survivor still finds it
}

TEST(DistProcesses, AStoppedRankEndsTheJobNamingIt) { strike_a_rank(SIGSTOP, 1); }

TEST(DistProcesses, TheLauncherNamesAFailedRankAndStopsTheOthers) {
  const std::string idx = prepared("dist_launcher", 2000, 100);
  auto args = train_args(FEEDLINE_CLI, idx, 1000);
  args.insert(args.end(), {"--nproc", "2", "--dist-timeout", "5"});
  auto launcher = start(args, {}, idx + "/launcher.out");
  ASSERT_TRUE(launcher->wait_for_output("Epoch 1/", 60s)) << launcher->output();
  const auto ranks = children_of(launcher->pid);
  ASSERT_EQ(ranks.size(), 2u) << launcher->output();
  ::kill(ranks[1], SIGKILL);
  const auto status = launcher->wait_for(30s);
  ASSERT_TRUE(status.has_value()) << "the launcher still runs 30 s after a rank was killed";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 128 + SIGKILL)
      << ended(status) << "\n" << launcher->output();
  EXPECT_NE(launcher->output().find("rank 1 (pid " + std::to_string(ranks[1]) + ") was killed by signal 9"),
            std::string::npos)
      << launcher->output();
  for (const pid_t p : ranks) EXPECT_NE(::kill(p, 0), 0) << "rank pid " << p << " outlived its launcher";
}

TEST(DistProcesses, InterruptingTheLauncherStopsEveryRank) {
  const std::string idx = prepared("dist_interrupt", 2000, 100);
  auto args = train_args(FEEDLINE_CLI, idx, 1000);
  args.insert(args.end(), {"--nproc", "2"});
  auto launcher = start(args, {}, idx + "/launcher.out");
  ASSERT_TRUE(launcher->wait_for_output("Epoch 1/", 60s)) << launcher->output();
  const auto ranks = children_of(launcher->pid);
  ASSERT_EQ(ranks.size(), 2u);
  ::kill(launcher->pid, SIGINT);
  const auto status = launcher->wait_for(30s);
  ASSERT_TRUE(status.has_value()) << "the launcher still runs 30 s after SIGINT";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 128 + SIGINT)
      << ended(status) << "\n" << launcher->output();
  for (const pid_t p : ranks) EXPECT_NE(::kill(p, 0), 0) << "rank pid " << p << " outlived the interrupt";
}

// Killed mid-epoch after a checkpoint, resumed from it: the final weights equal an uninterrupted run's exactly.
void resume_matches(const std::vector<std::string>& extra, const std::string& name) {
  const std::string idx = prepared(name, 6400, 100);
  auto plain = train_args(torch_program(), idx, 3);
  plain.insert(plain.end(), extra.begin(), extra.end());
  auto whole = plain;
  whole.insert(whole.end(), {"--save", idx + "/whole.pt"});
  auto run = start(whole, {}, idx + "/whole.out");
  auto status = run->wait_for(120s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << ended(status) << "\n" << run->output();

  auto checkpointed = plain;
  checkpointed.insert(checkpointed.end(),
                      {"--checkpoint", idx + "/ck", "--checkpoint-every", "30", "--save", idx + "/never.pt"});
  run = start(checkpointed, {}, idx + "/killed.out");
  // 100 steps an epoch: the checkpoint at step 120 is epoch 2's twentieth, and epochs 2 and 3 are far from done.
  ASSERT_TRUE(run->wait_for_output("Checkpoint: epoch 2, step 20", 120s)) << run->output();
  ::kill(run->pid, SIGKILL);
  run->wait_for(30s);
  EXPECT_FALSE(std::ifstream(idx + "/never.pt").good());

  auto resumed = plain;
  resumed.insert(resumed.end(), {"--resume", idx + "/ck", "--save", idx + "/resumed.pt"});
  run = start(resumed, {}, idx + "/resumed.out");
  status = run->wait_for(120s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << ended(status) << "\n" << run->output();
  EXPECT_NE(run->output().find("Resuming from"), std::string::npos) << run->output();

  const auto a = saved_weights(idx + "/whole.pt");
  const auto b = saved_weights(idx + "/resumed.pt");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
}

TEST(DistProcesses, AResumedRunEndsWithTheUninterruptedRunsWeightsBitForBit) {
  resume_matches({}, "dist_resume");
  // With workers prefetching past the checkpoint, the resumed loader still starts at the right batch.
  resume_matches({"--num-workers", "2"}, "dist_resume_workers");
}

TEST(DistProcesses, AResumedDataParallelRunEndsBitForBitToo) {
  // The launcher is killed; its ranks go with it. Rank 0 wrote the checkpoint; both ranks resume from it.
  resume_matches({"--nproc", "2"}, "dist_resume_nproc");
}

// The last line that starts with `prefix`, or "".
std::string line_of(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line, found;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) found = line;
  }
  return found;
}

TEST(DistProcesses, TwoRanksReportWhatOneProcessReports) {
  // FashionMNIST's own images (the first 1,000 train and 1,000 test): on data this easy to fit, as the synthetic
  // squares are, the loss flattens within an epoch and Adam's normalised steps on near-zero gradients carry the
  // runs' last-bit differences in summation order into differences of 1e-2 in some weights; on real images the two
  // runs stay within 1e-6 of each other.
  const std::string dir = testing::scratch_dir("dist_same");
  const auto prepare = testing::run_cli("prepare --dataset fashion-mnist --data-dir " + dir + "/data");
  ASSERT_EQ(prepare.status, 0) << prepare.output;
  const auto args = [&dir](const std::string& program) {
    return std::vector<std::string>{program, "train", "--dataset", "fashion-mnist", "--data-dir", dir + "/data",
                                    "--device", "cpu", "--threads", "1", "--batch-size", "64", "--epochs", "2",
                                    "--limit", "1000"};
  };
  auto one = args(torch_program());
  one.insert(one.end(), {"--save", dir + "/one.pt"});
  auto run = start(one, {}, dir + "/one.out");
  auto status = run->wait_for(120s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << ended(status) << "\n" << run->output();
  const std::string single = run->output();

  auto two = args(FEEDLINE_CLI);
  two.insert(two.end(), {"--nproc", "2", "--save", dir + "/two.pt"});
  run = start(two, {}, dir + "/two.out");
  status = run->wait_for(120s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << ended(status) << "\n" << run->output();
  const std::string pair = run->output();

  // Rank 0 alone speaks: the job's lines come once.
  size_t count = 0;
  for (size_t at = pair.find("Test Accuracy:"); at != std::string::npos; at = pair.find("Test Accuracy:", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 1u) << pair;
  EXPECT_NE(pair.find("Data-parallel: 2 ranks over gloo"), std::string::npos) << pair;
  // The test accuracy over the two ranks' shares is one process's, to a sample of 1,000 at most.
  const auto accuracy = [](const std::string& line) { return std::stod(line.substr(line.find(':') + 1)); };
  const std::string a = line_of(single, "Test Accuracy:"), b = line_of(pair, "Test Accuracy:");
  ASSERT_FALSE(a.empty() || b.empty()) << single << pair;
  EXPECT_NEAR(accuracy(a), accuracy(b), 100.0 / 1000 + 1e-9) << a << " / " << b;
  // The saved models: one shape. That the weights are one process's to float rounding is tested in process
  // (check_ranks_train_as_one_process), against a yardstick measured there: how far float rounding takes two runs
  // apart depends on the machine's kernels, and no constant fitted on one machine bounds it.
  const auto w1 = saved_weights(dir + "/one.pt");
  const auto w2 = saved_weights(dir + "/two.pt");
  ASSERT_EQ(w1.size(), w2.size());
  for (size_t i = 0; i < w1.size(); ++i) EXPECT_EQ(w1[i].sizes(), w2[i].sizes()) << "parameter " << i;
}

// On one GPU, a job's ranks share it: "auto" takes Gloo (NCCL wants a GPU a rank), and "nccl" is refused by name
// before any rendezvous.
TEST(DistProcesses, RanksSharingAGpuTakeGlooAndNcclIsRefused) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const std::string idx = prepared("dist_shared_gpu", 512, 128);
  auto args = train_args(FEEDLINE_CLI, idx, 1);
  args[7] = "cuda";  // --device
  args.insert(args.end(), {"--nproc", "2"});
  auto run = start(args, {}, idx + "/auto.out");
  auto status = run->wait_for(120s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << ended(status) << "\n" << run->output();
  const bool nccl_each =
      torch::cuda::device_count() >= 2 && dist::available_backends().find("nccl") != std::string::npos;
  EXPECT_NE(run->output().find(std::string("Data-parallel: 2 ranks over ") + (nccl_each ? "nccl" : "gloo")),
            std::string::npos)
      << run->output();

  if (dist::available_backends().find("nccl") == std::string::npos) return;  // refused otherwise, tested above
  args[7] = "cuda:0";  // every rank on the one GPU
  args.insert(args.end(), {"--dist-backend", "nccl"});
  run = start(args, {}, idx + "/nccl.out");
  status = run->wait_for(60s);
  ASSERT_TRUE(status) << "still running: " << run->output();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) != 0) << ended(status) << "\n" << run->output();
  EXPECT_NE(run->output().find("--dist-backend nccl needs a GPU of its own for each rank"), std::string::npos)
      << run->output();
}

}  // namespace
}  // namespace feedline
