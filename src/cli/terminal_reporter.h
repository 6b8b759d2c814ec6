// `feedline bench` on the terminal: what the lab announces, printed to standard output as it comes, with a progress
// bar on standard error when that is a terminal. Used by the thread that runs the lab.
#pragma once

#include <fmt/core.h>

#include <cstdio>
#include <string>

#include "feedline/lab/lab.h"
#include "cli/progress.h"

namespace feedline::cli {

class TerminalReporter : public lab::Reporter {
 public:
  void section(const std::string& title) override { print(fmt::format("\n== {} ==\n", title), true); }
  void run_started(int64_t index, int64_t count, const std::string& what) override {
    print(fmt::format("\n[{}/{}] {}\n", index, count, what));
  }
  void line(const std::string& text) override { print(text + "\n"); }
  void note(const std::string& text) override { print("\n" + text + "\n"); }
  // Set apart by a blank line, unless it is the first thing under its heading.
  void table(const std::string& text) override { print(after_heading_ ? text : "\n" + text); }
  bool shows_progress() const override { return bar_.enabled(); }
  void progress(const std::string& label, int64_t done, int64_t total, const std::string& detail) override {
    bar_.update(label, done, total, detail);
  }

 private:
  // Each piece goes out at once: a long rung's lines are read while it runs, and its output may be piped.
  void print(const std::string& text, bool heading = false) {
    bar_.clear();
    std::fputs(text.c_str(), stdout);
    std::fflush(stdout);
    after_heading_ = heading;
  }

  ProgressBar bar_;
  bool after_heading_ = false;
};

}  // namespace feedline::cli
