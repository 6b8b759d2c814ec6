// Times feedline::parquet::read_table on each file (read_dataset on a folder, glob or list of files): one warm-up
// read, then --repeat timed reads; prints one CSV line per file (file, threads, rows, columns, median seconds, min
// seconds, and the median of the reads' page faults: each a page the kernel gave the process or mapped into it, a
// 4 KiB or a 2 MiB one, as getrusage counts them). Pair it with
// bench/duckdb_read.mjs, which times DuckDB on the same files with the same thread count. --columns a,b reads
// only those columns of every file (what projection saves: the other chunks are neither read nor decoded).
// --keep-memory has malloc keep what the reads free for the next read, as DuckDB's allocator does in its own
// repeated reads when each result is freed before the next (bench/duckdb_read.mjs --free-results): the figures are
// then the reader's work, without the kernel's faults on fresh pages (which a process's first read of a file pays,
// whichever reader it uses). --first-read WARM times the process's first read
// of each file instead, once, after one read of the file WARM has set up what a first read of any file sets up
// (threads, the allocator's arenas): run it once per file per process, as bench/duckdb_read.mjs --first-read.
// --floor also times each file's codec floor (codec_floor.h: its pages decompressed by the same functions on as
// many threads, plus one memcpy of the decoded table's bytes), --repeat times after the reads, and adds its
// median (floor_s, and its parts decompress_s and copy_s), the table's bytes and the file's bytes to the line.
#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bench/codec_floor.h"

#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"

int main(int argc, char** argv) {
  int threads = 0, repeat = 5;
  bool keep_memory = false, floor = false;
  std::string first_read;
  std::vector<std::string> files, columns;
  const char* usage =
      "usage: feedline_parquet_read [--threads N] [--repeat N] [--columns A,B,...]\n"
      "                             [--keep-memory | --first-read WARM] [--floor] FILE...\n";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--columns" && i + 1 < argc) {
      const std::string list = argv[++i];
      for (size_t start = 0;;) {
        const size_t comma = list.find(',', start);
        columns.push_back(list.substr(start, comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (a == "--keep-memory") {
      keep_memory = true;
    } else if (a == "--floor") {
      floor = true;
    } else if (a == "--first-read" && i + 1 < argc) {
      first_read = argv[++i];
    } else if (!a.empty() && a[0] != '-') {
      files.push_back(a);
    } else {
      std::fputs(usage, stderr);
      return 2;
    }
  }
  if (files.empty() || (keep_memory && !first_read.empty()) || (floor && (!first_read.empty() || !columns.empty()))) {
    std::fputs(usage, stderr);
    return 2;
  }
  if (keep_memory) {
    // Every block from the heap rather than a mapping of its own, as the feedline tool's process settings have it
    // (MALLOC_MMAP_MAX_=0), and the heap's top kept rather than given back: a mapping threshold alone (32 MiB at
    // most) still maps the columns of a large table anew for each read.
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, -1);  // (never: a table over the tool's 1 GiB would otherwise go back in part)
  }
  std::printf("file,threads,rows,columns,median_s,min_s,faults%s\n",
              floor ? ",floor_s,decompress_s,copy_s,table_bytes,file_bytes" : "");
  try {
    // Each timed read's time and the page faults it took (minor and major: pages the kernel gave or mapped).
    std::vector<long> faults;
    const auto fault_count = [] {
      rusage usage{};
      getrusage(RUSAGE_SELF, &usage);
      return usage.ru_minflt + usage.ru_majflt;
    };
    const auto timed = [&](const auto& read, std::vector<double>* times) {
      const long faults_before = fault_count();
      const auto start = std::chrono::steady_clock::now();
      auto table = read();
      times->push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      faults.push_back(fault_count() - faults_before);
      return table;
    };
    if (!first_read.empty()) {
      feedline::parquet::ReadOptions options;
      options.num_threads = threads;
      feedline::parquet::read_table(first_read, options);
    }
    for (const auto& f : files) {
      feedline::parquet::ReadOptions options;
      options.num_threads = threads;
      options.columns = columns;
      const bool dataset = feedline::parquet::is_dataset_spec(f);
      const auto read = [&] {
        return dataset ? feedline::parquet::read_dataset(f, options) : feedline::parquet::read_table(f, options);
      };
      // With --first-read, the first read is the one timed; else it warms up for the timed ones.
      std::vector<double> times;
      faults.clear();
      const auto first = first_read.empty() ? read() : timed(read, &times);
      for (int r = 0; first_read.empty() && r < repeat; ++r) timed(read, &times);
      std::sort(times.begin(), times.end());
      std::sort(faults.begin(), faults.end());
      std::printf("%s,%d,%lld,%zu,%.6f,%.6f,%ld", f.c_str(), threads, static_cast<long long>(first.num_rows),
                  first.columns.size(), times[times.size() / 2], times.front(), faults[faults.size() / 2]);
      if (floor) {
        if (dataset) throw feedline::InvalidArgument("--floor takes files, not '" + f + "'");
        std::ifstream in(f, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!in && !in.eof()) throw feedline::IoError("cannot read '" + f + "'");
        const auto chunks = feedline::bench::file_pages(bytes, f);
        const size_t output = feedline::bench::table_bytes(first);
        std::vector<feedline::bench::FloorTimes> floors;
        for (int r = 0; r < repeat; ++r) floors.push_back(feedline::bench::codec_floor(chunks, output, threads));
        std::sort(floors.begin(), floors.end(), [](const auto& a, const auto& b) { return a.total() < b.total(); });
        const auto& mid = floors[floors.size() / 2];
        std::printf(",%.6f,%.6f,%.6f,%zu,%zu", mid.total(), mid.decompress_s, mid.copy_s, output, bytes.size());
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  } catch (const feedline::Error& e) {
    std::fprintf(stderr, "feedline_parquet_read: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
