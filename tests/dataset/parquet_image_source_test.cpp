// ParquetImageSource on Parquet files in Hugging Face's image layout (a struct of bytes and path beside an integer
// label, the classes named in the `huggingface` footer key) and with a plain binary column, made by DuckDB
// (tests/data/images/hf/make_hf.mjs); its row-group cache, its shuffle blocks through the loader, and its errors on
// files feedline writes, each naming the file, the row and the column.
#include "feedline/dataset/image_dataset.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "feedline/loader/loader.h"
#include "test_errors.h"
#include "test_paths.h"

namespace feedline {
namespace {

std::string images_dir() { return testing::test_data_dir() + "/images"; }
std::string hf_dir() { return images_dir() + "/hf"; }

using testing::expect_error;

// What tests/data/images/hf/make_hf.mjs put in each file: (image file, label) per row.
const std::vector<std::vector<std::pair<std::string, int64_t>>> kTrain{
    {{"png_named.jpg", 0}, {"chelsea_lossy.webp", 1}, {"foo3x5x4indexed.png", 2}, {"green_palette.png", 0},
     {"chelsea_alpha.webp", 1}},
    {{"gray16.png", 2}, {"chelsea_gray.jpg", 0}, {"chelsea_1bit.png", 1}}};
const std::vector<std::pair<std::string, int64_t>> kPlain{
    {"foo3x5x4indexed.png", 3}, {"gray16.png", 0}, {"green_palette.png", 7}, {"png_named.jpg", 1},
    {"chelsea_lossy.webp", 2}};

std::string train_file(int k) {
  return hf_dir() + "/train/train-0000" + std::to_string(k) + "-of-00002.parquet";
}

TEST(ParquetImageSource, ReadsHuggingFaceImageStructsAcrossFiles) {
  const ParquetImageSource source(hf_dir() + "/train");
  ASSERT_EQ(source.size(), 8);
  EXPECT_EQ(source.shuffle_blocks(), (std::vector<int64_t>{2, 2, 1, 2, 1}));  // each file's row groups
  EXPECT_EQ(source.class_names(), (std::vector<std::string>{"cat", "dog", "bird"}));
  EXPECT_EQ(source.row_group_reads(), 0);  // the labels come without an image read
  std::vector<int64_t> labels;
  int64_t index = 0;
  for (int k = 0; k < 2; ++k) {
    for (size_t row = 0; row < kTrain[k].size(); ++row, ++index) {
      const EncodedSample sample = source.get(index);
      EXPECT_EQ(sample.bytes, read_file(images_dir() + "/" + kTrain[k][row].first)) << sample.name;
      EXPECT_EQ(sample.label, kTrain[k][row].second) << sample.name;
      EXPECT_EQ(sample.name, train_file(k) + " row " + std::to_string(row));
      labels.push_back(kTrain[k][row].second);
    }
  }
  EXPECT_EQ(source.labels(), labels);
  EXPECT_EQ(source.row_group_reads(), 5);  // each row group once, in order
  EXPECT_THROW(source.get(8), InvalidArgument);
  EXPECT_THROW(source.get(-1), InvalidArgument);
}

TEST(ParquetImageSource, ReadsPlainBinaryImagesAndSmallIntegerLabels) {
  const ParquetImageSource source(hf_dir() + "/plain.parquet");
  ASSERT_EQ(source.size(), 5);
  EXPECT_EQ(source.shuffle_blocks(), (std::vector<int64_t>{3, 2}));
  EXPECT_TRUE(source.class_names().empty());  // no `huggingface` key
  for (int64_t i = 0; i < 5; ++i) {
    const EncodedSample sample = source.get(i);
    EXPECT_EQ(sample.bytes, read_file(images_dir() + "/" + kPlain[static_cast<size_t>(i)].first));
    EXPECT_EQ(sample.label, kPlain[static_cast<size_t>(i)].second);
    EXPECT_EQ(sample.name, hf_dir() + "/plain.parquet row " + std::to_string(i));
  }
  EXPECT_EQ(source.labels(), (std::vector<int64_t>{3, 0, 7, 1, 2}));
}

TEST(ParquetImageSource, KeepsTheRowGroupsUsedLast) {
  ParquetImageOptions options;
  options.cached_row_groups = 2;
  const ParquetImageSource source(train_file(0), options);  // row groups of 2, 2, 1 rows
  for (const int64_t i : {0, 1, 2, 0, 4, 3, 0}) source.get(i);
  // 0: read; 1: kept; 2: read; 0: kept; 4: read (2 goes); 3: read (0 goes); 0: read again.
  EXPECT_EQ(source.row_group_reads(), 5);
  options.cached_row_groups = 0;
  expect_error<InvalidArgument>([&] { ParquetImageSource(train_file(0), options); }, {"cached_row_groups"});
}

// A file of a plain `image` column and a `label` column written by feedline, the values given (nullopt: null).
std::string write_flat(const std::string& name, const std::vector<std::optional<std::string>>& images,
                       const ColumnSchema& label_schema, const std::vector<std::optional<int64_t>>& labels) {
  Table table;
  table.num_rows = static_cast<int64_t>(images.size());
  Column image = make_column(ColumnSchema{"image", PhysicalType::kByteArray, true});
  for (const auto& bytes : images) {
    std::get<ByteArrays>(image.values).push_back(bytes.value_or(""));
    image.validity.push_back(bytes ? 1 : 0);
  }
  Column label = make_column(label_schema);
  for (const auto& v : labels) {
    if (label_schema.type == PhysicalType::kInt32) {
      label.as<int32_t>().push_back(static_cast<int32_t>(v.value_or(0)));
    } else if (label_schema.type == PhysicalType::kInt64) {
      label.as<int64_t>().push_back(v.value_or(0));
    } else {
      std::get<ByteArrays>(label.values).push_back(std::to_string(v.value_or(0)));
    }
    label.validity.push_back(v ? 1 : 0);
  }
  table.columns = {std::move(image), std::move(label)};
  const std::string path = testing::scratch_dir("parquet_image_" + name) + "/" + name + ".parquet";
  parquet::WriteOptions options;
  options.row_group_rows = 2;
  parquet::write_table(path, table, options);
  return path;
}

TEST(ParquetImageSource, ErrorsNameTheFileTheRowAndTheColumn) {
  const ColumnSchema int64_label{"label", PhysicalType::kInt64, true};
  const std::string png = read_file(images_dir() + "/gray16.png");
  const std::string null_label = write_flat("null_label", {png, png, png}, int64_label, {1, 2, std::nullopt});
  expect_error<InvalidFile>([&] { ParquetImageSource{null_label}; }, {null_label + " row 2", "label", "null"});
  const std::string negative = write_flat("negative", {png, png, png}, int64_label, {1, -3, 0});
  expect_error<InvalidFile>([&] { ParquetImageSource{negative}; }, {negative + " row 1", "-3"});

  // A null image fails only its own sample.
  const std::string null_image = write_flat("null_image", {png, std::nullopt, png}, int64_label, {0, 1, 2});
  const ParquetImageSource source(null_image);
  EXPECT_EQ(source.get(2).bytes, png);
  expect_error<InvalidFile>([&] { source.get(1); }, {null_image + " row 1", "image", "null"});

  ColumnSchema text_label{"label", PhysicalType::kByteArray, true};
  text_label.is_string = true;
  const std::string text = write_flat("text_label", {png}, text_label, {1});
  expect_error<InvalidArgument>([&] { ParquetImageSource{text}; }, {text, "label column label", "not integer"});

  const std::string ok = write_flat("ok", {png}, int64_label, {1});
  ParquetImageOptions options;
  options.label_column = "class";
  expect_error<InvalidArgument>([&] { ParquetImageSource(ok, options); }, {ok, "no label column class"});
  options = {};
  options.image_column = "label";
  expect_error<InvalidArgument>([&] { ParquetImageSource(ok, options); }, {ok, "image column label", "not binary"});
  options.image_column = "picture";
  expect_error<InvalidArgument>([&] { ParquetImageSource(ok, options); }, {ok, "no image column picture"});
  expect_error<IoError>([&] { ParquetImageSource{hf_dir() + "/missing.parquet"}; }, {"missing.parquet"});
}

TEST(ParquetImageSource, ReadsTheImageStructsFeedlineWrites) {
  // image.bytes and image.path as one struct column `image`, with Hugging Face's footer key, as feedline writes them.
  Table table;
  table.num_rows = 3;
  Column bytes = make_column(ColumnSchema{"image.bytes", PhysicalType::kByteArray, true});
  ColumnSchema path_schema{"image.path", PhysicalType::kByteArray, true};
  path_schema.is_string = true;
  Column paths = make_column(path_schema);
  Column label = make_column(ColumnSchema{"label", PhysicalType::kInt64, false});
  const std::vector<std::string> files{"gray16.png", "foo3x5x4indexed.png", "green_palette.png"};
  for (size_t i = 0; i < files.size(); ++i) {
    std::get<ByteArrays>(bytes.values).push_back(read_file(images_dir() + "/" + files[i]));
    std::get<ByteArrays>(paths.values).push_back(files[i]);
    label.as<int64_t>().push_back(static_cast<int64_t>(2 - i));
  }
  table.columns = {std::move(bytes), std::move(paths), std::move(label)};
  parquet::WriteOptions options;
  options.dotted_names_as_structs = true;
  options.row_group_rows = 2;
  options.key_value_metadata = {
      {"huggingface", R"({"info": {"features": {"image": {"_type": "Image"},
                          "label": {"names": ["a", "b", "c"], "_type": "ClassLabel"}}}})"}};
  const std::string path = testing::scratch_dir("parquet_image_struct") + "/written.parquet";
  parquet::write_table(path, table, options);
  const ParquetImageSource source(path);
  ASSERT_EQ(source.size(), 3);
  EXPECT_EQ(source.shuffle_blocks(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(source.labels(), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(source.class_names(), (std::vector<std::string>{"a", "b", "c"}));
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(source.get(i).bytes, read_file(images_dir() + "/" + files[static_cast<size_t>(i)]));
  }
}

// Writes each sample's byte length into its slot, so that a batch shows which samples made it.
class LengthTransform : public SampleTransform {
 public:
  SampleLayout layout() const override { return {{1}, torch::kInt64}; }
  void apply(const EncodedSample& sample, SampleRng&, const torch::Tensor& out) const override {
    out.data_ptr<int64_t>()[0] = static_cast<int64_t>(sample.bytes.size());
  }
};

TEST(ParquetImageSource, AShuffledLoaderReadsEachRowGroupOnceAnEpoch) {
  ParquetImageOptions options;
  options.cached_row_groups = 1;
  const auto source = std::make_shared<ParquetImageSource>(hf_dir() + "/train", options);
  const auto dataset = std::make_shared<EncodedDataset>(source, std::make_shared<LengthTransform>());
  Loader loader(dataset, LoaderOptions(3).shuffle(true).seed(11));
  const std::vector<int64_t> order = loader.epoch_indices(0);
  std::vector<int64_t> targets, lengths;
  Epoch epoch = loader.epoch();
  while (auto batch = epoch.next()) {
    for (int64_t i = 0; i < batch->target.size(0); ++i) {
      targets.push_back(batch->target[i].item<int64_t>());
      lengths.push_back(batch->data[i][0].item<int64_t>());
    }
  }
  EXPECT_EQ(source->row_group_reads(), 5);  // the samples of a row group come together: none is read twice
  std::vector<int64_t> expected_targets, expected_lengths;
  for (const int64_t i : order) {
    const EncodedSample sample = source->get(i);
    expected_targets.push_back(sample.label);
    expected_lengths.push_back(static_cast<int64_t>(sample.bytes.size()));
  }
  EXPECT_EQ(targets, expected_targets);
  EXPECT_EQ(lengths, expected_lengths);
}

}  // namespace
}  // namespace feedline
