#include "cli/remote_flags.h"

#include <chrono>

#include "feedline/io/error.h"
#include "feedline/io/remote.h"

namespace feedline::cli {

void add_remote_flags(CLI::App* command, RemoteArgs* args) {
  const std::string group = "Remote data (s3://, gs://, http(s)://)";
  command->add_option("--cache-dir", args->cache_dir,
                      "Keep remote shards and ranges in this folder between reads and runs, shared by the "
                      "processes of a host (default: FEEDLINE_CACHE_DIR, else none: bytes stay in memory)")
      ->group(group);
  command
      ->add_option("--cache-limit", args->cache_limit,
                   "The cache's size on disk, in bytes or with K, M, G, T (default: 20G); what no one reads and "
                   "was used least recently goes first")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              remote::parse_size(text);
              return "";
            } catch (const InvalidArgument& e) {
              return e.what();
            }
          },
          "SIZE"))
      ->group(group);
  command
      ->add_option("--remote-attempts", args->attempts,
                   "Attempts a request gets before the read fails (default: 6; 1: no retry)")
      ->check(CLI::Range(1, 100))
      ->group(group);
  command
      ->add_option("--remote-timeout", args->timeout,
                   "Seconds a transfer may stall (or a connection take to open) before it is tried again "
                   "(default: 30)")
      ->check(CLI::PositiveNumber)
      ->group(group);
}

void apply_remote_flags(const RemoteArgs& args) {
  remote::RemoteOptions o = remote::options();
  if (!args.cache_dir.empty()) o.cache_dir = args.cache_dir;
  if (!args.cache_limit.empty()) o.cache_limit = remote::parse_size(args.cache_limit);
  if (args.attempts > 0) o.max_attempts = args.attempts;
  if (args.timeout > 0) {
    const auto ms = std::chrono::milliseconds(static_cast<int64_t>(args.timeout * 1000));
    o.low_speed_time = ms;
    o.connect_timeout = ms;
  }
  remote::set_options(o);
}

}  // namespace feedline::cli
