// `feedline bench remote`: what reading from object storage and web servers costs against local disk, side by side
// in one run. Two reads, each from local disk, from an S3 server (Ceph's radosgw) and from a web server (nginx) on
// this host, beside curl fetching the same bytes from the same server (the loopback limit):
//   images  - a shuffled epoch of tar shards of JPEGs through the Loader (RandomResizedCrop, RandomHorizontalFlip,
//             PILToTensor, as `bench images`), the shards made from a folder of class folders of JPEGs;
//   parquet - a projection of a few columns of a large Parquet file (one the bench writes, unless given one).
// Then both again through a shaped link, the epoch at several prefetch depths (LoaderOptions::prefetch_blocks): a
// veth pair into a network namespace of the bench's own, shaped by tbf to a rate, with a delay added to every request
// by the test servers' fault proxy. That part needs root; without it, it is skipped with a line saying so.
//
// It starts the servers itself (tests/remote/servers.py, found in the checkout), uploads the data (s3tool.py beside
// it), and stops everything at the end, on an error, and when `stop` is set (by a signal handler: the bench checks it
// at every batch and between runs, stops, and throws Error). The servers and the link also stop by themselves when
// this process dies: they run until their standard input, a pipe from here, ends.
//
// Call run_remote_bench() from one thread at a time: while it runs it sets the process's AWS_* environment (the
// remote layer reads its configuration for every request) and, with max_in_flight, its RemoteOptions, and puts both
// back at the end. It calls its Reporter on that thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "feedline/lab/lab.h"

namespace feedline::lab {

struct RemoteBenchOptions {
  std::string photos_dir = "data/photos/jpeg/train";  // class folders of JPEGs (`prepare --photos` writes them)
  int64_t images = 1000;        // spread evenly over the folder
  int64_t shard_images = 100;   // images a tar shard
  int64_t workers = 0;          // loader workers; 0: every core
  int64_t batch_size = 64;
  int64_t image_size = 224;
  std::string parquet;          // a Parquet file to project; empty: one the bench writes, `parquet_mb` large
  int64_t parquet_mb = 200;
  std::vector<std::string> columns;  // projected; empty: label and f0 of the bench's file, else its first two
  int64_t repeat = 3;           // rounds of one run a row, the order reversed every other round; medians
  bool shaped = true;           // the shaped link's rows (they need root)
  std::string rate = "1gbit";   // the link's rate each way, in tc's units
  int64_t delay_ms = 20;        // added to every request on the link
  std::vector<int64_t> prefetch_blocks{0, 4, 8};  // the shaped epoch's depths; the unshaped rows use the default
  int64_t max_in_flight = 0;    // RemoteOptions::max_in_flight for the run; 0: as it is
  std::string python_program = "/usr/bin/python3";
  std::string servers_script;   // tests/remote/servers.py; empty: looked for in the checkout
  std::string link_script;      // scripts/python/shaped_link.py; empty: likewise
  std::string work_dir;         // shards, the Parquet file and the servers' state; empty: a temporary folder
  bool keep_work_dir = false;   // leave the work folder (and the servers' logs in it) in place
  std::string out_dir = "bench-results";  // remote.json and remote.md go here; empty: none
  uint64_t seed = 42;
  std::string command;          // the command line, for the record
  const std::atomic<bool>* stop = nullptr;  // when set, the run stops early (see above)
};

// One run of a row: the time of its epoch (or read), and what the remote layer counted over it.
struct RemoteRun {
  double seconds = 0;
  int64_t items = 0;              // images of the epoch, rows of the projection, transfers of curl
  int64_t requests = 0, bytes = 0, retries = 0, cache_hits = 0;
  double fetch_wait_seconds = 0;  // EpochStats::fetch_wait_seconds (images), RemoteStats::wait_seconds (parquet)
  // Images: when the first batch was handed out, and the loader's wait until then (the epoch's start: every
  // worker waits for the first blocks).
  double first_batch_seconds = 0, first_batch_wait_seconds = 0;
  // CPU time over the run: this process's, and every process's on the machine (the servers and the link share the
  // cores with the loader's workers).
  double cpu_seconds = 0, machine_cpu_seconds = 0;
};

struct RemoteBenchRow {
  std::string key;                // "images local", "images s3", "parquet curl http", "images s3 shaped p4", ...
  std::string part;               // images or parquet
  std::string source;             // local, s3, http, curl s3, curl http
  bool shaped = false;
  int64_t prefetch_blocks = -1;   // the loader's, for an image row over the network; -1: none applies
  bool skipped = false;
  std::string note;               // why it was skipped
  std::vector<RemoteRun> runs;    // round by round
  double open_seconds = 0;        // opening the source once (remote shards are read whole to be indexed)
  // Medians over the runs.
  double seconds = 0, fetch_wait_seconds = 0, first_batch_seconds = 0, first_batch_wait_seconds = 0;
  double cpu_seconds = 0, machine_cpu_seconds = 0;
  double wait_share = 0;          // fetch_wait / (workers x epoch): the loader's threads' time spent waiting
  double vs_local = 0;            // the median over rounds of this row's time over the local row's; 0: none
  int64_t requests = 0, bytes = 0;  // the last run's
};

struct RemoteBenchResult {
  std::vector<RemoteBenchRow> rows;
  int64_t images = 0, shards = 0, shard_bytes = 0, workers = 0;
  std::string parquet;            // the file projected
  int64_t parquet_bytes = 0, parquet_rows = 0, row_groups = 0;
  std::vector<std::string> columns;
  int64_t column_chunks = 0;      // chunks the projection reads
  int64_t merged_ranges = 0;      // those chunks merged as the reader merges them before it has measured the link
  int64_t projected_bytes = 0;    // the chunks' bytes and the footer's tail: what curl fetches for the projection
  std::string shaped_note;        // why the shaped rows were skipped; empty when they ran
  const RemoteBenchRow* find(const std::string& key) const;
};

// Throws InvalidArgument for bad options, IoError naming what is missing (the photo folder, servers.py, a server
// that does not start), Error when stopped.
RemoteBenchResult run_remote_bench(const RemoteBenchOptions& options, const std::string& program,
                                   Reporter& reporter);

// The result's tables as Markdown: the image epoch against local disk, and the projection.
std::string remote_bench_tables(const RemoteBenchResult& result);

}  // namespace feedline::lab
