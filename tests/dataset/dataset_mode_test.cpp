// DatasetMode: every name parses to its mode and back, a bad name is an error that says what the names are, and
// each mode of a table is its dataset (make_table_dataset).
#include "feedline/dataset/dataset_mode.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "feedline/dataset/image_file.h"
#include "feedline/io/error.h"
#include "feedline/io/idx.h"

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

TEST(DatasetMode, EachModeOfATableIsItsDataset) {
  ImageSplit split;
  split.count = 2;
  split.rows = 2;
  split.cols = 2;
  for (int i = 0; i < 8; ++i) split.images.push_back(static_cast<uint8_t>(i * 30));
  split.labels = {3, 1};
  const auto table = std::make_shared<const Table>(image_split_to_table(split));
  ImageTableLayout layout;
  layout.height = 2;
  layout.width = 2;
  EXPECT_NE(dynamic_cast<const RowDataset*>(make_table_dataset(table, DatasetMode::kRow, layout).get()), nullptr);
  const auto floats = make_table_dataset(table, DatasetMode::kTensor, layout);
  ASSERT_NE(dynamic_cast<const TensorDataset*>(floats.get()), nullptr);
  EXPECT_EQ(floats->get(1).data.dtype(), torch::kFloat32);
  EXPECT_FLOAT_EQ(floats->get(1).data[0][0][0].item<float>(), 120.0f / 255);
  EXPECT_EQ(floats->get(1).target.item<int64_t>(), 1);
  const auto bytes = make_table_dataset(table, DatasetMode::kTensorUint8, layout);
  ASSERT_NE(dynamic_cast<const TensorDataset*>(bytes.get()), nullptr);
  EXPECT_EQ(bytes->get(0).data.dtype(), torch::kUInt8);
  EXPECT_NE(dynamic_cast<const DeviceDataset*>(make_table_dataset(table, DatasetMode::kDevice, layout).get()),
            nullptr);
  try {
    make_table_dataset(table, DatasetMode::kStream, layout);
    FAIL() << "a table made a streamed dataset";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), "dataset mode 'stream' reads a file, not a table: use load_image_file()");
  }
}

}  // namespace
}  // namespace feedline
