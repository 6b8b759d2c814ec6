#include "lab/loader_timing.h"

#include <chrono>
#include <numeric>

namespace feedline::lab {

double LoaderTiming::wait_share() const {
  const double wait = std::accumulate(epoch_wait_seconds.begin(), epoch_wait_seconds.end(), 0.0);
  return seconds > 0 ? wait / seconds : 0;
}

LoaderTiming time_loader_epochs(Loader& loader, int64_t min_epochs, double min_seconds,
                                const LoaderTimingHooks& hooks) {
  using Clock = std::chrono::steady_clock;
  LoaderTiming t;
  int64_t n = 0;  // samples of the last epoch
  for (int64_t e = -1; e < min_epochs || (t.seconds < min_seconds && n > 0); ++e) {
    const auto start = Clock::now();
    auto epoch = loader.epoch();
    int64_t k = 0;
    n = 0;
    for (auto& batch : epoch) {
      n += hooks.consume ? hooks.consume(batch) : batch.target.size(0);
      if (hooks.progress) hooks.progress(e, ++k);
    }
    if (hooks.end_epoch) hooks.end_epoch();
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    if (e < 0) continue;  // the warm-up
    t.epoch_seconds.push_back(s);
    t.epoch_wait_seconds.push_back(epoch.stats().wait_seconds);
    t.samples_per_epoch = n;
    t.samples += n;
    t.seconds += s;
  }
  return t;
}

}  // namespace feedline::lab
