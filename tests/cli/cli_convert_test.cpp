// End-to-end tests of `feedline convert` on small data the tests make themselves: packing and narrowing (from a
// CSV's first pass, from Parquet statistics), row groups streamed and chosen, limits, text columns, and clean
// refusals that write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_support.h"
#include "cli/cli_table_support.h"
#include "feedline/dataset/dataset.h"
#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/idx.h"
#include "feedline/io/parquet.h"
#include "io/parquet_test_support.h"
#include "test_paths.h"

namespace feedline {
namespace {

using testing::CliRun;
using testing::contains;
using testing::file_bytes;
using testing::make_idx_dir;
using testing::renamed_table;
using testing::run_cli;

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

}  // namespace
}  // namespace feedline
