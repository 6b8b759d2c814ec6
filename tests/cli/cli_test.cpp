// End-to-end tests of the `feedline` executable on small data the tests make themselves.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/cuda.h>

#include "cli/cli_support.h"
#include "feedline/dataset/dataset.h"
#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/idx.h"
#include "feedline/io/parquet.h"
#include "feedline/train/models.h"
#include "io/parquet_test_support.h"
#include "test_paths.h"

namespace feedline {
namespace {

using testing::CliRun;
using testing::file_bytes;
using testing::make_idx_dir;
using testing::run_cli;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(Cli, RejectsUnknownFlagsAndBadValues) {
  CliRun r = run_cli("train --no-such-flag");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "no-such-flag")) << r.output;
  r = run_cli("train --batch-size 0");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "batch-size")) << r.output;
  r = run_cli("train --dataset cifar");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "cifar")) << r.output;
  r = run_cli("train --dataset-mode gpu");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "gpu")) << r.output;
  // Refused before any data is read (the data folder does not exist).
  r = run_cli("train --cuda-graph --device cpu --data-dir /nonexistent");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "--cuda-graph needs a CUDA device")) << r.output;
  EXPECT_FALSE(contains(r.output, "nonexistent")) << r.output;
  r = run_cli("");
  EXPECT_NE(r.status, 0);
  // A bad allocator setting is named and refused; --help still answers.
  r = run_cli("train --data-dir /nonexistent", "FEEDLINE_MALLOC=fast");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "FEEDLINE_MALLOC must be 'feedline' (the default) or 'system', not 'fast'"))
      << r.output;
  r = run_cli("train --help", "FEEDLINE_MALLOC=fast");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--batch-size")) << r.output;
}

TEST(Cli, MissingDataNamesTheFileAndTheFix) {
  const std::string dir = testing::scratch_dir("cli_missing");
  CliRun r = run_cli("train --data-dir " + dir + " --device cpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/FashionMNIST/train.parquet: not found")) << r.output;
  EXPECT_TRUE(contains(r.output, "feedline prepare")) << r.output;
  r = run_cli("prepare --dataset mnist --mnist-idx " + dir + " --data-dir " + dir + "/out");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/train-images-idx3-ubyte[.gz]: not found")) << r.output;
}

TEST(Cli, CorruptIdxFailsCleanlyAndWritesNothing) {
  const std::string idx = make_idx_dir("cli_corrupt_idx", 20, 10);
  std::filesystem::resize_file(idx + "/train-images-idx3-ubyte", 1000);
  const std::string out = testing::scratch_dir("cli_corrupt_out");
  CliRun r = run_cli("prepare --dataset mnist --mnist-idx " + idx + " --data-dir " + out);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "train-images-idx3-ubyte: truncated")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out + "/MNIST/train.csv"));
  EXPECT_FALSE(std::filesystem::exists(out + "/MNIST/train.parquet"));
}

TEST(Cli, PrepareThenTrainPrintsTheExperimentsLines) {
  const std::string idx = make_idx_dir("cli_e2e_idx", 600, 200);
  const std::string data = testing::scratch_dir("cli_e2e_data");
  CliRun r = run_cli("prepare --dataset mnist --mnist-idx " + idx + " --data-dir " + data);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Storage")) << r.output;
  for (const char* f : {"train.csv", "test.csv", "train.parquet", "test.parquet"}) {
    EXPECT_TRUE(std::filesystem::exists(data + "/MNIST/" + f)) << f;
  }
  const std::string prepared = "--dataset mnist --data-dir " + data;
  std::vector<std::string> variants{
      "--device cpu " + prepared + " --format parquet --dataset-mode tensor --num-workers 2",
      "--device cpu " + prepared + " --format csv --dataset-mode row --num-workers 1 --persistent-workers",
      "--device cpu " + prepared + " --dataset-mode tensor-uint8 --num-workers 1",
      "--device cpu " + prepared + " --dataset-mode device",
      "--device cpu --data " + data + "/MNIST/train.parquet --test-data " + data + "/MNIST/test.csv"};
  // 600 samples in batches of 32: the last batch (24) runs uncaptured beside the replayed graph.
  if (torch::cuda::is_available()) variants.push_back("--device cuda " + prepared + " --dataset-mode device --cuda-graph");
  for (const std::string& variant : variants) {
    r = run_cli("train --epochs 3 --batch-size 32 " + variant);
    ASSERT_EQ(r.status, 0) << variant << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "SimpleCNN: 206922 parameters")) << r.output;
    for (const char* line : {"Average Train Time per Epoch: ", "Average Test Time per Epoch: ", "Total Train Time: ",
                             "Total Test Time: ", "Test Accuracy: "}) {
      EXPECT_TRUE(contains(r.output, line)) << line << "\n" << r.output;
    }
    // The classes are easy to separate: three epochs must get far past chance (10%).
    const auto at = r.output.find("Test Accuracy: ");
    ASSERT_NE(at, std::string::npos);
    EXPECT_GE(std::stod(r.output.substr(at + 15)), 80.0) << r.output;
    if (contains(variant, "--cuda-graph")) {
      EXPECT_TRUE(contains(r.output, "CUDA graph capture took")) << r.output;
    }
  }

  // --save writes the trained model: loaded back, it scores on the test split what train printed.
  const std::string model_path = data + "/models/mnist.pt";
  r = run_cli("train --epochs 1 --batch-size 32 --device cpu " + prepared + " --save " + model_path);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Saved the trained model to " + model_path)) << r.output;
  const auto at = r.output.find("Test Accuracy: ");
  ASSERT_NE(at, std::string::npos);
  SimpleCNN model;
  load_module(*model, model_path);
  model->eval();
  const ImageTensors test = decode_image_table(parquet::read_table(data + "/MNIST/test.parquet"));
  torch::NoGradGuard no_grad;
  const double accuracy =
      100.0 * model->forward(test.images).argmax(1).eq(test.labels).sum().item<double>() / test.labels.size(0);
  EXPECT_NEAR(accuracy, std::stod(r.output.substr(at + 15)), 0.006) << r.output;
  // A path that cannot be written is refused before any training.
  r = run_cli("train --device cpu " + prepared + " --save " + model_path + "/inside.pt");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "--save " + model_path + "/inside.pt: cannot make the folder")) << r.output;
  EXPECT_FALSE(contains(r.output, "Epoch 1")) << r.output;
}

size_t count_of(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

// The tiny dataset of make_idx_dir as a table of another shape: `id`, a text column `note` (which the CSV
// reader cannot parse: reading it would fail), the label as `digit`, then `px0..px783`.
Table renamed_table(const std::string& idx, const std::string& prefix) {
  const Table pixels = image_split_to_table(read_idx_split(idx + "/" + prefix + "-images-idx3-ubyte",
                                                           idx + "/" + prefix + "-labels-idx1-ubyte"));
  Table t;
  t.num_rows = pixels.num_rows;
  Column id = make_column(ColumnSchema{"id"});
  ColumnSchema note_schema{"note", PhysicalType::kByteArray};
  note_schema.is_string = true;
  Column note = make_column(note_schema);
  for (int64_t r = 0; r < t.num_rows; ++r) {
    id.as<int64_t>().push_back(r);
    std::get<ByteArrays>(note.values).push_back("sample " + std::to_string(r));
  }
  t.columns = {id, note};
  for (size_t c = 0; c < pixels.columns.size(); ++c) {
    Column col = pixels.columns[c];
    col.schema.name = c == 0 ? "digit" : "px" + std::to_string(c - 1);
    t.columns.push_back(std::move(col));
  }
  return t;
}

TEST(Cli, TrainOnAnyFileWithChosenColumns) {
  const std::string idx = make_idx_dir("cli_columns_idx", 600, 200);
  const std::string dir = testing::scratch_dir("cli_columns_data");
  write_csv(dir + "/train.csv", renamed_table(idx, "train"));
  parquet::write_table(dir + "/test.parquet", renamed_table(idx, "t10k"));
  const std::string files = " --data " + dir + "/train.csv --test-data " + dir + "/test.parquet";
  // The last pattern's literal is split: ?? and ' together make a trigraph.
  CliRun r = run_cli("train" + files + " --label-column digit --feature-columns 'px?,px??,px??" "?' --epochs 3 "
                     "--batch-size 32 --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "600 train, 200 test samples")) << r.output;
  const auto at = r.output.find("Test Accuracy: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_GE(std::stod(r.output.substr(at + 15)), 80.0) << r.output;

  // The row dataset and --columns take the same columns; --limit still applies.
  std::string only = "digit";
  for (int p = 0; p < 784; ++p) only += ",px" + std::to_string(p);
  r = run_cli("train" + files + " --label-column digit --feature-columns 'px*' --columns " + only +
              " --dataset-mode row --epochs 1 --limit 64 --batch-size 32 --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "64 train, 64 test samples")) << r.output;
  EXPECT_TRUE(contains(r.output, "Test Accuracy: ")) << r.output;

  // Row groups of Parquet files: the test file has one.
  parquet::write_table(dir + "/train.parquet", renamed_table(idx, "train"));
  const std::string both = " --data " + dir + "/train.parquet --test-data " + dir + "/test.parquet";
  r = run_cli("train" + both + " --label-column digit --feature-columns 'px*' --row-groups 0 --epochs 1 "
              "--batch-size 64 --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "600 train, 200 test samples")) << r.output;
  r = run_cli("train" + both + " --label-column digit --feature-columns 'px*' --row-groups 1 --device cpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/train.parquet: no row group 1 (the file has 1)")) << r.output;
}

// Files in `dir` other than `keep`: what a refused command must not leave behind (outputs, temporary files).
std::vector<std::string> files_besides(const std::string& dir, const std::vector<std::string>& keep) {
  std::vector<std::string> extra;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (std::find(keep.begin(), keep.end(), name) == keep.end()) extra.push_back(name);
  }
  return extra;
}

TEST(Cli, ConvertPacksNarrowsAndRoundTrips) {
  const std::string idx = make_idx_dir("cli_convert_idx", 50, 10);
  const std::string dir = testing::scratch_dir("cli_convert");
  const Table pandas = image_split_to_table(read_idx_split(idx + "/train-images-idx3-ubyte", idx + "/train-labels-idx1-ubyte"),
                                            ImageTableLayoutKind::kPixelColumnsInt64);
  write_csv(dir + "/train.csv", pandas);

  // The row-major layout from the experiment's CSV: one FIXED_LEN_BYTE_ARRAY(784) column, uint8 labels.
  CliRun r = run_cli("convert " + dir + "/train.csv " + dir + "/image.parquet --pack 'image=pixel*' --narrow-ints "
                     "--codec gzip --level 9 --row-group-rows 20");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Packed pixel1..pixel784 (784 columns) into 'image' (FIXED_LEN_BYTE_ARRAY(784))"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "Narrowed 1 integer column to INT(8,unsigned)")) << r.output;
  EXPECT_TRUE(contains(r.output, "Wrote " + dir + "/image.parquet: 50 rows, 2 columns")) << r.output;
  const parquet::FileInfo info = parquet::read_file_info(dir + "/image.parquet");
  ASSERT_EQ(info.schema.size(), 2u);
  EXPECT_EQ(info.schema[1].type, PhysicalType::kFixedLenByteArray);
  EXPECT_EQ(info.schema[0].int_annotation, (IntAnnotation{8, false}));
  ASSERT_EQ(info.row_groups.size(), 3u);
  EXPECT_EQ(info.row_groups[0].columns[1].codec, "gzip");
  const ImageTensors want = decode_image_table(pandas);
  const ImageTensors got = decode_image_table(parquet::read_table(dir + "/image.parquet"));
  EXPECT_TRUE(torch::equal(want.images, got.images));
  EXPECT_TRUE(torch::equal(want.labels, got.labels));

  // Lists of the chosen columns' values, the first rows only, no dictionary pages.
  r = run_cli("convert " + dir + "/train.csv " + dir + "/list.parquet --columns 'label,pixel1*' --limit 7 "
              "--pack 'v=pixel1*' --pack-as list --no-dictionary");
  ASSERT_EQ(r.status, 0) << r.output;
  const Table lists = parquet::read_table(dir + "/list.parquet");
  ASSERT_EQ(lists.num_rows, 7);
  ASSERT_EQ(lists.columns.size(), 2u);
  const Column& v = lists.column("v");
  ASSERT_TRUE(v.schema.is_list);
  ASSERT_EQ(v.list_size(3), 111);  // pixel1, pixel10..19, pixel100..199
  const std::vector<std::string> order = [] {
    std::vector<std::string> n{"pixel1"};
    for (int i = 10; i <= 19; ++i) n.push_back("pixel" + std::to_string(i));
    for (int i = 100; i <= 199; ++i) n.push_back("pixel" + std::to_string(i));
    return n;
  }();
  for (int64_t k = 0; k < 111; ++k) {
    EXPECT_EQ(v.as<int64_t>()[static_cast<size_t>(v.list_offsets[3] + k)],
              pandas.column(order[static_cast<size_t>(k)]).as<int64_t>()[3])
        << order[static_cast<size_t>(k)];
  }
  const parquet::FileInfo list_info = parquet::read_file_info(dir + "/list.parquet");
  for (const auto& chunk : list_info.row_groups[0].columns) {
    EXPECT_EQ(std::count(chunk.encodings.begin(), chunk.encodings.end(), "RLE_DICTIONARY"), 0);
  }

  // Parquet back to CSV gives the very bytes the CSV writer wrote, narrowed or not.
  r = run_cli("convert " + dir + "/train.csv " + dir + "/narrow.parquet --narrow-ints");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Narrowed 785 integer columns to INT(8,unsigned)")) << r.output;
  r = run_cli("convert " + dir + "/narrow.parquet " + dir + "/back.csv");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(file_bytes(dir + "/back.csv"), file_bytes(dir + "/train.csv"));

  // A pandas-like file (INT64, SNAPPY) narrowed is, byte for byte, the file `prepare` writes for the same images.
  parquet::WriteOptions snappy;
  snappy.codec = parquet::Codec::kSnappy;
  parquet::write_table(dir + "/pandas.parquet", pandas, snappy);
  r = run_cli("convert " + dir + "/pandas.parquet " + dir + "/ours.parquet --narrow-ints");
  ASSERT_EQ(r.status, 0) << r.output;
  parquet::write_table(dir + "/prepared.parquet",
                       image_split_to_table(read_idx_split(idx + "/train-images-idx3-ubyte", idx + "/train-labels-idx1-ubyte")));
  EXPECT_EQ(file_bytes(dir + "/ours.parquet"), file_bytes(dir + "/prepared.parquet"));
}

// A Parquet input is converted a row group at a time, and comes out as if converted whole: narrowing sees every
// row group's values first, --limit and the output's row groups cut across the input's, and a refusal names the
// row in the file.
TEST(Cli, ConvertStreamsRowGroupsAsOneTable) {
  const std::string idx = make_idx_dir("cli_convert_stream_idx", 50, 10);
  const std::string dir = testing::scratch_dir("cli_convert_stream");
  Table pandas = image_split_to_table(read_idx_split(idx + "/train-images-idx3-ubyte", idx + "/train-labels-idx1-ubyte"),
                                      ImageTableLayoutKind::kPixelColumnsInt64);
  pandas.columns[pandas.column_index("pixel5")].as<int64_t>()[48] = 300;  // in the last row group only
  parquet::WriteOptions groups_of_7;
  groups_of_7.row_group_rows = 7;
  parquet::write_table(dir + "/in.parquet", pandas, groups_of_7);

  CliRun r = run_cli("convert " + dir + "/in.parquet " + dir + "/narrow.parquet --narrow-ints --row-group-rows 20");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Narrowed 1 integer column to INT(16,unsigned)")) << r.output;
  EXPECT_TRUE(contains(r.output, "Narrowed 784 integer columns to INT(8,unsigned)")) << r.output;
  const parquet::FileInfo info = parquet::read_file_info(dir + "/narrow.parquet");
  ASSERT_EQ(info.row_groups.size(), 3u);
  EXPECT_EQ(info.row_groups[2].num_rows, 10);
  const Table back = parquet::read_table(dir + "/narrow.parquet");
  ASSERT_EQ(back.num_rows, 50);
  EXPECT_EQ(back.column("pixel5").as<int32_t>()[48], 300);
  for (const std::string name : {"label", "pixel1", "pixel400"}) {
    const std::vector<int32_t>& got = back.column(name).as<int32_t>();
    const std::vector<int64_t>& want = pandas.column(name).as<int64_t>();
    EXPECT_EQ(std::vector<int64_t>(got.begin(), got.end()), want) << name;
  }

  r = run_cli("convert " + dir + "/in.parquet " + dir + "/head.csv --limit 10");
  ASSERT_EQ(r.status, 0) << r.output;
  write_csv(dir + "/want.csv", head(pandas, 10));
  EXPECT_EQ(file_bytes(dir + "/head.csv"), file_bytes(dir + "/want.csv"));

  r = run_cli("convert " + dir + "/in.parquet " + dir + "/image.parquet --pack 'image=pixel*'");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, dir + "/in.parquet: column 'pixel5' row 48 holds 300")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/image.parquet"));
}

// --narrow-ints on a CSV file takes each column's range from the reader's typing pass (packed lists get the
// union of their columns'), and narrows as a pass over the blocks does: the same file from the CSV as from the
// same table in Parquet, whose values are read twice. A value a pack refuses is still named by its row.
TEST(Cli, ConvertNarrowsACsvFromItsFirstPass) {
  const std::string dir = testing::scratch_dir("cli_convert_csv_ranges");
  // a: 0..10, b: -5..3, c: 1000, label: 0..2; empty: all null; note: text; x: doubles.
  std::string text = "label,a,b,c,empty,note,x\n";
  for (int i = 0; i < 40; ++i) {
    text += std::to_string(i % 3) + "," + std::to_string(i % 11) + "," + std::to_string(i % 9 - 5) + ",1000,," +
            "n" + std::to_string(i) + "," + std::to_string(i) + ".5\n";
  }
  std::ofstream(dir + "/in.csv") << text;
  CliRun r = run_cli("convert " + dir + "/in.csv " + dir + "/wide.parquet");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const std::string pack : {"", " --pack 'v=a,b,c' --pack-as list", " --pack 'v=a,c' --pack-as list",
                                 " --pack 'v=a' --pack-as bytes", " --columns 'label,a' --limit 5"}) {
    SCOPED_TRACE(pack);
    r = run_cli("convert " + dir + "/in.csv " + dir + "/from_csv.parquet --narrow-ints" + pack);
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_cli("convert " + dir + "/wide.parquet " + dir + "/from_parquet.parquet --narrow-ints" + pack);
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(file_bytes(dir + "/from_csv.parquet"), file_bytes(dir + "/from_parquet.parquet"));
  }
  const parquet::FileInfo info = parquet::read_file_info(dir + "/from_csv.parquet");
  EXPECT_EQ(info.schema.at(1).int_annotation, (IntAnnotation{8, false}));  // a, of the first 5 rows
  const Table lists = [&] {
    run_cli("convert " + dir + "/in.csv " + dir + "/lists.parquet --narrow-ints --pack 'v=a,b,c' --pack-as list");
    return parquet::read_table(dir + "/lists.parquet");
  }();
  EXPECT_EQ(lists.column("v").schema.int_annotation, (IntAnnotation{16, true}));  // -5..1000
  EXPECT_EQ(lists.column("label").schema.int_annotation, (IntAnnotation{8, false}));
  EXPECT_EQ(lists.column("empty").schema.type, PhysicalType::kInt64);  // no value: its type kept
  EXPECT_FALSE(lists.column("empty").schema.int_annotation.has_value());

  // c holds 1000, which no byte holds: the error names the first row that does, as without --narrow-ints.
  r = run_cli("convert " + dir + "/in.csv " + dir + "/bytes.parquet --narrow-ints --pack 'v=a,c'");
  EXPECT_NE(r.status, 0);
  const CliRun plain = run_cli("convert " + dir + "/in.csv " + dir + "/bytes.parquet --pack 'v=a,c'");
  EXPECT_NE(plain.status, 0);
  EXPECT_TRUE(contains(r.output, dir + "/in.csv: column 'c' row 0 holds 1000")) << r.output;
  EXPECT_EQ(r.output.substr(r.output.find("error")), plain.output.substr(plain.output.find("error")));
  EXPECT_FALSE(std::filesystem::exists(dir + "/bytes.parquet"));
}

// --narrow-ints on a Parquet file takes each integer column's range from the footer's statistics, and narrows as
// a pass over the values does: the same output as from the same file written without statistics (which takes
// the pass), with packs, chosen columns, a null chunk and a list column. A footer whose statistics leave out a
// value still converts right: the conversion starts again from a pass.
TEST(Cli, ConvertNarrowsAParquetFileFromItsStatistics) {
  const std::string dir = testing::scratch_dir("cli_convert_parquet_stats");
  const auto int64_column = [](const std::string& name, bool nullable) {
    ColumnSchema s;
    s.name = name;
    s.type = PhysicalType::kInt64;
    s.nullable = nullable;
    return make_column(s);
  };
  // 40 rows in row groups of 10. a: 0..250; b: -5..30000; c: null but in the last row group (100030..100039);
  // e: lists of 0..1000, some empty; x: doubles; s: text.
  Table t;
  t.num_rows = 40;
  Column a = int64_column("a", false), b = int64_column("b", false), c = int64_column("c", true);
  ColumnSchema es;
  es.name = "e";
  es.type = PhysicalType::kInt64;
  es.is_list = true;
  Column e = make_column(es);
  ColumnSchema xs;
  xs.name = "x";
  xs.type = PhysicalType::kDouble;
  Column x = make_column(xs);
  ColumnSchema ss;
  ss.name = "s";
  ss.type = PhysicalType::kByteArray;
  ss.is_string = true;
  Column text = make_column(ss);
  for (int64_t i = 0; i < 40; ++i) {
    a.as<int64_t>().push_back(i * 250 / 39);
    b.as<int64_t>().push_back(i == 7 ? -5 : i == 33 ? 30000 : i);
    c.as<int64_t>().push_back(i >= 30 ? 100000 + i : 0);
    c.validity.push_back(i >= 30);
    for (int64_t k = 0; k < i % 3; ++k) e.as<int64_t>().push_back((i * 25 + k) % 1001);
    e.list_offsets.push_back(static_cast<int64_t>(e.as<int64_t>().size()));
    x.as<double>().push_back(static_cast<double>(i) / 4);
    std::get<ByteArrays>(text.values).push_back("row " + std::to_string(i));
  }
  for (Column* col : {&a, &b, &c, &e, &x, &text}) t.columns.push_back(std::move(*col));
  parquet::WriteOptions options;
  options.row_group_rows = 10;
  parquet::write_table(dir + "/stats.parquet", t, options);
  options.statistics = false;
  parquet::write_table(dir + "/bare.parquet", t, options);
  ASSERT_FALSE(parquet::read_file_info(dir + "/stats.parquet").row_groups[0].columns[0].min.empty());
  ASSERT_TRUE(parquet::read_file_info(dir + "/bare.parquet").row_groups[0].columns[0].min.empty());

  for (const std::string more : {"", " --pack 'v=a,b' --pack-as list", " --pack 'v=a' --pack-as bytes",
                                 " --columns 'e,c,a'", " --limit 15"}) {
    SCOPED_TRACE(more);
    CliRun r = run_cli("convert " + dir + "/stats.parquet " + dir + "/from_stats.parquet --narrow-ints" + more);
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_cli("convert " + dir + "/bare.parquet " + dir + "/from_pass.parquet --narrow-ints" + more);
    ASSERT_EQ(r.status, 0) << r.output;
    // The outputs differ only in the statistics the inputs had (kept or not): compare their tables and schemas.
    const Table from_stats = parquet::read_table(dir + "/from_stats.parquet");
    testing::expect_tables_equal(from_stats, parquet::read_table(dir + "/from_pass.parquet"));
  }
  CliRun r = run_cli("convert " + dir + "/stats.parquet " + dir + "/narrow.parquet --narrow-ints");
  ASSERT_EQ(r.status, 0) << r.output;
  const Table narrow = parquet::read_table(dir + "/narrow.parquet");
  EXPECT_EQ(narrow.column("a").schema.int_annotation, (IntAnnotation{8, false}));
  EXPECT_EQ(narrow.column("b").schema.int_annotation, (IntAnnotation{16, true}));
  EXPECT_EQ(narrow.column("c").schema.int_annotation, (IntAnnotation{32, false}));
  EXPECT_EQ(narrow.column("e").schema.int_annotation, (IntAnnotation{16, false}));
  EXPECT_EQ(narrow.column("x").schema.type, PhysicalType::kDouble);
  EXPECT_EQ(narrow.column("c").as<int32_t>()[39], 100039);
  EXPECT_TRUE(narrow.column("c").is_null(29));

  // A footer whose statistics say b's greatest value is 100, where row 33 holds 30000: INT(8,signed), which
  // would not hold it, so the conversion starts again from a pass, and nothing half-written is left behind.
  std::string bytes = file_bytes(dir + "/stats.parquet");
  const std::string footer_len = bytes.substr(bytes.size() - 8, 4);
  const size_t footer = bytes.size() - 8 - static_cast<size_t>(static_cast<uint8_t>(footer_len[0]) |
                                                               static_cast<uint8_t>(footer_len[1]) << 8);
  const std::string max_30000("\x08\x30\x75\0\0\0\0\0\0", 9), max_100("\x08\x64\0\0\0\0\0\0\0", 9);
  int patched = 0;
  for (size_t at = bytes.find(max_30000, footer); at != std::string::npos; at = bytes.find(max_30000, at + 1)) {
    bytes.replace(at, max_100.size(), max_100);
    ++patched;
  }
  ASSERT_GT(patched, 0);
  std::ofstream(dir + "/lying.parquet", std::ios::binary) << bytes;
  ASSERT_EQ(parquet::read_file_info(dir + "/lying.parquet").row_groups[3].columns[1].max,
            std::string("\x64\0\0\0\0\0\0\0", 8));
  r = run_cli("convert " + dir + "/lying.parquet " + dir + "/fixed.parquet --narrow-ints");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "column 'b' row 33 holds 30000")) << r.output;
  EXPECT_TRUE(contains(r.output, "the footer's statistics do not hold it")) << r.output;
  testing::expect_tables_equal(parquet::read_table(dir + "/fixed.parquet"), narrow);
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files += entry.is_regular_file();
  EXPECT_EQ(files, 7u);  // stats, bare, from_stats, from_pass, narrow, lying, fixed, and no temporary file
}

// --row-group-rows 0 (the default): row groups of up to 2^20 rows, fewer when that many would take more than
// 256 MiB in memory (measured on the first block).
TEST(Cli, ConvertChoosesRowGroupsByRowsAndBytes) {
  const std::string dir = testing::scratch_dir("cli_convert_auto_row_groups");
  constexpr int64_t kMaxRows = int64_t{1} << 20;
  {
    std::ofstream csv(dir + "/long.csv");
    csv << "label\n";
    for (int64_t i = 0; i < kMaxRows + 1000; ++i) csv << i % 10 << '\n';
  }
  CliRun r = run_cli("convert " + dir + "/long.csv " + dir + "/long.parquet");
  ASSERT_EQ(r.status, 0) << r.output;
  parquet::FileInfo info = parquet::read_file_info(dir + "/long.parquet");
  ASSERT_EQ(info.row_groups.size(), 2u);
  EXPECT_EQ(info.row_groups[0].num_rows, kMaxRows);
  EXPECT_EQ(info.row_groups[1].num_rows, 1000);

  // Rows of 64 KiB (and an 8-byte offset each): 4,095 of them make 256 MiB. Zeros, so the files stay small.
  constexpr int32_t kRowBytes = 64 << 10;
  constexpr int64_t kRows = 4200;
  ColumnSchema image_schema{"image", PhysicalType::kFixedLenByteArray};
  image_schema.type_length = kRowBytes;
  Table wide;
  wide.num_rows = kRows;
  wide.columns.push_back(make_column(image_schema));
  ByteArrays& images = std::get<ByteArrays>(wide.columns[0].values);
  images.bytes.assign(static_cast<size_t>(kRows * kRowBytes), '\0');
  images.offsets.resize(kRows + 1);
  for (int64_t i = 0; i <= kRows; ++i) images.offsets[static_cast<size_t>(i)] = i * kRowBytes;
  parquet::WriteOptions one_group;
  one_group.row_group_rows = kRows;
  parquet::write_table(dir + "/wide.parquet", wide, one_group);
  wide = Table();
  r = run_cli("convert " + dir + "/wide.parquet " + dir + "/wide_out.parquet");
  ASSERT_EQ(r.status, 0) << r.output;
  info = parquet::read_file_info(dir + "/wide_out.parquet");
  const int64_t per_group = (int64_t{256} << 20) / (kRowBytes + 8);
  ASSERT_EQ(per_group, 4095);
  ASSERT_EQ(info.row_groups.size(), 2u);
  EXPECT_EQ(info.row_groups[0].num_rows, per_group);
  EXPECT_EQ(info.row_groups[1].num_rows, kRows - per_group);
  EXPECT_TRUE(remove_tree(dir));
}

// With --limit a CSV file is read up to that row: what comes after is neither typed nor checked.
TEST(Cli, ConvertLimitReadsACsvOnlyToItsLastRow) {
  const std::string dir = testing::scratch_dir("cli_convert_limit");
  std::string text = "label,x\n";
  for (int i = 0; i < 5; ++i) text += std::to_string(i) + "," + std::to_string(i * 10) + "\n";
  text += "5,text\n6,60,ragged\n";
  std::ofstream(dir + "/in.csv") << text;
  CliRun r = run_cli("convert " + dir + "/in.csv " + dir + "/head.parquet --limit 5 --narrow-ints");
  ASSERT_EQ(r.status, 0) << r.output;
  const Table head = parquet::read_table(dir + "/head.parquet");
  ASSERT_EQ(head.num_rows, 5);
  EXPECT_EQ(head.column("x").schema.int_annotation, (IntAnnotation{8, false}));  // a number column: "text" unread
  EXPECT_EQ(head.column("x").as<int32_t>()[4], 40);
  r = run_cli("convert " + dir + "/in.csv " + dir + "/all.parquet");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, dir + "/in.csv:8: 3 fields, the header has 2")) << r.output;
}

TEST(Cli, ConvertKeepsTextColumns) {
  const std::string idx = make_idx_dir("cli_convert_text_idx", 20, 10);
  const std::string dir = testing::scratch_dir("cli_convert_text");
  Table t = renamed_table(idx, "t10k");
  std::get<ByteArrays>(t.columns[1].values) = ByteArrays{};
  for (int64_t r = 0; r < t.num_rows; ++r) {
    std::get<ByteArrays>(t.columns[1].values).push_back(r % 2 ? "sample, \"" + std::to_string(r) + "\"\nnext line" : "");
  }
  write_csv(dir + "/in.csv", t);
  CliRun r = run_cli("convert " + dir + "/in.csv " + dir + "/out.parquet --pack 'image=px*' --narrow-ints");
  ASSERT_EQ(r.status, 0) << r.output;
  const Table back = parquet::read_table(dir + "/out.parquet");
  ASSERT_EQ(back.columns.size(), 4u);  // id, note, digit, image
  const Column& note = back.column("note");
  EXPECT_TRUE(note.schema.is_string);
  for (int64_t row = 0; row < t.num_rows; ++row) {
    EXPECT_EQ(note.byte_arrays().at(row), t.columns[1].byte_arrays().at(row)) << row;
    EXPECT_FALSE(note.is_null(row)) << row;  // "" is the empty string, not a null
  }
  // And back to CSV: the same bytes, the text quoted as before.
  ASSERT_EQ(run_cli("convert " + dir + "/in.csv " + dir + "/same.parquet").status, 0);
  r = run_cli("convert " + dir + "/same.parquet " + dir + "/back.csv");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(file_bytes(dir + "/back.csv"), file_bytes(dir + "/in.csv"));
}

TEST(Cli, ConvertRefusesCleanlyAndWritesNothing) {
  const std::string dir = testing::scratch_dir("cli_convert_bad");
  Table t;
  t.num_rows = 5;
  for (const std::string name : {"label", "pixel1", "pixel2"}) {
    Column c = make_column(ColumnSchema{name});
    c.as<int64_t>() = {1, 2, 3, 4, 5};
    t.columns.push_back(c);
  }
  t.columns[2].as<int64_t>()[3] = 300;
  write_csv(dir + "/in.csv", t);
  const std::vector<std::string> inputs{"in.csv"};

  const std::string in = dir + "/in.csv";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"convert " + in + " " + dir + "/out.parquet --pack 'image=pixel*'",
       in + ": column 'pixel2' row 3 holds 300; packing as bytes needs every value in 0..255"},
      {"convert " + in + " " + dir + "/out.txt", dir + "/out.txt: cannot tell the format from the name"},
      {"convert " + in + " " + dir + "/none/out.parquet", "the folder " + dir + "/none does not exist"},
      {"convert " + in + " " + dir + "/out.parquet --pack image", "--pack 'image': expected NAME=PATTERN"},
      {"convert " + in + " " + dir + "/out.parquet --pack 'label=pixel*'", "a column left in the table has that name"},
      {"convert " + in + " " + dir + "/out.parquet --codec snappy --level 3", "--level applies to zstd, gzip and brotli"},
      {"convert " + in + " " + dir + "/out.parquet --level 23", "--level 23: zstd's levels are 1 to 22"},
      {"convert " + in + " " + dir + "/out.parquet --columns 'nothing*'", in + ": no column matches 'nothing*'"},
      {"convert " + dir + "/missing.csv " + dir + "/out.parquet", "missing.csv"},
      {"convert " + in + " " + dir + "/out.parquet --pack-as list", "--pack-as requires --pack"},
  };
  for (const auto& [args, message] : cases) {
    const CliRun r = run_cli(args);
    EXPECT_NE(r.status, 0) << args << "\n" << r.output;  // 1, or CLI11's code for a flag error
    EXPECT_TRUE(contains(r.output, message)) << args << "\n" << r.output;
    EXPECT_EQ(files_besides(dir, inputs), std::vector<std::string>{}) << args;
  }
}

// `count` 3x8x8 images of 4 classes, `y` then `v0..v191` (channel-major): class c < 3 brightens channel c, class 3
// the first pixel of every row in all channels.
Table colour_table(int64_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  Table t;
  t.num_rows = count;
  t.columns.push_back(make_column(ColumnSchema{"y"}));
  for (int i = 0; i < 192; ++i) t.columns.push_back(make_column(ColumnSchema{"v" + std::to_string(i)}));
  for (int64_t r = 0; r < count; ++r) {
    const int64_t y = r % 4;
    t.columns[0].as<int64_t>().push_back(y);
    for (int i = 0; i < 192; ++i) {
      int64_t v = static_cast<int64_t>(gen() % 60);
      if (y < 3 && i / 64 == y) v += 150;
      if (y == 3 && i % 8 == 0) v = 250;
      t.columns[static_cast<size_t>(1 + i)].as<int64_t>().push_back(v);
    }
  }
  return t;
}

TEST(Cli, TrainsOnOtherImageShapesAndClassCounts) {
  const std::string dir = testing::scratch_dir("cli_shape");
  write_csv(dir + "/train.csv", colour_table(400, 1));
  parquet::write_table(dir + "/test.parquet", colour_table(100, 2));
  const std::string files = " --data " + dir + "/train.csv --test-data " + dir + "/test.parquet --label-column y "
                            "--feature-columns 'v*' --device cpu --batch-size 32";
  CliRun r = run_cli("train" + files + " --image-shape 3x8x8 --epochs 3 --save " + dir + "/model.pt");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "3x8x8 images, 4 classes")) << r.output;
  const auto at = r.output.find("Test Accuracy: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_GE(std::stod(r.output.substr(at + 15)), 90.0) << r.output;  // chance: 25%
  SimpleCNN model(SimpleCNNOptions().channels(3).height(8).width(8).classes(4));
  load_module(*model, dir + "/model.pt");  // the saved model has this shape
  SimpleCNN experiments;  // 1x28x28, 10 classes: refused, and left as it was
  const auto fc1 = experiments->named_parameters()["fc1.weight"].clone();
  try {
    load_module(*experiments, dir + "/model.pt");
    ADD_FAILURE() << "a model of another layout loaded";
  } catch (const InvalidFile& e) {
    EXPECT_TRUE(contains(e.what(), "not a saved model of this layout (conv1.weight is [16, 3, 3, 3] in the file, "
                                   "[16, 1, 3, 3] here)")) << e.what();
  }
  EXPECT_TRUE(torch::equal(experiments->named_parameters()["fc1.weight"], fc1));
  EXPECT_EQ(experiments->forward(torch::zeros({1, 1, 28, 28})).sizes(), (std::vector<int64_t>{1, 10}));

  // A class count that the labels exceed, and shapes that do not fit, are refused by name.
  r = run_cli("train" + files + " --image-shape 3x8x8 --num-classes 3");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/train.csv: holds label 3, outside 0..2 (3 classes, --num-classes)")) << r.output;
  r = run_cli("train" + files);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "192 feature columns match 'v*', expected 784")) << r.output;
  for (const std::string bad : {"3x8", "3x8x8x1", "0x8x8", "ax8x8", "3x-8x8"}) {
    r = run_cli("train" + files + " --image-shape " + bad);
    EXPECT_EQ(r.status, 1) << bad;
    EXPECT_TRUE(contains(r.output, "--image-shape '" + bad + "': expected CxHxW")) << r.output;
  }
  r = run_cli("train" + files + " --image-shape 48x2x2");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "SimpleCNN needs images of at least 4x4 pixels")) << r.output;
}

TEST(Cli, TrainStreamsParquetRowGroups) {
  const std::string idx = make_idx_dir("cli_stream_idx", 600, 200);
  const std::string dir = testing::scratch_dir("cli_stream");
  parquet::WriteOptions small_groups;
  small_groups.row_group_rows = 64;
  for (const std::string split : {"train", "t10k"}) {
    parquet::write_table(dir + "/" + split + ".parquet",
                         image_split_to_table(read_idx_split(idx + "/" + split + "-images-idx3-ubyte",
                                                             idx + "/" + split + "-labels-idx1-ubyte")),
                         small_groups);
  }
  const std::string files = " --data " + dir + "/train.parquet --test-data " + dir + "/t10k.parquet";
  CliRun r = run_cli("train" + files + " --dataset-mode stream --epochs 2 --batch-size 32 --num-workers 2 --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  // 600 rows in 10 row groups: each read once an epoch (and the first once more when the dataset is made), at most.
  const auto at = r.output.find("Streamed: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_LE(std::stoi(r.output.substr(at + 10)), 21) << r.output;
  EXPECT_TRUE(contains(r.output, "row group reads of the train file's 10 row groups, over 2 epochs")) << r.output;
  const auto acc = r.output.find("Test Accuracy: ");
  ASSERT_NE(acc, std::string::npos) << r.output;
  EXPECT_GE(std::stod(r.output.substr(acc + 15)), 80.0) << r.output;

  write_csv(dir + "/train.csv", parquet::read_table(dir + "/train.parquet"));
  r = run_cli("train --data " + dir + "/train.csv --test-data " + dir + "/t10k.parquet --dataset-mode stream --device cpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/train.csv: a streamed dataset reads Parquet row groups")) << r.output;
  r = run_cli("train" + files + " --dataset-mode stream --row-groups 0 --device cpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "--row-groups: a streamed dataset reads every row group")) << r.output;
}

TEST(Cli, TrainColumnErrorsNameTheFile) {
  const std::string idx = make_idx_dir("cli_columns_bad_idx", 20, 10);
  const std::string dir = testing::scratch_dir("cli_columns_bad_data");
  write_csv(dir + "/train.csv", renamed_table(idx, "train"));
  parquet::write_table(dir + "/test.parquet", renamed_table(idx, "t10k"));
  const std::string train = dir + "/train.csv", test = dir + "/test.parquet";
  const std::string files = " --data " + train + " --test-data " + test + " --device cpu --epochs 1";
  const auto fails_with = [&](const std::string& args, const std::string& message) {
    const CliRun r = run_cli("train" + files + " " + args);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "feedline: error: " + message)) << args << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "\n"), 1u) << args << "\n" << r.output;  // one line, no crash
  };
  fails_with("", train + ": no label column 'label' (the file has id, note, digit, px0, px1, ... (787 columns))");
  fails_with("--label-column digit", train + ": no column matches 'pixel*'");
  fails_with("--label-column digit --feature-columns 'px*,img*'", train + ": no column matches 'img*'");
  fails_with("--label-column digit --feature-columns 'px1*'", train + ": 111 feature columns match 'px1*', expected 784");
  fails_with("--label-column digit --feature-columns 'px*' --columns digit,px0,px1",
             train + ": 2 feature columns match 'px*', expected 784");
  fails_with("--label-column digit --feature-columns 'px*' --columns digit,nope", train + ": no column 'nope'");
  fails_with("--label-column id --feature-columns note", train + ": 1 feature columns match 'note', expected 784");
  fails_with("--label-column digit --feature-columns 'px*' --row-groups 0",
             train + ": row groups are chosen in Parquet files; CSV has none");

  // --data and --test-data go together and replace --dataset, --data-dir and --format.
  CliRun r = run_cli("train --data " + train + " --device cpu");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--test-data")) << r.output;
  r = run_cli("train --test-data " + test + " --device cpu");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--data")) << r.output;
  r = run_cli("train" + files + " --dataset mnist");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "--dataset")) << r.output;
  r = run_cli("train --data " + dir + "/none.parquet --test-data " + test + " --device cpu");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/none.parquet")) << r.output;
}

bool gnuplot_installed() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

TEST(Cli, BenchRunsTheLaddersOnYourOwnData) {
  const std::string dir = testing::scratch_dir("cli_bench_own");
  write_csv(dir + "/train.csv", colour_table(300, 3));
  parquet::write_table(dir + "/test.parquet", colour_table(100, 4));
  const std::string own = " --data " + dir + "/train.csv --test-data " + dir + "/test.parquet --label-column y "
                          "--feature-columns 'v*' --image-shape 3x8x8";
  const CliRun r = run_cli("bench" + own + " --out " + dir + "/out --epochs 1 --loader-epochs 1 --loader-min-seconds 0 "
                           "--floor-repeats 1 --skip-sweeps --skip-plots --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "No storage table for --data")) << r.output;
  EXPECT_TRUE(contains(r.output, "== Training ladder: " + dir + "/train.csv, SimpleCNN (3x8x8, 4 classes)")) << r.output;
  EXPECT_EQ(count_of(r.output, "Average Train Time per Epoch: "), 11u) << r.output;
  const auto j = nlohmann::json::parse(file_bytes(dir + "/out/results.json"));
  EXPECT_EQ(j["storage"].size(), 0u);
  ASSERT_EQ(j["loader_ladder"].size(), 9u);
  for (const auto& l : j["loader_ladder"]) {
    EXPECT_EQ(l["dataset"], dir + "/train.csv");
    EXPECT_EQ(l["samples_per_epoch"].get<int64_t>(), 300) << l.dump();
  }
  ASSERT_EQ(j["training_ladder"].size(), 14u);
  for (const auto& t : j["training_ladder"]) {
    if (t["skipped"].get<bool>()) continue;
    EXPECT_EQ(t["epochs"][0]["train_samples"].get<int64_t>(), 300) << t.dump();
  }
  // The batch-16 rung (19 steps) learns the colours: far above the 25% of chance after one epoch of 300 samples.
  EXPECT_GT(j["training_ladder"][0]["test_accuracy"].get<double>(), 0.6) << j["training_ladder"][0].dump();

  CliRun bad = run_cli("bench" + own + " --num-classes 3 --skip-storage --skip-loader --skip-sweeps --device cpu");
  EXPECT_EQ(bad.status, 1);
  EXPECT_TRUE(contains(bad.output, dir + "/train.csv: holds label 3, outside 0..2")) << bad.output;
  bad = run_cli("bench --data " + dir + "/train.csv --datasets mnist");
  EXPECT_NE(bad.status, 0);
  EXPECT_TRUE(contains(bad.output, "--datasets excludes --data")) << bad.output;
  bad = run_cli("bench --image-shape 3x8x8 --datasets mnist");
  EXPECT_NE(bad.status, 0);
  EXPECT_TRUE(contains(bad.output, "--image-shape requires --data")) << bad.output;
  bad = run_cli("bench --data " + dir + "/train.csv --test-data " + dir + "/none.csv");
  EXPECT_EQ(bad.status, 1);
  EXPECT_TRUE(contains(bad.output, dir + "/none.csv: not found")) << bad.output;
}

TEST(Cli, BenchRunsEveryTableAndWritesItsResults) {
  const std::string idx = make_idx_dir("cli_bench_idx", 400, 100);
  const std::string data = testing::scratch_dir("cli_bench_data");
  ASSERT_EQ(run_cli("prepare --dataset mnist --mnist-idx " + idx + " --data-dir " + data).status, 0);
  const std::string out = testing::scratch_dir("cli_bench_out");
  const CliRun r = run_cli("bench --datasets mnist --train-datasets mnist --mnist-idx " + idx + " --data-dir " + data +
                           " --out " + out +
                           " --epochs 1 --train-limit 300 --test-limit 100 --sweep-train-limit 100 --sweep-test-limit 50"
                           " --loader-epochs 1 --loader-min-seconds 0 --floor-repeats 2 --device cpu" +
                           (gnuplot_installed() ? "" : " --skip-plots"));
  ASSERT_EQ(r.status, 0) << r.output;
  // Every training run prints the experiment's lines: 11 ladder rows that run (the three CUDA graph ones are
  // skipped on the CPU) and 22 sweep points.
  EXPECT_EQ(count_of(r.output, "Average Train Time per Epoch: "), 33u) << r.output;
  EXPECT_TRUE(contains(r.output, "vs the compute floor")) << r.output;

  const auto j = nlohmann::json::parse(file_bytes(out + "/results.json"));
  EXPECT_EQ(j["machine"]["cores"].get<int>(), static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_FALSE(j["libtorch_version"].get<std::string>().empty());
  // OpenBLAS (Debian's LibTorch): one thread per call, feedline's default, unless the environment chose.
  const std::string blas = j["blas"].get<std::string>();
  if (blas.rfind("not OpenBLAS", 0) != 0) {  // "not OpenBLAS (...)" where LibTorch's BLAS is another
    const char* env = std::getenv("OPENBLAS_NUM_THREADS");
    const bool env_set = env != nullptr && *env != '\0';
    EXPECT_TRUE(env_set ? contains(blas, "(OPENBLAS_NUM_THREADS=") : contains(blas, ", 1 thread per call (feedline's"))
        << blas;
  } else {
    EXPECT_EQ(blas, "not OpenBLAS (feedline's setting does not apply)");
  }

  ASSERT_EQ(j["storage"].size(), 10u);  // 2 splits x (CSV + 4 Parquet layouts)
  std::map<std::string, double> csv_bytes;
  for (const auto& s : j["storage"]) {
    EXPECT_GT(s["bytes"].get<int64_t>(), 0);
    EXPECT_GT(s["read_to_tensor_seconds"].get<double>(), 0.0);
    const std::string split = s["split"].get<std::string>();
    if (s["format"] == "csv") csv_bytes[split] = s["bytes"].get<double>();
    // Noise images this small may come out larger than CSV: check the ratio is what the sizes say.
    EXPECT_NEAR(s["ratio_to_csv"].get<double>() * s["bytes"].get<double>(), csv_bytes[split], 1e-6) << s.dump();
  }
  EXPECT_EQ(j["storage"][3]["format"], "parquet-row-major");
  EXPECT_EQ(j["storage"][4]["format"], "parquet-png");
  ASSERT_EQ(j["idx_zstd3"].size(), 2u);
  EXPECT_EQ(j["idx_zstd3"][0]["raw_bytes"].get<int64_t>(), 16 + 400 * 784);

  ASSERT_EQ(j["loader_ladder"].size(), 9u);
  EXPECT_DOUBLE_EQ(j["loader_ladder"][0]["speedup"].get<double>(), 1.0);
  for (const auto& l : j["loader_ladder"]) {
    EXPECT_EQ(l["samples_per_epoch"].get<int64_t>(), 400) << l.dump();
    EXPECT_GT(l["samples_per_second"].get<double>(), 0.0);
    EXPECT_EQ(l["epoch_seconds"].size(), 1u);
  }

  ASSERT_EQ(j["training_ladder"].size(), 14u);
  int skipped = 0;
  for (const auto& t : j["training_ladder"]) {
    if (t["skipped"].get<bool>()) {
      ++skipped;
      EXPECT_TRUE(t["config"]["cuda_graph"].get<bool>()) << t.dump();
      continue;
    }
    ASSERT_EQ(t["epochs"].size(), 1u) << t.dump();
    EXPECT_EQ(t["epochs"][0]["train_samples"].get<int64_t>(), 300) << t.dump();
    EXPECT_GT(t["avg_train_seconds"].get<double>(), 0.0);
    EXPECT_GE(t["test_accuracy"].get<double>(), 0.0);
    EXPECT_LE(t["test_accuracy"].get<double>(), 1.0);
  }
  EXPECT_EQ(skipped, 3);
  // The floors: on noise, then on the dataset's own images, in order.
  const auto& ladder = j["training_ladder"];
  EXPECT_EQ(ladder[10]["config"]["dataset_mode"], "synthetic");
  EXPECT_EQ(ladder[12]["config"]["dataset_mode"], "in-order");
  EXPECT_EQ(ladder[12]["rung"], "compute floor (its images, no loader)");
  EXPECT_EQ(ladder[12]["epochs"][0]["train_samples"].get<int64_t>(), 300) << ladder[12].dump();
  EXPECT_TRUE(ladder.back()["skipped"].get<bool>());
  ASSERT_EQ(j["floor_check"].size(), 2u);
  // On the CPU the eager pipelines: the device-resident rung against the eager floors, the synthetic one first.
  // The best runs are shared: each round runs the best once, between the two floors.
  EXPECT_EQ(j["floor_check"][0]["best_rung"], "+ device-resident dataset");
  EXPECT_EQ(j["floor_check"][0]["floor_rung"], "compute floor (synthetic, no loader)");
  EXPECT_EQ(j["floor_check"][1]["best_rung"], "+ device-resident dataset");
  EXPECT_EQ(j["floor_check"][1]["floor_rung"], "compute floor (its images, no loader)");
  EXPECT_EQ(j["floor_check"][1]["best_train_seconds"], j["floor_check"][0]["best_train_seconds"]);
  EXPECT_NE(j["floor_check"][1]["floor_train_seconds"], j["floor_check"][0]["floor_train_seconds"]);
  EXPECT_EQ(j["floor_check"][0]["best_train_seconds"].size(), 2u);
  EXPECT_EQ(j["floor_check"][0]["floor_train_seconds"].size(), 2u);
  EXPECT_EQ(j["floor_check"][1]["floor_train_seconds"].size(), 2u);
  EXPECT_EQ(count_of(r.output, "(median of 2 pairs; too few for a 95% confidence interval"), 2u) << r.output;
  {
    // Two runs each: the medians are their means, the quartiles a quarter of the way in from each end.
    const auto& f = j["floor_check"][0];
    const double a = f["floor_train_seconds"][0], b = f["floor_train_seconds"][1];
    const double best_mean = (f["best_train_seconds"][0].get<double>() + f["best_train_seconds"][1].get<double>()) / 2;
    EXPECT_GT(f["floor_median"].get<double>(), 0.0);
    EXPECT_NEAR(f["floor_median"].get<double>(), (a + b) / 2, 1e-9);
    EXPECT_NEAR(f["best_median"].get<double>(), best_mean, 1e-9);
    EXPECT_NEAR(f["floor_spread"].get<double>(), std::abs(a - b) / 2 / ((a + b) / 2), 1e-9);
    EXPECT_NEAR(f["gap"].get<double>(), best_mean / ((a + b) / 2) - 1, 1e-9);
    // Run by run: each best run against its neighbour among the floor runs; two pairs give no 95% interval.
    ASSERT_EQ(f["paired_gaps"].size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_NEAR(f["paired_gaps"][k].get<double>(),
                  f["best_train_seconds"][k].get<double>() / f["floor_train_seconds"][k].get<double>() - 1, 1e-9);
    }
    EXPECT_TRUE(f["paired_gap_interval"].is_null());
  }
  EXPECT_EQ(j["sweeps"].size(), 22u);

  const std::string md = file_bytes(out + "/results.md");
  for (const char* heading : {"## Storage", "## Loader ladder", "## Training ladder: MNIST", "## Sweep of batch size: MNIST",
                              "## Sweep of workers: MNIST"}) {
    EXPECT_TRUE(contains(md, heading)) << heading;
  }
  if (gnuplot_installed()) {
    for (const char* plot : {"loader_ladder", "training_ladder_MNIST", "sweep_batch_MNIST", "sweep_workers_MNIST"}) {
      EXPECT_TRUE(contains(file_bytes(out + "/plots/" + plot + ".svg"), "<svg")) << plot;
      EXPECT_EQ(file_bytes(out + "/plots/" + plot + ".png").substr(1, 3), "PNG") << plot;
    }
  }

  // --from makes the same outputs again from results.json alone (a GPU machine's run, plotted elsewhere).
  const std::string again = testing::scratch_dir("cli_bench_again");
  const CliRun from = run_cli("bench --from " + out + "/results.json --out " + again +
                              (gnuplot_installed() ? "" : " --skip-plots"));
  ASSERT_EQ(from.status, 0) << from.output;
  EXPECT_EQ(file_bytes(again + "/results.json"), file_bytes(out + "/results.json"));
  EXPECT_EQ(file_bytes(again + "/results.md"), md);
  EXPECT_TRUE(contains(from.output, "vs the compute floor")) << from.output;
  EXPECT_EQ(count_of(from.output, "MNIST (sweep-"), 2u) << from.output;
  if (gnuplot_installed()) {
    for (const char* plot : {"loader_ladder", "training_ladder_MNIST", "sweep_batch_MNIST", "sweep_workers_MNIST"}) {
      EXPECT_EQ(file_bytes(again + "/plots/" + plot + ".svg"), file_bytes(out + "/plots/" + plot + ".svg")) << plot;
    }
  }
  {
    // Nine pairs, the floor at 1 s and the best 0% to 8% above it: the pairs' median is +4%, and the sign test's
    // 96.1% interval runs from the second smallest gap to the second largest, read from the runs alone.
    auto nine = nlohmann::json::parse(file_bytes(out + "/results.json"));
    auto& f = nine["floor_check"][0];
    f["floor_train_seconds"] = std::vector<double>(9, 1.0);
    f["best_train_seconds"] = std::vector<double>{1.05, 1.01, 1.08, 1.00, 1.03, 1.07, 1.02, 1.06, 1.04};
    f.erase("paired_gaps");
    f.erase("paired_gap_interval");
    const std::string crafted = testing::scratch_dir("cli_bench_nine");
    std::ofstream(crafted + "/results.json") << nine.dump(2);
    const CliRun nine_run = run_cli("bench --from " + crafted + "/results.json --skip-plots --out " + crafted + "/out");
    ASSERT_EQ(nine_run.status, 0) << nine_run.output;
    EXPECT_TRUE(contains(nine_run.output, "+4.0% (median of 9 pairs; with 96.1% confidence the median gap lies "
                                          "between +1.0% and +7.0%)"))
        << nine_run.output;
    const auto written = nlohmann::json::parse(file_bytes(crafted + "/out/results.json"));
    const auto& interval = written["floor_check"][0]["paired_gap_interval"];
    EXPECT_NEAR(interval["low"].get<double>(), 0.01, 1e-9);
    EXPECT_NEAR(interval["high"].get<double>(), 0.07, 1e-9);
    EXPECT_NEAR(written["floor_check"][0]["paired_gap_median"].get<double>(), 0.04, 1e-9);
  }
  // What it refuses, naming the file or the flag, and writing nothing.
  const std::string refused = testing::scratch_dir("cli_bench_refused");
  std::string bad = file_bytes(out + "/results.json");
  bad.replace(bad.find("\"loader_ladder\""), 15, "\"loader_ladders\"");
  std::ofstream(refused + "/renamed.json") << bad;
  std::ofstream(refused + "/other.json") << "{\"tool\": \"something else\"}";
  std::ofstream(refused + "/cut.json") << file_bytes(out + "/results.json").substr(0, 500);
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"--from " + refused + "/missing.json", refused + "/missing.json"},
           {"--from " + refused + "/renamed.json", "loader_ladder"},
           {"--from " + refused + "/other.json", "not the results.json of feedline bench"},
           {"--from " + refused + "/cut.json", refused + "/cut.json: not a results.json"},
           {"--from " + out + "/results.json --epochs 2", "not --epochs"}}) {
    const CliRun r2 = run_cli("bench " + args + " --skip-plots --out " + refused + "/out");
    EXPECT_NE(r2.status, 0) << args;
    EXPECT_TRUE(contains(r2.output, says)) << args << "\n" << r2.output;
    EXPECT_FALSE(std::filesystem::exists(refused + "/out")) << args;
  }
}

std::string corpus_file(const std::string& name) { return testing::parquet_testing_dir() + "/data/" + name; }

TEST(Cli, InspectShowsSchemaRowGroupsAndMetadata) {
  const std::string file = corpus_file("delta_byte_array.parquet");
  CliRun r = run_cli("inspect " + file);
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* text : {"Rows: 1000 in 1 row group", "c_customer_id", "STRING", "optional", "DELTA_BYTE_ARRAY",
                           "Row group 0: 1000 rows", "AAAAAAAAAABAAAAA .. AAAAAAAAPPCAAAAA"}) {
    EXPECT_TRUE(contains(r.output, text)) << text << "\n" << r.output;
  }
  r = run_cli("inspect --json " + file);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["num_rows"].get<int64_t>(), 1000);
  EXPECT_EQ(j["schema"].size(), 9u);
  EXPECT_EQ(j["row_groups"][0]["columns"][1]["null_count"].get<int64_t>(), 30);
  EXPECT_EQ(j["row_groups"][0]["columns"][0]["encodings"][0], "DELTA_BYTE_ARRAY");

  // A VARIANT column: inspect names the type, cat prints each value's JSON (embedded as JSON in JSON lines).
  const std::string variant = testing::test_data_dir() + "/duckdb-parquet-testing/variant_string.parquet";
  r = run_cli("inspect " + variant);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Schema (2 columns)")) << r.output;
  EXPECT_TRUE(contains(r.output, "VARIANT")) << r.output;
  r = run_cli("cat --format jsonl " + variant);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "{\"id\":1,\"var\":\"iceberg\"}\n");

  // A file with a column we do not read (here a VARIANT annotation on a primitive, which the spec does not give):
  // inspect shows the readable columns and why the rest is not; cat reads those columns when asked for them, and
  // refuses the other naming it.
  const std::string unreadable = testing::scratch_dir("cli-unreadable") + "/unreadable.parquet";
  testing::write_with_unreadable_column(corpus_file("alltypes_plain.parquet"), unreadable, "string_col");
  r = run_cli("inspect " + unreadable);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Schema (10 columns)")) << r.output;
  EXPECT_TRUE(contains(r.output, "string_col               logical type VARIANT is not supported")) << r.output;
  r = run_cli("inspect --json " + unreadable);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto jv = nlohmann::json::parse(r.output);
  ASSERT_EQ(jv["unsupported_columns"].size(), 1u) << r.output;
  EXPECT_EQ(jv["unsupported_columns"][0]["name"], "string_col");
  r = run_cli("cat " + unreadable);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "column 'string_col': logical type VARIANT is not supported")) << r.output;
  r = run_cli("cat --columns id --limit 1 " + unreadable);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "id\n4\n");
  // A logical type of an id feedline does not know: the column is read by its physical type, and inspect says so.
  const std::string unknown = corpus_file("unknown-logical-type.parquet");
  r = run_cli("inspect " + unknown);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Schema (2 columns)")) << r.output;
  EXPECT_TRUE(contains(r.output, "column with unknown type logical type with unknown id 2555: read as BYTE_ARRAY"))
      << r.output;
  r = run_cli("inspect --json " + unknown);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto ju = nlohmann::json::parse(r.output);
  EXPECT_EQ(ju["schema"][1]["name"], "column with unknown type");
  EXPECT_EQ(ju["notes"][0]["name"], "column with unknown type");
  r = run_cli("cat --columns 'column with unknown type' " + unknown);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "column with unknown type\n756e6b6e6f776e20737472696e672031\n756e6b6e6f776e20737472696e672032\n"
                      "756e6b6e6f776e20737472696e672033\n");
  // A map of maps: lists of its keys and values, the inner map's lists of lists.
  const std::string nested = corpus_file("nested_maps.snappy.parquet");
  r = run_cli("inspect " + nested);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Schema (5 columns)")) << r.output;
  EXPECT_TRUE(contains(r.output, "a.value.key")) << r.output;
  EXPECT_FALSE(contains(r.output, "Not readable")) << r.output;
  r = run_cli("cat --format jsonl --columns a.key,a.value.value " + nested);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.substr(0, r.output.find('\n')), R"({"a.key":["a"],"a.value.value":[[true,false]]})");
  r = run_cli("inspect /no/such/file.parquet");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "/no/such/file.parquet")) << r.output;
}

TEST(Cli, CatAndInspectShowListColumns) {
  // list<int64> and list<string>, with null lists, null elements: a JSON array per cell.
  const std::string lists = corpus_file("list_columns.parquet");
  CliRun r = run_cli("cat " + lists);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output,
            "int64_list,utf8_list\n"
            "\"[1,2,3]\",\"[\"\"abc\"\",\"\"efg\"\",\"\"hij\"\"]\"\n"
            "\"[null,1]\",\n"
            "[4],\"[\"\"efg\"\",null,\"\"hij\"\",\"\"xyz\"\"]\"\n");
  r = run_cli("cat --format jsonl --limit 2 " + lists);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output,
            "{\"int64_list\":[1,2,3],\"utf8_list\":[\"abc\",\"efg\",\"hij\"]}\n"
            "{\"int64_list\":[null,1],\"utf8_list\":null}\n");
  r = run_cli("inspect " + lists);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "LIST<INT64>")) << r.output;
  EXPECT_TRUE(contains(r.output, "optional, optional elements")) << r.output;
  r = run_cli("inspect --json " + lists);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["schema"][1]["list"], true);
  EXPECT_EQ(j["schema"][1]["logical_type"], "STRING");

  // Lists of lists of lists of strings: nested arrays, null at any level.
  const std::string nested = corpus_file("nested_lists.snappy.parquet");
  r = run_cli("cat --limit 1 " + nested);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "a,b\n\"[[[\"\"a\"\",\"\"b\"\"],[\"\"c\"\"]],[null,[\"\"d\"\"]]]\",1\n");
  r = run_cli("cat --format jsonl --limit 1 " + nested);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "{\"a\":[[[\"a\",\"b\"],[\"c\"]],[null,[\"d\"]]],\"b\":1}\n");
  r = run_cli("cat --format jsonl --columns int_array_Array " + corpus_file("nullable.impala.parquet"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "{\"int_array_Array\":[[null,1,2,null],[3,null,4],[],null]}\n")) << r.output;
  r = run_cli("inspect " + nested);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "LIST<LIST<LIST<BYTE_ARRAY>>>")) << r.output;
  EXPECT_TRUE(contains(r.output, "optional, inner lists optional/optional, optional elements")) << r.output;
  r = run_cli("inspect --json " + nested);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto jn = nlohmann::json::parse(r.output);
  EXPECT_EQ(jn["schema"][0]["list_depth"], 3);
  EXPECT_EQ(jn["schema"][0]["inner_lists_nullable"], nlohmann::json::array({true, true}));
  EXPECT_TRUE(jn["unsupported_columns"].empty());

  // convert to CSV writes what cat prints: each list as its JSON array.
  const std::string dir = testing::scratch_dir("cli_lists_to_csv");
  for (const std::string& file : {lists, nested}) {
    r = run_cli("convert " + file + " " + dir + "/out.csv");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(file_bytes(dir + "/out.csv"), run_cli("cat " + file).output) << file;
  }
}

TEST(Cli, CatPrintsRowsAsCsvOrJsonLines) {
  // Nulls: empty in CSV (`""` for a lone column's, since an empty line is no record), null in JSON;
  // FIXED_LEN_BYTE_ARRAY as hex.
  const std::string flba = corpus_file("fixed_length_byte_array.parquet");
  CliRun r = run_cli("cat " + flba + " --limit 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "flba_field\n000003e8\n\"\"\n");
  r = run_cli("cat " + flba + " --limit 2 --format jsonl");
  EXPECT_EQ(r.output, "{\"flba_field\":\"000003e8\"}\n{\"flba_field\":null}\n");
  // Floats in shortest round-trip form; columns chosen and ordered.
  r = run_cli("cat " + corpus_file("byte_stream_split.zstd.parquet") + " --columns f64 f32 --limit 1 --format jsonl");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "{\"f64\":-1.3065268517353166,\"f32\":1.7640524}\n");
  // Strings that need quoting are quoted.
  r = run_cli("cat " + corpus_file("delta_byte_array.parquet") + " --columns c_salutation,c_first_name --limit 1");
  EXPECT_EQ(r.output, "c_salutation,c_first_name\nSir,Mark\n");
  // Timestamps in ISO 8601 (INT96, not UTC-adjusted: no Z), decimals exact, FLOAT16 as numbers.
  r = run_cli("cat " + corpus_file("alltypes_plain.parquet") + " --columns id timestamp_col --limit 2");
  EXPECT_EQ(r.output, "id,timestamp_col\n4,2009-03-01T00:00:00.000000\n5,2009-03-01T00:01:00.000000\n");
  r = run_cli("cat " + corpus_file("fixed_length_decimal.parquet") + " --limit 2 --format jsonl");
  EXPECT_EQ(r.output, "{\"value\":\"1.00\"}\n{\"value\":\"2.00\"}\n");
  r = run_cli("cat " + corpus_file("float16_nonzeros_and_nans.parquet") + " --limit 4 --format jsonl");
  EXPECT_EQ(r.output, "{\"x\":null}\n{\"x\":1}\n{\"x\":-2}\n{\"x\":\"NaN\"}\n");
  r = run_cli("cat " + flba + " --columns nope");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, "nope")) << r.output;
  r = run_cli("cat " + flba + " --format xml");
  EXPECT_NE(r.status, 0);
}

TEST(Cli, BenchRejectsBadFlagsAndMissingData) {
  CliRun r = run_cli("bench --epochs 0");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "epochs")) << r.output;
  for (const std::string flag : {"bench --loader-min-seconds", "bench loader --min-seconds"}) {
    for (const std::string value : {"-1", "abc", "1e400", "2s"}) {
      r = run_cli(flag + " " + value);
      EXPECT_NE(r.status, 0) << flag << " " << value;
      EXPECT_TRUE(contains(r.output, "must be a number of seconds, 0 or more, not '" + value + "'")) << r.output;
    }
  }
  const std::string dir = testing::scratch_dir("cli_bench_missing");
  r = run_cli("bench --data-dir " + dir + " --out " + dir + "/results --device cpu --skip-storage");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/FashionMNIST/train.parquet: not found")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/results/results.json"));
}

// Every flag's value is checked before any work, and refused in words a person can act on, naming the flag.
TEST(Cli, BadValuesAreRefusedInPlainWords) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"train --epochs abc", "--epochs: 'abc' is not a whole number"},
      {"train --epochs 0", "--epochs: must be at least 1, not 0"},
      {"train --epochs 1.5", "--epochs: '1.5' is not a whole number"},
      {"train --num-workers -1", "--num-workers: must be 0 or more, not -1"},
      {"train --batch-size 99999999999999999999", "--batch-size: 99999999999999999999 is too large"},
      {"train --lr abc", "--lr: 'abc' is not a number"},
      {"train --lr 0", "--lr: must be above 0, not 0"},
      {"train --seed -3", "--seed: '-3' is not a whole number of 0 or more"},
      {"train --num-classes 1", "--num-classes: must be from 2 to 16777216, not 1"},
      {"train --dataset cifar", "--dataset: 'cifar' is not one of mnist, fashion-mnist"},
      {"train --row-groups 1,x", "--row-groups: 'x' is not a whole number"},
      {"cat x.parquet --limit many", "--limit: 'many' is not a whole number"},
      {"convert /nonexistent.csv out.parquet", "input: '/nonexistent.csv': no such file"},
      {"convert --level z " + std::string(FEEDLINE_CLI) + " out.parquet", "--level: 'z' is not a whole number"},
      {"prepare --codec lzma", "--codec: 'lzma' is not one of uncompressed, snappy, gzip, zstd, lz4_raw, brotli"},
  };
  for (const auto& [args, message] : cases) {
    const CliRun r = run_cli(args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_TRUE(contains(r.output, message)) << args << "\n" << r.output;
    EXPECT_FALSE(contains(r.output, "1797693134862315708")) << args << "\n" << r.output;
  }
}

// cat, inspect and convert read a folder of Parquet files, a glob or a list as one table, in the order of the
// sorted paths, with a column for each Hive key of the paths.
TEST(Cli, CatInspectAndConvertReadAFolderOfParquetFiles) {
  const std::string dir = testing::scratch_dir("cli_folder");
  std::filesystem::create_directories(dir + "/split=train");
  std::filesystem::create_directories(dir + "/split=test");
  parquet::write_table(dir + "/split=train/part-0.parquet", testing::id_name_table(0, 3));
  parquet::write_table(dir + "/split=train/part-1.parquet", testing::id_name_table(3, 2));
  parquet::write_table(dir + "/split=test/part-0.parquet", testing::id_name_table(5, 1));
  std::ofstream(dir + "/_SUCCESS") << "";
  CliRun r = run_cli("cat " + dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output,
            "id,name,split\n5,row 5,test\n0,row 0,train\n1,row 1,train\n2,row 2,train\n3,row 3,train\n4,row 4,train\n");
  r = run_cli("cat '" + dir + "/split=train/*.parquet' --format jsonl --limit 1 --columns split,id");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "{\"split\":\"train\",\"id\":0}\n");
  r = run_cli("cat " + dir + "/split=train/part-1.parquet," + dir + "/split=test/part-0.parquet --columns id");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "id\n5\n3\n4\n");

  r = run_cli("inspect " + dir);
  ASSERT_EQ(r.status, 0) << r.output;
  for (const std::string text : {"Dataset: " + dir + " (3 files", std::string("Rows: 6 in 3 row groups"),
                                 std::string("Schema (3 columns, the last 1 from the paths' Hive keys)"),
                                 std::string("split"), dir + "/split=train/part-1.parquet"}) {
    EXPECT_TRUE(contains(r.output, text)) << text << "\n" << r.output;
  }
  r = run_cli("inspect --json " + dir);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["num_files"].get<int64_t>(), 3);
  EXPECT_EQ(j["num_rows"].get<int64_t>(), 6);
  EXPECT_EQ(j["schema"][2]["name"], "split");
  EXPECT_EQ(j["schema"][2]["partition"], true);
  EXPECT_EQ(j["files"][0]["partition"]["split"], "test");

  // convert writes the one table: the same rows, from one file.
  r = run_cli("convert " + dir + " " + dir + "/../cli_folder_all.parquet");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(run_cli("cat " + dir + "/../cli_folder_all.parquet").output, run_cli("cat " + dir).output);

  // What is missing or disagrees is named.
  r = run_cli("cat '" + dir + "/split=valid/*.parquet'");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/split=valid/*.parquet: no file matches this pattern")) << r.output;
  const std::string empty = testing::scratch_dir("cli_folder_empty");
  r = run_cli("inspect " + empty);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, empty + ": no .parquet file in this folder")) << r.output;
  Table narrow = testing::id_name_table(9, 1);
  Column id = make_column(ColumnSchema{"id", PhysicalType::kInt32});
  id.as<int32_t>() = {9};
  narrow.columns[0] = id;
  parquet::write_table(dir + "/split=valid/part-0.parquet", narrow);
  r = run_cli("cat " + dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/split=valid/part-0.parquet: column 'id' is INT32, but " + dir +
                                     "/split=test/part-0.parquet has it as INT64"))
      << r.output;
}

// train --data reads a folder of Parquet files as one split, streamed a row group at a time across the files.
TEST(Cli, TrainStreamsAFolderOfParquetFiles) {
  const std::string idx = make_idx_dir("cli_stream_folder_idx", 600, 200);
  const std::string dir = testing::scratch_dir("cli_stream_folder");
  const Table train =
      image_split_to_table(read_idx_split(idx + "/train-images-idx3-ubyte", idx + "/train-labels-idx1-ubyte"));
  parquet::WriteOptions small_groups;
  small_groups.row_group_rows = 64;
  for (int s = 0; s < 3; ++s) {
    parquet::write_table(dir + "/train-0000" + std::to_string(s) + "-of-00003.parquet",
                         slice(train, 200 * s, 200 * s + 200), small_groups);
  }
  parquet::write_table(dir + "/test.parquet", image_split_to_table(read_idx_split(idx + "/t10k-images-idx3-ubyte",
                                                                                 idx + "/t10k-labels-idx1-ubyte")));
  const std::string files = " --data '" + dir + "/train-*.parquet' --test-data " + dir + "/test.parquet";
  CliRun r =
      run_cli("train" + files + " --dataset-mode stream --epochs 2 --batch-size 32 --num-workers 2 --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  // 600 rows in 3 files of 4 row groups (64, 64, 64, 8).
  EXPECT_TRUE(contains(r.output, "600 train, 200 test samples")) << r.output;
  EXPECT_TRUE(contains(r.output, "of the train dataset (3 files)'s 12 row groups, over 2 epochs")) << r.output;
  const auto acc = r.output.find("Test Accuracy: ");
  ASSERT_NE(acc, std::string::npos) << r.output;
  EXPECT_GE(std::stod(r.output.substr(acc + 15)), 80.0) << r.output;
  r = run_cli("train" + files + " --epochs 1 --batch-size 32 --device cpu");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "600 train, 200 test samples")) << r.output;
}

// cat and inspect read a CSV file as train does: its columns typed (numbers INT64 or DOUBLE, text STRING).
TEST(Cli, CatAndInspectReadCsv) {
  const std::string dir = testing::scratch_dir("cli_cat_csv");
  const std::string csv = dir + "/t.csv";
  {
    std::ofstream f(csv);
    f << "label,x,name\n3,0.5,\"a, b\"\n7,,c\n";
  }
  CliRun r = run_cli("cat " + csv);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "label,x,name\n3,0.5,\"a, b\"\n7,,c\n");
  r = run_cli("cat " + csv + " --columns name,label --format jsonl --limit 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, "{\"name\":\"a, b\",\"label\":3}\n");
  r = run_cli("inspect " + csv);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Format: CSV")) << r.output;
  EXPECT_TRUE(contains(r.output, "Rows: 2")) << r.output;
  r = run_cli("inspect --json " + csv);
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["format"], "csv");
  EXPECT_EQ(j["num_rows"], 2);
  ASSERT_EQ(j["schema"].size(), 3u);
  EXPECT_EQ(j["schema"][0]["physical_type"], "INT64");
  EXPECT_EQ(j["schema"][1]["physical_type"], "DOUBLE");
  EXPECT_EQ(j["schema"][1]["nullable"], true);
  EXPECT_EQ(j["schema"][2]["logical_type"], "STRING");
  r = run_cli("cat " + dir + "/missing.csv");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(contains(r.output, dir + "/missing.csv")) << r.output;
}

// The tool itself does not link LibTorch (so prepare, inspect, cat, convert, --help and --version start in
// milliseconds); train and bench run in feedline-torch, which does.
TEST(Cli, OnlyTrainAndBenchLoadLibTorch) {
  const auto needed = [](const std::string& program) {
    return testing::run_command("readelf -d " + program + " | grep NEEDED").output;
  };
  const std::string tool = needed(FEEDLINE_CLI);
  ASSERT_TRUE(contains(tool, "libc.so")) << tool;
  for (const char* lib : {"torch", "c10"}) EXPECT_FALSE(contains(tool, lib)) << tool;
  const std::string torch_program = std::filesystem::path(FEEDLINE_CLI).parent_path() / "feedline-torch";
  EXPECT_TRUE(contains(needed(torch_program), "c10")) << needed(torch_program);
  CliRun r = run_cli("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(contains(r.output, "feedline 0.1.0 (LibTorch ")) << r.output;
}

// docs/cli.md holds every command's --help verbatim (scripts/cli-docs.sh writes it), so it cannot drift.
TEST(Cli, DocsHoldEveryCommandsHelp) {
  const std::string docs = read_file(testing::source_dir() + "/docs/cli.md");
  for (const std::string command : {"", "prepare", "train", "bench", "bench loader", "bench images", "bench remote",
                                    "inspect", "cat", "convert"}) {
    const CliRun r = run_cli(command + (command.empty() ? "" : " ") + "--help");
    ASSERT_EQ(r.status, 0) << command << "\n" << r.output;
    EXPECT_TRUE(contains(docs, "```\n" + r.output + "```\n"))
        << "docs/cli.md lacks `feedline " << command << " --help` as it is now: run scripts/cli-docs.sh\n" << r.output;
  }
}

}  // namespace
}  // namespace feedline
