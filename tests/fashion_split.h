// FashionMNIST's packaged test split (Debian's dataset-fashion-mnist), as pre-decoded tensors, for the tests that
// train on real images: decoded once a process.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "feedline/dataset/dataset.h"
#include "feedline/io/idx.h"

namespace feedline::testing {

inline const ImageTensors& fashion_test_split() {
  static const ImageTensors t = [] {
    const std::string dir = "/usr/share/datasets/fashion-mnist";
    const ImageSplit s = read_idx_split(dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz");
    return decode_image_table(image_split_to_table(s));
  }();
  return t;
}

// Samples [start, start + count) of it as a TensorDataset.
inline std::shared_ptr<const Dataset> fashion_slice(int64_t start, int64_t count) {
  const ImageTensors& t = fashion_test_split();
  return std::make_shared<TensorDataset>(t.images.narrow(0, start, count), t.labels.narrow(0, start, count));
}

}  // namespace feedline::testing
