// What the lab's benches share about the process they run in and the ones they start: the time, CPU and load of a
// run for its results' context, another program's exit status and output, and where a bench's Python script is.
// Not thread-safe beyond what popen() is.
#pragma once

#include <string>

namespace feedline::lab {

// Now, in UTC, as ISO 8601 to the second: "2026-11-27T14:58:16Z".
std::string utc_now();

// The CPU's model name as /proc/cpuinfo gives it ("unknown CPU" where it does not).
std::string cpu_model();

// The 1-, 5- and 15-minute load averages, "0.52 1.25 1.67" ("unknown" where /proc/loadavg cannot be read).
std::string load_averages();

// A bench's Python script: `given` (its --script; IoError naming `bench` when it is not a file), else `file`
// under scripts/python of the current folder (a checkout) or of the program's build folder's parent, or under
// share/feedline/scripts of its install. Empty when none is found.
std::string find_bench_script(const std::string& given, const std::string& program, const std::string& file,
                              const std::string& bench);

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
