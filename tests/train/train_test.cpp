#include "feedline/train/train.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>

#include "fashion_split.h"
#include "feedline/io/error.h"
#include "feedline/io/idx.h"
#include "feedline/train/models.h"
#include "test_paths.h"
#include "train/cuda_support.h"
#include "train/device_adam.h"
#include "train/float_drift.h"
#include "train/static_step.h"

namespace feedline {
namespace {

using testing::fashion_slice;
using testing::fashion_test_split;

TEST(Model, SavedWeightsLoadBackAndBadFilesAreNamed) {
  const std::string dir = testing::scratch_dir("model_file");
  torch::manual_seed(3);
  SimpleCNN trained;
  torch::manual_seed(4);
  SimpleCNN fresh;
  ASSERT_FALSE(torch::equal(trained->parameters()[0], fresh->parameters()[0]));
  save_module(*trained, dir + "/model.pt");
  load_module(*fresh, dir + "/model.pt");
  const auto a = trained->named_parameters(), b = fresh->named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (const auto& p : a) EXPECT_TRUE(torch::equal(p.value(), b[p.key()])) << p.key();
  const auto x = torch::rand({3, 1, 28, 28});
  EXPECT_TRUE(torch::equal(trained->forward(x), fresh->forward(x)));
  // No temporary file is left beside it.
  int64_t files = 0;  // (counted before the files below)
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 1);

  EXPECT_THROW(load_module(*fresh, dir + "/missing.pt"), IoError);
  {
    std::ofstream(dir + "/garbage.pt") << "not a model";
  }
  try {
    load_module(*fresh, dir + "/garbage.pt");
    ADD_FAILURE() << "garbage loaded";
  } catch (const InvalidFile& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/garbage.pt: not a saved model"), std::string::npos) << e.what();
  }
  // A module of another layout.
  torch::nn::Linear other(4, 2);
  save_module(*other, dir + "/linear.pt");
  EXPECT_THROW(load_module(*fresh, dir + "/linear.pt"), InvalidFile);
  // Folders are made as needed; a file in the way is an error.
  save_module(*trained, dir + "/made/for/it/model.pt");
  EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/made/for/it/model.pt"));
  EXPECT_THROW(save_module(*trained, dir + "/model.pt/inside.pt"), IoError);
}

TEST(Model, SimpleCnnMatchesTheExperimentsArchitecture) {
  SimpleCNN model;
  // conv1 16*(1*9)+16, conv2 32*(16*9)+32, fc1 128*1568+128, fc2 10*128+10
  const int64_t expected = (16 * 9 + 16) + (32 * 16 * 9 + 32) + (128 * 32 * 7 * 7 + 128) + (10 * 128 + 10);
  EXPECT_EQ(parameter_count(*model), expected);
  EXPECT_EQ(expected, 206922);
  const auto out = model->forward(torch::zeros({5, 1, 28, 28}));
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{5, 10}));
}

TEST(Model, AFileOfAnotherLayoutIsRefusedAndTheModuleKept) {
  const std::string dir = testing::scratch_dir("model_layout");
  save_module(*torch::nn::Linear(4, 3), dir + "/linear.pt");
  torch::nn::Linear other(5, 3);
  const auto weight = other->weight.clone();
  try {
    load_module(*other, dir + "/linear.pt");
    ADD_FAILURE() << "a Linear(4, 3) loaded into a Linear(5, 3)";
  } catch (const InvalidFile& e) {
    EXPECT_NE(std::string(e.what()).find("weight is [3, 4] in the file, [3, 5] here"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(torch::equal(other->weight, weight));
  EXPECT_EQ(other->forward(torch::zeros({2, 5})).sizes(), (std::vector<int64_t>{2, 3}));
}

TEST(Model, SimpleCnnTakesOtherShapesAndClassCounts) {
  struct Case {
    int64_t c, h, w, k;
  };
  for (const Case& c : {Case{3, 32, 32, 100}, Case{1, 5, 7, 2}, Case{4, 30, 17, 7}}) {
    SimpleCNN model(SimpleCNNOptions().channels(c.c).height(c.h).width(c.w).classes(c.k));
    // Each 2x2 pooling floors the size: 30 -> 15 -> 7, 17 -> 8 -> 4, 5 -> 2 -> 1.
    const int64_t flat = 32 * (c.h / 2 / 2) * (c.w / 2 / 2);
    EXPECT_EQ(parameter_count(*model), (16 * c.c * 9 + 16) + (32 * 16 * 9 + 32) + (128 * flat + 128) + (c.k * 128 + c.k));
    EXPECT_EQ(model->forward(torch::rand({2, c.c, c.h, c.w})).sizes(), (std::vector<int64_t>{2, c.k}));
    EXPECT_EQ(model->options().classes(), c.k);
  }
  EXPECT_EQ(parameter_count(*SimpleCNN(SimpleCNNOptions().channels(3).height(32).width(32).classes(100))), 280260);
  EXPECT_THROW(SimpleCNN(SimpleCNNOptions().height(3)), InvalidArgument);
  EXPECT_THROW(SimpleCNN(SimpleCNNOptions().channels(0)), InvalidArgument);
  EXPECT_THROW(SimpleCNN(SimpleCNNOptions().classes(1)), InvalidArgument);
  // The compute floor feeds the model its own shape and classes.
  SimpleCNN wide(SimpleCNNOptions().channels(3).height(12).width(12).classes(5));
  TrainOptions options;
  options.epochs = 1;
  const auto results = train_compute_floor(wide, 40, 10, 16, options);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].train_stats.samples, 40);
  EXPECT_TRUE(std::isfinite(results[0].test_loss));
}

TEST(Train, OneEpochOnASubsetBeatsChanceByAWideMargin) {
  torch::manual_seed(42);
  SimpleCNN model;
  Loader train(fashion_slice(0, 8000), LoaderOptions(64).shuffle(true).seed(42));
  Loader test(fashion_slice(8000, 2000), LoaderOptions(500));
  const auto before = evaluate(model, test, torch::kCPU);
  const auto results = train_model(model, train, test, TrainOptions{1, 1e-3, torch::kCPU});
  ASSERT_EQ(results.size(), 1u);
  const EpochResult& r = results[0];
  EXPECT_GT(r.test_accuracy, 0.60) << "chance is 0.10; an untrained model scored " << before.second;
  EXPECT_LT(r.test_loss, before.first);
  EXPECT_EQ(r.train_stats.samples, 8000);
  EXPECT_EQ(r.test_stats.samples, 2000);
  EXPECT_GT(r.train_seconds, 0);
  EXPECT_GE(r.data_wait_share(), 0);
  EXPECT_LE(r.data_wait_share(), 1);
}

TEST(Train, SameSeedGivesTheSameModelForAnyWorkerCount) {
  std::vector<torch::Tensor> reference;
  for (int64_t workers : {0, 2}) {
    torch::manual_seed(7);
    SimpleCNN model;
    Loader train(fashion_slice(0, 640), LoaderOptions(64).shuffle(true).seed(3).num_workers(workers).persistent_workers(true));
    Loader test(fashion_slice(640, 128), LoaderOptions(64));
    train_model(model, train, test, TrainOptions{2, 1e-3, torch::kCPU});
    const auto params = model->parameters();
    if (reference.empty()) {
      for (const auto& p : params) reference.push_back(p.detach().clone());
      continue;
    }
    ASSERT_EQ(params.size(), reference.size());
    for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(torch::equal(params[i], reference[i])) << "parameter " << i;
  }
}

TEST(Train, Uint8BatchesAreNormalisedOnTheDevice) {
  const auto& t = fashion_test_split();
  auto u8 = (t.images.narrow(0, 0, 256) * 255).round().to(torch::kUInt8);
  auto ds_u8 = std::make_shared<TensorDataset>(u8, t.labels.narrow(0, 0, 256));
  auto ds_f32 = std::make_shared<TensorDataset>(t.images.narrow(0, 0, 256), t.labels.narrow(0, 0, 256));
  torch::manual_seed(1);
  SimpleCNN model;
  Loader a(ds_u8, LoaderOptions(128));
  Loader b(ds_f32, LoaderOptions(128));
  const auto ra = evaluate(model, a, torch::kCPU);
  const auto rb = evaluate(model, b, torch::kCPU);
  EXPECT_NEAR(ra.first, rb.first, 1e-5);
  EXPECT_EQ(ra.second, rb.second);
}

TEST(Train, ComputeFloorTrainsOnSyntheticBatchesWithoutALoader) {
  torch::manual_seed(1);
  SimpleCNN model;
  TrainOptions options;
  options.epochs = 2;
  int64_t steps_seen = 0;
  TrainCallbacks callbacks;
  callbacks.on_train_step = [&](int64_t, int64_t, int64_t steps, double loss) {
    ++steps_seen;
    EXPECT_EQ(steps, 3);
    EXPECT_TRUE(std::isfinite(loss));
  };
  const auto before = model->parameters()[0].clone();
  const auto results = train_compute_floor(model, 70, 20, 32, options, callbacks);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(steps_seen, 6);
  for (const auto& r : results) {
    EXPECT_EQ(r.train_stats.samples, 70);
    EXPECT_EQ(r.train_stats.wait_seconds, 0.0);
    EXPECT_GT(r.train_seconds, 0.0);
    EXPECT_TRUE(std::isfinite(r.train_loss) && std::isfinite(r.test_loss));
    EXPECT_GE(r.test_accuracy, 0.0);
    EXPECT_LE(r.test_accuracy, 1.0);
  }
  EXPECT_FALSE(torch::equal(before, model->parameters()[0])) << "the optimizer never stepped";
  EXPECT_THROW(train_compute_floor(model, 0, 10, 32, options), InvalidArgument);
}

// The floor on a dataset's own images trains on exactly those, in order: the same model as train_model with an
// unshuffled loader over them, and the synthetic floor is this floor on noise made from the seed.
TEST(Train, ComputeFloorOnGivenImagesTrainsOnThem) {
  const auto& t = fashion_test_split();
  const auto train_x = t.images.narrow(0, 0, 3000), train_y = t.labels.narrow(0, 0, 3000);
  const auto test_x = t.images.narrow(0, 3000, 1000), test_y = t.labels.narrow(0, 3000, 1000);
  TrainOptions options;
  options.epochs = 1;
  torch::manual_seed(5);
  SimpleCNN floor_model;
  const auto floor = train_compute_floor(floor_model, train_x, train_y, test_x, test_y, 100, options);
  torch::manual_seed(5);
  SimpleCNN loader_model;
  Loader train(std::make_shared<TensorDataset>(train_x, train_y), LoaderOptions(100).shuffle(false).batch_fetch(true));
  Loader test(std::make_shared<TensorDataset>(test_x, test_y), LoaderOptions(100).batch_fetch(true));
  const auto loaded = train_model(loader_model, train, test, options);
  ASSERT_EQ(floor.size(), 1u);
  EXPECT_EQ(floor[0].train_stats.samples, 3000);
  EXPECT_EQ(floor[0].test_stats.samples, 1000);
  EXPECT_GT(floor[0].test_accuracy, 0.5) << "chance is 0.10: the floor did not learn from the images";
  EXPECT_DOUBLE_EQ(floor[0].test_accuracy, loaded[0].test_accuracy);
  EXPECT_NEAR(floor[0].train_loss, loaded[0].train_loss, 1e-5);
  for (size_t p = 0; p < floor_model->parameters().size(); ++p) {
    EXPECT_TRUE(torch::allclose(floor_model->parameters()[p], loader_model->parameters()[p])) << "parameter " << p;
  }

  torch::manual_seed(9);
  SimpleCNN synthetic_model;
  const auto synthetic = train_compute_floor(synthetic_model, 70, 20, 32, options);
  torch::manual_seed(9);
  SimpleCNN given_model;
  const auto noise = [](int64_t n) { return torch::rand({n, 1, 28, 28}); };
  const auto classes = [](int64_t n) { return torch::randint(10, {n}, torch::kInt64); };
  const auto nx = noise(70), ny = classes(70), mx = noise(20), my = classes(20);
  const auto given = train_compute_floor(given_model, nx, ny, mx, my, 32, options);
  EXPECT_DOUBLE_EQ(synthetic[0].train_loss, given[0].train_loss);
  EXPECT_TRUE(torch::equal(synthetic_model->parameters()[0], given_model->parameters()[0]));

  // Data the model cannot take is refused, saying what it needs.
  const auto refuses = [&](const torch::Tensor& x, const torch::Tensor& y, const std::string& says) {
    try {
      train_compute_floor(given_model, x, y, mx, my, 32, options);
      ADD_FAILURE() << "accepted: " << says;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refuses(nx.to(torch::kUInt8), ny, "train images must be float32 [N, 1, 28, 28]");
  refuses(nx.view({70, 1, 784}), ny, "train images must be float32 [N, 1, 28, 28]");
  refuses(nx.narrow(0, 0, 0), ny.narrow(0, 0, 0), "with N at least 1");
  refuses(nx, ny.narrow(0, 0, 69), "train labels must be int64 [70]");
  refuses(nx, ny.to(torch::kInt32), "train labels must be int64 [70]");
  refuses(nx.to(torch::Device(torch::kMeta)), ny, "train data must be on cpu already, not meta");
  EXPECT_THROW(train_compute_floor(given_model, nx, ny, mx, my, 0, options), InvalidArgument);
}

TEST(Train, RejectsBadDevicesAndOptions) {
  EXPECT_THROW(resolve_device("tpu"), InvalidArgument);
  EXPECT_EQ(resolve_device("cpu"), torch::Device(torch::kCPU));
  if (!torch::cuda::is_available()) {
    EXPECT_THROW(resolve_device("cuda"), InvalidArgument);
    EXPECT_EQ(resolve_device("auto"), torch::Device(torch::kCPU));
  } else {
    EXPECT_TRUE(resolve_device("auto").is_cuda());
  }
  SimpleCNN model;
  Loader l(fashion_slice(0, 64), LoaderOptions(64));
  EXPECT_THROW(train_model(model, l, l, TrainOptions{0, 1e-3, torch::kCPU}), InvalidArgument);
  EXPECT_THROW(train_model(model, l, l, TrainOptions{1, -1.0, torch::kCPU}), InvalidArgument);
}

// The same model's parameters, copied.
std::vector<torch::Tensor> parameters_of(SimpleCNN& model) {
  std::vector<torch::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.detach().to(torch::kCPU).clone());
  return out;
}

std::vector<torch::Tensor> parameters_of_tensors(const std::vector<torch::Tensor>& tensors) {
  std::vector<torch::Tensor> out;
  for (const auto& p : tensors) out.push_back(p.detach().to(torch::kCPU).clone());
  return out;
}

void expect_close(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b, double rtol, double atol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a[i], b[i], rtol, atol))
        << "parameter " << i << ": largest difference " << (a[i] - b[i]).abs().max().item<double>();
  }
}

TEST(DeviceAdam, TakesTorchAdamsStepsAndResetsToANewOptimizer) {
  torch::manual_seed(3);
  const std::vector<int64_t> shapes[] = {{8, 5}, {8}, {3, 2, 2}};
  std::vector<torch::Tensor> ours, theirs;
  for (const auto& shape : shapes) {
    ours.push_back(torch::randn(shape).requires_grad_());
    theirs.push_back(ours.back().detach().clone().requires_grad_());
  }
  const auto start = parameters_of_tensors(ours);
  auto adam = std::make_unique<detail::DeviceAdam>(ours, 0.01);
  // The parameters keep their values, in one buffer; each has a gradient, zeroed.
  expect_close(parameters_of_tensors(ours), start, 0, 0);
  EXPECT_TRUE(ours[0].is_alias_of(ours[2]));
  for (const auto& p : ours) EXPECT_EQ(p.grad().abs().sum().item<double>(), 0.0);
  torch::optim::Adam first(theirs, torch::optim::AdamOptions(0.01));
  torch::optim::Adam* reference = &first;
  // Gradients from autograd, of varied sign and size, the same for both: backward adds into our gradients in
  // place, where the update reads them.
  const auto run = [&](int steps) {
    for (int s = 0; s < steps; ++s) {
      adam->zero_grad();
      reference->zero_grad();
      std::vector<torch::Tensor> weights;
      for (const auto& p : ours) weights.push_back(torch::randn(p.sizes()) * (s % 5 + 1));
      const auto loss = [&](const std::vector<torch::Tensor>& params) {
        auto sum = torch::zeros({});
        for (size_t i = 0; i < params.size(); ++i) sum = sum + (params[i] * weights[i]).sum() + params[i].pow(2).sum();
        return sum;
      };
      loss(ours).backward();
      loss(theirs).backward();
      expect_close(parameters_of_tensors({ours[1].grad()}), parameters_of_tensors({theirs[1].grad()}), 1e-6, 1e-6);
      adam->step();
      reference->step();
    }
  };
  run(60);
  expect_close(parameters_of_tensors(ours), parameters_of_tensors(theirs), 1e-5, 1e-6);
  EXPECT_FALSE(torch::allclose(ours[0], start[0])) << "the parameters never moved";

  // After reset(), the same steps from the same point as a brand-new torch Adam.
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < ours.size(); ++i) ours[i].copy_(start[i]), theirs[i].copy_(start[i]);
  }
  adam->reset();
  torch::optim::Adam fresh(theirs, torch::optim::AdamOptions(0.01));
  reference = &fresh;
  run(10);
  expect_close(parameters_of_tensors(ours), parameters_of_tensors(theirs), 1e-5, 1e-6);

  // A gradient replaced behind its back (set to none, as torch's zero_grad does) is refused, not ignored.
  const auto kept = ours[1].grad();
  ours[1].mutable_grad() = torch::Tensor();
  EXPECT_THROW(adam->step(), std::logic_error);
  ours[1].mutable_grad() = kept;
  EXPECT_NO_THROW(adam->step());

  // Gone, it leaves each parameter its own memory and its values.
  const auto last = parameters_of_tensors(ours);
  adam = nullptr;
  EXPECT_FALSE(ours[0].is_alias_of(ours[2]));
  EXPECT_FALSE(ours[0].grad().is_alias_of(ours[2].grad()));
  expect_close(parameters_of_tensors(ours), last, 0, 0);

  EXPECT_THROW(detail::DeviceAdam({}, 0.01), InvalidArgument);
  EXPECT_THROW(detail::DeviceAdam(ours, 0.0), InvalidArgument);
  EXPECT_THROW(detail::DeviceAdam({ours[0], ours[0]}, 0.01), InvalidArgument);
  EXPECT_THROW(detail::DeviceAdam({ours[0], torch::zeros({2}, torch::kFloat64)}, 0.01), InvalidArgument);
  EXPECT_THROW(detail::DeviceAdam({torch::zeros({2}, torch::kInt64)}, 0.01), InvalidArgument);
}

// The CUDA-graph path's static step, run uncaptured on the CPU, against the experiment's eager step: the same
// batches (650 samples in batches of 64, so the last one is short and takes the uncaptured branch on CUDA too)
// must give the same model and figures, to the order of float additions (measured against the eager step on the
// same batches reordered: train/float_drift.h). uint8 images, normalised inside the step, as the best rungs use them.
TEST(Train, StaticStepMatchesTheEagerStep) {
  const auto& t = fashion_test_split();
  const auto u8 = (t.images.narrow(0, 0, 800) * 255).round().to(torch::kUInt8);
  const auto train_set = std::make_shared<TensorDataset>(u8.narrow(0, 0, 650), t.labels.narrow(0, 0, 650));
  const auto test_set = std::make_shared<TensorDataset>(u8.narrow(0, 650, 150), t.labels.narrow(0, 650, 150));
  const auto train = [&](bool static_step, const BatchTransform& reorder, std::vector<torch::Tensor>* params) {
    torch::manual_seed(11);
    SimpleCNN model;
    auto train_options = LoaderOptions(64).shuffle(true).seed(5);
    auto test_options = LoaderOptions(64);
    if (reorder) {
      train_options.transform(reorder);
      test_options.transform(reorder);
    }
    Loader train_loader(train_set, train_options);
    Loader test_loader(test_set, test_options);
    const TrainOptions options{2, 1e-3, torch::kCPU};
    auto results = static_step ? detail::train_static(model, train_loader, test_loader, options, {}, /*capture=*/false)
                               : train_model(model, train_loader, test_loader, options);
    *params = parameters_of(model);
    return results;
  };
  std::vector<torch::Tensor> eager_params, static_params;
  const auto eager = train(false, nullptr, &eager_params);
  const auto fixed = train(true, nullptr, &static_params);
  ASSERT_EQ(eager.size(), 2u);
  ASSERT_EQ(fixed.size(), 2u);
  // The yardstick: the eager step on its batches reordered.
  double yardstick = 0;
  std::vector<double> train_loss_gap(2), test_loss_gap(2);
  for (const auto& reorder : testing::reorderings()) {
    std::vector<torch::Tensor> params;
    const auto reordered = train(false, reorder, &params);
    yardstick = std::max(yardstick, testing::relative_distance(eager_params, params));
    for (size_t e = 0; e < 2; ++e) {
      train_loss_gap[e] = std::max(train_loss_gap[e], std::abs(reordered[e].train_loss - eager[e].train_loss));
      test_loss_gap[e] = std::max(test_loss_gap[e], std::abs(reordered[e].test_loss - eager[e].test_loss));
    }
  }
  const double drift = testing::relative_distance(eager_params, static_params);
  EXPECT_LE(drift, testing::kDriftFactor * yardstick)
      << "the static step ends " << drift << " from the eager one; the eager step on reordered batches " << yardstick;
  for (size_t e = 0; e < 2; ++e) {
    EXPECT_NEAR(fixed[e].train_loss, eager[e].train_loss, testing::allowed_gap(train_loss_gap[e], eager[e].train_loss))
        << "epoch " << e + 1;
    EXPECT_NEAR(fixed[e].test_loss, eager[e].test_loss, testing::allowed_gap(test_loss_gap[e], eager[e].test_loss))
        << "epoch " << e + 1;
    EXPECT_NEAR(fixed[e].test_accuracy, eager[e].test_accuracy, 1.5 / 150) << "epoch " << e + 1;
    EXPECT_EQ(fixed[e].train_stats.samples, 650);
    EXPECT_EQ(fixed[e].test_stats.samples, 150);
    EXPECT_EQ(fixed[e].capture_seconds, 0.0);
    EXPECT_EQ(fixed[e].train_graph_replays, 0) << "nothing was captured";
  }
  EXPECT_LT(fixed[1].train_loss, fixed[0].train_loss) << "the static step did not learn";
}

TEST(Train, CudaGraphStepNeedsACudaDevice) {
  SimpleCNN model;
  Loader l(fashion_slice(0, 64), LoaderOptions(64));
  TrainOptions options{1, 1e-3, torch::kCPU};
  options.cuda_graph = true;
  EXPECT_THROW(train_model(model, l, l, options), InvalidArgument);
  EXPECT_THROW(train_compute_floor(model, 64, 64, 32, options), InvalidArgument);
  if (!detail::cuda_graphs_built()) {
    EXPECT_THROW(detail::CudaGraph{torch::Device(torch::kCUDA)}, Unsupported);
    EXPECT_EQ(detail::cuda_device_name(torch::Device(torch::kCUDA)), "");
  } else if (!torch::cuda::is_available()) {
    EXPECT_THROW(detail::CudaGraph{torch::Device(torch::kCUDA)}, InvalidArgument);
  } else {
    EXPECT_THROW(detail::CudaGraph{torch::Device(torch::kCPU)}, InvalidArgument);
    EXPECT_NE(detail::cuda_device_name(torch::Device(torch::kCUDA)), "");
  }
}

// On a GPU: the captured step against the eager one on the same device, batches from a device-resident dataset
// (as the lab's CUDA graph rung has them) and from host memory. Deterministic cuDNN kernels, so that what is
// compared is our step and not the order of cuDNN's atomic adds; still a looser tolerance than on the CPU.
TEST(Train, CudaGraphStepMatchesTheEagerStepOnAGpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  struct Deterministic {
    bool was = at::globalContext().deterministicCuDNN();
    Deterministic() { at::globalContext().setDeterministicCuDNN(true); }
    ~Deterministic() { at::globalContext().setDeterministicCuDNN(was); }
  } deterministic;
  const torch::Device cuda(torch::kCUDA);
  const auto& t = fashion_test_split();
  const auto u8 = (t.images.narrow(0, 0, 1300) * 255).round().to(torch::kUInt8);
  for (const bool resident : {true, false}) {
    const auto make = [&](int64_t start, int64_t n) -> std::shared_ptr<const Dataset> {
      if (resident) return std::make_shared<DeviceDataset>(u8.narrow(0, start, n), t.labels.narrow(0, start, n), cuda);
      return std::make_shared<TensorDataset>(u8.narrow(0, start, n), t.labels.narrow(0, start, n));
    };
    const auto train_set = make(0, 1000), test_set = make(1000, 300);
    std::vector<std::vector<EpochResult>> results;
    std::vector<std::vector<torch::Tensor>> params;
    for (const bool graph : {false, true}) {
      torch::manual_seed(11);
      SimpleCNN model;
      Loader train(train_set, LoaderOptions(128).shuffle(true).seed(5));
      Loader test(test_set, LoaderOptions(128));
      TrainOptions options{2, 1e-3, cuda};
      options.cuda_graph = graph;
      results.push_back(train_model(model, train, test, options));
      params.push_back(parameters_of(model));
    }
    SCOPED_TRACE(resident ? "device-resident dataset" : "host dataset");
    expect_close(params[0], params[1], 1e-3, 1e-4);
    for (size_t e = 0; e < 2; ++e) {
      EXPECT_NEAR(results[0][e].train_loss, results[1][e].train_loss, 1e-3) << "epoch " << e + 1;
      EXPECT_NEAR(results[0][e].test_accuracy, results[1][e].test_accuracy, 3.0 / 300) << "epoch " << e + 1;
      EXPECT_EQ(results[1][e].train_stats.samples, 1000);
    }
    EXPECT_GT(results[1][0].capture_seconds, 0.0);
    EXPECT_EQ(results[1][1].capture_seconds, 0.0);
    for (size_t e = 0; e < 2; ++e) {
      // 1000 / 128: 7 full batches replayed, a last one of 104 uncaptured; 300 / 128: 2 and one of 44.
      EXPECT_EQ(results[1][e].train_graph_replays, 7) << "epoch " << e + 1;
      EXPECT_EQ(results[1][e].test_graph_replays, 2) << "epoch " << e + 1;
      EXPECT_EQ(results[0][e].train_graph_replays, 0) << "the eager step replays nothing";
    }
  }
  // The compute floor's captured steps train too.
  torch::manual_seed(1);
  SimpleCNN model;
  TrainOptions options{2, 1e-3, cuda};
  options.cuda_graph = true;
  const auto floor = train_compute_floor(model, 1000, 300, 128, options);
  ASSERT_EQ(floor.size(), 2u);
  EXPECT_TRUE(std::isfinite(floor[1].train_loss));
  EXPECT_EQ(floor[1].train_graph_replays, 7);
  EXPECT_EQ(floor[1].test_graph_replays, 2);
  EXPECT_GT(floor[0].capture_seconds, 0.0);
}

}  // namespace
}  // namespace feedline
