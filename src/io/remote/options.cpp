// The process's remote options, and how planned ranges are merged.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <mutex>

#include "feedline/io/error.h"
#include "feedline/io/remote.h"
#include "io/remote/fetch.h"

namespace feedline::remote {
namespace {

std::mutex& options_mutex() {
  static std::mutex mu;
  return mu;
}

// The defaults, with FEEDLINE_CACHE_DIR as the cache folder where it is set.
RemoteOptions& stored_options() {
  static RemoteOptions o = [] {
    RemoteOptions d;
    if (const char* dir = std::getenv("FEEDLINE_CACHE_DIR"); dir != nullptr) d.cache_dir = dir;
    return d;
  }();
  return o;
}

}  // namespace

void set_options(const RemoteOptions& o) {
  const auto require = [](bool ok, const std::string& what) {
    if (!ok) throw InvalidArgument("remote options: " + what);
  };
  require(o.max_attempts >= 1, "max_attempts must be at least 1, got " + std::to_string(o.max_attempts));
  require(o.max_in_flight >= 1, "max_in_flight must be at least 1, got " + std::to_string(o.max_in_flight));
  require(o.cache_limit > 0, "cache_limit must be above 0 bytes");
  require(o.memory_limit > 0, "memory_limit must be above 0 bytes");
  require(o.backoff.count() >= 0 && o.max_backoff.count() >= 0, "backoff times must not be negative");
  require(o.connect_timeout.count() > 0, "connect_timeout must be above 0");
  require(o.low_speed_time.count() > 0 && o.low_speed_bytes > 0, "the low-speed limit must be above 0");
  require(o.hole_limit >= 0 && o.range_limit >= 0, "hole_limit and range_limit must not be negative");
  require(o.footer_bytes >= 8, "footer_bytes must be at least 8");
  std::lock_guard<std::mutex> lock(options_mutex());
  stored_options() = o;
}

RemoteOptions options() {
  std::lock_guard<std::mutex> lock(options_mutex());
  return stored_options();
}

int64_t parse_size(const std::string& text) {
  const auto bad = [&] {
    return InvalidArgument("'" + text + "' is not a size (bytes, or a number with K, M, G or T: 512M, 20G)");
  };
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(value >= 0)) throw bad();
  std::string unit(end);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && (unit.substr(1) == "B" || unit.substr(1) == "IB")) unit = unit.substr(0, 1);
  if (unit == "B") unit.clear();
  const std::string units = "KMGT";
  double scale = 1;
  if (!unit.empty()) {
    const size_t at = units.find(unit);
    if (unit.size() != 1 || at == std::string::npos) throw bad();
    scale = static_cast<double>(int64_t{1} << (10 * (at + 1)));
  }
  const double bytes = value * scale;
  if (bytes >= 9.2e18) throw bad();
  return static_cast<int64_t>(bytes);
}

std::vector<ByteRange> coalesce_ranges(std::vector<ByteRange> ranges, int64_t hole_limit, int64_t range_limit) {
  ranges.erase(std::remove_if(ranges.begin(), ranges.end(), [](const ByteRange& r) { return r.size <= 0; }),
               ranges.end());
  std::sort(ranges.begin(), ranges.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
  std::vector<ByteRange> merged;
  for (const ByteRange& r : ranges) {
    if (!merged.empty() && r.offset <= merged.back().end() + hole_limit) {
      // Joining overlapping ranges is always right; joining across a hole only while the result stays within the
      // limit (a range alone larger than it is cut below).
      const int64_t end = std::max(merged.back().end(), r.end());
      if (r.offset <= merged.back().end() || range_limit <= 0 || end - merged.back().offset <= range_limit) {
        merged.back().size = end - merged.back().offset;
        continue;
      }
    }
    merged.push_back(r);
  }
  std::vector<ByteRange> out;
  for (const ByteRange& r : merged) {
    if (range_limit <= 0 || r.size <= range_limit) {
      out.push_back(r);
      continue;
    }
    // Pieces of equal size, none above the limit.
    const int64_t pieces = (r.size + range_limit - 1) / range_limit;
    const int64_t each = (r.size + pieces - 1) / pieces;
    for (int64_t at = r.offset; at < r.end(); at += each) out.push_back({at, std::min(each, r.end() - at)});
  }
  return out;
}

namespace detail {

// The limits range merging uses now: the options' where set, else derived from the measured network as Arrow derives
// them (a hole is worth reading when reading it takes less than a request's wait for its first byte; a range is
// large enough when its transfer keeps the link busy 90% of the time), within [8 KiB, 64 MiB].
void merge_limits(int64_t* hole_limit, int64_t* range_limit) {
  const RemoteOptions o = options();
  const NetworkMetrics m = network_metrics();
  int64_t hole = int64_t{8} << 10;
  int64_t range = int64_t{32} << 20;
  if (m.first_byte_seconds > 0 && m.bytes_per_second > 0) {
    const double hole_bytes = m.first_byte_seconds * m.bytes_per_second;
    hole = std::clamp<int64_t>(static_cast<int64_t>(hole_bytes), int64_t{8} << 10, int64_t{8} << 20);
    range = std::clamp<int64_t>(static_cast<int64_t>(hole_bytes * 9), int64_t{1} << 20, int64_t{64} << 20);
  }
  *hole_limit = o.hole_limit > 0 ? o.hole_limit : hole;
  *range_limit = o.range_limit > 0 ? o.range_limit : range;
}

}  // namespace detail
}  // namespace feedline::remote
