// The flags of remote reads (s3://, gs://, http(s)://), shared by the commands that read data: where to cache,
// how much, how many attempts a request gets, how long a stalled transfer is waited for. Used from the main thread,
// once, as the rest of the command line.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace feedline::cli {

struct RemoteArgs {
  std::string cache_dir;    // empty: the default (FEEDLINE_CACHE_DIR, else no disk cache)
  std::string cache_limit;  // empty: the default
  int attempts = 0;         // 0: the default
  double timeout = 0;       // seconds; 0: the default
};

// Adds --cache-dir, --cache-limit, --remote-attempts and --remote-timeout to `command`, filling `args`.
void add_remote_flags(CLI::App* command, RemoteArgs* args);

// Sets the process's remote options (feedline/io/remote.h) from the flags given. Throws InvalidArgument naming the
// flag for a value the options refuse.
void apply_remote_flags(const RemoteArgs& args);

}  // namespace feedline::cli
