// DatasetMode: every name parses to its mode and back, and a bad name is an error that says what the names are.
#include "feedline/dataset/dataset_mode.h"

#include <gtest/gtest.h>

#include <string>

namespace feedline {
namespace {

TEST(DatasetMode, EveryNameParsesToItsMode) {
  for (const DatasetMode mode : kDatasetModes) EXPECT_EQ(parse_dataset_mode(dataset_mode_name(mode)), mode);
  EXPECT_EQ(parse_dataset_mode("tensor-uint8"), DatasetMode::kTensorUint8);
}

TEST(DatasetMode, ABadNameSaysWhichNamesThereAre) {
  for (const std::string bad : {"fast", "", "Tensor", "tensor_uint8", "row "}) {
    try {
      parse_dataset_mode(bad);
      FAIL() << "'" << bad << "' parsed";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()),
                "unknown dataset mode '" + bad + "' (use row, tensor, tensor-uint8, device or stream)");
    }
  }
}

}  // namespace
}  // namespace feedline
