// feedline._feedline's mixtures: _Mixture, the core of feedline.Mixture. Image datasets mix by their sources (one
// MixtureSource under one EncodedDataset, every sample made by the same steps); tensor pairs mix as TensorDatasets
// under one MixtureDataset. Both keep their MixturePlan, which gives the epoch's counts and the sources' names.
#include "mixture.h"

#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "feedline/dataset/image_dataset.h"
#include "feedline/io/error.h"
#include "images.h"

namespace py = pybind11;

namespace feedline::python {
namespace {

// One source's share as feedline.Stream describes it: (kind, value, label_offset, label_map, name), kind
// "proportion", "repeat" or "count".
using PartDescription = std::tuple<std::string, double, int64_t, std::vector<int64_t>, std::string>;

std::vector<MixturePart> make_parts(const std::vector<PartDescription>& descriptions) {
  std::vector<MixturePart> parts;
  for (const auto& [kind, value, offset, map, name] : descriptions) {
    MixturePart part;
    if (kind == "proportion") {
      part = MixturePart::proportion(value);
    } else if (kind == "repeat") {
      part = MixturePart::repeat(value);
    } else if (kind == "count") {
      part = MixturePart::count(static_cast<int64_t>(value));
    } else {
      throw InvalidArgument("Mixture: a source's share is a proportion, a repeat or a count, not '" + kind + "'");
    }
    part.label_offset = offset;
    part.label_map = map;
    part.name = name;
    parts.push_back(std::move(part));
  }
  return parts;
}

class PyMixture {
 public:
  // Image datasets (_ImageDataset cores), one part each: the first one's steps and options make every sample
  // (feedline.Mixture has checked that the steps agree; the decode options are checked here).
  static std::unique_ptr<PyMixture> images(const py::list& datasets, const std::vector<PartDescription>& parts,
                                           int64_t epoch_size) {
    auto out = std::make_unique<PyMixture>();
    std::vector<std::shared_ptr<const SampleSource>> sources;
    std::vector<MixturePart> mixture_parts = make_parts(parts);
    for (size_t s = 0; s < datasets.size(); ++s) {
      ImageParts p = image_parts(datasets[s]);
      if (s == 0) {
        out->image_ = p;
      } else if (p.options.decode.max_pixels != out->image_.options.decode.max_pixels ||
                 p.options.reduced_decode != out->image_.options.reduced_decode) {
        throw InvalidArgument("Mixture: " + name_of(mixture_parts, 0) + " and " + name_of(mixture_parts, s) +
                              " decode differently (max_pixels or reduced_decode): a mixture decodes every sample "
                              "the same way, give them the same");
      }
      sources.push_back(std::move(p.source));
    }
    py::gil_scoped_release release;
    out->source_ = std::make_shared<MixtureSource>(std::move(sources), std::move(mixture_parts), epoch_size);
    return out;
  }

  // (features, labels) pairs of CPU tensors, one part each.
  static std::unique_ptr<PyMixture> tensors(const std::vector<std::pair<torch::Tensor, torch::Tensor>>& pairs,
                                            const std::vector<PartDescription>& parts, int64_t epoch_size) {
    auto out = std::make_unique<PyMixture>();
    std::vector<MixturePart> mixture_parts = make_parts(parts);
    std::vector<std::shared_ptr<const Dataset>> sources;
    for (size_t s = 0; s < pairs.size(); ++s) {
      const auto& [features, labels] = pairs[s];
      if (!features.device().is_cpu() || !labels.device().is_cpu()) {
        throw InvalidArgument("Mixture: " + name_of(mixture_parts, s) +
                              ": tensors must be in host memory (features on " + features.device().str() +
                              ", labels on " + labels.device().str() + ")");
      }
      if (features.dim() < 1 || labels.dim() < 1 || features.size(0) != labels.size(0)) {
        throw InvalidArgument("Mixture: " + name_of(mixture_parts, s) +
                              ": features and labels must hold as many samples (first dimension: " +
                              std::to_string(features.dim() ? features.size(0) : 0) + " and " +
                              std::to_string(labels.dim() ? labels.size(0) : 0) + ")");
      }
      sources.push_back(std::make_shared<TensorDataset>(features, labels, /*class_labels=*/false));
    }
    py::gil_scoped_release release;
    out->dataset_ = std::make_shared<MixtureDataset>(std::move(sources), std::move(mixture_parts), epoch_size);
    return out;
  }

  const MixturePlan& plan() const { return source_ ? source_->plan() : dataset_->plan(); }
  bool is_images() const { return source_ != nullptr; }

  std::vector<int64_t> sizes() const {
    std::vector<int64_t> out;
    for (size_t s = 0; s < plan().sources(); ++s) out.push_back(plan().size(s));
    return out;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (size_t s = 0; s < plan().sources(); ++s) out.push_back(plan().name(s));
    return out;
  }
  py::object class_names() const {
    if (!source_) return py::none();
    return py::cast(source_->class_names());
  }
  std::vector<int64_t> epoch_order(bool shuffle, uint64_t seed, int64_t epoch) const {
    py::gil_scoped_release release;
    return plan().epoch_order(shuffle, seed, epoch);
  }

  // Sample `index` of the mixture's space, relabelled, as epoch 0 of seed 0 makes it (an image's randomness is
  // drawn from its index in the mixture, as the loader draws it).
  py::tuple get(int64_t index) const {
    if (index < 0 || index >= plan().total_size()) {
      throw InvalidArgument("index " + std::to_string(index) + " outside 0.." +
                            std::to_string(plan().total_size() - 1));
    }
    if (!source_) {
      Example e;
      {
        py::gil_scoped_release release;
        e = dataset_->get(index);
      }
      return py::make_tuple(e.data, e.target);
    }
    torch::Tensor image;
    int64_t label = 0;
    {
      py::gil_scoped_release release;
      const EncodedSample sample = source_->get(index);
      SampleRng rng(0, 0, index);
      image = image_.transform->make(sample, rng);
      label = sample.label;
    }
    return py::make_tuple(image, label);
  }

  std::pair<std::shared_ptr<const Dataset>, std::shared_ptr<const EncodedDataset>> loader_dataset() const {
    if (!source_) return {dataset_, nullptr};
    py::gil_scoped_release release;
    std::shared_ptr<EncodedDataset> encoded =
        make_image_dataset(source_, image_.steps, image_.options, image_.on_error);
    return {encoded, encoded};
  }

 private:
  static std::string name_of(const std::vector<MixturePart>& parts, size_t s) {
    const std::string number = "source " + std::to_string(s + 1);  // as MixturePlan::name gives it
    return parts[s].name.empty() ? number : number + " (" + parts[s].name + ")";
  }

  ImageParts image_;  // images: the first dataset's steps and options, which make every sample
  std::shared_ptr<const MixtureSource> source_;    // images
  std::shared_ptr<const MixtureDataset> dataset_;  // tensors
};

}  // namespace

void bind_mixture(py::module_& m) {
  py::class_<PyMixture>(m, "_Mixture")
      .def_static("images", &PyMixture::images, py::arg("datasets"), py::arg("parts"), py::arg("epoch_size"))
      .def_static("tensors", &PyMixture::tensors, py::arg("pairs"), py::arg("parts"), py::arg("epoch_size"))
      .def("__len__", [](const PyMixture& m) { return m.plan().epoch_length(); })
      .def("total_size", [](const PyMixture& m) { return m.plan().total_size(); })
      .def("is_images", &PyMixture::is_images)
      .def("sizes", &PyMixture::sizes)
      .def("counts", [](const PyMixture& m) { return m.plan().counts(); })
      .def("names", &PyMixture::names)
      .def("class_names", &PyMixture::class_names)
      .def("epoch_order", &PyMixture::epoch_order, py::arg("shuffle"), py::arg("seed"), py::arg("epoch"))
      .def("get", &PyMixture::get, py::arg("index"));
}

std::pair<std::shared_ptr<const Dataset>, std::shared_ptr<const EncodedDataset>> mixture_loader_dataset(
    py::handle mixture) {
  if (!py::isinstance<PyMixture>(mixture)) throw py::type_error("not a mixture");
  return mixture.cast<const PyMixture&>().loader_dataset();
}

}  // namespace feedline::python
