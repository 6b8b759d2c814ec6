// The small data sets the dataset-level remote tests read, each written locally once and uploaded once by the
// independent client (their first use makes them): a Parquet dataset with Hive keys, WebDataset tar shards and a
// tree of class folders. For test code only, one test at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "dataset_remote_support.h"
#include "feedline/io/parquet.h"
#include "feedline/io/table.h"

namespace feedline::testing {

inline constexpr int kPixels = 16;  // 1x4x4 images

// `rows` rows of label (0..9) and pixel1..pixel16, drawn from `seed`.
inline Table pixel_table(int64_t rows, uint32_t seed) {
  Table t;
  t.num_rows = rows;
  uint32_t x = seed * 2654435761u + 7;
  for (int c = 0; c <= kPixels; ++c) {
    Column col = make_column(ColumnSchema{c == 0 ? "label" : "pixel" + std::to_string(c)});
    for (int64_t r = 0; r < rows; ++r) {
      x = x * 1664525u + 1013904223u;
      col.as<int64_t>().push_back(c == 0 ? (x >> 16) % 10 : (x >> 16) % 256);
    }
    t.columns.push_back(std::move(col));
  }
  return t;
}

inline void write_parquet(const std::string& path, const Table& t, int64_t row_group_rows) {
  write_file(path, "");
  parquet::WriteOptions o;
  o.row_group_rows = row_group_rows;
  parquet::write_table(path, t, o);
}

// A dataset as Spark leaves one: Hive folders of parts, and beside them what a reader leaves out (_SUCCESS, a
// _temporary folder, a hidden file, a CSV).
struct HiveDataset {
  std::string local;  // its folder
  std::string url;    // the same uploaded: s3://.../hive/
};

inline const HiveDataset& hive_dataset() {
  static const HiveDataset d = [] {
    HiveDataset h;
    h.local = scratch_dir("remote-hive") + "/table";
    uint32_t seed = 1;
    for (const char* year : {"year=2023", "year=2024"}) {
      for (const char* part : {"part-0.parquet", "part-1.parquet"}) {
        write_parquet(h.local + "/" + year + "/" + part, pixel_table(37, seed++), 10);
      }
    }
    write_file(h.local + "/_SUCCESS", "");
    write_parquet(h.local + "/_temporary/0/part-9.parquet", pixel_table(5, 99), 10);
    write_parquet(h.local + "/year=2024/.part-2.parquet", pixel_table(5, 98), 10);
    write_file(h.local + "/year=2024/notes.csv", "a,b\n1,2\n");
    h.url = upload_dir(h.local, "hive");
    return h;
  }();
  return d;
}

inline constexpr int kShards = 4;
inline constexpr int kPerShard = 16;

// kShards tar shards of kPerShard samples each (a PNG or a JPEG and a .cls label), made by /usr/bin/tar.
struct Shards {
  std::string local;  // their folder
  std::string url;    // the same uploaded: s3://.../shards/
};

inline const Shards& shards() {
  static const Shards s = [] {
    Shards out;
    out.local = scratch_dir("remote-shards") + "/shards";
    std::filesystem::create_directories(out.local);
    for (int shard = 0; shard < kShards; ++shard) {
      const std::string staging = out.local + "-staging/" + std::to_string(shard);
      std::vector<std::string> command = {"/usr/bin/tar", "--no-recursion", "-cf",
                                          out.local + "/train-00000" + std::to_string(shard) + ".tar", "-C", staging};
      for (int k = 0; k < kPerShard; ++k) {
        const int n = shard * kPerShard + k;
        const std::string key = "sample" + std::to_string(100000 + n);
        const bool jpeg = n % 3 == 0;
        write_file(staging + "/" + key + (jpeg ? ".jpg" : ".png"), tiny_image(static_cast<uint32_t>(n), jpeg));
        write_file(staging + "/" + key + ".cls", std::to_string(n % 5));
        command.push_back(key + (jpeg ? ".jpg" : ".png"));
        command.push_back(key + ".cls");
      }
      const CommandResult r = run_command(command);
      if (r.exit_code != 0) throw std::runtime_error("tar: " + r.output);
    }
    out.url = upload_dir(out.local, "shards");
    return out;
  }();
  return s;
}

// A tree of class folders as torchvision reads it: nested folders, upper-case extensions, files that are no image,
// a hidden class folder (a class to torchvision too).
struct Tree {
  std::string local, url;
};

inline const Tree& tree() {
  static const Tree t = [] {
    Tree out;
    out.local = scratch_dir("remote-tree") + "/train";
    const std::vector<std::string> files = {"cat/a.png",     "cat/b.JPG",  "cat/deep/er/c.png", "cat/deep/d.png",
                                            "cat/notes.txt", "dog-x/e.png", "dog/f.jpeg",       "dog/sub/g.png",
                                            "dog/.h.png",    "dog/zz.png",  ".hidden/i.png",    "dog/sub-2/j.png"};
    uint32_t seed = 200;
    for (const std::string& f : files) {
      const bool jpeg = f.find(".jp") != std::string::npos || f.find(".JP") != std::string::npos;
      const bool text = f.find(".txt") != std::string::npos;
      write_file(out.local + "/" + f, text ? std::string("text") : tiny_image(seed++, jpeg));
    }
    write_file(out.local + "/README.md", "beside the classes");
    out.url = upload_dir(out.local, "tree");
    return out;
  }();
  return t;
}

}  // namespace feedline::testing
