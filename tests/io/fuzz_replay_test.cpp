// Replays the fuzzers' seeds and every input they found (tests/fuzz/) through the same entry points the
// libFuzzer binaries use, so a finding stays fixed in every build, sanitized or not.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "fuzz_targets.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace fs = std::filesystem;

const fs::path kFuzzDir = fs::path(FEEDLINE_SOURCE_DIR) / "tests" / "fuzz";

// Messages name the scratch file the input was written to; the expectations say {path} there.
std::string normalise(std::string message) {
  for (const char* prefix : {"/dev/shm/feedline-fuzz-", "/tmp/feedline-fuzz-"}) {
    for (size_t at = message.find(prefix); at != std::string::npos; at = message.find(prefix)) {
      size_t end = at + std::string(prefix).size();
      while (end < message.size() && (std::isdigit(static_cast<unsigned char>(message[end])) || message[end] == '.' ||
                                      std::isalpha(static_cast<unsigned char>(message[end])))) {
        ++end;
      }
      message.replace(at, end - at, "{path}");
    }
  }
  return message;
}

TEST(FuzzReplay, SeedsReadOrFailCleanly) {
  int inputs = 0;
  for (const char* target : {"parquet", "csv", "idx", "image"}) {
    const fs::path dir = kFuzzDir / "seeds" / target;
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      SCOPED_TRACE(entry.path().string());
      // (a feedline::Error is caught inside)
      EXPECT_NO_THROW(fuzz::run(target, testing::file_bytes(entry.path())));
      ++inputs;
    }
  }
  EXPECT_GE(inputs, 6);
  // Well-formed seeds read without complaint.
  EXPECT_EQ(fuzz::run("csv", testing::file_bytes(kFuzzDir / "seeds" / "csv" / "ints.csv")), "");
  EXPECT_EQ(fuzz::run("idx", testing::file_bytes(kFuzzDir / "seeds" / "idx" / "images.idx3.gz")), "");
  EXPECT_EQ(fuzz::run("image", testing::file_bytes(kFuzzDir / "seeds" / "image" / "rgb.jpg")), "");
  EXPECT_EQ(fuzz::run("image", testing::file_bytes(kFuzzDir / "seeds" / "image" / "lossless.webp")), "");
  // And broken input gives the reader's message, naming the file.
  EXPECT_EQ(normalise(fuzz::run("idx", std::string("\0\0\x08\x03", 4))),
            "{path}: truncated IDX header");
  EXPECT_EQ(fuzz::run("image", "GIF89a"), "input: not a JPEG, PNG or WebP image (6 bytes starting 47 49 46 38 39 61)");
}

// The files the Parquet fuzzer is seeded with beside tests/fuzz/seeds (scripts/fuzz.sh): those of the Apache
// corpus and of DuckDB's test folder under 256 KiB, through the fuzzer's own checks (a read on one thread and on
// three give the same table or the same error; what reads writes back and reads back the same). Under the
// sanitizers (scripts/test.sh) this is their ASan and UBSan run.
TEST(FuzzReplay, TheCorpusParquetFilesPassTheFuzzersChecks) {
  const fs::path corpus = feedline::testing::test_data_dir();
  int inputs = 0;
  for (const char* folder : {"parquet-testing/data", "parquet-testing/bad_data", "duckdb-parquet-testing"}) {
    for (const auto& entry : fs::recursive_directory_iterator(corpus / folder)) {
      std::string ext = entry.path().extension().string();
      for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (!entry.is_regular_file() || ext != ".parquet" || entry.file_size() >= 256 * 1024) continue;
      SCOPED_TRACE(entry.path().string());
      // (a feedline::Error is caught inside)
      EXPECT_NO_THROW(fuzz::run("parquet", testing::file_bytes(entry.path())));
      ++inputs;
    }
  }
  EXPECT_GT(inputs, 250);
}

TEST(FuzzReplay, EveryFindingGivesItsExactMessage) {
  std::ifstream manifest(kFuzzDir / "regressions" / "expected.txt");
  ASSERT_TRUE(manifest.good());
  std::string line;
  int findings = 0;
  while (std::getline(manifest, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    const std::string file = line.substr(0, tab), expected = line.substr(tab + 1);
    const std::string target = file.substr(0, file.find('/'));
    SCOPED_TRACE(file);
    EXPECT_EQ(normalise(fuzz::run(target, testing::file_bytes(kFuzzDir / "regressions" / file))), expected);
    ++findings;
  }
  // Every input in the folder is listed.
  int files = 0;
  for (const char* target : {"parquet", "csv", "idx", "image"}) {
    const fs::path dir = kFuzzDir / "regressions" / target;
    if (fs::is_directory(dir)) files += static_cast<int>(std::distance(fs::directory_iterator(dir), {}));
  }
  EXPECT_EQ(files, findings);
}

}  // namespace
}  // namespace feedline
