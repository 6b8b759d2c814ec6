// feedline._feedline's remote reads: feedline.set_remote_options() and feedline.remote_stats() call these. The
// arguments arrive checked by the package's Python (python/feedline/__init__.py); the library checks them again.
#include "remote.h"

#include <chrono>
#include <string>

#include "feedline/io/remote.h"

namespace py = pybind11;

namespace feedline::python {
namespace {

py::dict options_dict(const remote::RemoteOptions& o) {
  py::dict d;
  d["cache_dir"] = o.cache_dir.empty() ? py::object(py::none()) : py::object(py::str(o.cache_dir));
  d["cache_limit"] = o.cache_limit;
  d["memory_limit"] = o.memory_limit;
  d["max_attempts"] = o.max_attempts;
  d["timeout"] = static_cast<double>(o.low_speed_time.count()) / 1000;
  d["max_in_flight"] = o.max_in_flight;
  return d;
}

// Sets the keys `changes` holds (None for cache_dir: no disk cache), keeping the others.
void set_options(const py::dict& changes) {
  remote::RemoteOptions o = remote::options();
  for (const auto& [key_handle, value] : changes) {
    const std::string key = py::str(key_handle);
    if (key == "cache_dir") {
      o.cache_dir = value.is_none() ? std::string() : value.cast<std::string>();
    } else if (key == "cache_limit") {
      o.cache_limit = value.cast<int64_t>();
    } else if (key == "memory_limit") {
      o.memory_limit = value.cast<int64_t>();
    } else if (key == "max_attempts") {
      o.max_attempts = value.cast<int>();
    } else if (key == "timeout") {
      const auto ms = std::chrono::milliseconds(static_cast<int64_t>(value.cast<double>() * 1000));
      o.low_speed_time = ms;
      o.connect_timeout = ms;
    } else if (key == "max_in_flight") {
      o.max_in_flight = value.cast<int>();
    }
  }
  remote::set_options(o);
}

py::dict stats_dict() {
  const remote::RemoteStats s = remote::stats();
  py::dict d;
  d["requests"] = s.requests;
  d["bytes"] = s.bytes;
  d["retries"] = s.retries;
  d["failures"] = s.failures;
  d["cache_hits"] = s.cache_hits;
  d["cache_misses"] = s.cache_misses;
  d["cache_evictions"] = s.cache_evictions;
  d["wait_seconds"] = s.wait_seconds;
  return d;
}

}  // namespace

void bind_remote(py::module_& m) {
  m.def("_set_remote_options", &set_options, py::arg("changes"));
  m.def("_remote_options", [] { return options_dict(remote::options()); });
  m.def("_remote_stats", &stats_dict);
  m.def("_parse_size", &remote::parse_size, py::arg("text"));
}

}  // namespace feedline::python
