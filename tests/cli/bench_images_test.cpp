// End-to-end tests of `feedline bench images` on a tiny folder of JPEGs: every row is printed and the JSON holds
// what it promises; a missing folder is named. No timing is asserted.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "cli/cli_support.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::run_cli;
using testing::run_command;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A dozen JPEGs of about 160 x 120 in three class folders: crops of two of the test photos, written by Pillow.
std::string make_photo_folder() {
  const std::string dir = testing::scratch_dir("bench_images_photos");
  const std::string script = dir + "/make.py";
  std::ofstream(script) << "import os, sys\n"
                           "from PIL import Image\n"
                           "src, out = sys.argv[1], sys.argv[2]\n"
                           "photos = [Image.open(os.path.join(src, f)).convert('RGB') for f in "
                           "('chelsea.png', 'china.jpg')]\n"
                           "for i in range(12):\n"
                           "    im = photos[i % 2]\n"
                           "    x, y = 7 * i, 5 * i\n"
                           "    crop = im.crop((x, y, x + 200, y + 150)).resize((160, 120), Image.BILINEAR)\n"
                           "    d = os.path.join(out, 'photos', f'class{i % 3}')\n"
                           "    os.makedirs(d, exist_ok=True)\n"
                           "    crop.save(os.path.join(d, f'{i:03d}.jpg'), quality=90)\n";
  const CliRun made = run_command("/usr/bin/python3 " + script + " " + testing::test_data_dir() + "/images " + dir);
  EXPECT_EQ(made.status, 0) << made.output;
  return dir + "/photos";
}

TEST(BenchImagesCli, EveryRowOnATinyFolderAndTheJsonHasItsFields) {
  const std::string photos = make_photo_folder();
  const std::string json = testing::scratch_dir("bench_images_out") + "/images.json";
  const CliRun r = run_cli("bench images --data " + photos + " --images 8 --batch-size 4 --epochs 1 --workers 2 "
                           "--sample 4 --json " + json + " --script " + testing::source_dir() +
                           "/scripts/python/image_bench.py");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* key : {"(a)", "(a-totensor)", "(b)", "(c)", "(d)", "(e)", "(f)", "(g)"}) {
    EXPECT_TRUE(contains(r.output, std::string("| ") + key + " |")) << key << "\n" << r.output;
  }
  EXPECT_TRUE(contains(r.output, "decode_image (whole)")) << r.output;
  // Results are ratios against their anchors, with no targets.
  EXPECT_TRUE(contains(r.output, "Against their anchors, run by run: (b) over (a) ")) << r.output;
  EXPECT_TRUE(contains(r.output, "(c) over (d) ")) << r.output;
  EXPECT_TRUE(contains(r.output, "(g) over (f) ")) << r.output;
  EXPECT_FALSE(contains(r.output, "goal")) << r.output;

  std::ifstream f(json);
  ASSERT_TRUE(f.good()) << json;
  const nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_EQ(j.at("context").at("images").get<int64_t>(), 8);
  EXPECT_EQ(j.at("context").at("workers").get<int64_t>(), 2);
  std::set<std::string> keys;
  for (const auto& row : j.at("rows")) {
    const std::string key = row.at("key").get<std::string>();
    keys.insert(key);
    for (const char* field : {"name", "skipped", "images_per_second", "rates", "images_per_run", "vs_torchvision",
                              "vs_decode", "peak_rss_mib"}) {
      EXPECT_TRUE(row.contains(field)) << key << " has no " << field;
    }
    // torchvision comes with Debian's Python; the feedline package where this build made it.
    const bool package_built = fs::exists(std::string(FEEDLINE_BINARY_DIR) + "/python/feedline/__init__.py");
    if ((key == "b" || key == "g") && !package_built) continue;
    EXPECT_FALSE(row.at("skipped").get<bool>()) << key << ": " << row.at("note");
    EXPECT_GT(row.at("images_per_second").get<double>(), 0) << key;
    EXPECT_EQ(row.at("images_per_run").get<int64_t>(), 8) << key;  // one epoch of the 8 images
  }
  EXPECT_EQ(keys, (std::set<std::string>{"a", "a-totensor", "b", "c", "d", "e", "f", "g"}));
  const auto& shares = j.at("breakdown").at("shares");
  double total = 0;
  for (const char* piece : {"read", "decode", "resize", "rest", "assembly"}) total += shares.at(piece).get<double>();
  EXPECT_NEAR(total, 1.0, 1e-9);
  EXPECT_GT(shares.at("decode").get<double>(), 0);
  EXPECT_EQ(j.at("breakdown").at("sample").get<int64_t>(), 4);
  EXPECT_FALSE(j.contains("goals"));
  std::set<std::string> pairs;
  for (const auto& x : j.at("ratios")) {
    pairs.insert(x.at("row").get<std::string>() + "/" + x.at("anchor").get<std::string>());
    if (!x.at("ratio").is_null()) EXPECT_GT(x.at("ratio").get<double>(), 0) << x;
  }
  EXPECT_EQ(pairs, (std::set<std::string>{"b/a", "c/d", "e/d", "b/c", "g/f"}));

  // Memory in flight: (c) and (e) at prefetch factors 1 and 2, each bound (window + 2 batches, at most an epoch's
  // 2, and each worker's scratch) as printed, and batches of uint8.
  const auto& in_flight = j.at("in_flight");
  ASSERT_EQ(in_flight.size(), 4u);
  const double batch_mib = 4.0 * (3 * 224 * 224 + 8) / (1024.0 * 1024.0);
  for (size_t k = 0; k < in_flight.size(); ++k) {
    const auto& m = in_flight[k];
    EXPECT_EQ(m.at("row"), k < 2 ? "c" : "e");
    const int64_t prefetch = k % 2 == 0 ? 1 : 2;
    EXPECT_EQ(m.at("prefetch_factor").get<int64_t>(), prefetch);
    EXPECT_EQ(m.at("window").get<int64_t>(), 2 * prefetch);
    EXPECT_EQ(m.at("live_batches").get<int64_t>(), 2);  // 8 images in batches of 4
    EXPECT_NEAR(m.at("batch_mib").get<double>(), batch_mib, 1e-9);
    const double scratch = m.at("worker_scratch_mib").get<double>();
    EXPECT_GE(scratch, 0);
    EXPECT_NEAR(m.at("bound_mib").get<double>(), 2 * batch_mib + 2 * scratch, 1e-9);
    EXPECT_EQ(m.at("dtype"), "uint8");
    ASSERT_FALSE(m.at("measured_mib").is_null()) << m;  // Linux: VmHWM resets through clear_refs
    EXPECT_GT(m.at("measured_mib").get<double>(), 0);
    EXPECT_TRUE(contains(r.output, fmt::format("({}) prefetch_factor {}: in flight: ", k < 2 ? "c" : "e",
                                               prefetch))) << r.output;
  }
}

TEST(BenchImagesCli, AMissingFolderIsNamed) {
  const CliRun r = run_cli("bench images --data /nonexistent/photos --no-python");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "/nonexistent/photos: no such folder")) << r.output;
  EXPECT_TRUE(contains(r.output, "--data")) << r.output;

  // Without --data it looks where `prepare --photos` writes, and says so when nothing is there.
  const std::string empty = testing::scratch_dir("bench_images_empty");
  const CliRun d = run_command("cd " + empty + " && " + std::string(FEEDLINE_CLI) + " bench images --no-python");
  EXPECT_NE(d.status, 0);
  EXPECT_TRUE(contains(d.output, "data/photos/jpeg/train: no such folder")) << d.output;
}

TEST(BenchImagesCli, OutDrawsTheRowsThatRan) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  const std::string photos = make_photo_folder();
  const std::string out = testing::scratch_dir("bench_images_plot") + "/plot";
  const CliRun r = run_cli("bench images --data " + photos + " --images 8 --batch-size 4 --epochs 1 --workers 2 "
                           "--sample 4 --no-python --out " + out);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Plot: 2 files in " + out)) << r.output;
  EXPECT_GT(std::filesystem::file_size(out + "/images.png"), 0u);
  const std::string script = testing::file_bytes(out + "/images.gp");
  // The C++ rows ran, each a bar; the Python rows were left out, so no bar.
  for (const char* bar : {"\"(c)\\nC++\" ", "\"(d)\\ndecode only\" ", "\"(e)\\nC++, window\" "}) {
    EXPECT_TRUE(contains(script, bar)) << bar << "\n" << script;
  }
  EXPECT_FALSE(contains(script, "\"(a)")) << script;
}

TEST(BenchImagesCli, AFolderOfTablesIsRefused) {
  const std::string dir = testing::scratch_dir("bench_images_not_images");
  std::ofstream(dir + "/train.parquet") << "not read";
  const CliRun r = run_cli("bench images --data " + dir + " --no-python");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "not a folder of class folders of images")) << r.output;
}

}  // namespace
}  // namespace feedline
