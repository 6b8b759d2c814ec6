// feedline_example TRAIN.parquet TEST.parquet [EPOCHS [BATCH]]: the experiment's recipe through feedline's
// library, from a project of its own (EPOCHS 1 and BATCH 512 unless given). Reads an MNIST-shaped pair of
// Parquet files (a `label` column and 784 pixel columns, as `feedline prepare` writes them), decodes each once
// into tensors, and trains SimpleCNN with Adam, reporting as the experiment did.
#include <feedline/feedline.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

namespace {

std::shared_ptr<feedline::TensorDataset> load(const std::string& path) {
  const feedline::Table table = feedline::parquet::read_table(path);
  const feedline::ImageTensors t = feedline::decode_image_table(table);  // [N,1,28,28] float in [0,1], [N] int64
  return std::make_shared<feedline::TensorDataset>(t.images, t.labels);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 5) {
    std::fprintf(stderr, "usage: %s TRAIN.parquet TEST.parquet [EPOCHS (1) [BATCH (512)]]\n", argv[0]);
    return 2;
  }
  try {
    const int64_t epochs = argc > 3 ? std::strtoll(argv[3], nullptr, 10) : 1;
    if (epochs < 1) throw feedline::InvalidArgument(std::string("EPOCHS must be at least 1, not ") + argv[3]);
    const int64_t batch = argc > 4 ? std::strtoll(argv[4], nullptr, 10) : 512;
    if (batch < 1) throw feedline::InvalidArgument(std::string("BATCH must be at least 1, not ") + argv[4]);
    // The process settings the feedline tool applies (what they are worth on a CPU epoch: docs/BENCHMARKS.md):
    // freed memory kept for the next step, OpenBLAS on one thread inside each of LibTorch's, every core.
    feedline::apply_process_settings();
    torch::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    torch::manual_seed(42);

    auto train_set = load(argv[1]);
    auto test_set = load(argv[2]);
    feedline::Loader train(train_set, feedline::LoaderOptions(batch).shuffle(true).num_workers(2).seed(42));
    feedline::Loader test(test_set, feedline::LoaderOptions(batch));

    feedline::TrainOptions options;
    options.epochs = epochs;
    options.device = feedline::resolve_device("auto");
    feedline::SimpleCNN model;  // train_model moves it to the device
    std::printf("SimpleCNN: %lld parameters; %lld train and %lld test samples; device %s\n",
                static_cast<long long>(feedline::parameter_count(*model)), static_cast<long long>(train_set->size()),
                static_cast<long long>(test_set->size()), options.device.str().c_str());

    double train_seconds = 0, test_seconds = 0, accuracy = 0;
    for (const feedline::EpochResult& r : feedline::train_model(model, train, test, options)) {
      std::printf("Epoch %lld: train %.2fs (loss %.4f, data wait %.1f%%), test %.2fs, test accuracy %.2f%%\n",
                  static_cast<long long>(r.epoch), r.train_seconds, r.train_loss, 100 * r.data_wait_share(),
                  r.test_seconds, 100 * r.test_accuracy);
      train_seconds += r.train_seconds;
      test_seconds += r.test_seconds;
      accuracy = r.test_accuracy;
    }
    std::printf("Average Train Time per Epoch: %.2fs\n", train_seconds / static_cast<double>(epochs));
    std::printf("Average Test Time per Epoch: %.2fs\n", test_seconds / static_cast<double>(epochs));
    std::printf("Total Train Time: %.2fs\n", train_seconds);
    std::printf("Total Test Time: %.2fs\n", test_seconds);
    std::printf("Test Accuracy: %.2f%%\n", 100 * accuracy);
    return 0;
  } catch (const std::exception& e) {  // feedline::Error names the file and the problem
    std::fprintf(stderr, "feedline_example: %s\n", e.what());
    return 1;
  }
}
