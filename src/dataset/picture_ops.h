// The pixel steps of an image pipeline (torchvision's transforms that change a picture's values, not only its
// box): each is a PictureOp working on the sample's picture as uint8 planes, after the steps that crop, resize and
// flip it, drawing its random parameters from the sample's SampleRng. The pipeline (image_transforms.cpp) holds
// them behind image_steps::Picture and runs them on its worker threads.
// Thread-safety: a PictureOp is immutable after construction; apply() may run on many threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "feedline/dataset/encoded.h"
#include "feedline/dataset/image_transforms.h"

namespace feedline {

// A picture as planes: channels x height x width bytes, rows contiguous (1 or 3 channels).
struct Picture {
  int channels = 0, height = 0, width = 0;
  std::vector<uint8_t> pixels;

  size_t plane_size() const { return static_cast<size_t>(height) * static_cast<size_t>(width); }
  uint8_t* plane(int c) { return pixels.data() + static_cast<size_t>(c) * plane_size(); }
  const uint8_t* plane(int c) const { return pixels.data() + static_cast<size_t>(c) * plane_size(); }
  // Sets the sizes and makes `pixels` hold channels x height x width bytes (values unspecified).
  void resize(int new_channels, int new_height, int new_width) {
    channels = new_channels;
    height = new_height;
    width = new_width;
    pixels.resize(static_cast<size_t>(channels) * plane_size());
  }
};

class PictureOp {
 public:
  virtual ~PictureOp() = default;
  // torchvision 0.14's repr of the transform, e.g. "ColorJitter(brightness=(0.6, 1.4), contrast=None, ...)".
  virtual std::string describe() const = 0;
  // Changes `picture` as the torchvision transform changes a PIL image of the same pixels, its random parameters
  // drawn from `rng`. `scratch` is a picture of this thread's to work in (its contents are unspecified before and
  // after). May change the sizes (a rotation with expand) and, for Grayscale, the number of channels.
  virtual void apply(Picture& picture, SampleRng& rng, Picture& scratch) const = 0;
  // The channels of the output for `channels` in (Grayscale with one output channel: 1), and whether the output
  // keeps the input's height and width (false for a rotation with expand).
  virtual int output_channels(int channels) const { return channels; }
  virtual bool keeps_size() const { return true; }
};

using PictureOpPtr = std::shared_ptr<const PictureOp>;

// The op of a step that changes a picture's values; nullptr for the steps that only crop, resize, flip or convert.
// InvalidArgument, naming the transform, for parameters torchvision refuses too.
PictureOpPtr make_picture_op(const ImageStep& step);

// The parts of make_picture_op, one per source file, each nullptr for a step that is not one of its own:
// the colour and filter steps (image_color.cpp), and the geometric and automatic-augmentation steps
// (image_geometry.cpp, image_autoaugment.cpp).
PictureOpPtr make_color_op(const ImageStep& step);
PictureOpPtr make_geometry_op(const ImageStep& step);

}  // namespace feedline
