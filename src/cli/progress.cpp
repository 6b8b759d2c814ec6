#include "cli/progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace feedline::cli {

ProgressBar::ProgressBar() : enabled_(::isatty(STDERR_FILENO) == 1) {}

void ProgressBar::update(const std::string& label, int64_t done, int64_t total, const std::string& suffix) {
  if (!enabled_ || total <= 0) return;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  if (done < total && now - last_draw_ns_ < 50'000'000) return;
  last_draw_ns_ = now;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / total);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kWidth - filled), '.');
  std::fprintf(stderr, "\r\033[K%s [%s] %lld/%lld %s", label.c_str(), bar.c_str(), static_cast<long long>(done),
               static_cast<long long>(total), suffix.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::clear() {
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace feedline::cli
