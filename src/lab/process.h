// What the lab's benches share about the process they run in and the ones they start: the time of a run for its
// results' context, and another program's exit status and output. Not thread-safe beyond what popen() is.
#pragma once

#include <string>

namespace feedline::lab {

// Now, in UTC, as ISO 8601 to the second: "2026-11-27T14:58:16Z".
std::string utc_now();

// A command run through the shell, its standard output read whole.
struct CommandOutput {
  bool succeeded = false;  // exited with status 0
  std::string output;
};

// Runs `command` (redirect its standard error in it to capture that too). IoError(`cannot_run`) when no shell can
// be started.
CommandOutput run_captured(const std::string& command, const std::string& cannot_run);

// Shell assignments, each followed by a space, that give a program started by the shell the process settings the
// feedline tool applies (apply_process_settings()): MALLOC_MMAP_MAX_ and MALLOC_TRIM_THRESHOLD_ unless
// FEEDLINE_MALLOC=system, OPENBLAS_NUM_THREADS=1 unless this environment sets it. Put before the command.
std::string process_settings_environment();

}  // namespace feedline::lab
