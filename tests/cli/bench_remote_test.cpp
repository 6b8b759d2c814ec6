// End-to-end tests of `feedline bench remote` on tiny inputs: it starts its own servers (tests/remote/servers.py),
// runs every row, writes JSON whose counts agree with the data it made, and leaves nothing behind. No timing is
// asserted.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli/cli_support.h"
#include "test_paths.h"

namespace feedline {
namespace {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::run_cli;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The photo set of `prepare --photos 40`, made from copies of two test photos under the packages' names.
std::string make_photos() {
  const std::string src = testing::scratch_dir("bench_remote_sources");
  const char* const names[] = {"astronaut.png", "chelsea.png", "china.jpg",     "coffee.png",      "flower.jpg",
                               "hubble_deep_field.jpg", "ihc.png", "motorcycle_left.png", "retina.jpg", "rocket.jpg"};
  for (size_t i = 0; i < std::size(names); ++i) {
    fs::copy_file(testing::test_data_dir() + "/images/" + (i % 2 == 0 ? "chelsea.png" : "china.jpg"),
                  src + "/" + names[i], fs::copy_options::overwrite_existing);
  }
  const std::string data = testing::scratch_dir("bench_remote_data");
  const CliRun r = run_cli("prepare --photos 40 --photo-dir " + src + " --data-dir " + data);
  EXPECT_EQ(r.status, 0) << r.output;
  return data + "/photos/jpeg/train";
}

// Why the bench cannot run here, or empty: it needs the test servers' programs and a build that reads URLs.
std::string missing_servers() {
  for (const char* program : {"radosgw", "ceph-mon", "ceph-osd", "nginx", "curl"}) {
    if (std::system(("command -v " + std::string(program) + " >/dev/null 2>&1").c_str()) != 0) {
      return std::string(program) + " is not installed";
    }
  }
  if (std::system("/usr/bin/python3 -c 'import botocore' >/dev/null 2>&1") != 0) return "botocore is not installed";
  return "";
}

struct BenchRun {
  CliRun cli;
  nlohmann::json json;
  std::map<std::string, nlohmann::json> rows;  // by key
};

BenchRun run_bench(const std::string& name, const std::string& flags) {
  BenchRun b;
  const std::string out = testing::scratch_dir(name);
  b.cli = run_cli("bench remote --photos " + make_photos() + " --images 40 --shard-images 10 --parquet-mb 2 "
                  "--batch-size 8 --workers 2 --repeat 1 --servers-script " + testing::source_dir() +
                  "/tests/remote/servers.py --link-script " + testing::source_dir() +
                  "/scripts/python/shaped_link.py --out " + out + " " + flags);
  std::ifstream f(out + "/remote.json");
  if (f.good()) b.json = nlohmann::json::parse(f);
  if (b.json.contains("rows")) {
    for (const auto& row : b.json.at("rows")) b.rows[row.at("key").get<std::string>()] = row;
  }
  EXPECT_TRUE(fs::exists(out + "/remote.md")) << out;
  return b;
}

// The counts every row must agree on, whichever link it crossed.
void check_rows(const BenchRun& b) {
  const nlohmann::json& c = b.json.at("context");
  EXPECT_EQ(c.at("images").get<int64_t>(), 40);
  EXPECT_EQ(c.at("shards").get<int64_t>(), 4);
  EXPECT_EQ(c.at("row_groups").get<int64_t>(), 8);
  EXPECT_EQ(c.at("columns"), nlohmann::json({"label", "f0"}));
  EXPECT_EQ(c.at("column_chunks").get<int64_t>(), 16);  // two columns of 8 row groups
  const int64_t shard_bytes = c.at("shard_bytes").get<int64_t>();
  const int64_t merged = c.at("merged_ranges").get<int64_t>();
  const int64_t projected = c.at("projected_bytes").get<int64_t>();
  const int64_t parquet_rows = c.at("parquet_rows").get<int64_t>();
  EXPECT_GT(shard_bytes, 0);
  EXPECT_GE(merged, 8);  // label and f0 lie side by side in each row group, and no two row groups touch
  EXPECT_LE(merged, 16);
  EXPECT_LT(projected, c.at("parquet_bytes").get<int64_t>());
  for (const auto& [key, row] : b.rows) {
    SCOPED_TRACE(key);
    ASSERT_FALSE(row.at("skipped").get<bool>()) << row.at("note");
    ASSERT_EQ(row.at("runs").size(), 1u);
    const nlohmann::json& run = row.at("runs")[0];
    const std::string part = row.at("part"), source = row.at("source");
    const bool curl = source.rfind("curl", 0) == 0;
    EXPECT_GT(run.at("seconds").get<double>(), 0);
    // Every row but the anchor, local disk, is a ratio against it.
    if (source == "local") {
      EXPECT_TRUE(row.at("vs_local").is_null()) << row.at("vs_local");
    } else {
      EXPECT_GT(row.at("vs_local").get<double>(), 0);
    }
    if (source == "local") {
      EXPECT_EQ(run.at("requests").get<int64_t>(), 0);
      EXPECT_EQ(run.at("bytes").get<int64_t>(), 0);
    } else {
      EXPECT_GT(run.at("requests").get<int64_t>(), 0);
      EXPECT_GT(run.at("bytes").get<int64_t>(), 0);
      EXPECT_EQ(run.at("retries").get<int64_t>(), 0);
    }
    if (part == "images" && curl) {  // every shard, whole
      EXPECT_EQ(run.at("requests").get<int64_t>(), 4);
      EXPECT_EQ(run.at("bytes").get<int64_t>(), shard_bytes);
    } else if (part == "images") {  // one epoch of every image
      EXPECT_EQ(run.at("items").get<int64_t>(), 40);
      EXPECT_GE(run.at("fetch_wait_seconds").get<double>(), 0);
    } else if (curl) {  // the footer's tail and the merged ranges
      EXPECT_EQ(run.at("requests").get<int64_t>(), merged + 1);
      EXPECT_EQ(run.at("bytes").get<int64_t>(), projected);
    } else {
      EXPECT_EQ(run.at("items").get<int64_t>(), parquet_rows);
    }
  }
}

TEST(BenchRemoteCli, EveryRowRunsAgainstItsOwnServersAndItsCountsAgree) {
  if (const std::string why = missing_servers(); !why.empty()) GTEST_SKIP() << why;
  const BenchRun b = run_bench("bench_remote_out", "--skip-shaped");
  if (contains(b.cli.output, "reads no remote files")) GTEST_SKIP() << "this build reads no remote files";
  ASSERT_EQ(b.cli.status, 0) << b.cli.output;
  std::set<std::string> keys;
  for (const auto& [key, row] : b.rows) keys.insert(key);
  EXPECT_EQ(keys, (std::set<std::string>{"images local", "images s3", "images http", "images curl s3",
                                         "images curl http", "parquet local", "parquet s3", "parquet http",
                                         "parquet curl s3", "parquet curl http"}));
  check_rows(b);
  EXPECT_FALSE(b.json.at("context").at("shaped").get<bool>());
  EXPECT_TRUE(contains(b.cli.output, "Shaped link: left out (--skip-shaped)")) << b.cli.output;
  EXPECT_FALSE(b.json.contains("goals"));
  EXPECT_FALSE(contains(b.cli.output, "Goal")) << b.cli.output;
  for (const char* line : {"| s3 | loopback |", "| curl http | loopback |", "| local | local disk |"}) {
    EXPECT_TRUE(contains(b.cli.output, line)) << line << "\n" << b.cli.output;
  }
  // Its temporary folder, the servers' state with it, is gone.
  const size_t at = b.cli.output.find("Work folder: ");
  ASSERT_NE(at, std::string::npos) << b.cli.output;
  const std::string work = b.cli.output.substr(at + 13, b.cli.output.find(' ', at + 13) - at - 13);
  EXPECT_FALSE(fs::exists(work)) << work;
}

TEST(BenchRemoteCli, ACtrlCStopsTheServersAndRemovesTheWorkFolder) {
  if (const std::string why = missing_servers(); !why.empty()) GTEST_SKIP() << why;
  const std::string dir = testing::scratch_dir("bench_remote_interrupted");
  const std::string log = dir + "/bench.log";
  // SIGINT once the rounds have begun: the servers are up and the data uploaded by then.
  const CliRun r = testing::run_command(
      std::string(FEEDLINE_CLI) + " bench remote --photos " + make_photos() + " --images 40 --shard-images 10 "
      "--parquet-mb 2 --batch-size 8 --workers 2 --repeat 50 --skip-shaped --servers-script " +
      testing::source_dir() + "/tests/remote/servers.py --out " + dir + " > " + log + " 2>&1 & pid=$!; "
      "for i in $(seq 1200); do grep -q 'Round 2 of' " + log + " && break; sleep 0.1; done; "
      "kill -INT $pid; wait $pid; echo \"exit status $?\"; cat " + log);
  if (contains(r.output, "reads no remote files")) GTEST_SKIP() << "this build reads no remote files";
  EXPECT_TRUE(contains(r.output, "exit status 1")) << r.output;
  EXPECT_TRUE(contains(r.output, "bench remote: stopped before the end")) << r.output;
  EXPECT_FALSE(fs::exists(dir + "/remote.json")) << "a stopped run writes no results";
  const size_t at = r.output.find("Work folder: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string work = r.output.substr(at + 13, r.output.find(' ', at + 13) - at - 13);
  EXPECT_FALSE(fs::exists(work)) << work;
  // No server of its own is left: each named its state folder, under the work folder, on its command line (the
  // brackets keep pgrep's own shell from matching).
  const CliRun left = testing::run_command("pgrep -f -a '[" + work.substr(0, 1) + "]" + work.substr(1) + "' || true");
  EXPECT_EQ(left.output, "") << left.output;
}

TEST(BenchRemoteCli, TheShapedLinkRunsEveryDepthAsRoot) {
  if (const std::string why = missing_servers(); !why.empty()) GTEST_SKIP() << why;
  if (::geteuid() != 0) GTEST_SKIP() << "the shaped link needs root";
  const BenchRun b = run_bench("bench_remote_shaped", "--prefetch-blocks 0,4 --delay-ms 5");
  if (contains(b.cli.output, "reads no remote files")) GTEST_SKIP() << "this build reads no remote files";
  ASSERT_EQ(b.cli.status, 0) << b.cli.output;
  const nlohmann::json& c = b.json.at("context");
  if (!c.at("shaped").get<bool>()) GTEST_SKIP() << c.at("shaped_note").get<std::string>();
  for (const char* key : {"images s3 shaped p0", "images s3 shaped p4", "images http shaped p0",
                          "images http shaped p4", "images curl s3 shaped", "images curl http shaped", "parquet s3 shaped",
                          "parquet http shaped", "parquet curl s3 shaped", "parquet curl http shaped"}) {
    EXPECT_EQ(b.rows.count(key), 1u) << key;
  }
  EXPECT_EQ(b.rows.at("images s3 shaped p4").at("prefetch_blocks").get<int64_t>(), 4);
  check_rows(b);
  EXPECT_FALSE(b.json.contains("goals"));
  // The link's devices went with it.
  const size_t at = b.cli.output.find("through veth ");
  ASSERT_NE(at, std::string::npos) << b.cli.output;
  const std::string device = b.cli.output.substr(at + 13, b.cli.output.find(',', at) - at - 13);
  const CliRun links = testing::run_command("ip -o link show");
  EXPECT_FALSE(contains(links.output, device + "@")) << device << "\n" << links.output;
}

}  // namespace
}  // namespace feedline
