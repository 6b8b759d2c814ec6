// feedline._feedline's images: _ImageDataset, the core of feedline.ImageDataset. It opens a class-folder tree,
// a Parquet file or dataset, or tar shards once (open_image_source), turns feedline.transforms' descriptions into
// ImageSteps, makes single samples for ds[i] (ImageTransform::make) and a fresh EncodedDataset for every loader
// (make_image_dataset). Opening and decoding release the GIL.
#include "images.h"

#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dataset/image_geometry.h"
#include "dataset/picture_ops.h"
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

image_steps::WarpInterpolation warp_interpolation(const std::string& mode, const std::string& name) {
  if (mode == "nearest") return image_steps::WarpInterpolation::kNearest;
  if (mode == "bilinear") return image_steps::WarpInterpolation::kBilinear;
  throw InvalidArgument(name + ": interpolation " + mode + " is not supported (nearest or bilinear)");
}

// A Resize's or RandomResizedCrop's filter ("bilinear" when the description names none).
Interpolation resize_interpolation(const py::dict& args, const std::string& name) {
  const auto mode = args.contains("interpolation") ? args["interpolation"].cast<std::string>() : "bilinear";
  if (mode == "bilinear") return Interpolation::kBilinear;
  if (mode == "bicubic") return Interpolation::kBicubic;
  throw InvalidArgument(name + ": interpolation " + mode + " is not supported (bilinear or bicubic)");
}

image_steps::WarpInterpolation warp_mode(const py::dict& args, const std::string& name) {
  return warp_interpolation(args["interpolation"].cast<std::string>(), name);
}

image_steps::WarpFill warp_fill(const py::dict& args) {
  return image_steps::WarpFill{reals(args, "fill"), args["fill_sequence"].cast<bool>()};
}

// An optional (x, y) argument: false when it is None.
bool optional_pair(const py::dict& args, const char* key, double& x, double& y) {
  if (args[key].is_none()) return false;
  const std::vector<double> v = reals(args, key);
  if (v.size() != 2) throw InvalidArgument(std::string(key) + " must be a pair");
  x = v[0];
  y = v[1];
  return true;
}

// The geometric and automatic-augmentation steps (feedline/_geometry.py); nullopt for other names.
std::optional<ImageStep> make_warp_step(const std::string& name, const py::dict& args) {
  if (name == "RandomRotation") {
    image_steps::RandomRotation s;
    const std::vector<double> degrees = reals(args, "degrees");
    if (degrees.size() != 2) throw InvalidArgument("RandomRotation: degrees must be (min, max)");
    s.degrees_min = degrees[0];
    s.degrees_max = degrees[1];
    s.interpolation = warp_mode(args, name);
    s.expand = args["expand"].cast<bool>();
    s.has_center = optional_pair(args, "center", s.center_x, s.center_y);
    s.fill = warp_fill(args);
    return s;
  }
  if (name == "RandomAffine") {
    image_steps::RandomAffine s;
    const std::vector<double> degrees = reals(args, "degrees");
    if (degrees.size() != 2) throw InvalidArgument("RandomAffine: degrees must be (min, max)");
    s.degrees_min = degrees[0];
    s.degrees_max = degrees[1];
    s.has_translate = optional_pair(args, "translate", s.translate_x, s.translate_y);
    s.has_scale = optional_pair(args, "scale", s.scale_min, s.scale_max);
    s.shear = reals(args, "shear");
    s.interpolation = warp_mode(args, name);
    s.fill = warp_fill(args);
    s.has_center = optional_pair(args, "center", s.center_x, s.center_y);
    return s;
  }
  if (name == "AutoAugment") {
    if (args["policy"].cast<std::string>() != "imagenet") {
      throw InvalidArgument("AutoAugment: feedline runs the ImageNet policy only");
    }
    return image_steps::AutoAugment{image_steps::AutoAugmentPolicy::kImageNet, warp_mode(args, name),
                                    warp_fill(args)};
  }
  if (name == "RandAugment") {
    return image_steps::RandAugment{args["num_ops"].cast<int64_t>(), args["magnitude"].cast<int64_t>(),
                                    args["num_magnitude_bins"].cast<int64_t>(), warp_mode(args, name),
                                    warp_fill(args)};
  }
  if (name == "TrivialAugmentWide") {
    return image_steps::TrivialAugmentWide{args["num_magnitude_bins"].cast<int64_t>(),
                                           warp_mode(args, name), warp_fill(args)};
  }
  return std::nullopt;
}

// A uint8 tensor, channels x height x width (1 or 3 channels), as a Picture, and back.
Picture to_picture(const torch::Tensor& image) {
  if (image.scalar_type() != torch::kUInt8 || image.dim() != 3 || (image.size(0) != 1 && image.size(0) != 3)) {
    throw InvalidArgument("the image must be a uint8 tensor of 1 or 3 channels x height x width");
  }
  const torch::Tensor planes = image.contiguous();
  Picture picture;
  picture.resize(static_cast<int>(planes.size(0)), static_cast<int>(planes.size(1)),
                 static_cast<int>(planes.size(2)));
  std::copy_n(planes.data_ptr<uint8_t>(), picture.pixels.size(), picture.pixels.data());
  return picture;
}

torch::Tensor from_picture(const Picture& picture) {
  torch::Tensor out = torch::empty({picture.channels, picture.height, picture.width}, torch::kUInt8);
  std::copy_n(picture.pixels.data(), picture.pixels.size(), out.data_ptr<uint8_t>());
  return out;
}

ImageStep make_step(const StepDescription& description) {
  const auto& [name, args] = description;
  if (auto step = make_warp_step(name, args)) return *step;
  if (name == "Resize") {
    image_steps::Resize s;
    s.size = ints(args, "size");
    s.max_size = args["max_size"].cast<int64_t>();
    s.interpolation = resize_interpolation(args, name);
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
    return image_steps::RandomResizedCrop{size[0],  size[1],  scale[0], scale[1],
                                          ratio[0], ratio[1], resize_interpolation(args, name)};
  }
  if (name == "RandomHorizontalFlip") return image_steps::RandomHorizontalFlip{args["p"].cast<double>()};
  if (name == "ToTensor") return image_steps::ToTensor{};
  if (name == "PILToTensor") return image_steps::PILToTensor{};
  if (name == "Normalize") return image_steps::Normalize{reals(args, "mean"), reals(args, "std")};
  if (name == "ColorJitter") {
    image_steps::ColorJitter s;
    for (auto [key, range] : {std::pair{"brightness", &s.brightness}, {"contrast", &s.contrast},
                              {"saturation", &s.saturation}, {"hue", &s.hue}}) {
      if (args[key].is_none()) continue;
      const std::vector<double> values = reals(args, key);
      if (values.size() != 2) throw InvalidArgument(std::string("ColorJitter: ") + key + " must be (min, max)");
      *range = image_steps::Range{true, values[0], values[1]};
    }
    return s;
  }
  if (name == "Grayscale") return image_steps::Grayscale{args["num_output_channels"].cast<int64_t>()};
  if (name == "RandomGrayscale") return image_steps::RandomGrayscale{args["p"].cast<double>()};
  if (name == "GaussianBlur") {
    const std::vector<int64_t> kernel = ints(args, "kernel_size");
    const std::vector<double> sigma = reals(args, "sigma");
    if (kernel.size() != 2 || sigma.size() != 2) {
      throw InvalidArgument("GaussianBlur: kernel_size and sigma must be pairs");
    }
    return image_steps::GaussianBlur{kernel[0], kernel[1], sigma[0], sigma[1]};
  }
  if (name == "RandomErasing") {
    image_steps::RandomErasing s;
    s.p = args["p"].cast<double>();
    const std::vector<double> scale = reals(args, "scale"), ratio = reals(args, "ratio");
    if (scale.size() != 2 || ratio.size() != 2) throw InvalidArgument("RandomErasing: scale and ratio must be pairs");
    s.scale_min = scale[0], s.scale_max = scale[1], s.ratio_min = ratio[0], s.ratio_max = ratio[1];
    s.random = py::isinstance<py::str>(args["value"]);
    s.value = s.random ? std::vector<double>{} : reals(args, "value");
    s.inplace = args["inplace"].cast<bool>();
    return s;
  }
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

  ImageParts parts() const { return {source_, steps_, options_, on_error_, transform_}; }

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
  // Entry points for the tests: one picture step run on a uint8 tensor with the generator of (seed, epoch,
  // index), and one op of the automatic augmentations at a given magnitude (torchvision's _apply_op).
  m.def("_picture_step", [](const StepDescription& description, const torch::Tensor& image, uint64_t seed,
                            int64_t epoch, int64_t index) {
    const PictureOpPtr op = make_picture_op(make_step(description));
    if (!op) throw InvalidArgument(description.first + " is not a step that changes a picture's values");
    Picture picture = to_picture(image), scratch;
    SampleRng rng(seed, epoch, index);
    op->apply(picture, rng, scratch);
    return from_picture(picture);
  }, py::arg("step"), py::arg("image"), py::arg("seed"), py::arg("epoch"), py::arg("index"));
  m.def("_augment_op", [](const torch::Tensor& image, const std::string& name, double magnitude,
                          const std::string& interpolation, const std::vector<double>& fill, bool fill_sequence) {
    Picture picture = to_picture(image), scratch;
    apply_augment_op(picture, name, magnitude, warp_interpolation(interpolation, name),
                     geometry::fill_bytes(image_steps::WarpFill{fill, fill_sequence}, picture.channels, name),
                     scratch);
    return from_picture(picture);
  }, py::arg("image"), py::arg("name"), py::arg("magnitude"), py::arg("interpolation"), py::arg("fill"),
        py::arg("fill_sequence"));
  m.def("image_source_kind", [](const std::string& spec) {
    py::gil_scoped_release release;
    return std::string(image_source_kind_name(image_source_kind(spec)));
  }, py::arg("spec"));
}

std::shared_ptr<EncodedDataset> image_loader_dataset(py::handle dataset) {
  if (!py::isinstance<PyImageDataset>(dataset)) throw py::type_error("not an image dataset");
  return dataset.cast<const PyImageDataset&>().loader_dataset();
}

ImageParts image_parts(py::handle dataset) {
  if (!py::isinstance<PyImageDataset>(dataset)) throw py::type_error("not an image dataset");
  return dataset.cast<const PyImageDataset&>().parts();
}

}  // namespace feedline::python
