#include "feedline/dataset.h"

#include <gtest/gtest.h>

#include <memory>

#include "feedline/error.h"
#include "feedline/idx.h"

namespace feedline {
namespace {

// Three 2x2 images with distinct pixel values and labels 7, 0, 9.
Table small_image_table() {
  ImageSplit s;
  s.count = 3;
  s.rows = 2;
  s.cols = 2;
  for (int i = 0; i < 12; ++i) s.images.push_back(static_cast<uint8_t>(i * 23));
  s.labels = {7, 0, 9};
  return image_split_to_table(s);
}

ImageTableLayout small_layout() {
  ImageTableLayout l;
  l.height = 2;
  l.width = 2;
  return l;
}

TEST(Dataset, RowAndTensorDatasetsServeTheSameSamples) {
  const Table table = small_image_table();
  RowDataset rows(std::make_shared<const Table>(table), small_layout());
  const ImageTensors t = decode_image_table(table, small_layout());
  TensorDataset tensors(t.images, t.labels);
  ASSERT_EQ(rows.size(), 3);
  ASSERT_EQ(tensors.size(), 3);
  for (int64_t i = 0; i < 3; ++i) {
    const Example a = rows.get(i);
    const Example b = tensors.get(i);
    EXPECT_EQ(a.data.sizes(), (std::vector<int64_t>{1, 2, 2}));
    EXPECT_EQ(a.data.scalar_type(), torch::kFloat32);
    EXPECT_TRUE(torch::allclose(a.data, b.data)) << i;
    EXPECT_EQ(a.target.item<int64_t>(), b.target.item<int64_t>());
    // pixel p of image i was (i * 4 + p) * 23, scaled to [0, 1]
    EXPECT_NEAR(a.data.flatten()[3].item<float>(), (i * 4 + 3) * 23 / 255.0, 1e-6);
  }
  EXPECT_EQ(rows.get(2).target.item<int64_t>(), 9);
}

TEST(Dataset, BatchFetchEqualsStackedGets) {
  const ImageTensors t = decode_image_table(small_image_table(), small_layout());
  TensorDataset ds(t.images, t.labels);
  EXPECT_TRUE(ds.has_batch_fetch());
  const std::vector<int64_t> idx{2, 0, 2};
  const Example batch = ds.get_batch(idx);
  const Example stacked = collate({ds.get(2), ds.get(0), ds.get(2)});
  EXPECT_TRUE(torch::equal(batch.data, stacked.data));
  EXPECT_TRUE(torch::equal(batch.target, stacked.target));
  EXPECT_EQ(batch.target[1].item<int64_t>(), 7);
  // The base class's default batch path (per-sample get + stack) gives the same result.
  RowDataset rows(std::make_shared<const Table>(small_image_table()), small_layout());
  EXPECT_FALSE(rows.has_batch_fetch());
  EXPECT_TRUE(torch::allclose(rows.get_batch(idx).data, batch.data));
}

TEST(Dataset, Uint8DecodeKeepsRawValues) {
  const ImageTensors t = decode_image_table(small_image_table(), small_layout(), /*as_uint8=*/true);
  EXPECT_EQ(t.images.scalar_type(), torch::kUInt8);
  EXPECT_EQ(t.images.sizes(), (std::vector<int64_t>{3, 1, 2, 2}));
  EXPECT_EQ(t.images[2][0][1][1].item<int>(), 11 * 23);
  EXPECT_EQ(t.labels.scalar_type(), torch::kInt64);
}

// The same images as one row-major byte-string column per row (the FIXED_LEN_BYTE_ARRAY layout).
Table row_major_table(int bad_row = -1) {
  const Table pixels = small_image_table();
  Table t;
  t.num_rows = 3;
  t.columns.push_back(pixels.column("label"));
  ColumnSchema schema;
  schema.name = "image";
  schema.type = PhysicalType::kByteArray;
  Column image = make_column(schema);
  auto& bytes = std::get<ByteArrays>(image.values);
  for (int64_t r = 0; r < 3; ++r) {
    std::string row;
    for (int p = 1; p <= 4; ++p) row += static_cast<char>(pixels.column("pixel" + std::to_string(p)).value_as_double(r));
    if (r == bad_row) row.pop_back();
    bytes.push_back(row);
  }
  t.columns.push_back(image);
  return t;
}

TEST(Dataset, RowMajorImageColumnDecodesLikePixelColumns) {
  const ImageTensors want = decode_image_table(small_image_table(), small_layout());
  const ImageTensors got = decode_image_table(row_major_table(), small_layout());
  EXPECT_TRUE(torch::equal(got.images, want.images));
  EXPECT_TRUE(torch::equal(got.labels, want.labels));
  const ImageTensors raw = decode_image_table(row_major_table(), small_layout(), /*as_uint8=*/true);
  EXPECT_EQ(raw.images.scalar_type(), torch::kUInt8);
  EXPECT_EQ(raw.images[2][0][1][1].item<int>(), 11 * 23);
  try {
    decode_image_table(row_major_table(1), small_layout());
    FAIL() << "a short image row was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'image' row 1 holds 3 bytes, expected 4"), std::string::npos) << e.what();
  }
}

TEST(Dataset, RejectsBadIndicesAndLayouts) {
  const Table table = small_image_table();
  RowDataset rows(std::make_shared<const Table>(table), small_layout());
  EXPECT_THROW(rows.get(3), InvalidArgument);
  EXPECT_THROW(rows.get(-1), InvalidArgument);
  const ImageTensors t = decode_image_table(table, small_layout());
  TensorDataset ds(t.images, t.labels);
  EXPECT_THROW(ds.get_batch({0, 5}), InvalidArgument);
  EXPECT_THROW(TensorDataset(t.images, t.labels.narrow(0, 0, 2)), InvalidArgument);
  // The default 28x28 layout asks for pixel5..pixel784, which this table lacks.
  EXPECT_THROW(RowDataset(std::make_shared<const Table>(table)), InvalidArgument);
  EXPECT_THROW(decode_image_table(table), InvalidArgument);
  EXPECT_THROW(collate({}), InvalidArgument);
  // A pixel column of byte strings (BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY) is refused, never left undecoded.
  for (const PhysicalType type : {PhysicalType::kByteArray, PhysicalType::kFixedLenByteArray}) {
    Table bytes = table;
    Column& pixel = bytes.columns[bytes.column_index("pixel2")];
    ColumnSchema schema = pixel.schema;
    schema.type = type;
    schema.int_annotation.reset();
    schema.type_length = 1;
    pixel = make_column(schema);
    for (int r = 0; r < 3; ++r) std::get<ByteArrays>(pixel.values).push_back("x");
    EXPECT_THROW(decode_image_table(bytes, small_layout()), InvalidArgument) << to_string(type);
  }
}

}  // namespace
}  // namespace feedline
