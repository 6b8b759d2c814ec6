// feedline._feedline's images: ImageDataset's C++ core and the dataset a loader serves for it (images.cpp).
// Internal to the Python module.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "feedline/dataset/encoded.h"
#include "feedline/dataset/image_transforms.h"

namespace feedline::python {

// Registers _ImageDataset (a source opened once, its transform steps, ds[i]) on the module.
void bind_images(pybind11::module_& m);

// A new EncodedDataset of an _ImageDataset's source, steps and on_error, for one loader (each loader counts its
// own skipped samples). TypeError for anything but an _ImageDataset; InvalidArgument (ValueError) when its steps
// do not make one output size.
std::shared_ptr<EncodedDataset> image_loader_dataset(pybind11::handle dataset);

// What an _ImageDataset is made of, for a mixture of several: its opened source, and the steps, options and
// on_error that make its samples (transform: the steps built once, for ds[i]).
struct ImageParts {
  std::shared_ptr<const SampleSource> source;
  std::vector<ImageStep> steps;
  ImageTransformOptions options;
  OnError on_error = OnError::kRaise;
  std::shared_ptr<const ImageTransform> transform;
};

// TypeError for anything but an _ImageDataset.
ImageParts image_parts(pybind11::handle dataset);

}  // namespace feedline::python
