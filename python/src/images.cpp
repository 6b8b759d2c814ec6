// feedline._feedline's images: _ImageDataset, the core of feedline.ImageDataset. It opens a class-folder tree,
// a Parquet file or dataset, or tar shards once (open_image_source), turns feedline.transforms' descriptions into
// ImageSteps, makes single samples for ds[i] (ImageTransform::make) and a fresh EncodedDataset for every loader
// (make_image_dataset). Opening and decoding release the GIL.
#include "images.h"

#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "feedline/dataset/image_dataset.h"
#include "feedline/dataset/image_sources.h"
#include "feedline/dataset/image_transforms.h"
#include "feedline/io/error.h"

namespace py = pybind11;

namespace feedline::python {
namespace {

// One step as feedline.transforms describes it: (class name, {argument: value}).
using StepDescription = std::pair<std::string, py::dict>;

std::vector<int64_t> ints(const py::dict& args, const char* key) { return args[key].cast<std::vector<int64_t>>(); }
std::vector<double> reals(const py::dict& args, const char* key) { return args[key].cast<std::vector<double>>(); }

ImageStep make_step(const StepDescription& description) {
  const auto& [name, args] = description;
  if (name == "Resize") {
    image_steps::Resize s;
    s.size = ints(args, "size");
    s.max_size = args["max_size"].cast<int64_t>();
    return s;
  }
  if (name == "CenterCrop") {
    const std::vector<int64_t> size = ints(args, "size");
    if (size.size() != 2) throw InvalidArgument("CenterCrop: size must be (h, w)");
    return image_steps::CenterCrop{size[0], size[1]};
  }
  if (name == "RandomResizedCrop") {
    const std::vector<int64_t> size = ints(args, "size");
    const std::vector<double> scale = reals(args, "scale"), ratio = reals(args, "ratio");
    if (size.size() != 2 || scale.size() != 2 || ratio.size() != 2) {
      throw InvalidArgument("RandomResizedCrop: size, scale and ratio must be pairs");
    }
    return image_steps::RandomResizedCrop{size[0], size[1], scale[0], scale[1], ratio[0], ratio[1]};
  }
  if (name == "RandomHorizontalFlip") return image_steps::RandomHorizontalFlip{args["p"].cast<double>()};
  if (name == "ToTensor") return image_steps::ToTensor{};
  if (name == "PILToTensor") return image_steps::PILToTensor{};
  if (name == "Normalize") return image_steps::Normalize{reals(args, "mean"), reals(args, "std")};
  throw InvalidArgument("feedline.transforms has no step '" + name + "'");
}

// Rethrows the feedline::Error in flight with `name: ` before its message, keeping its type (an IoError its
// code); as it is when the message names the sample already (the decoder names it).
[[noreturn]] void rethrow_naming(const std::string& name) {
  try {
    throw;
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.compare(0, name.size(), name) == 0) throw;
    const std::string named = name + ": " + what;
    if (dynamic_cast<const InvalidFile*>(&e) != nullptr) throw InvalidFile(named);
    if (dynamic_cast<const Unsupported*>(&e) != nullptr) throw Unsupported(named);
    if (const auto* io = dynamic_cast<const IoError*>(&e)) throw IoError(named, io->code());
    if (dynamic_cast<const InvalidArgument*>(&e) != nullptr) throw InvalidArgument(named);
    throw Error(named);
  }
}

class PyImageDataset {
 public:
  PyImageDataset(const std::string& spec, const std::vector<StepDescription>& steps, const std::string& label_column,
                 const std::string& image_column, const std::string& on_error, int64_t max_pixels,
                 bool reduced_decode) {
    for (const StepDescription& s : steps) steps_.push_back(make_step(s));
    on_error_ = parse_on_error(on_error);
    if (max_pixels < 1) throw InvalidArgument("max_pixels=" + std::to_string(max_pixels) + ": use 1 or more");
    options_.decode.max_pixels = max_pixels;
    options_.reduced_decode = reduced_decode;
    ImageSourceOptions options;
    options.parquet.label_column = label_column;
    options.parquet.image_column = image_column;
    py::gil_scoped_release release;
    transform_ = std::make_shared<ImageTransform>(steps_, options_);  // refuses what torchvision refuses, before any reading
    kind_ = image_source_kind(spec);
    source_ = open_image_source(spec, options);
  }

  int64_t size() const { return source_->size(); }
  std::string kind() const { return image_source_kind_name(kind_); }
  bool fixed_size() const { return transform_->fixed_size(); }
  std::string on_error() const { return on_error_ == OnError::kSkip ? "skip" : "raise"; }

  // Sample `index` (0 <= index < size()) as epoch 0 of seed 0 makes it: (tensor, label).
  std::pair<torch::Tensor, int64_t> get(int64_t index) const {
    if (index < 0 || index >= size()) {
      throw InvalidArgument("index " + std::to_string(index) + " outside 0.." + std::to_string(size() - 1));
    }
    py::gil_scoped_release release;
    const EncodedSample sample = source_->get(index);
    SampleRng rng(0, 0, index);
    try {
      return {transform_->make(sample, rng), sample.label};
    } catch (const Error&) {
      rethrow_naming(sample.name.empty() ? "sample " + std::to_string(index) : sample.name);
    }
  }

  // Every sample's label, in order, without reading an image.
  std::vector<int64_t> targets() const {
    if (const auto* folder = dynamic_cast<const ImageFolderSource*>(source_.get())) {
      std::vector<int64_t> out;
      out.reserve(folder->samples().size());
      for (const auto& [path, label] : folder->samples()) out.push_back(label);
      return out;
    }
    if (const auto* tar = dynamic_cast<const TarShardSource*>(source_.get())) {
      std::vector<int64_t> out;
      out.reserve(tar->entries().size());
      for (const TarShardSource::Entry& e : tar->entries()) out.push_back(e.label);
      return out;
    }
    py::gil_scoped_release release;
    return source_->labels();
  }

  std::vector<std::string> class_names() const {
    if (const auto* folder = dynamic_cast<const ImageFolderSource*>(source_.get())) return folder->classes();
    return source_->class_names();
  }

  // A folder's classes, class_to_idx and samples as torchvision's ImageFolder has them; None for other sources.
  py::object folder_attribute(const std::string& what) const {
    const auto* folder = dynamic_cast<const ImageFolderSource*>(source_.get());
    if (folder == nullptr) return py::none();
    if (what == "classes") return py::cast(folder->classes());
    if (what == "class_to_idx") {
      py::dict out;  // in class order, as torchvision builds it
      for (const std::string& c : folder->classes()) out[py::str(c)] = folder->class_to_idx().at(c);
      return std::move(out);
    }
    if (what == "root") return py::str(folder->root());
    py::list out;
    for (const auto& [path, label] : folder->samples()) out.append(py::make_tuple(path, label));
    return std::move(out);
  }

  // The shards of a tar source, in order; None for other sources.
  py::object shards() const {
    const auto* tar = dynamic_cast<const TarShardSource*>(source_.get());
    return tar == nullptr ? py::object(py::none()) : py::cast(tar->shards());
  }

  std::vector<std::string> describe_steps() const {
    std::vector<std::string> out;
    for (const ImageStep& s : steps_) out.push_back(describe(s));
    return out;
  }

  std::shared_ptr<EncodedDataset> loader_dataset() const {
    py::gil_scoped_release release;
    return make_image_dataset(source_, steps_, options_, on_error_);
  }

 private:
  std::vector<ImageStep> steps_;
  OnError on_error_ = OnError::kRaise;
  ImageTransformOptions options_;
  std::shared_ptr<const ImageTransform> transform_;
  ImageSourceKind kind_ = ImageSourceKind::kFolder;
  std::shared_ptr<const SampleSource> source_;
};

}  // namespace

void bind_images(py::module_& m) {
  py::class_<PyImageDataset>(m, "_ImageDataset")
      .def(py::init<const std::string&, const std::vector<StepDescription>&, const std::string&, const std::string&,
                    const std::string&, int64_t, bool>(),
           py::arg("spec"), py::arg("steps"), py::arg("label_column"), py::arg("image_column"), py::arg("on_error"),
           py::arg("max_pixels"), py::arg("reduced_decode"))
      .def("__len__", &PyImageDataset::size)
      .def("get", &PyImageDataset::get, py::arg("index"))
      .def("kind", &PyImageDataset::kind)
      .def("fixed_size", &PyImageDataset::fixed_size)
      .def("on_error", &PyImageDataset::on_error)
      .def("targets", &PyImageDataset::targets)
      .def("class_names", &PyImageDataset::class_names)
      .def("folder_attribute", &PyImageDataset::folder_attribute, py::arg("what"))
      .def("shards", &PyImageDataset::shards)
      .def("describe_steps", &PyImageDataset::describe_steps);
  m.def("image_source_kind", [](const std::string& spec) {
    py::gil_scoped_release release;
    return std::string(image_source_kind_name(image_source_kind(spec)));
  }, py::arg("spec"));
}

std::shared_ptr<EncodedDataset> image_loader_dataset(py::handle dataset) {
  if (!py::isinstance<PyImageDataset>(dataset)) throw py::type_error("not an image dataset");
  return dataset.cast<const PyImageDataset&>().loader_dataset();
}

}  // namespace feedline::python
