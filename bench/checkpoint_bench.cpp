// checkpoint_bench: what checkpoints cost a training run. Trains SimpleCNN on FashionMNIST's training images
// (Debian's dataset-fashion-mnist) with no checkpoints, with a checkpoint every few steps written on the training
// thread, and the same written in the background (TrainOptions::async_checkpoints), in alternating rounds, and
// prints each round's wall time and the medians.
//
//   feedline_checkpoint_bench [--samples N] [--batch-size B] [--every K] [--rounds R] [--threads T] [--dir DIR]
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "feedline/dataset/dataset.h"
#include "feedline/io/file.h"
#include "feedline/io/idx.h"
#include "feedline/loader/loader.h"
#include "feedline/train/models.h"
#include "feedline/train/train.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> args = {{"--samples", "12800"}, {"--batch-size", "64"}, {"--every", "5"},
                                             {"--rounds", "3"},      {"--threads", "0"},     {"--dir", ""}};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (args.count(argv[i]) == 0) {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
    args[argv[i]] = argv[i + 1];
  }
  const int64_t samples = std::stoll(args["--samples"]), batch = std::stoll(args["--batch-size"]),
                every = std::stoll(args["--every"]), rounds = std::stoll(args["--rounds"]);
  if (const int64_t threads = std::stoll(args["--threads"]); threads > 0) torch::set_num_threads(threads);
  const std::string dir = args["--dir"].empty() ? "/tmp/feedline_checkpoint_bench" : args["--dir"];

  using namespace feedline;
  apply_process_settings();  // as feedline-torch train does
  const std::string data = "/usr/share/datasets/fashion-mnist";
  const ImageTensors all = decode_image_table(image_split_to_table(
      read_idx_split(data + "/train-images-idx3-ubyte.gz", data + "/train-labels-idx1-ubyte.gz")));
  const int64_t n = std::min(samples, all.images.size(0));
  auto train_set = std::make_shared<TensorDataset>(all.images.narrow(0, 0, n), all.labels.narrow(0, 0, n));
  auto test_set = std::make_shared<TensorDataset>(all.images.narrow(0, n, batch), all.labels.narrow(0, n, batch));

  const int64_t steps = (n + batch - 1) / batch;
  std::printf("checkpoint_bench: %lld samples, batches of %lld (%lld steps), a checkpoint every %lld steps "
              "(%lld), %d threads, %lld rounds, into %s\n",
              static_cast<long long>(n), static_cast<long long>(batch), static_cast<long long>(steps),
              static_cast<long long>(every), static_cast<long long>(steps / every), torch::get_num_threads(),
              static_cast<long long>(rounds), dir.c_str());
  const std::vector<std::string> modes = {"none", "sync", "async"};
  std::map<std::string, std::vector<double>> seconds, held;
  for (int64_t round = 1; round <= rounds; ++round) {
    for (const auto& mode : modes) {
      remove_tree(dir);
      torch::manual_seed(1);
      SimpleCNN model;
      Loader train(train_set, LoaderOptions(batch).shuffle(true).seed(1));
      Loader test(test_set, LoaderOptions(batch));
      TrainOptions o;
      o.epochs = 1;
      if (mode != "none") {
        o.checkpoint_dir = dir;
        o.checkpoint_every = every;
        o.async_checkpoints = mode == "async";
      }
      // The time between one step's end and the next's: a checkpoint due after step k lengthens the gap after it
      // by what it holds the training thread for. Medians, so that a stall of the machine's other work weighs
      // little.
      std::vector<std::chrono::steady_clock::time_point> ends;
      TrainCallbacks callbacks;
      callbacks.on_train_step = [&](int64_t, int64_t, int64_t, double) {
        ends.push_back(std::chrono::steady_clock::now());
      };
      const auto start = std::chrono::steady_clock::now();
      train_model(model, train, test, o, callbacks);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      seconds[mode].push_back(s);
      std::vector<double> after_checkpoint, after_others;
      for (size_t i = 0; i + 1 < ends.size(); ++i) {
        const double gap = std::chrono::duration<double>(ends[i + 1] - ends[i]).count();
        ((i + 1) % static_cast<size_t>(every) == 0 ? after_checkpoint : after_others).push_back(gap);
      }
      held[mode].push_back(1000 * (median(after_checkpoint) - median(after_others)));
      std::printf("round %lld %-5s %.3f s, the step after a checkpoint's step %+.1f ms\n",
                  static_cast<long long>(round), mode.c_str(), s, held[mode].back());
      std::fflush(stdout);
    }
  }
  remove_tree(dir);
  // Each round's figures against the same round's run with no checkpoints, then the median over the rounds.
  const double count = static_cast<double>(steps / every);
  std::vector<double> sync_cost, async_cost, ratio;
  for (size_t i = 0; i < seconds["none"].size(); ++i) {
    sync_cost.push_back(1000 * (seconds["sync"][i] - seconds["none"][i]) / count);
    async_cost.push_back(1000 * (seconds["async"][i] - seconds["none"][i]) / count);
    ratio.push_back(seconds["async"][i] / seconds["sync"][i]);
  }
  std::printf("median: none %.3f s, sync %.3f s, async %.3f s; a checkpoint's cost, round by round: sync %.1f ms, "
              "async %.1f ms; async / sync, round by round: %.3f\n",
              median(seconds["none"]), median(seconds["sync"]), median(seconds["async"]), median(sync_cost),
              median(async_cost), median(ratio));
  std::printf("median: the training thread held by a checkpoint (the step after it, against the others): none %.1f ms, "
              "sync %.1f ms, async %.1f ms\n",
              median(held["none"]), median(held["sync"]), median(held["async"]));
  return 0;
}
