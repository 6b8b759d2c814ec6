// feedline._feedline's batch mixes: MixUp and CutMix (feedline::BatchMix) from the description the Python package
// passes (batch_mix.cpp). Internal to the Python module.
#pragma once

#include <pybind11/pybind11.h>

#include "feedline/loader/loader.h"

namespace feedline::python {

// The BatchMix a dict {"num_classes", "mixup_alpha", "cutmix_alpha", "p"} describes (feedline/_mix.py makes it).
// InvalidArgument (ValueError) for values BatchMix refuses.
BatchMix batch_mix_from(pybind11::handle spec);

// Registers mix_draw and mix_batch, one batch's draw and its mix, for the transforms' own __call__ and the tests.
void bind_batch_mix(pybind11::module_& m);

}  // namespace feedline::python
