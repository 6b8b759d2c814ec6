// `bench remote`'s figures made from its runs (medians, ratios against local disk), its tables, and its
// remote.json and remote.md: plain data in, text out, no network.
#pragma once

#include <string>
#include <vector>

#include "feedline/lab/remote_bench.h"

namespace feedline::lab {

// Where and when the bench ran, for the record.
struct RemoteContext {
  std::string date, command, cpu;  // date: when the run began, ISO 8601 UTC
  int cores = 0;
  std::string load_before, load_after;
};

// Fills each row's medians, wait share and ratio against the local row of its part (round by round).
void summarize(RemoteBenchResult& result);

// Writes remote.json and remote.md into options.out_dir (each whole, then renamed); returns their paths.
std::vector<std::string> write_remote_outputs(const RemoteBenchResult& result, const RemoteBenchOptions& options,
                                              const RemoteContext& context);

}  // namespace feedline::lab
