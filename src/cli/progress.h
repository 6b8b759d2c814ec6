// Progress for long work: a redrawn bar when stderr is a terminal, nothing in between otherwise (callers
// print plain summary lines instead). Used from one thread.
#pragma once

#include <cstdint>
#include <string>

namespace feedline::cli {

class ProgressBar {
 public:
  ProgressBar();
  bool enabled() const { return enabled_; }
  // Redraws "label [#####.....] done/total suffix" at most ~20 times a second.
  void update(const std::string& label, int64_t done, int64_t total, const std::string& suffix = "");
  // Clears the bar line so the next printed line starts clean.
  void clear();

 private:
  bool enabled_;
  bool drawn_ = false;
  int64_t last_draw_ns_ = 0;
};

}  // namespace feedline::cli
