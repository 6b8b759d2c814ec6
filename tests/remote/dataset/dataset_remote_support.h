// Helpers of the dataset-level remote tests: a fixture that points the process at the S3 gateway (directly or through
// its fault proxy) and puts the remote options back after each test; small data sets written locally (Parquet
// tables, PNG images, class folders, tar shards) and uploaded whole, under a prefix of this run, by the independent
// client; and the loader's batches of a dataset, for comparing a remote read with the local one. One test at a time.
#pragma once

#include <gtest/gtest.h>
#include <torch/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "feedline/dataset/dataset.h"
#include "feedline/io/remote.h"
#include "feedline/io/table.h"
#include "feedline/loader/loader.h"
#include "io/cell_writer.h"
#include "io/image_encode.h"
#include "remote_servers.h"
#include "test_paths.h"

namespace feedline::testing {

inline constexpr const char* kDatasetBucket = "feedline-datasets";

// Every key this process uploads begins with this, so that runs sharing the servers never see each other's objects.
inline const std::string& dataset_run_prefix() {
  static const std::string prefix =
      "ds-" + std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count() % 1000000000) + "/";
  return prefix;
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) throw std::runtime_error(path + ": cannot write");
}

// Uploads the files under `dir` as s3://kDatasetBucket/<run prefix><name>/<path under dir>; that URL's folder.
inline std::string upload_dir(const std::string& dir, const std::string& name) {
  static bool bucket_made = false;
  if (!bucket_made) {
    const CommandResult r = run_s3tool({"mkbucket", kDatasetBucket});
    if (r.exit_code != 0) throw std::runtime_error("mkbucket: " + r.output);
    bucket_made = true;
  }
  const std::string prefix = dataset_run_prefix() + name + "/";
  const CommandResult r = run_s3tool({"putdir", kDatasetBucket, prefix, dir});
  if (r.exit_code != 0) throw std::runtime_error("putdir " + dir + ": " + r.output);
  return std::string("s3://") + kDatasetBucket + "/" + prefix;
}

// Copies the files under `dir` below nginx's root; their folder's http:// URL.
inline std::string serve_dir(const std::string& dir, const std::string& name) {
  const std::string rel = "datasets-" + std::to_string(::getpid()) + "/" + name;
  const std::string to = test_servers().http_root() + "/" + rel;
  std::filesystem::create_directories(to);
  std::filesystem::copy(dir, to, std::filesystem::copy_options::recursive |
                                     std::filesystem::copy_options::overwrite_existing);
  return test_servers().http_url() + "/" + rel + "/";
}

// A small RGB image, its pixels and size drawn from `seed`, as PNG or JPEG.
inline std::string tiny_image(uint32_t seed, bool jpeg = false) {
  const int width = 5 + static_cast<int>(seed % 7), height = 4 + static_cast<int>((seed / 7) % 5);
  std::vector<uint8_t> pixels(static_cast<size_t>(width * height * 3));
  uint32_t x = seed * 2654435761u + 1;
  for (uint8_t& p : pixels) {
    x = x * 1664525u + 1013904223u;
    p = static_cast<uint8_t>(x >> 24);
  }
  const PixelView view{pixels.data(), width, height, 3};
  return jpeg ? encode_jpeg(view) : encode_png(view);
}

// What `f` throws, as text; "(no error)" when it returns.
inline std::string error_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// A table's text (CSV), to compare two reads of it value for value.
inline std::string table_text(const Table& t) {
  std::string out;
  write_table_text(t, TextFormat::kCsv, [&](std::string_view s) { out.append(s); });
  return out;
}

// Every batch of one epoch: the loader's examples, in order.
inline std::vector<Example> epoch_batches(Loader& loader) {
  std::vector<Example> out;
  for (Example& e : loader.epoch()) out.push_back({e.data.clone(), e.target.clone()});
  return out;
}

// Whether two lists of batches are the same bit for bit (dtype, shape and bytes of features and labels).
inline ::testing::AssertionResult same_batches(const std::vector<Example>& expected, const std::vector<Example>& got) {
  if (expected.size() != got.size()) {
    return ::testing::AssertionFailure() << got.size() << " batches, expected " << expected.size();
  }
  for (size_t b = 0; b < expected.size(); ++b) {
    for (const auto& [want, have] : {std::make_pair(expected[b].data, got[b].data),
                                     std::make_pair(expected[b].target, got[b].target)}) {
      if (want.dtype() != have.dtype() || want.sizes() != have.sizes() || !torch::equal(want, have)) {
        return ::testing::AssertionFailure() << "batch " << b << " differs";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// The batches a loader over `dataset` makes in epoch 1 (after a whole epoch 0), and again resumed from the middle of
// epoch 1 by a new loader (state_dict / load_state_dict): what a remote read is compared with a local one by.
struct LoaderRun {
  std::vector<Example> first_epoch, second_epoch, resumed;  // resumed: epoch 1's batches after its first half
};

inline LoaderRun run_loader(const std::shared_ptr<const Dataset>& dataset, const LoaderOptions& options) {
  LoaderRun run;
  {
    Loader loader(dataset, options);
    run.first_epoch = epoch_batches(loader);
    run.second_epoch = epoch_batches(loader);
  }
  Loader loader(dataset, options);
  loader.set_epoch(1);
  LoaderState state;
  {
    Epoch epoch = loader.epoch();
    for (int64_t b = 0; b < loader.batches_per_epoch() / 2; ++b) epoch.next();
    state = loader.state_dict();
  }
  Loader resumed(dataset, options);
  resumed.load_state_dict(state);
  run.resumed = epoch_batches(resumed);
  return run;
}

inline void expect_same_run(const LoaderRun& local, const LoaderRun& remote) {
  EXPECT_TRUE(same_batches(local.first_epoch, remote.first_epoch)) << "epoch 0";
  EXPECT_TRUE(same_batches(local.second_epoch, remote.second_epoch)) << "epoch 1";
  EXPECT_TRUE(same_batches(local.resumed, remote.resumed)) << "epoch 1, resumed";
  const size_t half = local.second_epoch.size() - local.resumed.size();
  EXPECT_TRUE(same_batches(std::vector<Example>(local.second_epoch.begin() + static_cast<std::ptrdiff_t>(half),
                                                local.second_epoch.end()),
                           local.resumed))
      << "a resumed epoch makes the batches the whole one made";
}

// Points the remote layer at the S3 gateway with its keys from the environment (nothing from the user's AWS files),
// with short backoffs; every test starts from clean proxies and ends with the default options.
class RemoteDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    use_test_servers();
    remote::RemoteOptions o;
    o.backoff = std::chrono::milliseconds(10);
    o.max_backoff = std::chrono::milliseconds(2000);
    remote::set_options(o);
  }

  void TearDown() override {
    remote::set_options(remote::RemoteOptions());
    ::setenv("AWS_ENDPOINT_URL", test_servers().s3_endpoint().c_str(), 1);
    proxy_reset("s3");
    proxy_reset("http");
  }

  static void through_proxy() { ::setenv("AWS_ENDPOINT_URL", test_servers().proxy_url("s3").c_str(), 1); }
};

}  // namespace feedline::testing
