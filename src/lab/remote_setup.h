// What `bench remote` (remote_bench.cpp) stands on: its data (tar shards of JPEGs, a large Parquet file), the test
// servers it starts and uploads to, the shaped link, curl as the limit, and the AWS environment the remote layer
// reads. Internal to the lab; every class here is used from the bench's one thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/remote.h"

namespace feedline::lab {

// Throws Error saying the bench was stopped when `stop` is set.
void check_stop(const std::atomic<bool>* stop);

// A process started with a pipe from here as its standard input, in a process group of its own (so that a Ctrl-C
// at the terminal reaches the bench, which stops it in order), its output appended to `log`. The scripts it runs
// stop when that pipe ends, so they also stop when this process dies, however it dies. Stopped when destroyed.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, std::string log);
  ~ChildProcess() { stop(); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool running();
  // Ends its input and waits up to `grace_seconds` for it to stop, then signals its group (TERM, then KILL).
  void stop(double grace_seconds = 60);
  const std::string& log() const { return log_; }
  // The end of its log, for an error message.
  std::string log_tail() const;

 private:
  pid_t pid_ = -1;
  int input_ = -1;
  std::string log_;
};

// A folder of the bench's own (a temporary one unless given), removed at the end unless kept.
class WorkDir {
 public:
  WorkDir(const std::string& given, bool keep);
  ~WorkDir();
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool remove_ = true;
};

// Tar shards of `images` JPEGs of the class folders under `photos_dir`, spread evenly over them, `shard_images` a
// shard, written into `dir` as WebDataset's layout (<key>.jpg, <key>.cls) names train-NNNNNN.tar.
struct ShardSet {
  std::vector<std::string> files;  // the shards' file names, in order
  int64_t images = 0, bytes = 0;
};
ShardSet write_shards(const std::string& photos_dir, int64_t images, int64_t shard_images, const std::string& dir);

// A Parquet file of about `megabytes` MB at `path`: 8 row groups of id (INT64), label (INT64, 10 values), f0..f7
// (DOUBLE, uniform) and text (STRING, 32 random letters), zstd, so that a projection of a column or two reads a
// small share of it in a few ranges.
void write_bench_parquet(const std::string& path, int64_t megabytes, uint64_t seed);

// The byte ranges a projection of `columns` reads of a local Parquet file: the footer's tail (RemoteOptions'
// footer_bytes) and the chunks, merged as the reader merges them before it has measured the link.
struct ProjectionRanges {
  int64_t file_bytes = 0, rows = 0, row_groups = 0, chunks = 0;
  std::vector<remote::ByteRange> merged;  // the chunks' ranges, merged
  remote::ByteRange tail;
  int64_t bytes() const;                  // merged and tail
};
ProjectionRanges projection_ranges(const std::string& parquet, const std::vector<std::string>& columns);

// The test servers of tests/remote/servers.py: Ceph's radosgw, nginx, and a fault proxy before each, started in the
// foreground under `dir` and stopped when this object goes.
struct S3Server {
  std::string endpoint, region, access_key, secret_key;
};
class BenchServers {
 public:
  BenchServers(const std::string& python, const std::string& script, const std::string& dir,
               const std::atomic<bool>* stop);
  ~BenchServers();
  BenchServers(const BenchServers&) = delete;
  BenchServers& operator=(const BenchServers&) = delete;

  const S3Server& s3() const { return s3_; }
  const std::string& http_url() const { return http_url_; }
  const std::string& s3_proxy() const { return s3_proxy_; }      // http://127.0.0.1:PORT
  const std::string& http_proxy() const { return http_proxy_; }
  double start_seconds() const { return start_seconds_; }
  // Uploads `local` as `key` of `bucket` (made first when new) with s3tool.py, and serves it as /<key> from nginx.
  void put(const std::string& bucket, const std::string& key, const std::string& local);
  // The same for `files` of `dir` (every file it holds), as <prefix><file>, in one s3tool.py call.
  void put_dir(const std::string& bucket, const std::string& prefix, const std::string& dir,
               const std::vector<std::string>& files);
  // Every proxied request waits `ms` before it is forwarded (fault_proxy.py's delay).
  void set_proxy_delay(int64_t ms);

 private:
  void s3tool(const std::string& args);
  void make_bucket(const std::string& bucket);
  void serve(const std::string& key, const std::string& local);

  std::string python_, script_dir_, servers_json_, http_root_;
  std::string s3_proxy_control_, http_proxy_control_;
  S3Server s3_;
  std::string http_url_, s3_proxy_, http_proxy_;
  std::vector<std::string> buckets_;
  double start_seconds_ = 0;
  std::unique_ptr<ChildProcess> child_;
};

// A link shaped to a rate each way (scripts/python/shaped_link.py): a veth pair into a network namespace of its
// own, and a relay on its far end for each upstream. Connections to address():ports()[i] cross the link to
// upstreams[i]. Needs root; throws IoError with the script's message when it cannot be made.
class ShapedLink {
 public:
  ShapedLink(const std::string& python, const std::string& script, const std::vector<std::string>& upstreams,
             const std::string& rate, const std::string& log, const std::atomic<bool>* stop);
  ~ShapedLink();
  ShapedLink(const ShapedLink&) = delete;
  ShapedLink& operator=(const ShapedLink&) = delete;
  // http://ADDRESS:PORT of the relay to upstreams[i].
  std::string url(size_t i) const;
  const std::string& device() const { return device_; }  // this side's end of the pair

 private:
  std::string address_, device_;
  std::vector<int> ports_;
  std::unique_ptr<ChildProcess> child_;
};

// curl (the command-line tool) fetching byte ranges of URLs in parallel, as the limit of what the same server gives
// over the same link. A range of size 0 asks for the whole object. S3 requests are signed with `s3`'s keys (given
// to curl in a config file, never on its command line).
struct CurlTransfer {
  std::string url;
  remote::ByteRange range;
};
struct CurlResult {
  double seconds = 0;
  int64_t transfers = 0, bytes = 0;
};
CurlResult curl_fetch(const std::vector<CurlTransfer>& transfers, const S3Server* s3, int parallel,
                      const std::string& config_path);

// The AWS_* variables that point the remote layer at one S3 server, set while it lives and put back after.
class AwsEnvironment {
 public:
  AwsEnvironment();
  ~AwsEnvironment();
  AwsEnvironment(const AwsEnvironment&) = delete;
  AwsEnvironment& operator=(const AwsEnvironment&) = delete;
  void point_at(const S3Server& server, const std::string& endpoint);

 private:
  std::vector<std::pair<std::string, std::pair<bool, std::string>>> saved_;  // name, (was set, value)
};

}  // namespace feedline::lab
