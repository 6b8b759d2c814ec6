// feedline_train_images TRAIN TEST CHECKPOINTS [EPOCHS]: a model of this program's own, trained on an image folder
// (class folders of JPEG/PNG/WebP files; Parquet or tar shards work the same) through feedline's training loop,
// with checkpoints every 5 steps in CHECKPOINTS. Run it again with the same arguments after it was killed and it
// resumes from the newest checkpoint, ending with the weights an uninterrupted run ends with. Writes the trained
// model to CHECKPOINTS/model.pt. EPOCHS: 2 unless given. With KILL_AFTER_STEP=N in the environment the process
// kills itself (SIGKILL, no chance to clean up) after training step N, as a preempted job dies.
#include <feedline/feedline.h>
#include <torch/torch.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace steps = feedline::image_steps;

namespace {

// The user's own network: two convolutions with batch norm, global average pooling, a linear classifier.
class SmallNetImpl : public torch::nn::Module {
 public:
  explicit SmallNetImpl(int64_t classes)
      : conv1_(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 16, 3).stride(2).padding(1)))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(16))),
        conv2_(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 3).stride(2).padding(1)))),
        bn2_(register_module("bn2", torch::nn::BatchNorm2d(32))),
        fc_(register_module("fc", torch::nn::Linear(32, classes))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(bn1_->forward(conv1_->forward(x)));
    x = torch::relu(bn2_->forward(conv2_->forward(x)));
    return fc_->forward(x.mean({2, 3}));
  }

 private:
  torch::nn::Conv2d conv1_, conv2_;
  torch::nn::BatchNorm2d bn1_, bn2_;
  torch::nn::Linear fc_;
};
TORCH_MODULE(SmallNet);

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: %s TRAIN TEST CHECKPOINTS [EPOCHS (2)]\n", argv[0]);
    return 2;
  }
  try {
    const std::string checkpoints = argv[3];
    auto train_source = feedline::open_image_source(argv[1]);
    auto test_source = feedline::open_image_source(argv[2]);
    auto train_set = feedline::make_image_dataset(
        train_source, {steps::RandomResizedCrop{32, 32}, steps::RandomHorizontalFlip{}, steps::ToTensor{}});
    auto test_set = feedline::make_image_dataset(test_source, {steps::Resize{{32}}, steps::CenterCrop{32, 32},
                                                               steps::ToTensor{}});
    feedline::Loader train(train_set, feedline::LoaderOptions(32).shuffle(true).num_workers(2).seed(42));
    feedline::Loader test(test_set, feedline::LoaderOptions(64).num_workers(2));

    torch::manual_seed(42);
    SmallNet model(static_cast<int64_t>(train_source->class_names().size()));
    torch::optim::SGD sgd(model->parameters(),
                          torch::optim::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(1e-4));

    feedline::TrainOptions options;
    options.epochs = argc > 4 ? std::strtoll(argv[4], nullptr, 10) : 2;
    options.device = torch::kCPU;
    options.checkpoint_dir = checkpoints;
    options.checkpoint_every = 5;
    if (!feedline::latest_checkpoint(checkpoints).empty()) {
      options.resume_dir = checkpoints;  // killed before: go on where the newest checkpoint stands
      const feedline::CheckpointInfo at = feedline::read_checkpoint_info(checkpoints);
      std::printf("Resuming at epoch %lld, step %lld\n", static_cast<long long>(at.epoch),
                  static_cast<long long>(at.step));
    }
    feedline::Recipe recipe;
    recipe.schedule = feedline::cosine_schedule(options.epochs * train.batches_per_epoch(), 2);
    recipe.label_smoothing = 0.1;

    feedline::TrainCallbacks callbacks;
    const char* kill_after = std::getenv("KILL_AFTER_STEP");
    if (kill_after != nullptr) {
      callbacks.on_train_step = [n = std::strtoll(kill_after, nullptr, 10), steps = int64_t{0}](
                                    int64_t, int64_t, int64_t, double) mutable {
        if (++steps == n) std::raise(SIGKILL);
      };
    }
    callbacks.on_checkpoint = [](const feedline::CheckpointInfo& info, const std::string& file) {
      std::printf("Checkpoint after %lld steps: %s\n", static_cast<long long>(info.steps_done), file.c_str());
      std::fflush(stdout);
    };
    callbacks.on_epoch_end = [](const feedline::EpochResult& r) {
      std::printf("Epoch %lld: train loss %.4f, test loss %.4f, test accuracy %.2f%%\n",
                  static_cast<long long>(r.epoch), r.train_loss, r.test_loss, 100 * r.test_accuracy);
    };
    feedline::fit(model, sgd, train, test, options, recipe, callbacks);
    feedline::save_module(*model, checkpoints + "/model.pt");
    std::printf("Saved the model to %s/model.pt\n", checkpoints.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
