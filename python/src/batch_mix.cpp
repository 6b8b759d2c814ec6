// feedline._feedline's batch mixes: a BatchMix from its Python description, one batch's draw, and one batch mixed
// outside a loader (feedline.transforms.MixUp(...)(images, labels)), the GIL released while it mixes.
#include "batch_mix.h"

#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <utility>

namespace py = pybind11;

namespace feedline::python {

BatchMix batch_mix_from(py::handle spec) {
  const auto d = py::reinterpret_borrow<py::dict>(spec);
  BatchMix mix;
  mix.num_classes(d["num_classes"].cast<int64_t>())
      .mixup_alpha(d["mixup_alpha"].cast<double>())
      .cutmix_alpha(d["cutmix_alpha"].cast<double>())
      .p(d["p"].cast<double>());
  check_batch_mix(mix);
  return mix;
}

namespace {

const char* kind_name(MixDraw::Kind kind) {
  switch (kind) {
    case MixDraw::Kind::kMixUp:
      return "mixup";
    case MixDraw::Kind::kCutMix:
      return "cutmix";
    case MixDraw::Kind::kNone:
      break;
  }
  return "none";
}

py::dict mix_draw(py::dict spec, int64_t height, int64_t width, uint64_t seed) {
  const MixDraw d = draw_batch_mix(batch_mix_from(spec), height, width, seed);
  py::dict out;
  out["kind"] = kind_name(d.kind);
  out["lam"] = d.lambda;
  out["box"] = py::make_tuple(d.x1, d.y1, d.x2, d.y2);
  return out;
}

py::tuple mix_batch_released(torch::Tensor images, torch::Tensor labels, py::dict spec, uint64_t seed) {
  const BatchMix mix = batch_mix_from(spec);
  Example out;
  {
    py::gil_scoped_release release;
    out = mix_batch(mix, Example{std::move(images), std::move(labels)}, seed);
  }
  return py::make_tuple(std::move(out.data), std::move(out.target));
}

}  // namespace

void bind_batch_mix(py::module_& m) {
  m.def("mix_draw", &mix_draw, py::arg("spec"), py::arg("height"), py::arg("width"), py::arg("seed"));
  m.def("mix_batch", &mix_batch_released, py::arg("images"), py::arg("labels"), py::arg("spec"), py::arg("seed"));
}

}  // namespace feedline::python
