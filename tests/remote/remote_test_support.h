// Helpers shared by the remote layer's tests against the test servers: a fixture that points the process at the S3
// gateway (directly or through its fault proxy) and puts the remote options back after each test, uploads by the
// independent client, the proxy's log read as counts, and checks of error messages. One test at a time.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "feedline/io/remote.h"
#include "remote_servers.h"
#include "test_paths.h"

namespace feedline::testing {

// A prefix of every key this process uploads, so that runs sharing the servers never see each other's objects.
inline const std::string& run_prefix() {
  static const std::string prefix =
      "run-" + std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::system_clock::now().time_since_epoch().count() % 1000000000) + "/";
  return prefix;
}

// Bytes from a seeded generator: every test object differs from every other, and any slice from any other place.
inline std::string random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint64_t v = rng();
    std::memcpy(&s[i], &v, 8);
  }
  for (; i < n; ++i) s[i] = static_cast<char>(rng());
  return s;
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) throw std::runtime_error(path + ": cannot write");
}

// What this process put on the servers: the buckets it uploaded to (its objects are under run_prefix() in each) and
// the files it wrote under nginx's root, removed when the tests end (the servers may be a set shared by runs).
struct Uploads {
  std::mutex mu;
  std::set<std::string> buckets;
  std::vector<std::string> served_files;
};
inline Uploads& uploads() {
  static Uploads u;
  return u;
}

inline void ensure_bucket(const std::string& bucket) {
  Uploads& u = uploads();
  std::lock_guard<std::mutex> lock(u.mu);
  if (u.buckets.count(bucket) != 0) return;
  const CommandResult r = run_s3tool({"mkbucket", bucket});
  if (r.exit_code != 0) throw std::runtime_error("mkbucket " + bucket + ": " + r.output);
  u.buckets.insert(bucket);
}

class RemoveUploads : public ::testing::Environment {
 public:
  void TearDown() override {
    Uploads& u = uploads();
    std::lock_guard<std::mutex> lock(u.mu);
    for (const auto& path : u.served_files) ::unlink(path.c_str());
    if (u.buckets.empty()) return;
    const std::string script =
        "import sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "import s3tool\n"
        "s3 = s3tool.client(sys.argv[2])\n"
        "for bucket in sys.argv[4:]:\n"
        "    keys = [k for k, _ in s3tool.list_keys(s3, bucket, sys.argv[3])]\n"
        "    for i in range(0, len(keys), 1000):\n"
        "        s3.delete_objects(Bucket=bucket, Delete={'Objects': [{'Key': k} for k in keys[i:i + 1000]]})\n";
    std::vector<std::string> argv = {"/usr/bin/python3", "-c", script, source_dir() + "/tests/remote",
                                     test_servers().servers_json, run_prefix()};
    argv.insert(argv.end(), u.buckets.begin(), u.buckets.end());
    run_command(argv);
  }
};
inline ::testing::Environment* const remove_uploads = ::testing::AddGlobalTestEnvironment(new RemoveUploads);

// Uploads `bytes` as `key` (run_prefix() is not added: pass keys made with it) with botocore; the object's ETag.
inline std::string put_object(const std::string& bucket, const std::string& key, const std::string& bytes) {
  static int n = 0;
  ensure_bucket(bucket);
  const std::string path = scratch_dir("upload-" + std::to_string(n++)) + "/object";
  write_bytes(path, bytes);
  const CommandResult r = run_s3tool({"put", bucket, key, path});
  if (r.exit_code != 0) throw std::runtime_error("put " + bucket + "/" + key + ": " + r.output);
  std::string etag = r.output;
  while (!etag.empty() && (etag.back() == '\n' || etag.back() == '\r')) etag.pop_back();
  return etag;
}

// Uploads many objects in one run of the independent client (a process each costs a fraction of a second); their
// ETags, in the order given.
inline std::vector<std::string> put_objects(const std::string& bucket,
                                            const std::vector<std::pair<std::string, std::string>>& objects) {
  static int n = 0;
  ensure_bucket(bucket);
  const std::string dir = scratch_dir("uploads-" + std::to_string(n++));
  nlohmann::json manifest = nlohmann::json::array();
  for (size_t i = 0; i < objects.size(); ++i) {
    const std::string path = dir + "/" + std::to_string(i);
    write_bytes(path, objects[i].second);
    manifest.push_back({objects[i].first, path});
  }
  write_bytes(dir + "/manifest.json", manifest.dump());
  const std::string script =
      "import json, sys\n"
      "sys.path.insert(0, sys.argv[1])\n"
      "import s3tool\n"
      "s3 = s3tool.client(sys.argv[2])\n"
      "for key, path in json.load(open(sys.argv[4])):\n"
      "    print(s3tool.put_file(s3, sys.argv[3], key, path))\n";
  const CommandResult r = run_command({"/usr/bin/python3", "-c", script, source_dir() + "/tests/remote",
                                       test_servers().servers_json, bucket, dir + "/manifest.json"});
  if (r.exit_code != 0) throw std::runtime_error("uploads to " + bucket + ": " + r.output);
  std::vector<std::string> etags;
  size_t at = 0;
  while (at < r.output.size()) {
    const size_t eol = r.output.find('\n', at);
    etags.push_back(r.output.substr(at, eol - at));
    at = eol == std::string::npos ? r.output.size() : eol + 1;
  }
  if (etags.size() != objects.size()) throw std::runtime_error("uploads to " + bucket + ": " + r.output);
  return etags;
}

inline std::string s3_url(const std::string& bucket, const std::string& key) { return "s3://" + bucket + "/" + key; }

// What `f` throws, as text; "(no error)" when it returns.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// The entries of a proxy log that are `method` requests whose path holds `path_part`.
inline std::vector<nlohmann::json> log_entries(const nlohmann::json& log, const std::string& method,
                                               const std::string& path_part = "") {
  std::vector<nlohmann::json> out;
  for (const auto& e : log) {
    if (e["method"] == method && e["path"].get<std::string>().find(path_part) != std::string::npos) out.push_back(e);
  }
  return out;
}

inline remote::RemoteStats stats_since(const remote::RemoteStats& before) {
  remote::RemoteStats now = remote::stats();
  now.requests -= before.requests;
  now.bytes -= before.bytes;
  now.retries -= before.retries;
  now.failures -= before.failures;
  now.cache_hits -= before.cache_hits;
  now.cache_misses -= before.cache_misses;
  now.cache_evictions -= before.cache_evictions;
  now.wait_seconds -= before.wait_seconds;
  return now;
}

// Points the remote layer at the S3 gateway with its keys from the environment (nothing from the user's AWS files),
// with short backoffs; every test starts from clean proxies and ends with the default options.
class RemoteTest : public ::testing::Test {
 protected:
  static constexpr const char* kBucket = "feedline-remote";

  void SetUp() override {
    use_test_servers();
    remote::set_options(fast_options());
  }

  void TearDown() override {
    remote::set_options(remote::RemoteOptions());
    proxy_reset("s3");
    proxy_reset("http");
  }

  // The defaults, with backoffs short enough for tests.
  static remote::RemoteOptions fast_options() {
    remote::RemoteOptions o;
    o.backoff = std::chrono::milliseconds(10);
    o.max_backoff = std::chrono::milliseconds(2000);
    return o;
  }

  static void through_proxy() { ::setenv("AWS_ENDPOINT_URL", test_servers().proxy_url("s3").c_str(), 1); }
  static void direct() { ::setenv("AWS_ENDPOINT_URL", test_servers().s3_endpoint().c_str(), 1); }

  // A key under this run's prefix.
  static std::string key(const std::string& name) { return run_prefix() + name; }

  // A file under nginx's root; its path relative to the root.
  static std::string serve(const std::string& name, const std::string& bytes) {
    const std::string rel = "remote-" + std::to_string(::getpid()) + "-" + name;
    const std::string path = test_servers().http_root() + "/" + rel;
    write_bytes(path, bytes);
    Uploads& u = uploads();
    std::lock_guard<std::mutex> lock(u.mu);
    u.served_files.push_back(path);
    return rel;
  }

  // An error text must never hold the secret key.
  static void expect_no_secret(const std::string& text) {
    EXPECT_EQ(text.find(test_servers().s3_secret_key()), std::string::npos) << text;
  }
};

}  // namespace feedline::testing
