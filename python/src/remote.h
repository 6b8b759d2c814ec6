// feedline._feedline's remote reads: the process's remote options and what the reads have cost (remote.cpp).
// Internal to the Python module.
#pragma once

#include <pybind11/pybind11.h>

namespace feedline::python {

// Registers _set_remote_options(dict), _remote_options() and _remote_stats() on the module.
void bind_remote(pybind11::module_& m);

}  // namespace feedline::python
