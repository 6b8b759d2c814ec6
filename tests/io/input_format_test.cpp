// Input files told apart by their extension, or else by their first bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "feedline/io/columns.h"
#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "feedline/io/table.h"
#include "test_paths.h"

namespace feedline {
namespace {

template <class E, class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("another error: ") + e.what();
  }
  return "no error";
}

TEST(InputFormat, AFormatsNameIsItsExtension) {
  for (const FileFormat format : {FileFormat::kParquet, FileFormat::kCsv}) {
    EXPECT_EQ(file_format(std::string("split.") + file_format_name(format)), format) << file_format_name(format);
  }
  EXPECT_STRNE(file_format_name(FileFormat::kParquet), file_format_name(FileFormat::kCsv));
}

TEST(InputFormat, AParquetFileNamedOtherwiseIsToldByItsMagic) {
  const std::string dir = testing::scratch_dir("input_format");
  Table t;
  t.num_rows = 3;
  Column c = make_column(ColumnSchema{"x"});
  c.as<int64_t>() = {4, 5, 6};
  t.columns.push_back(c);
  parquet::write_table(dir + "/t.parquet", t);
  // As Hive names its files, and another extension.
  for (const std::string name : {"000000_0", "t.pq"}) {
    std::filesystem::copy_file(dir + "/t.parquet", dir + "/" + name);
    const std::string path = dir + "/" + name;
    EXPECT_EQ(input_format(path), FileFormat::kParquet) << name;
    EXPECT_EQ(file_schema(path).size(), 1u) << name;
    EXPECT_EQ(read_file_columns(path, {}, 1).columns[0].as<int64_t>(), c.as<int64_t>()) << name;
  }
  // The extension decides where there is one, whatever the bytes: a .csv file is CSV.
  std::ofstream(dir + "/n.csv") << "x\n1\n";
  EXPECT_EQ(input_format(dir + "/n.csv"), FileFormat::kCsv);
  std::ofstream(dir + "/notes.txt") << "PAR";  // shorter than the magic
  EXPECT_EQ(error_of<InvalidArgument>([&] { input_format(dir + "/notes.txt"); }),
            dir + "/notes.txt: cannot tell the format from the name (expected a .parquet or .csv file), and it does "
                  "not begin as a Parquet file does");
  EXPECT_EQ(error_of<IoError>([&] { input_format(dir + "/missing"); }),
            dir + "/missing: cannot open: No such file or directory");
  // Outputs, which do not exist yet, go by the name alone.
  EXPECT_EQ(error_of<InvalidArgument>([&] { file_format(dir + "/000000_0"); }),
            dir + "/000000_0: cannot tell the format from the name (expected a .parquet or .csv file)");
}

// The corpus' encrypted files end in .parquet.encrypted: read as Parquet, they are refused as encrypted.
TEST(InputFormat, EncryptedCorpusFilesAreRefusedAsEncrypted) {
  for (const std::string name : {"encrypt_columns_and_footer.parquet.encrypted",
                                 "encrypt_columns_plaintext_footer.parquet.encrypted"}) {
    const std::string path = testing::parquet_testing_dir() + "/data/" + name;
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    EXPECT_EQ(input_format(path), FileFormat::kParquet) << name;
    const std::string error = error_of<Unsupported>([&] { file_schema(path); });
    EXPECT_EQ(error.rfind(path + ": ", 0), 0u) << error;  // (not "another error")
    EXPECT_NE(error.find("encrypted"), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace feedline
