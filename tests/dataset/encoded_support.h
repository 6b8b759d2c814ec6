// Encoded samples for the tests of EncodedDataset and of the loader over it: byte strings of different lengths and a
// transform that takes a random window of each, so that a batch shows which sample and which random draw made
// every row.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "feedline/dataset/encoded.h"
#include "feedline/io/error.h"

namespace feedline::testing {

// Sample i: 3 + i % 11 bytes (i + j) % 251, j = 0.., labelled i % 7 and named "shard.tar:<i>.bin".
class VaryingSource : public SampleSource {
 public:
  explicit VaryingSource(int64_t n) : n_(n) {}
  int64_t size() const override { return n_; }
  EncodedSample get(int64_t index) const override {
    EncodedSample s;
    s.bytes.resize(static_cast<size_t>(3 + index % 11));
    for (size_t j = 0; j < s.bytes.size(); ++j) s.bytes[j] = static_cast<char>((index + static_cast<int64_t>(j)) % 251);
    s.label = index % 7;
    s.name = "shard.tar:" + std::to_string(index) + ".bin";
    return s;
  }

 private:
  int64_t n_;
};

// Writes kHeight x kWidth bytes of the sample, read cyclically from a random start, as uint8; refuses the sample
// whose length is `refuse_length` (none by default) as an InvalidFile.
class WindowTransform : public SampleTransform {
 public:
  static constexpr int64_t kHeight = 2, kWidth = 4;
  explicit WindowTransform(size_t refuse_length = 0) : refuse_length_(refuse_length) {}
  SampleLayout layout() const override { return {{kHeight, kWidth}, torch::kUInt8}; }
  void apply(const EncodedSample& sample, SampleRng& rng, const torch::Tensor& out) const override {
    if (sample.bytes.size() == refuse_length_) throw InvalidFile("corrupt image data");
    const uint64_t start = rng.below(sample.bytes.size());
    uint8_t* to = out.data_ptr<uint8_t>();
    for (size_t j = 0; j < static_cast<size_t>(kHeight * kWidth); ++j) {
      to[j] = static_cast<uint8_t>(sample.bytes[(start + j) % sample.bytes.size()]);
    }
  }

 private:
  size_t refuse_length_;
};

// What WindowTransform makes of VaryingSource's sample `index` in `epoch` of a loader seeded `seed`, computed apart
// from the dataset: the window's start from the sample's own generator.
inline std::vector<uint8_t> expected_window(int64_t index, uint64_t seed, int64_t epoch) {
  const int64_t length = 3 + index % 11;
  SampleRng rng(seed, epoch, index);
  const uint64_t start = rng.below(static_cast<uint64_t>(length));
  std::vector<uint8_t> out;
  for (int64_t j = 0; j < WindowTransform::kHeight * WindowTransform::kWidth; ++j) {
    out.push_back(static_cast<uint8_t>((index + static_cast<int64_t>((start + j) % length)) % 251));
  }
  return out;
}

inline std::shared_ptr<const EncodedDataset> varying_dataset(int64_t n, size_t refuse_length = 0) {
  return std::make_shared<EncodedDataset>(std::make_shared<VaryingSource>(n),
                                          std::make_shared<WindowTransform>(refuse_length));
}

}  // namespace feedline::testing
