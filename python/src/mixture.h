// feedline._feedline's mixtures: _Mixture, the core of feedline.Mixture (mixture.cpp). Internal to the Python
// module.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <utility>

#include "feedline/dataset/dataset.h"
#include "feedline/dataset/encoded.h"

namespace feedline::python {

// Registers _Mixture (image datasets or tensor pairs mixed by a plan) on the module.
void bind_mixture(pybind11::module_& m);

// The dataset a loader serves for a _Mixture, and the same dataset as an EncodedDataset when the mixture is of
// images (each loader counts its own skipped samples), else null. TypeError for anything but a _Mixture.
std::pair<std::shared_ptr<const Dataset>, std::shared_ptr<const EncodedDataset>> mixture_loader_dataset(
    pybind11::handle mixture);

}  // namespace feedline::python
