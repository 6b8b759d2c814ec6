// What `bench remote` stands on: its processes (the test servers, the shaped link), its data, curl and the AWS
// environment.
#include "lab/remote_setup.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <thread>

#include "feedline/dataset/image_sources.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "lab/process.h"

extern char** environ;

namespace feedline::lab {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void pause_briefly() { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }

// The port of http://HOST:PORT.
std::string host_port(const std::string& url) {
  const size_t scheme = url.find("://");
  return scheme == std::string::npos ? url : url.substr(scheme + 3);
}

}  // namespace

void check_stop(const std::atomic<bool>* stop) {
  if (stop != nullptr && stop->load()) throw Error("bench remote: stopped before the end");
}

// ------------------------------------------------------------------------------------------------ ChildProcess

ChildProcess::ChildProcess(const std::vector<std::string>& argv, std::string log) : log_(std::move(log)) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    throw IoError("bench remote: cannot make a pipe: " + std::string(std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, reset;
  sigemptyset(&none);
  sigemptyset(&reset);
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&reset, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &reset);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = posix_spawnp(&pid_, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[0]);
  if (rc != 0) {
    ::close(fds[1]);
    pid_ = -1;
    throw IoError("bench remote: cannot start " + argv[0] + ": " + std::strerror(rc), rc);
  }
  input_ = fds[1];
}

bool ChildProcess::running() {
  if (pid_ < 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == 0) return true;
  pid_ = -1;
  return false;
}

void ChildProcess::stop(double grace_seconds) {
  if (input_ >= 0) {
    ::close(input_);
    input_ = -1;
  }
  const auto wait_for = [this](double seconds) {
    const auto start = Clock::now();
    while (running() && since(start) < seconds) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return !running();
  };
  if (pid_ < 0 || wait_for(grace_seconds)) return;
  ::kill(-pid_, SIGTERM);
  if (wait_for(5)) return;
  ::kill(-pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string ChildProcess::log_tail() const {
  std::ifstream f(log_, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string tail = text.size() > 3000 ? text.substr(text.size() - 3000) : text;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  return tail.empty() ? "(its log " + log_ + " is empty)" : tail;
}

// ------------------------------------------------------------------------------------------------ WorkDir

WorkDir::WorkDir(const std::string& given, bool keep) {
  if (!given.empty()) {
    // A folder the user named is theirs: what the bench writes there stays.
    std::error_code ec;
    fs::create_directories(given, ec);
    if (ec) throw IoError("bench remote: work_dir " + given + ": " + ec.message());
    path_ = fs::absolute(given).string();
    remove_ = false;
    return;
  }
  char pattern[] = "/tmp/feedline-bench-remote-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) {
    throw IoError("bench remote: cannot make a folder in /tmp: " + std::string(std::strerror(errno)));
  }
  path_ = pattern;
  remove_ = !keep;
}

WorkDir::~WorkDir() {
  if (remove_) remove_tree(path_);
}

// ------------------------------------------------------------------------------------------------ data

ShardSet write_shards(const std::string& photos_dir, int64_t images, int64_t shard_images, const std::string& dir) {
  const ImageFolderSource source(photos_dir);
  const int64_t n = std::min(images, source.size());
  ShardSet set;
  set.images = n;
  fs::create_directories(dir);
  struct ArchiveFree {
    void operator()(archive* a) const { archive_write_free(a); }
  };
  for (int64_t first = 0, s = 0; first < n; first += shard_images, ++s) {
    const std::string name = fmt::format("train-{:06d}.tar", s);
    const std::string path = dir + "/" + name;
    std::unique_ptr<archive, ArchiveFree> a(archive_write_new());
    const auto check = [&](int rc, const std::string& what) {
      if (rc != ARCHIVE_OK) throw IoError(path + ": " + what + ": " + archive_error_string(a.get()));
    };
    check(archive_write_set_format_ustar(a.get()), "cannot choose the tar format");
    check(archive_write_open_filename(a.get(), path.c_str()), "cannot create");
    const auto add = [&](const std::string& member, const std::string& data) {
      archive_entry* e = archive_entry_new();
      archive_entry_set_pathname(e, member.c_str());
      archive_entry_set_size(e, static_cast<la_int64_t>(data.size()));
      archive_entry_set_filetype(e, AE_IFREG);
      archive_entry_set_perm(e, 0644);
      const int rc = archive_write_header(a.get(), e);
      archive_entry_free(e);
      check(rc, "cannot write the header of " + member);
      if (archive_write_data(a.get(), data.data(), data.size()) != static_cast<la_ssize_t>(data.size())) {
        throw IoError(path + ": cannot write " + member + ": " + archive_error_string(a.get()));
      }
    };
    for (int64_t i = first; i < std::min(n, first + shard_images); ++i) {
      // Spread evenly over the folder, so that every class is in the set.
      const EncodedSample sample = source.get(i * source.size() / n);
      const std::string key = fmt::format("{:06d}", i);
      add(key + ".jpg", sample.bytes);
      add(key + ".cls", std::to_string(sample.label));
    }
    check(archive_write_close(a.get()), "cannot finish");
    set.files.push_back(name);
    set.bytes += file_size(path);
  }
  return set;
}

void write_bench_parquet(const std::string& path, int64_t megabytes, uint64_t seed) {
  constexpr int64_t kRowGroups = 8;
  constexpr int64_t kBytesPerRow = 86;  // what zstd leaves of a row of these columns, near enough
  const int64_t rows = std::max<int64_t>(kRowGroups, megabytes * 1000000 / kBytesPerRow);
  const int64_t group_rows = (rows + kRowGroups - 1) / kRowGroups;
  const auto column = [](const std::string& name, PhysicalType type) {
    ColumnSchema c;
    c.name = name;
    c.type = type;
    c.is_string = type == PhysicalType::kByteArray;
    return c;
  };
  std::vector<ColumnSchema> schema{column("id", PhysicalType::kInt64), column("label", PhysicalType::kInt64)};
  for (int f = 0; f < 8; ++f) schema.push_back(column("f" + std::to_string(f), PhysicalType::kDouble));
  schema.push_back(column("text", PhysicalType::kByteArray));
  parquet::WriteOptions options;
  options.row_group_rows = group_rows;
  parquet::FileWriter writer(path, schema, options);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int64_t begin = 0; begin < rows; begin += group_rows) {
    const int64_t end = std::min(rows, begin + group_rows);
    Table t;
    t.num_rows = end - begin;
    for (const ColumnSchema& c : schema) t.columns.push_back(make_column(c));
    for (int64_t r = begin; r < end; ++r) {
      t.columns[0].as<int64_t>().push_back(r);
      t.columns[1].as<int64_t>().push_back(static_cast<int64_t>(rng() % 10));
      for (int f = 0; f < 8; ++f) t.columns[2 + static_cast<size_t>(f)].as<double>().push_back(uniform(rng));
      char letters[32];
      for (char& ch : letters) ch = static_cast<char>('a' + rng() % 26);
      std::get<ByteArrays>(t.columns[10].values).push_back(std::string_view(letters, sizeof letters));
    }
    writer.write(t);
  }
  writer.close();
}

int64_t ProjectionRanges::bytes() const {
  int64_t sum = tail.size;
  for (const remote::ByteRange& r : merged) sum += r.size;
  return sum;
}

ProjectionRanges projection_ranges(const std::string& parquet, const std::vector<std::string>& columns) {
  const parquet::FileInfo info = parquet::read_file_info(parquet);
  ProjectionRanges p;
  p.file_bytes = file_size(parquet);
  p.rows = info.num_rows;
  p.row_groups = static_cast<int64_t>(info.row_groups.size());
  std::vector<remote::ByteRange> chunks;
  for (const std::string& name : columns) {
    const auto it = std::find_if(info.schema.begin(), info.schema.end(),
                                 [&](const ColumnSchema& c) { return c.name == name; });
    if (it == info.schema.end()) throw InvalidArgument("bench remote: " + parquet + " has no column " + name);
    const auto c = static_cast<size_t>(it - info.schema.begin());
    for (const parquet::RowGroupInfo& g : info.row_groups) {
      const parquet::ColumnChunkInfo& ci = g.columns.at(c);
      if (ci.offset >= 0) chunks.push_back({ci.offset, ci.compressed_bytes});
    }
  }
  p.chunks = static_cast<int64_t>(chunks.size());
  // The reader's limits before it has measured a link (RemoteOptions: 0 means derived, from these).
  const remote::RemoteOptions o = remote::options();
  p.merged = remote::coalesce_ranges(chunks, o.hole_limit > 0 ? o.hole_limit : int64_t{8} << 10,
                                     o.range_limit > 0 ? o.range_limit : int64_t{32} << 20);
  const int64_t tail = std::min(p.file_bytes, o.footer_bytes);
  p.tail = {p.file_bytes - tail, tail};
  return p;
}

// ------------------------------------------------------------------------------------------------ servers

BenchServers::BenchServers(const std::string& python, const std::string& script, const std::string& dir,
                           const std::atomic<bool>* stop)
    : python_(python), script_dir_(fs::path(script).parent_path().string()), servers_json_(dir + "/servers.json") {
  const auto start = Clock::now();
  fs::create_directories(dir);
  child_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{python, script, "up", "--dir", dir, "--s3", "--http", "--proxy", "s3", "--proxy",
                               "http"},
      dir + "/servers.out");
  // servers.py writes servers.json (whole, by a rename) once every server answers.
  std::error_code ec;
  while (!fs::exists(servers_json_, ec)) {
    check_stop(stop);
    if (!child_->running()) {
      throw IoError("bench remote: the test servers did not start (" + script + "):\n" + child_->log_tail());
    }
    if (since(start) > 300) {
      throw IoError("bench remote: the test servers were not up after 300 s (" + script + "):\n" +
                    child_->log_tail());
    }
    pause_briefly();
  }
  std::ifstream f(servers_json_);
  const nlohmann::json j = nlohmann::json::parse(f);
  const nlohmann::json& s3 = j.at("s3");
  s3_ = {s3.at("endpoint").get<std::string>(), s3.at("region").get<std::string>(),
         s3.at("access_key").get<std::string>(), s3.at("secret_key").get<std::string>()};
  http_url_ = j.at("http").at("url").get<std::string>();
  http_root_ = j.at("http").at("root").get<std::string>();
  s3_proxy_ = j.at("proxy").at("s3").at("url").get<std::string>();
  s3_proxy_control_ = j.at("proxy").at("s3").at("control").get<std::string>();
  http_proxy_ = j.at("proxy").at("http").at("url").get<std::string>();
  http_proxy_control_ = j.at("proxy").at("http").at("control").get<std::string>();
  start_seconds_ = since(start);
}

BenchServers::~BenchServers() = default;

void BenchServers::s3tool(const std::string& args) {
  const std::string cmd = shell_quoted(python_) + " " + shell_quoted(script_dir_ + "/s3tool.py") + " --servers " +
                          shell_quoted(servers_json_) + " " + args + " 2>&1";
  const CommandOutput out = run_captured(cmd, "bench remote: cannot run s3tool.py");
  if (!out.succeeded) throw IoError("bench remote: s3tool.py " + args + " failed:\n" + out.output);
}

void BenchServers::serve(const std::string& key, const std::string& local) {
  const fs::path served = fs::path(http_root_) / key;
  fs::create_directories(served.parent_path());
  std::error_code ec;
  fs::create_hard_link(local, served, ec);
  if (ec) fs::copy_file(local, served, fs::copy_options::overwrite_existing);
}

void BenchServers::make_bucket(const std::string& bucket) {
  if (std::find(buckets_.begin(), buckets_.end(), bucket) != buckets_.end()) return;
  s3tool("mkbucket " + shell_quoted(bucket));
  buckets_.push_back(bucket);
}

void BenchServers::put(const std::string& bucket, const std::string& key, const std::string& local) {
  make_bucket(bucket);
  s3tool("put " + shell_quoted(bucket) + " " + shell_quoted(key) + " " + shell_quoted(local));
  serve(key, local);
}

void BenchServers::put_dir(const std::string& bucket, const std::string& prefix, const std::string& dir,
                           const std::vector<std::string>& files) {
  make_bucket(bucket);
  s3tool("putdir " + shell_quoted(bucket) + " " + shell_quoted(prefix) + " " + shell_quoted(dir));
  for (const std::string& f : files) serve(prefix + f, dir + "/" + f);
}

void BenchServers::set_proxy_delay(int64_t ms) {
  for (const std::string& control : {s3_proxy_control_, http_proxy_control_}) {
    const CommandOutput out = run_captured(
        "curl -sS -f --noproxy '*' -X POST --data " + shell_quoted(fmt::format("{{\"ms\": {}}}", ms)) + " " +
            shell_quoted(control + "/delay") + " 2>&1",
        "bench remote: cannot run curl");
    if (!out.succeeded) throw IoError("bench remote: the fault proxy refused a delay (" + control + "): " + out.output);
  }
}

// ------------------------------------------------------------------------------------------------ ShapedLink

ShapedLink::ShapedLink(const std::string& python, const std::string& script,
                       const std::vector<std::string>& upstreams, const std::string& rate, const std::string& log,
                       const std::atomic<bool>* stop) {
  std::vector<std::string> argv{python, script, "--rate", rate};
  for (const std::string& u : upstreams) {
    argv.push_back("--upstream");
    argv.push_back(host_port(u));
  }
  child_ = std::make_unique<ChildProcess>(argv, log);
  const auto start = Clock::now();
  // It prints one JSON line once the link and its relays are up.
  while (true) {
    check_stop(stop);
    std::ifstream f(log);
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind("{\"address\"", 0) != 0) continue;
      const nlohmann::json j = nlohmann::json::parse(line);
      address_ = j.at("address").get<std::string>();
      device_ = j.at("device").get<std::string>();
      for (const auto& p : j.at("ports")) ports_.push_back(p.get<int>());
      return;
    }
    if (!child_->running()) throw IoError("the shaped link could not be made: " + child_->log_tail());
    if (since(start) > 30) throw IoError("the shaped link was not up after 30 s: " + child_->log_tail());
    pause_briefly();
  }
}

ShapedLink::~ShapedLink() = default;

std::string ShapedLink::url(size_t i) const { return fmt::format("http://{}:{}", address_, ports_.at(i)); }

// ------------------------------------------------------------------------------------------------ curl

CurlResult curl_fetch(const std::vector<CurlTransfer>& transfers, const S3Server* s3, int parallel,
                      const std::string& config_path) {
  std::ostringstream config;
  for (const CurlTransfer& t : transfers) {
    if (&t != &transfers.front()) config << "next\n";
    config << "url = \"" << t.url << "\"\noutput = \"/dev/null\"\nsilent\nshow-error\n"
           << "write-out = \"%{http_code} %{size_download}\\n\"\n";
    if (t.range.size > 0) config << "range = \"" << t.range.offset << "-" << t.range.end() - 1 << "\"\n";
    if (s3 != nullptr) {
      config << "header = \"x-amz-content-sha256: UNSIGNED-PAYLOAD\"\naws-sigv4 = \"aws:amz:" << s3->region
             << ":s3\"\nuser = \"" << s3->access_key << ":" << s3->secret_key << "\"\n";
    }
  }
  {
    // The keys stay in a file only this user reads.
    std::ofstream f(config_path, std::ios::trunc);
    ::chmod(config_path.c_str(), 0600);
    f << config.str();
  }
  const std::string cmd = fmt::format("curl --no-progress-meter --noproxy '*' --parallel --parallel-immediate "
                                      "--parallel-max {} -K {} 2>&1",
                                      std::max(1, parallel), shell_quoted(config_path));
  const auto start = Clock::now();
  const CommandOutput out = run_captured(cmd, "bench remote: cannot run curl");
  CurlResult r;
  r.seconds = since(start);
  std::remove(config_path.c_str());
  std::istringstream lines(out.output);
  std::string status;
  int64_t size = 0;
  while (lines >> status >> size) {
    if (status != "200" && status != "206") throw IoError("bench remote: curl got HTTP " + status + ":\n" + out.output);
    ++r.transfers;
    r.bytes += size;
  }
  if (!out.succeeded || r.transfers != static_cast<int64_t>(transfers.size())) {
    throw IoError("bench remote: curl failed:\n" + out.output);
  }
  return r;
}

// ------------------------------------------------------------------------------------------------ environment

namespace {
const char* const kAwsVariables[] = {"AWS_ACCESS_KEY_ID",       "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                     "AWS_REGION",              "AWS_DEFAULT_REGION",    "AWS_ENDPOINT_URL_S3",
                                     "AWS_ENDPOINT_URL",        "AWS_S3_ADDRESSING_STYLE", "AWS_NO_SIGN_REQUEST",
                                     "AWS_PROFILE"};
}  // namespace

AwsEnvironment::AwsEnvironment() {
  for (const char* name : kAwsVariables) {
    const char* value = std::getenv(name);
    saved_.push_back({name, {value != nullptr, value != nullptr ? value : ""}});
  }
}

AwsEnvironment::~AwsEnvironment() {
  for (const auto& [name, old] : saved_) {
    if (old.first) {
      ::setenv(name.c_str(), old.second.c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
}

void AwsEnvironment::point_at(const S3Server& server, const std::string& endpoint) {
  // Set between runs only, when no request is in flight: the remote layer reads these for every request.
  for (const char* name : kAwsVariables) ::unsetenv(name);
  ::setenv("AWS_ACCESS_KEY_ID", server.access_key.c_str(), 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", server.secret_key.c_str(), 1);
  ::setenv("AWS_REGION", server.region.c_str(), 1);
  ::setenv("AWS_ENDPOINT_URL_S3", endpoint.c_str(), 1);
  ::setenv("AWS_S3_ADDRESSING_STYLE", "path", 1);
}

}  // namespace feedline::lab
