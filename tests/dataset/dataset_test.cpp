#include "feedline/dataset/dataset.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dataset/image.h"
#include "feedline/io/columns.h"
#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/idx.h"
#include "feedline/io/parquet.h"
#include "io/image_encode.h"
#include "io/parquet_duckdb_support.h"
#include "test_paths.h"

namespace feedline {
namespace {

// Three 2x2 images with distinct pixel values and labels 7, 0, 9.
ImageSplit small_split() {
  ImageSplit s;
  s.count = 3;
  s.rows = 2;
  s.cols = 2;
  for (int i = 0; i < 12; ++i) s.images.push_back(static_cast<uint8_t>(i * 23));
  s.labels = {7, 0, 9};
  return s;
}

Table small_image_table() { return image_split_to_table(small_split()); }

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

std::vector<ColumnSchema> schema_of(const std::vector<std::string>& names) {
  std::vector<ColumnSchema> out;
  for (const auto& n : names) out.push_back(ColumnSchema{n});
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

using Names = std::vector<std::string>;

TEST(Dataset, LabelsMustBeClassNumbers) {
  const auto labels_of = [](std::vector<double> values, std::vector<uint8_t> validity = {}) {
    Column c = make_column(ColumnSchema{"label", PhysicalType::kDouble, !validity.empty()});
    c.as<double>() = std::move(values);
    c.validity = std::move(validity);
    return c;
  };
  EXPECT_TRUE(torch::equal(label_tensor(labels_of({0, 3, 9})), torch::tensor({0, 3, 9}, torch::kInt64)));
  const auto refused = [](const Column& c, const std::string& message) {
    try {
      label_tensor(c);
      ADD_FAILURE() << "not refused: " << message;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  refused(labels_of({1, 2.5}), "label column 'label' row 1 holds 2.5, not a class number");
  refused(labels_of({-1}), "row 0 holds -1, not a class number");
  refused(labels_of({1, 0}, {1, 0}), "label column 'label' row 1 is null");
  refused(labels_of({std::nan("")}), "row 0 holds nan");
  // The naive dataset refuses them when it is made, not at the sample that holds one.
  Table table = small_image_table();
  table.columns[0].validity.assign(static_cast<size_t>(table.num_rows), 1);
  table.columns[0].validity.back() = 0;
  table.columns[0].schema.nullable = true;
  EXPECT_THROW(RowDataset(std::make_shared<const Table>(table), small_layout()), InvalidArgument);
  EXPECT_THROW(decode_image_table(table, small_layout()), InvalidArgument);
}

TEST(MatchColumns, ExactNamesAndGlobsInFileOrder) {
  const auto schema = schema_of({"label", "pixel1", "pixel2", "pixel10", "px_a", "note", "a*b"});
  EXPECT_EQ(match_columns(schema, {"note"}), (Names{"note"}));
  // File order, never name order (pixel10 < pixel2 as strings).
  EXPECT_EQ(match_columns(schema, {"pixel*"}), (Names{"pixel1", "pixel2", "pixel10"}));
  EXPECT_EQ(match_columns(schema, {"pixel?"}), (Names{"pixel1", "pixel2"}));
  EXPECT_EQ(match_columns(schema, {"pixel??"}), (Names{"pixel10"}));
  EXPECT_EQ(match_columns(schema, {"p*1*"}), (Names{"pixel1", "pixel10"}));
  EXPECT_EQ(match_columns(schema, {"*x*a"}), (Names{"px_a"}));
  EXPECT_EQ(match_columns(schema, {"*"}).size(), schema.size());
  // Several patterns: file order, each column once, whatever the patterns' order.
  EXPECT_EQ(match_columns(schema, {"note", "pixel1*", "pixel1", "label"}),
            (Names{"label", "pixel1", "pixel10", "note"}));
  // An exact name is matched as such even when it holds a `*`.
  EXPECT_EQ(match_columns(schema, {"a*b"}), (Names{"a*b"}));
  EXPECT_EQ(match_columns(schema, {}), Names{});
}

TEST(MatchColumns, APatternThatMatchesNothingIsNamed) {
  const auto schema = schema_of({"label", "pixel1", "pixel2", "pixel3", "pixel4", "pixel5", "pixel6"});
  const std::string e = error_of([&] { match_columns(schema, {"pixel*", "img?"}); });
  EXPECT_EQ(e, "no column matches 'img?' (columns: label, pixel1, pixel2, pixel3, pixel4, ... (7 columns))");
  EXPECT_THROW(match_columns(schema, {"pixel"}), InvalidArgument);  // a name is no prefix
  EXPECT_THROW(match_columns(schema, {"pixel1?"}), InvalidArgument);
  EXPECT_THROW(match_columns({}, {"*"}), InvalidArgument);
}

// label first, then four INT64 features whose names sort in another order than the file's.
Table named_feature_table(const Names& features) {
  Table t;
  t.num_rows = 2;
  Column label = make_column(ColumnSchema{"y"});
  label.as<int64_t>() = {3, 8};
  t.columns.push_back(label);
  for (size_t f = 0; f < features.size(); ++f) {
    Column c = make_column(ColumnSchema{features[f]});
    c.as<int64_t>() = {static_cast<int64_t>(f), static_cast<int64_t>(100 + f)};
    t.columns.push_back(c);
  }
  return t;
}

ImageTableLayout named_layout(const Names& patterns) {
  ImageTableLayout l = small_layout();
  l.label_column = "y";
  l.feature_columns = patterns;
  return l;
}

TEST(Dataset, FeatureColumnsDecodeInFileOrder) {
  const Table t = named_feature_table({"f10", "f2", "g", "f1"});
  const ImageTableLayout layout = named_layout({"g", "f*"});
  const ImageTensors got = decode_image_table(t, layout, /*as_uint8=*/true);
  // Pixel p of row r is feature p in file order: r * 100 + p.
  EXPECT_TRUE(torch::equal(got.images.flatten(1), torch::tensor({0, 1, 2, 3, 100, 101, 102, 103}, torch::kUInt8).view({2, 4})));
  EXPECT_EQ(got.labels[1].item<int64_t>(), 8);
  RowDataset rows(std::make_shared<const Table>(t), layout);
  EXPECT_TRUE(torch::allclose(rows.get(1).data.flatten(), torch::tensor({100, 101, 102, 103}, torch::kFloat32) / 255.0));
  // A pattern that also matches the label column leaves the label out of the features.
  EXPECT_TRUE(torch::equal(decode_image_table(t, named_layout({"*"}), true).images, got.images));
}

TEST(Dataset, FeatureCountMustBeChannelsTimesHeightTimesWidth) {
  const Table t = named_feature_table({"f1", "f2", "f3", "f4", "g"});
  const std::string want = "3 feature columns match 'f1,f2,f3', expected 4 (1x2x2)";
  EXPECT_EQ(error_of([&] { decode_image_table(t, named_layout({"f1", "f2", "f3"})); }), want);
  EXPECT_EQ(error_of([&] { RowDataset(std::make_shared<const Table>(t), named_layout({"f1", "f2", "f3"})); }), want);
  EXPECT_TRUE(contains(error_of([&] { decode_image_table(t, named_layout({"*"})); }), "5 feature columns match '*'"));
  EXPECT_TRUE(contains(error_of([&] { decode_image_table(t, named_layout({"h*"})); }), "no column matches 'h*'"));
  EXPECT_NO_THROW(decode_image_table(t, named_layout({"f?"})));
}

TEST(Dataset, OneByteStringFeatureColumnIsRowMajorImages) {
  Table t = row_major_table();
  t.columns[1].schema.name = "pixels";
  ImageTableLayout layout = small_layout();
  layout.feature_columns = {"pix*"};
  layout.image_column.clear();
  const ImageTensors got = decode_image_table(t, layout);
  EXPECT_TRUE(torch::equal(got.images, decode_image_table(small_image_table(), small_layout()).images));
}

// A file with a text column, a label, four features and a column that matches no pattern.
Table mixed_table() {
  Table t = named_feature_table({"f1", "f2", "f10", "f3"});
  ColumnSchema note_schema{"note", PhysicalType::kByteArray};
  note_schema.is_string = true;
  Column note = make_column(note_schema);
  std::get<ByteArrays>(note.values).push_back("first, row");
  std::get<ByteArrays>(note.values).push_back("second");
  t.columns.insert(t.columns.begin(), note);
  Column extra = make_column(ColumnSchema{"extra"});
  extra.as<int64_t>() = {-1, -2};
  t.columns.push_back(extra);
  return t;
}

Names column_names(const Table& t) {
  Names out;
  for (const auto& c : t.columns) out.push_back(c.schema.name);
  return out;
}

TEST(ReadDatasetTable, ReadsOnlyTheLabelAndFeatureColumns) {
  const std::string dir = testing::scratch_dir("dataset_columns");
  const Table table = mixed_table();
  parquet::write_table(dir + "/t.parquet", table);
  write_csv(dir + "/t.csv", table);
  DatasetColumns want;
  want.label_column = "y";
  want.feature_columns = {"f?", "f10"};
  want.feature_count = 4;
  for (const std::string file : {"t.parquet", "t.csv"}) {
    const Table t = read_dataset_table(dir + "/" + file, want, 2);
    ASSERT_EQ(column_names(t), (Names{"y", "f1", "f2", "f10", "f3"})) << file;
    ASSERT_EQ(t.num_rows, 2);
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const Column& from = table.column(t.columns[c].schema.name);
      for (int64_t r = 0; r < 2; ++r) EXPECT_EQ(t.columns[c].value_as_double(r), from.value_as_double(r)) << file;
    }
    // Decoded with the same patterns, in file order: row 1 is 100, 101, 102, 103.
    ImageTableLayout layout = named_layout(want.feature_columns);
    EXPECT_EQ(decode_image_table(t, layout, true).images[1].flatten()[2].item<int>(), 102) << file;
  }
  // `columns` narrows what may be read and matched.
  want.columns = {"f3", "y", "f1"};
  want.feature_columns = {"f*"};
  want.feature_count = 0;
  EXPECT_EQ(column_names(read_dataset_table(dir + "/t.parquet", want)), (Names{"y", "f1", "f3"}));
  EXPECT_EQ(column_names(read_dataset_table(dir + "/t.csv", want)), (Names{"y", "f1", "f3"}));
  // Row groups: one row each here, read in the order asked for; CSV has none to choose.
  parquet::WriteOptions one_row_groups;
  one_row_groups.row_group_rows = 1;
  parquet::write_table(dir + "/groups.parquet", table, one_row_groups);
  want.row_groups = {1};
  const Table second = read_dataset_table(dir + "/groups.parquet", want);
  ASSERT_EQ(second.num_rows, 1);
  EXPECT_EQ(second.column("f1").value_as_double(0), table.column("f1").value_as_double(1));
  want.row_groups = {1, 0};
  EXPECT_EQ(read_dataset_table(dir + "/groups.parquet", want).column("y").value_as_double(1),
            table.column("y").value_as_double(0));
  EXPECT_EQ(error_of([&] { read_dataset_table(dir + "/t.csv", want); }),
            dir + "/t.csv: row groups are chosen in Parquet files; CSV has none");
  want.row_groups = {2};
  EXPECT_EQ(error_of([&] { read_dataset_table(dir + "/groups.parquet", want); }),
            dir + "/groups.parquet: no row group 2 (the file has 2)");
}

TEST(ReadDatasetTable, ColumnNamesComeInFileOrderWithTheLabelWhereverItIs) {
  std::vector<ColumnSchema> schema;
  for (const char* name : {"f2", "y", "note", "f1", "f10"}) schema.push_back(ColumnSchema{name});
  DatasetColumns want;
  want.label_column = "y";
  want.image_column.clear();
  want.feature_columns = {"f1*", "f2"};
  EXPECT_EQ(dataset_column_names("t.parquet", schema, want), (Names{"f2", "y", "f1", "f10"}));
  want.feature_columns = {"*"};  // the label and the note too: the label is read once
  EXPECT_EQ(dataset_column_names("t.parquet", schema, want), (Names{"f2", "y", "note", "f1", "f10"}));
  want.columns = {"f10", "y", "f2"};
  EXPECT_EQ(dataset_column_names("t.parquet", schema, want), (Names{"f2", "y", "f10"}));
  want.columns = {"f10", "z"};
  EXPECT_TRUE(contains(error_of([&] { dataset_column_names("t.parquet", schema, want); }),
                       "t.parquet: no column 'z' (the file has f2, y, note, f1, f10)"));
}

TEST(ReadDatasetTable, PrefersTheImageColumnWhenTheFileHasOne) {
  const std::string dir = testing::scratch_dir("dataset_image_column");
  const ImageSplit s = small_split();
  parquet::write_table(dir + "/rm.parquet", image_split_to_table(s, ImageTableLayoutKind::kRowMajor));
  DatasetColumns want;
  want.feature_count = 4;
  const Table t = read_dataset_table(dir + "/rm.parquet", want);
  EXPECT_EQ(column_names(t), (Names{"label", "image"}));
  EXPECT_TRUE(torch::equal(decode_image_table(t, small_layout()).images,
                           decode_image_table(small_image_table(), small_layout()).images));
  want.feature_count = 784;
  EXPECT_EQ(error_of([&] { read_dataset_table(dir + "/rm.parquet", want); }),
            dir + "/rm.parquet: column 'image' holds 4 bytes a row, expected 784");
}

TEST(ReadDatasetTable, ColumnErrorsNameTheFile) {
  const std::string dir = testing::scratch_dir("dataset_columns_bad");
  parquet::write_table(dir + "/t.parquet", mixed_table());
  write_csv(dir + "/t.csv", mixed_table());
  write_csv(dir + "/t.txt", mixed_table());
  for (const std::string name : {"t.parquet", "t.csv"}) {
    const std::string file = dir + "/" + name;
    DatasetColumns want;
    EXPECT_EQ(error_of([&] { read_dataset_table(file, want); }),
              file + ": no label column 'label' (the file has note, y, f1, f2, f10, ... (7 columns))");
    want.label_column = "y";
    EXPECT_EQ(error_of([&] { read_dataset_table(file, want); }),
              file + ": no column matches 'pixel*' (columns: note, y, f1, f2, f10, ... (7 columns))");
    want.feature_columns = {"f*"};
    want.feature_count = 784;
    EXPECT_EQ(error_of([&] { read_dataset_table(file, want); }), file + ": 4 feature columns match 'f*', expected 784");
    want.feature_count = 0;
    want.columns = {"y", "f1", "nope"};
    EXPECT_TRUE(contains(error_of([&] { read_dataset_table(file, want); }), file + ": no column 'nope'"));
    want.columns = {"f1", "f2"};
    EXPECT_TRUE(contains(error_of([&] { read_dataset_table(file, want); }),
                         file + ": no label column 'y' (not among the columns to read"));
  }
  EXPECT_TRUE(contains(error_of([&] { read_dataset_table(dir + "/t.txt", DatasetColumns{}); }),
                       dir + "/t.txt: cannot tell the format"));
}

// A list column built by hand: rows of `lists`, element type from `schema`.
template <class T>
Column list_column(const std::string& name, PhysicalType type, const std::vector<std::vector<T>>& lists,
                   std::optional<IntAnnotation> ints = std::nullopt) {
  ColumnSchema s;
  s.name = name;
  s.type = type;
  s.is_list = true;
  s.int_annotation = ints;
  Column c = make_column(s);
  for (const auto& list : lists) {
    for (const T& v : list) c.as<T>().push_back(v);
    c.list_offsets.push_back(static_cast<int64_t>(c.as<T>().size()));
  }
  return c;
}

TEST(ListTensors, EqualLengthsMakeOneTensorOthersOnePerRow) {
  const Column emb = list_column<float>("emb", PhysicalType::kFloat, {{1.5f, -2}, {3, 4}, {0.25f, 8}});
  const torch::Tensor t = list_column_tensor(emb);
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t.dtype(), torch::kFloat32);
  EXPECT_FLOAT_EQ(t[0][1].item<float>(), -2.0f);
  EXPECT_FLOAT_EQ(t[2][0].item<float>(), 0.25f);

  // INT(8, unsigned) elements stored in INT32 become uint8; UINT32 widens without sign extension.
  const Column px = list_column<int32_t>("px", PhysicalType::kInt32, {{0, 255, 7}}, IntAnnotation{8, false});
  const torch::Tensor p = list_column_tensor(px);
  EXPECT_EQ(p.dtype(), torch::kUInt8);
  EXPECT_EQ(p[0][1].item<int64_t>(), 255);
  const Column u32 = list_column<int32_t>("u", PhysicalType::kInt32, {{-1}}, IntAnnotation{32, false});
  EXPECT_EQ(list_column_tensor(u32)[0][0].item<int64_t>(), 4294967295LL);

  // DECIMAL elements become float64, each value scaled: DECIMAL(9, 2) in INT32, and DECIMAL(20, 3) in bytes.
  Column cents = list_column<int32_t>("cents", PhysicalType::kInt32, {{150, -225}, {1, 0}});
  cents.schema.logical.kind = LogicalKind::kDecimal;
  cents.schema.logical.precision = 9;
  cents.schema.logical.scale = 2;
  const torch::Tensor d = list_column_tensor(cents);
  EXPECT_EQ(d.dtype(), torch::kFloat64);
  EXPECT_DOUBLE_EQ(d[0][0].item<double>(), 1.5);
  EXPECT_DOUBLE_EQ(d[0][1].item<double>(), -2.25);
  EXPECT_DOUBLE_EQ(d[1][0].item<double>(), 0.01);
  ColumnSchema ws;
  ws.name = "wide";
  ws.type = PhysicalType::kFixedLenByteArray;
  ws.type_length = 9;
  ws.is_list = true;
  ws.logical.kind = LogicalKind::kDecimal;
  ws.logical.precision = 20;
  ws.logical.scale = 3;
  Column wide = make_column(ws);
  for (const __int128 unscaled : {__int128{-1500}, __int128{12345678901234567}}) {
    std::string be(9, '\0');  // big-endian two's complement
    for (size_t b = 0; b < 9; ++b) be[8 - b] = static_cast<char>(static_cast<uint8_t>(unscaled >> (8 * b)));
    std::get<ByteArrays>(wide.values).push_back(be);
  }
  wide.list_offsets.push_back(2);
  const torch::Tensor w = list_column_tensor(wide);
  EXPECT_EQ(w.sizes(), (std::vector<int64_t>{1, 2}));
  EXPECT_DOUBLE_EQ(w[0][0].item<double>(), -1.5);
  EXPECT_DOUBLE_EQ(w[0][1].item<double>(), 12345678901234.567);
  const Column ragged = list_column<int64_t>("r", PhysicalType::kInt64, {{1, 2, 3}, {}, {4}});
  EXPECT_EQ(error_of([&] { list_column_tensor(ragged); }), "column 'r' row 1 holds 0 elements, row 0 holds 3");
  const auto rows = list_column_tensors(ragged);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].numel(), 3);
  EXPECT_EQ(rows[1].numel(), 0);
  EXPECT_EQ(rows[2][0].item<int64_t>(), 4);
  EXPECT_EQ(rows[0].dtype(), torch::kInt64);
}

TEST(ListTensors, NullsAndByteStringsAreRefusedByName) {
  Column with_null_row = list_column<float>("e", PhysicalType::kFloat, {{1}, {2}});
  with_null_row.schema.nullable = true;
  with_null_row.validity = {1, 0};
  EXPECT_EQ(error_of([&] { list_column_tensors(with_null_row); }), "column 'e' row 1 is null");
  Column with_null_element = list_column<float>("e", PhysicalType::kFloat, {{1, 2}, {3, 4}});
  with_null_element.element_validity = {1, 1, 1, 0};
  EXPECT_EQ(error_of([&] { list_column_tensor(with_null_element); }), "column 'e' row 1 holds a null element");
  ColumnSchema strings;
  strings.name = "words";
  strings.type = PhysicalType::kByteArray;
  strings.is_list = true;
  EXPECT_THROW(list_column_tensor(make_column(strings)), InvalidArgument);
  Table flat = small_image_table();
  EXPECT_THROW(list_column_tensor(flat.columns[0]), InvalidArgument);
}

// ListNulls::kZero: a null element is 0, a null row zeros of the other rows' shape (or an empty tensor, one a row);
// an empty row that is not null still makes the lists irregular.
TEST(ListTensors, NullsReadAsZerosWhenAsked) {
  Column e = list_column<float>("e", PhysicalType::kFloat, {{1, 2}, {}, {3, 0}, {}});
  e.schema.nullable = true;
  e.schema.element_nullable = true;
  e.validity = {1, 0, 1, 0};
  e.element_validity = {1, 1, 1, 0};
  EXPECT_EQ(error_of([&] { list_column_tensor(e); }), "column 'e' row 1 is null");  // the first row, of either kind
  const torch::Tensor t = list_column_tensor(e, ListNulls::kZero);
  EXPECT_TRUE(torch::equal(t, torch::tensor({1.f, 2.f, 0.f, 0.f, 3.f, 0.f, 0.f, 0.f}).view({4, 2}))) << t;
  const auto rows = list_column_tensors(e, ListNulls::kZero);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1].numel(), 0);
  EXPECT_TRUE(torch::equal(rows[2], torch::tensor({3.f, 0.f})));
  // The first row that is not null sets the length; a present empty row differs from it.
  e.validity = {0, 1, 1, 0};
  e.list_offsets = {0, 0, 2, 4, 4};
  EXPECT_TRUE(torch::equal(list_column_tensor(e, ListNulls::kZero),
                           torch::tensor({0.f, 0.f, 1.f, 2.f, 3.f, 0.f, 0.f, 0.f}).view({4, 2})));
  e.validity = {1, 1, 1, 0};
  e.list_offsets = {0, 2, 2, 4, 4};
  EXPECT_EQ(error_of([&] { list_column_tensor(e, ListNulls::kZero); }),
            "column 'e' row 1 holds 0 elements, row 0 holds 2");
  // Every row null: [rows, 0].
  e.validity = {0, 0, 0, 0};
  e.list_offsets = {0, 0, 0, 0, 0};
  e.as<float>().clear();
  e.element_validity.clear();
  EXPECT_EQ(list_column_tensor(e, ListNulls::kZero).sizes(), (std::vector<int64_t>{4, 0}));

  // FLOAT16: a null element's two bytes are missing from the column; it reads as 0 all the same.
  ColumnSchema half;
  half.name = "h";
  half.type = PhysicalType::kFixedLenByteArray;
  half.type_length = 2;
  half.logical.kind = LogicalKind::kFloat16;
  half.is_list = true;
  half.element_nullable = true;
  Column h = make_column(half);
  for (const std::string& bits : {std::string("\x00\x3c", 2), std::string(), std::string("\x00\xc0", 2)}) {
    std::get<ByteArrays>(h.values).push_back(bits);  // 1.0, a null, -2.0
  }
  h.list_offsets = {0, 3};
  h.element_validity = {1, 0, 1};
  EXPECT_EQ(error_of([&] { list_column_tensor(h); }), "column 'h' row 0 holds a null element");
  EXPECT_TRUE(torch::equal(list_column_tensor(h, ListNulls::kZero),
                           torch::tensor({1.f, 0.f, -2.f}).to(torch::kFloat16).view({1, 3})));
}

// A list of lists built by hand: rows of lists of `T`, every level required.
template <class T>
Column nested_list_column(const std::string& name, PhysicalType type,
                          const std::vector<std::vector<std::vector<T>>>& rows) {
  ColumnSchema s;
  s.name = name;
  s.type = type;
  s.is_list = true;
  s.inner_list_nullable = {false};
  Column c = make_column(s);
  ListLevel& inner = c.inner_lists.at(0);
  for (const auto& row : rows) {
    for (const auto& list : row) {
      for (const T& v : list) c.as<T>().push_back(v);
      inner.offsets.push_back(static_cast<int64_t>(c.as<T>().size()));
    }
    c.list_offsets.push_back(inner.size());
  }
  return c;
}

TEST(ListTensors, ImagesAsListsOfRowsDecodeLikeThePixelColumns) {
  // small_image_table's three 2x2 images, each as a list of its two rows of pixels (list<list<INT64>>).
  const Table pixels = small_image_table();
  std::vector<std::vector<std::vector<int64_t>>> images;
  for (int64_t r = 0; r < pixels.num_rows; ++r) {
    std::vector<std::vector<int64_t>> rows(2);
    for (int p = 0; p < 4; ++p) {
      rows[static_cast<size_t>(p / 2)].push_back(static_cast<int64_t>(pixels.columns[1 + p].value_as_double(r)));
    }
    images.push_back(rows);
  }
  Table nested;
  nested.num_rows = pixels.num_rows;
  nested.columns = {pixels.columns[0], nested_list_column<int64_t>("image", PhysicalType::kInt64, images)};
  const ImageTensors want = decode_image_table(pixels, small_layout());
  const ImageTensors got = decode_image_table(nested, small_layout());
  EXPECT_TRUE(torch::equal(want.images, got.images));
  EXPECT_TRUE(torch::equal(want.labels, got.labels));
}

TEST(ListTensors, RegularListsOfListsMakeOneTensor) {
  // Two boxes of four coordinates a row: [rows, 2, 4].
  const Column boxes = nested_list_column<float>("boxes", PhysicalType::kFloat,
                                                 {{{0, 1, 2, 3}, {4, 5, 6, 7}}, {{8, 9, 10, 11}, {12, 13, 14, 15}},
                                                  {{16, 17, 18, 19}, {20, 21, 22, 23}}});
  const torch::Tensor t = list_column_tensor(boxes);
  EXPECT_EQ(t.sizes(), (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(t.dtype(), torch::kFloat32);
  EXPECT_FLOAT_EQ(t[1][0][2].item<float>(), 10.0f);
  EXPECT_FLOAT_EQ(t[2][1][3].item<float>(), 23.0f);
  // No rows: an empty tensor of the same rank.
  EXPECT_EQ(list_column_tensor(nested_list_column<float>("e", PhysicalType::kFloat, {})).sizes(),
            (std::vector<int64_t>{0, 0, 0}));

  // The first row that differs, at either level, is named.
  const Column rows_differ =
      nested_list_column<int64_t>("r", PhysicalType::kInt64, {{{1, 2}, {3, 4}}, {{5, 6}}, {{7, 8, 9}, {1, 2}}});
  EXPECT_EQ(error_of([&] { list_column_tensor(rows_differ); }), "column 'r' row 1 holds 1 elements, row 0 holds 2");
  const Column inner_differs =
      nested_list_column<int64_t>("b", PhysicalType::kInt64, {{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}, {{9, 1}, {2}}});
  EXPECT_EQ(error_of([&] { list_column_tensor(inner_differs); }),
            "column 'b' row 2 holds a list of 1 elements at depth 2, row 0's first holds 2");
  // A null inner list or element is refused by its row; list_column_tensors takes lists of values only.
  Column null_list = nested_list_column<int64_t>("n", PhysicalType::kInt64, {{{1}, {2}}, {{3}, {}}});
  null_list.schema.inner_list_nullable = {true};
  null_list.inner_lists[0].validity = {1, 1, 1, 0};
  EXPECT_EQ(error_of([&] { list_column_tensor(null_list); }), "column 'n' row 1 holds a null list");
  Column null_element = nested_list_column<int64_t>("n", PhysicalType::kInt64, {{{1}, {2}}, {{3}, {4}}});
  null_element.element_validity = {1, 1, 1, 0};
  EXPECT_EQ(error_of([&] { list_column_tensor(null_element); }), "column 'n' row 1 holds a null element");
  EXPECT_EQ(error_of([&] { list_column_tensors(boxes); }),
            "column 'boxes' is a list of lists (2 levels): list_column_tensors makes 1-D tensors of lists of values; "
            "list_column_tensor makes one tensor of a regular list of lists");
  // Every element in order, whatever the shape, as one 1-D tensor; its nulls refused or 0, as asked.
  EXPECT_TRUE(torch::equal(list_column_elements(rows_differ),
                           torch::tensor({1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2}, torch::kInt64)));
  EXPECT_EQ(error_of([&] { list_column_elements(null_element); }), "column 'n' row 1 holds a null element");
  EXPECT_TRUE(torch::equal(list_column_elements(null_element, ListNulls::kZero),
                           torch::tensor({1, 2, 3, 0}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(list_column_elements(null_list, ListNulls::kZero), torch::tensor({1, 2, 3}, torch::kInt64)));
}

TEST(ListTensors, AListImageColumnDecodesLikeThePixelColumns) {
  const Table table = small_image_table();
  const ImageTensors want = decode_image_table(table, small_layout());
  Table lists;
  lists.num_rows = 3;
  lists.columns.push_back(table.column("label"));
  std::vector<std::vector<int32_t>> images(3);
  for (int64_t r = 0; r < 3; ++r) {
    for (int p = 1; p <= 4; ++p) {
      images[r].push_back(static_cast<int32_t>(table.column("pixel" + std::to_string(p)).value_as_double(r)));
    }
  }
  lists.columns.push_back(list_column<int32_t>("image", PhysicalType::kInt32, images, IntAnnotation{8, false}));
  const ImageTensors got = decode_image_table(lists, small_layout());
  EXPECT_TRUE(torch::equal(got.images, want.images));
  EXPECT_TRUE(torch::equal(got.labels, want.labels));
  const ImageTensors raw = decode_image_table(lists, small_layout(), /*as_uint8=*/true);
  EXPECT_EQ(raw.images.dtype(), torch::kUInt8);
  EXPECT_EQ(raw.images[1][0][0][1].item<int64_t>(), table.column("pixel2").value_as_double(1));
  // Lists of the wrong length name the column.
  lists.columns[1] = list_column<int32_t>("image", PhysicalType::kInt32, {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}});
  EXPECT_EQ(error_of([&] { decode_image_table(lists, small_layout()); }),
            "column 'image' holds lists of 3 values, expected 4");
}

TEST(PngImages, EncodeDecodeAndErrors) {
  std::vector<uint8_t> pixels(28 * 28);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 37 + i / 28);
  const std::string png = encode_png_gray8(pixels.data(), 28, 28);
  EXPECT_TRUE(is_png(png));
  std::vector<uint8_t> back(pixels.size());
  decode_png_gray8(png, 28, 28, back.data());
  EXPECT_EQ(back, pixels);
  EXPECT_EQ(error_of([&] { decode_png_gray8(png, 56, 14, back.data()); }), "PNG of 28x28 pixels, expected 14x56");
  EXPECT_EQ(error_of([&] { decode_png_gray8("GIF89a..", 28, 28, back.data()); }), "not a PNG image (no PNG signature)");
  // Only 8-bit gray is taken, as it is stored: colour is not made gray, nor other depths scaled.
  std::vector<uint8_t> rgb(pixels.size() * 3, 9);
  const std::string colour = encode_png({rgb.data(), 28, 28, 3});
  EXPECT_EQ(error_of([&] { decode_png_gray8(colour, 28, 28, back.data()); }),
            "PNG of colour samples of 8 bits, expected 8-bit grayscale");
  const std::string gray16 = testing::file_bytes(testing::test_data_dir() + "/images/gray16.png");
  EXPECT_EQ(error_of([&] { decode_png_gray8(gray16, 1, 4, back.data()); }),
            "PNG of gray samples of 16 bits, expected 8-bit grayscale");
  // Truncated and corrupted files give an error, never a crash (libspng checks every chunk's CRC). The image
  // data ends before the IEND trailer: a file cut inside the trailer still holds the whole image, and reads.
  for (size_t cut : {size_t{8}, size_t{20}, size_t{40}, png.size() / 2}) {
    EXPECT_NE(error_of([&] { decode_png_gray8(png.substr(0, cut), 28, 28, back.data()); }), "") << cut;
  }
  std::fill(back.begin(), back.end(), 0);
  decode_png_gray8(png.substr(0, png.size() - 1), 28, 28, back.data());
  EXPECT_EQ(back, pixels);
  std::string flipped = png;
  flipped[png.size() / 2] = static_cast<char>(flipped[png.size() / 2] ^ 0x10);
  EXPECT_NE(error_of([&] { decode_png_gray8(flipped, 28, 28, back.data()); }), "");
}

// small_image_table's images as PNG files in a Hugging Face image struct (`image: {bytes, path}`), made by
// DuckDB from a flat table of our own.
TEST(PngImages, AHuggingFaceImageStructDecodesLikeThePixelColumns) {
  const Table pixels = small_image_table();
  const ImageTensors want = decode_image_table(pixels, small_layout(), /*as_uint8=*/true);
  Table flat;
  flat.num_rows = pixels.num_rows;
  flat.columns.push_back(pixels.column("label"));
  ColumnSchema bytes_schema{"image.bytes", PhysicalType::kByteArray};
  ColumnSchema path_schema{"image.path", PhysicalType::kByteArray};
  path_schema.is_string = true;
  Column bytes = make_column(bytes_schema), paths = make_column(path_schema);
  for (int64_t r = 0; r < pixels.num_rows; ++r) {
    const auto image = want.images[r].contiguous();
    std::get<ByteArrays>(bytes.values).push_back(encode_png_gray8(image.data_ptr<uint8_t>(), 2, 2));
    std::get<ByteArrays>(paths.values).push_back(std::to_string(r) + ".png");
  }
  flat.columns.push_back(bytes);
  flat.columns.push_back(paths);
  const std::string dir = testing::scratch_dir("hf-images");
  parquet::write_table(dir + "/flat.parquet", flat);
  std::string out;
  ASSERT_TRUE(testing::run_duckdb({"hf", dir + "/flat.parquet", dir + "/hf.parquet"}, &out));

  DatasetColumns columns;  // the defaults find `image.bytes`
  columns.feature_count = 4;
  const Table table = read_dataset_table(dir + "/hf.parquet", columns);
  ASSERT_EQ(table.columns.size(), 2u);
  EXPECT_EQ(table.columns[1].schema.name, "image.bytes");
  const ImageTensors got = decode_image_table(table, small_layout(), /*as_uint8=*/true);
  EXPECT_TRUE(torch::equal(got.images, want.images));
  EXPECT_TRUE(torch::equal(got.labels, want.labels));
  EXPECT_TRUE(torch::allclose(decode_image_table(table, small_layout()).images, want.images.to(torch::kFloat32) / 255));

  // A row that is no PNG names the column and the row.
  Table bad = table;
  ByteArrays broken;
  for (int64_t r = 0; r < bad.num_rows; ++r) {
    broken.push_back(r == 1 ? std::string("not a png") : std::string(table.columns[1].byte_arrays().at(r)));
  }
  bad.columns[1].values = broken;
  EXPECT_EQ(error_of([&] { decode_image_table(bad, small_layout()); }),
            "column 'image.bytes' row 1: not a PNG image (no PNG signature)");
}

}  // namespace
}  // namespace feedline
