// convert_file(): what `feedline convert` does, called as a library. The output read back must hold the input's
// values, packed and narrowed as asked; the progress it reports must say where the integer ranges came from (a
// Parquet footer's statistics, or a pass of their own); bad options and inputs are refused before anything is
// written, naming the file or the option.
#include "feedline/io/convert.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "feedline/io/table.h"
#include "parquet_test_support.h"
#include "test_paths.h"

namespace feedline {
namespace {

// A CSV file of `rows` rows: label = r % 10, p1..p4 = (r * 7 + k * 31) % 256, w = r * 1000 - 5, name = "n<r>".
std::string write_csv_file(const std::string& path, int rows) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << "label,p1,p2,p3,p4,w,name\n";
  for (int r = 0; r < rows; ++r) {
    out << r % 10;
    for (int k = 1; k <= 4; ++k) out << ',' << (r * 7 + k * 31) % 256;
    out << ',' << r * 1000 - 5 << ",n" << r << '\n';
  }
  return path;
}

// Each stage reported, in order, with consecutive repeats of one stage counted once.
struct Recorder {
  std::vector<ConvertStage> stages;
  std::vector<ConvertProgress> all;
  std::function<void(const ConvertProgress&)> callback() {
    return [this](const ConvertProgress& p) {
      if (stages.empty() || stages.back() != p.stage) stages.push_back(p.stage);
      all.push_back(p);
    };
  }
};

TEST(StreamConvert, CsvToParquetPacksNarrowsAndKeepsEveryValue) {
  const std::string dir = testing::scratch_dir("stream_convert_csv");
  const std::string in = write_csv_file(dir + "/in.csv", 50);
  Recorder recorder;
  ConvertOptions options;
  options.packs = {{"image", {"p*"}}};
  options.narrow_ints = true;
  options.progress = recorder.callback();
  const ConvertResult result = convert_file(in, dir + "/out.parquet", options);

  EXPECT_EQ(result.rows, 50);
  EXPECT_EQ(result.input_bytes, file_size(in));
  EXPECT_EQ(result.output_bytes, file_size(dir + "/out.parquet"));
  ASSERT_EQ(result.packed.size(), 1u);
  EXPECT_EQ(result.packed[0].first, "image");
  EXPECT_EQ(result.packed[0].second, (std::vector<std::string>{"p1", "p2", "p3", "p4"}));
  EXPECT_EQ(result.narrowed, (std::vector<std::string>{"label", "w"}));  // image is bytes already, name text
  // The CSV reader's typing pass gave the ranges: no pass of their own.
  EXPECT_EQ(recorder.stages, (std::vector<ConvertStage>{ConvertStage::kOpening, ConvertStage::kReady,
                                                        ConvertStage::kWriting}));
  EXPECT_EQ(recorder.all.front().input_bytes, result.input_bytes);
  EXPECT_EQ(recorder.all.back().rows_done, 50);
  EXPECT_EQ(recorder.all.back().rows_total, 50);

  const Table out = parquet::read_table(dir + "/out.parquet");
  ASSERT_EQ(out.num_rows, 50);
  ASSERT_EQ(out.columns.size(), 4u);
  EXPECT_EQ(out.columns[0].schema.name, "label");
  EXPECT_EQ(out.column("label").schema.int_annotation, (IntAnnotation{8, false}));
  EXPECT_EQ(out.column("w").schema.int_annotation, (IntAnnotation{32, true}));
  EXPECT_EQ(out.column("image").schema.type, PhysicalType::kFixedLenByteArray);
  EXPECT_EQ(out.column("image").schema.type_length, 4);
  ASSERT_EQ(result.schema.size(), out.columns.size());
  for (size_t k = 0; k < out.columns.size(); ++k) EXPECT_EQ(result.schema[k].name, out.columns[k].schema.name);
  const ByteArrays& image = std::get<ByteArrays>(out.column("image").values);
  for (int r = 0; r < 50; ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(out.column("label").as<int32_t>()[r], r % 10);
    EXPECT_EQ(out.column("w").as<int32_t>()[r], r * 1000 - 5);
    EXPECT_EQ(std::get<ByteArrays>(out.column("name").values).at(r), "n" + std::to_string(r));
    const std::string pixels(image.at(r));
    ASSERT_EQ(pixels.size(), 4u);
    for (int k = 1; k <= 4; ++k) EXPECT_EQ(static_cast<uint8_t>(pixels[k - 1]), (r * 7 + k * 31) % 256);
  }
}

// The same rows with and without footer statistics convert to the same table; only the file without them takes a
// pass for the ranges, as does one cut by a limit.
TEST(StreamConvert, ParquetRangesComeFromStatisticsOrAPass) {
  const std::string dir = testing::scratch_dir("stream_convert_parquet");
  CsvReadOptions text;
  text.text_columns = true;
  const Table csv = read_csv(write_csv_file(dir + "/in.csv", 40), text);
  parquet::WriteOptions write;
  write.row_group_rows = 10;
  parquet::write_table(dir + "/stats.parquet", csv, write);
  write.statistics = false;
  parquet::write_table(dir + "/bare.parquet", csv, write);

  ConvertOptions options;
  options.narrow_ints = true;
  options.row_group_rows = 15;
  Recorder with_stats, without;
  options.progress = with_stats.callback();
  const ConvertResult a = convert_file(dir + "/stats.parquet", dir + "/a.parquet", options);
  options.progress = without.callback();
  const ConvertResult b = convert_file(dir + "/bare.parquet", dir + "/b.parquet", options);
  EXPECT_EQ(with_stats.stages, (std::vector<ConvertStage>{ConvertStage::kOpening, ConvertStage::kReady,
                                                          ConvertStage::kWriting}));
  EXPECT_EQ(without.stages, (std::vector<ConvertStage>{ConvertStage::kOpening, ConvertStage::kRanges,
                                                       ConvertStage::kReady, ConvertStage::kWriting}));
  EXPECT_EQ(a.narrowed, b.narrowed);
  EXPECT_EQ(a.narrowed, (std::vector<std::string>{"label", "p1", "p2", "p3", "p4", "w"}));
  const Table from_stats = parquet::read_table(dir + "/a.parquet");
  testing::expect_tables_equal(from_stats, parquet::read_table(dir + "/b.parquet"));
  EXPECT_EQ(parquet::read_file_info(dir + "/a.parquet").row_groups.size(), 3u);  // 15, 15, 10
  EXPECT_EQ(from_stats.column("w").as<int32_t>()[39], 38995);

  // A limit: the statistics cover rows the output leaves out, so a pass finds the ranges of those kept.
  Recorder limited;
  options.progress = limited.callback();
  options.limit = 3;
  const ConvertResult c = convert_file(dir + "/stats.parquet", dir + "/c.csv", options);
  EXPECT_EQ(c.rows, 3);
  EXPECT_EQ(limited.stages[1], ConvertStage::kRanges);
  const Table head = read_csv(dir + "/c.csv", text);
  ASSERT_EQ(head.num_rows, 3);
  EXPECT_EQ(head.column("w").as<int64_t>(), (std::vector<int64_t>{-5, 995, 1995}));
}

TEST(StreamConvert, RefusesBeforeWritingAnything) {
  const std::string dir = testing::scratch_dir("stream_convert_bad");
  const std::string in = write_csv_file(dir + "/in.csv", 5);
  struct Case {
    std::string output;
    ConvertOptions options;
    std::string message;
  };
  std::vector<Case> cases(7);
  cases[0] = {dir + "/out.txt", {}, dir + "/out.txt: cannot tell the format from the name"};
  cases[1] = {dir + "/none/out.parquet", {}, "the folder " + dir + "/none does not exist"};
  cases[2] = {dir + "/out.csv", {}, "level applies to Parquet output"};
  cases[2].options.level = 3;
  cases[3] = {dir + "/out.parquet", {}, "level 23: zstd's levels are 1 to 22"};
  cases[3].options.level = 23;
  cases[4] = {dir + "/out.parquet", {}, in + ": no column matches 'nothing*'"};
  cases[4].options.columns = {"nothing*"};
  cases[5] = {dir + "/out.parquet", {}, "packs 'image': a pack needs a name and at least one pattern"};
  cases[5].options.packs = {{"image", {}}};
  cases[6] = {dir + "/out.parquet", {}, in + ": column 'w' row 0 holds -5; packing as bytes needs every value"};
  cases[6].options.packs = {{"v", {"p1", "w"}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    try {
      convert_file(in, c.output, c.options);
      ADD_FAILURE() << "no error";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(convert_file(dir + "/missing.csv", dir + "/out.parquet"), IoError);
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files += entry.is_regular_file();
  EXPECT_EQ(files, 1u);  // in.csv, and no output or temporary file
}

}  // namespace
}  // namespace feedline
