// Timing a loader alone (no model), one rule for every loader measurement the tool makes.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "feedline/loader/loader.h"

namespace feedline::lab {

struct LoaderTiming {
  std::vector<double> epoch_seconds, epoch_wait_seconds;  // per timed epoch
  int64_t samples_per_epoch = 0;
  int64_t samples = 0;  // over the timed epochs
  double seconds = 0;
  double samples_per_second() const { return seconds > 0 ? static_cast<double>(samples) / seconds : 0; }
  double wait_share() const;
};

struct LoaderTimingHooks {
  std::function<int64_t(Example&)> consume;                  // uses a batch, returns its samples (default: labels)
  std::function<void()> end_epoch;                           // inside the timing, e.g. waiting for the device
  std::function<void(int64_t epoch, int64_t batch)> progress;  // after each batch, timed: keep it cheap or unset;
                                                               // epoch -1 is the warm-up
};

// One untimed warm-up epoch, then at least `min_epochs` timed ones, and more until `min_seconds` have passed:
// the fastest configurations take milliseconds an epoch, where one stray interruption would weigh. The Python
// experiment's loader ladder (scripts/python/experiment.py) follows the same rule. A loader that delivers no
// samples stops after `min_epochs`.
LoaderTiming time_loader_epochs(Loader& loader, int64_t min_epochs, double min_seconds,
                                const LoaderTimingHooks& hooks = {});

}  // namespace feedline::lab
