// What the process's remote reads have cost (RemoteStats): counters every part of the layer adds to.
#include <atomic>

#include "feedline/io/remote.h"
#include "io/remote/fetch.h"

namespace feedline::remote {
namespace detail {
namespace {

std::atomic<int64_t> g_requests{0}, g_bytes{0}, g_retries{0}, g_failures{0};
std::atomic<int64_t> g_cache_hits{0}, g_cache_misses{0}, g_cache_evictions{0};
std::atomic<int64_t> g_wait_micros{0};

}  // namespace

void count_requests(int64_t requests, int64_t bytes, int64_t retries, int64_t failures) {
  g_requests.fetch_add(requests, std::memory_order_relaxed);
  g_bytes.fetch_add(bytes, std::memory_order_relaxed);
  g_retries.fetch_add(retries, std::memory_order_relaxed);
  g_failures.fetch_add(failures, std::memory_order_relaxed);
}

void add_wait_seconds(double seconds) {
  g_wait_micros.fetch_add(static_cast<int64_t>(seconds * 1e6), std::memory_order_relaxed);
}

void add_cache_counts(int64_t hits, int64_t misses, int64_t evictions) {
  g_cache_hits.fetch_add(hits, std::memory_order_relaxed);
  g_cache_misses.fetch_add(misses, std::memory_order_relaxed);
  g_cache_evictions.fetch_add(evictions, std::memory_order_relaxed);
}

}  // namespace detail

RemoteStats stats() {
  using namespace detail;
  RemoteStats s;
  s.requests = g_requests.load();
  s.bytes = g_bytes.load();
  s.retries = g_retries.load();
  s.failures = g_failures.load();
  s.cache_hits = g_cache_hits.load();
  s.cache_misses = g_cache_misses.load();
  s.cache_evictions = g_cache_evictions.load();
  s.wait_seconds = static_cast<double>(g_wait_micros.load()) / 1e6;
  return s;
}

}  // namespace feedline::remote
