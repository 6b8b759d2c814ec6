// ImageTransform: decoding, then the geometric steps on a pending crop box of the current pixels (crops compose
// as boxes; a Resize or RandomResizedCrop is one resampling of the box, Pillow's), then one pass that writes the
// box into the batch slot as uint8 or, through a table of 256 values per channel, as float32.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dataset/image_color.h"
#include "dataset/image_resample.h"
#include "dataset/picture_ops.h"
#include "feedline/dataset/image_transforms.h"
#include "feedline/io/error.h"

namespace feedline {
namespace {

using image_ops::detail::box_inside;
using image_ops::detail::copy_box;
using image_ops::detail::PixelView;
using image_ops::detail::resample;

using picture_fn::py_float;

std::string py_list(const std::vector<double>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + py_float(values[i]);
  return text + "]";
}

std::string py_pair(int64_t a, int64_t b) { return "(" + std::to_string(a) + ", " + std::to_string(b) + ")"; }

// Python's round(x, 4) as torchvision's repr of RandomResizedCrop shows its ranges.
std::string py_pair4(double a, double b) {
  return "(" + py_float(std::round(a * 1e4) / 1e4) + ", " + py_float(std::round(b * 1e4) / 1e4) + ")";
}

// The interpolation field of torchvision's repr, shown where it is not the default (bilinear).
std::string interpolation_text(Interpolation interpolation) {
  return interpolation == Interpolation::kBicubic ? ", interpolation=bicubic" : "";
}

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

bool is_geometric(const ImageStep& step) {
  return std::holds_alternative<image_steps::Resize>(step) || std::holds_alternative<image_steps::CenterCrop>(step) ||
         std::holds_alternative<image_steps::RandomResizedCrop>(step) ||
         std::holds_alternative<image_steps::RandomHorizontalFlip>(step);
}

// Whether the step sets the output's size.
bool is_sizing(const ImageStep& step) {
  return is_geometric(step) && !std::holds_alternative<image_steps::RandomHorizontalFlip>(step);
}

// The sub-box `sub` of `box` (in the coordinates of the box as seen, mirrored when `flip`) in the image's.
CropBox compose(const CropBox& box, bool flip, const CropBox& sub) {
  CropBox out = sub;
  out.top = box.top + sub.top;
  out.left = flip ? box.left + box.width - sub.left - sub.width : box.left + sub.left;
  return out;
}

std::string size_text(int height, int width) { return std::to_string(height) + " x " + std::to_string(width); }

std::string no_pixels_left(int height, int width, const ImageStep& step) {
  return "an image region of " + size_text(height, width) + " pixels leaves no pixels under " + describe(step);
}

// This thread's scratch planes, two so that a resample reads one and writes the other.
struct Buffers {
  std::vector<uint8_t> planes[2];
};

// The first step that changes the picture, prepared before decoding when decoding is reduced: its box in the
// decoded pixels' coordinates (drawn, for a RandomResizedCrop, from the full size) and its output size.
struct Prepared {
  size_t index = SIZE_MAX;  // SIZE_MAX: none, every step runs on the whole decoded picture
  CropBox box;
  int out_height = 0, out_width = 0;
};

// The work on one sample: the current pixels, the box of them that the steps so far have kept (possibly reaching
// outside, where pixels are zero) and whether that box is seen mirrored.
struct State {
  PixelView view;
  int buffer = -1;  // which of Buffers::planes holds view's pixels; -1: the decoded image
  CropBox box;
  bool flip = false;
};

void mirror_planes(uint8_t* planes, int channels, int height, int width) {
  for (int r = 0; r < channels * height; ++r) {
    uint8_t* row = planes + static_cast<size_t>(r) * width;
    std::reverse(row, row + width);
  }
}

// Writes `box` of `src` (mirrored when `flip`) as float planes through lut[c * 256 + value]; outside the image, the
// value of 0.
void write_float(const PixelView& src, const CropBox& box, bool flip, const std::vector<float>& lut, float* out) {
  const int channels = src.channels;
  const size_t plane = static_cast<size_t>(box.height) * box.width;
  const size_t src_row = image_ops::detail::row_bytes(src), src_plane = image_ops::detail::plane_bytes(src);
  const int x0 = std::max(0, -box.left), x1 = std::max(x0, std::min(box.width, src.width - box.left));
  for (int c = 0; c < channels; ++c) {
    const float* table = lut.data() + c * 256;
    for (int y = 0; y < box.height; ++y) {
      float* to = out + c * plane + static_cast<size_t>(y) * box.width;
      const int sy = box.top + y;
      if (sy < 0 || sy >= src.height || x0 >= x1) {
        std::fill(to, to + box.width, table[0]);
        continue;
      }
      std::fill(to, to + x0, table[0]);
      std::fill(to + x1, to + box.width, table[0]);
      const bool packed = !src.planar && channels > 1;
      const size_t column = static_cast<size_t>(box.left + x0);  // the image's column of the box's x0
      const uint8_t* from = packed ? src.data + static_cast<size_t>(sy) * src_row + column * channels + c
                                   : src.data + c * src_plane + static_cast<size_t>(sy) * src_row + column;
      const ptrdiff_t step = packed ? channels : 1;
      for (int x = x0; x < x1; ++x) to[x] = table[from[(x - x0) * step]];
    }
    if (flip) {
      for (int y = 0; y < box.height; ++y) {
        float* row = out + c * plane + static_cast<size_t>(y) * box.width;
        std::reverse(row, row + box.width);
      }
    }
  }
}

std::vector<float> float_table(const std::vector<ImageStep>& steps, int channels);
bool makes_float(const std::vector<ImageStep>& steps);

}  // namespace

std::string describe(const ImageStep& step) {
  return std::visit(
      Overloaded{
          [](const image_steps::Resize& s) {
            std::string size = s.size.size() == 1   ? std::to_string(s.size[0])
                               : s.size.size() == 2 ? py_pair(s.size[0], s.size[1])
                                                    : "[" + std::to_string(s.size.size()) + " numbers]";
            return "Resize(size=" + size + interpolation_text(s.interpolation) +
                   ", max_size=" + (s.max_size > 0 ? std::to_string(s.max_size) : "None") + ")";
          },
          [](const image_steps::CenterCrop& s) { return "CenterCrop(size=" + py_pair(s.height, s.width) + ")"; },
          [](const image_steps::RandomResizedCrop& s) {
            return "RandomResizedCrop(size=" + py_pair(s.height, s.width) + ", scale=" +
                   py_pair4(s.scale_min, s.scale_max) + ", ratio=" + py_pair4(s.ratio_min, s.ratio_max) +
                   interpolation_text(s.interpolation) + ")";
          },
          [](const image_steps::RandomHorizontalFlip& s) { return "RandomHorizontalFlip(p=" + py_float(s.p) + ")"; },
          [](const image_steps::ToTensor&) { return std::string("ToTensor()"); },
          [](const image_steps::PILToTensor&) { return std::string("PILToTensor()"); },
          [](const image_steps::Normalize& s) {
            return "Normalize(mean=" + py_list(s.mean) + ", std=" + py_list(s.std) + ")";
          },
          [](const image_steps::RandomErasing& s) { return picture_fn::describe_random_erasing(s); },
          [&step](const auto&) {  // a pixel step: its op's repr
            const PictureOpPtr op = make_picture_op(step);
            return op ? op->describe() : std::string("(an image step)");
          },
      },
      step);
}

ImageTransform::ImageTransform(std::vector<ImageStep> steps, ImageTransformOptions options)
    : steps_(std::move(steps)), options_(options) {
  if (!(options_.reduced_scale_shrink == 0 || options_.reduced_scale_shrink >= 1)) {
    throw OptionError("reduced_scale_shrink", std::to_string(options_.reduced_scale_shrink) +
                                                  ": the least shrink after a smaller decode is 1 or more (0: none)");
  }
  int channels = options_.decode.gray ? 1 : 3;
  bool converted = false, to_float = false, erased = false;
  const ImageStep* first_pixel_step = nullptr;
  ops_.resize(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    const ImageStep& step = steps_[i];
    try {
      ops_[i] = make_picture_op(step);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("image transform step " + std::to_string(i + 1) + ": " + e.what());
    }
    const auto refuse = [&](const std::string& why) {
      throw InvalidArgument("image transform step " + std::to_string(i + 1) + ", " + describe(step) + ": " + why);
    };
    const bool erasing = std::holds_alternative<image_steps::RandomErasing>(step);
    if (converted && !std::holds_alternative<image_steps::Normalize>(step) && !erasing) {
      refuse("comes after the conversion to a tensor (ToTensor or PILToTensor), where only Normalize and "
             "RandomErasing may follow");
    }
    if (erasing && !converted) {
      refuse("RandomErasing works on a tensor: put it after ToTensor() or PILToTensor() (and after Normalize)");
    }
    if (erased && std::holds_alternative<image_steps::Normalize>(step)) {
      refuse("comes after RandomErasing, which feedline runs on the finished tensor: put RandomErasing after "
             "Normalize");
    }
    erased = erased || erasing;
    if (ops_[i]) {
      if (first_pixel_step == nullptr) first_pixel_step = &step;
      channels = ops_[i]->output_channels(channels);
    } else if (first_pixel_step != nullptr && is_geometric(step)) {
      refuse("comes after the pixel step " + describe(*first_pixel_step) +
             ", and feedline crops, resizes and flips before it runs the pixel steps: put it before " +
             describe(*first_pixel_step));
    }
    std::visit(Overloaded{
                   [&](const image_steps::Resize& s) {
                     if (s.size.empty() || s.size.size() > 2) refuse("size must be one number or two (h, w)");
                     for (int64_t n : s.size) {
                       if (n <= 0 || n > INT32_MAX) refuse("a size must be positive");
                     }
                     if (s.max_size < 0) refuse("max_size must be positive (or 0 for none)");
                     if (s.max_size > 0 && s.size.size() != 1) refuse("max_size is only supported for a single size");
                     if (s.max_size > 0 && s.max_size <= s.size[0]) {
                       refuse("max_size must be strictly greater than the requested size for the smaller edge");
                     }
                   },
                   [&](const image_steps::CenterCrop& s) {
                     if (s.height <= 0 || s.width <= 0 || s.height > INT32_MAX || s.width > INT32_MAX) {
                       refuse("the size must be positive");
                     }
                   },
                   [&](const image_steps::RandomResizedCrop& s) {
                     if (s.height <= 0 || s.width <= 0 || s.height > INT32_MAX || s.width > INT32_MAX) {
                       refuse("the size must be positive");
                     }
                     if (!(s.scale_min >= 0 && s.scale_max > 0 && s.scale_min <= s.scale_max) ||
                         !std::isfinite(s.scale_max)) {
                       refuse("scale must be (min, max) with 0 <= min <= max and max > 0");
                     }
                     if (!(s.ratio_min > 0 && s.ratio_min <= s.ratio_max) || !std::isfinite(s.ratio_max)) {
                       refuse("ratio must be (min, max) with 0 < min <= max");
                     }
                   },
                   [&](const image_steps::RandomHorizontalFlip& s) {
                     if (!(s.p >= 0 && s.p <= 1)) refuse("p must be in [0, 1]");
                   },
                   [&](const image_steps::ToTensor&) { converted = to_float = true; },
                   [&](const image_steps::PILToTensor&) { converted = true; },
                   [&](const image_steps::Normalize& s) {
                     if (!to_float) refuse("Normalize needs float32 pixels: put ToTensor() before it");
                     for (const auto* values : {&s.mean, &s.std}) {
                       if (values->size() != 1 && values->size() != static_cast<size_t>(channels)) {
                         refuse("mean and std must have 1 or " + std::to_string(channels) +
                                " values (one per channel)");
                       }
                       for (double v : *values) {
                         if (!std::isfinite(v)) refuse("mean and std must be finite");
                       }
                     }
                     for (double v : s.std) {
                       if (v == 0) refuse("std evaluated to zero, leading to division by zero");
                     }
                   },
                   [&](const image_steps::RandomErasing& s) {
                     const std::string why = picture_fn::check_random_erasing(s, channels);
                     if (!why.empty()) refuse(why);
                   },
                   [](const auto&) {},  // a pixel step: make_picture_op checked it
               },
               step);
  }
  if (to_float) float_table_ = float_table(steps_, channels);
}

int ImageTransform::output_channels() const {
  int channels = options_.decode.gray ? 1 : 3;
  for (const auto& op : ops_) {
    if (op) channels = op->output_channels(channels);
  }
  return channels;
}

bool ImageTransform::fixed_size() const {
  for (const auto& op : ops_) {
    if (op && !op->keeps_size()) return false;
  }
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
    if (!is_sizing(*it)) continue;
    if (const auto* resize = std::get_if<image_steps::Resize>(&*it)) return resize->size.size() == 2;
    return true;
  }
  return false;
}

SampleLayout ImageTransform::layout() const {
  SampleLayout layout;
  layout.dtype = torch::kUInt8;
  for (const ImageStep& step : steps_) {
    if (std::holds_alternative<image_steps::ToTensor>(step)) layout.dtype = torch::kFloat32;
  }
  const int64_t channels = output_channels();
  for (auto it = steps_.rbegin(); fixed_size() && it != steps_.rend(); ++it) {
    if (const auto* s = std::get_if<image_steps::CenterCrop>(&*it)) {
      layout.sizes = {channels, s->height, s->width};
    } else if (const auto* s = std::get_if<image_steps::RandomResizedCrop>(&*it)) {
      layout.sizes = {channels, s->height, s->width};
    } else if (const auto* s = std::get_if<image_steps::Resize>(&*it)) {
      if (s->size.size() == 2) layout.sizes = {channels, s->size[0], s->size[1]};
      if (s->size.size() != 2) break;
    } else {
      continue;
    }
    return layout;
  }
  std::string names;
  for (const ImageStep& step : steps_) names += (names.empty() ? "" : ", ") + describe(step);
  throw InvalidArgument("the image transforms [" + names +
                        "] give every image its own size, so images cannot be batched: end with a CenterCrop or "
                        "RandomResizedCrop, or Resize to (h, w)");
}

namespace {

// The steps on one decoded image, the result written through `target(height, width)`, which returns where the
// channels x height x width output goes (uint8_t* or float*).
template <typename Target>
void run_steps(const std::vector<ImageStep>& steps, const std::vector<PictureOpPtr>& ops, const PixelView& image,
               const Prepared& first, SampleRng& rng, bool to_float, const std::vector<float>& lut, Target&& target) {
  thread_local Buffers buffers;
  const int channels = image.channels;
  State state;
  state.view = image;
  state.box = CropBox{0, 0, image.height, image.width};
  const bool pixel_steps = std::any_of(ops.begin(), ops.end(), [](const PictureOpPtr& op) { return op != nullptr; });
  size_t last_sizing = steps.size();  // the step whose resample may write the output (none before pixel steps)
  for (size_t i = 0; i < steps.size() && !pixel_steps; ++i) {
    if (is_sizing(steps[i])) last_sizing = i;
  }
  bool written = false;  // the output is in the target already (a final resample into uint8)

  const auto next_buffer = [&](size_t bytes) {
    const int index = state.buffer == 0 ? 1 : 0;
    image_ops::detail::sized_with_slack(buffers.planes[index], bytes);
    return index;
  };
  // Makes the box (with its flip) the current pixels, as planes.
  const auto materialize = [&] {
    const int index =
        next_buffer(static_cast<size_t>(state.box.height) * state.box.width * static_cast<size_t>(channels));
    copy_box(state.view, state.box, state.flip, buffers.planes[index].data());
    state.view = PixelView{buffers.planes[index].data(), state.box.height, state.box.width, channels, true, true, 0};
    state.buffer = index;
    state.box = CropBox{0, 0, state.box.height, state.box.width};
    state.flip = false;
  };
  // A Resize or RandomResizedCrop `step` to height x width, with its interpolation.
  const auto resize_to = [&](int height, int width, bool last, const ImageStep& step) {
    if (height <= 0 || width <= 0) {
      throw InvalidFile("an image region of " + size_text(state.box.height, state.box.width) + " pixels becomes " +
                        size_text(height, width) + " under " + describe(step));
    }
    if (state.flip || !box_inside(state.box, state.view.height, state.view.width)) materialize();
    uint8_t* out = nullptr;
    int index = -1;
    if (last && !to_float) {
      out = static_cast<uint8_t*>(target(height, width));
      written = true;
    } else {
      index = next_buffer(static_cast<size_t>(height) * width * channels);
      out = buffers.planes[index].data();
    }
    const auto* resize = std::get_if<image_steps::Resize>(&step);
    resample(state.view, state.box, height, width, out,
             resize != nullptr ? resize->interpolation : std::get<image_steps::RandomResizedCrop>(step).interpolation);
    state.view = PixelView{out, height, width, channels, true, index >= 0, 0};
    state.buffer = index;
    state.box = CropBox{0, 0, height, width};
  };

  for (size_t i = 0; i < steps.size(); ++i) {
    const ImageStep& step = steps[i];
    const bool last = i == last_sizing;
    if (i == first.index) {
      state.box = first.box;
      resize_to(first.out_height, first.out_width, last, step);
      continue;
    }
    if (const auto* s = std::get_if<image_steps::Resize>(&step)) {
      const auto [height, width] = image_ops::resize_size(state.box.height, state.box.width, s->size, s->max_size);
      resize_to(height, width, last, step);
    } else if (const auto* s = std::get_if<image_steps::CenterCrop>(&step)) {
      const int height = static_cast<int>(s->height), width = static_cast<int>(s->width);
      const bool whole = state.box.top == 0 && state.box.left == 0 && state.box.height == state.view.height &&
                         state.box.width == state.view.width;
      // A crop larger than a box that is not the whole image pads with zeros where the image may have pixels.
      if (!whole && (height > state.box.height || width > state.box.width)) materialize();
      const CropBox sub = image_ops::center_crop_box(state.box.height, state.box.width, height, width);
      state.box = compose(state.box, state.flip, sub);
    } else if (const auto* s = std::get_if<image_steps::RandomResizedCrop>(&step)) {
      const CropBox sub = image_ops::random_resized_crop_box(state.box.height, state.box.width, s->scale_min,
                                                             s->scale_max, s->ratio_min, s->ratio_max, rng);
      if (sub.height <= 0 || sub.width <= 0) {
        throw InvalidFile(no_pixels_left(state.box.height, state.box.width, step));
      }
      state.box = compose(state.box, state.flip, sub);
      resize_to(static_cast<int>(s->height), static_cast<int>(s->width), last, step);
    } else if (const auto* s = std::get_if<image_steps::RandomHorizontalFlip>(&step)) {
      if (rng.uniform() < s->p) state.flip = !state.flip;
    }
  }

  if (pixel_steps) {  // the box as a picture of its own, through the pixel steps
    thread_local Picture picture, scratch;
    picture.resize(channels, state.box.height, state.box.width);
    copy_box(state.view, state.box, state.flip, picture.pixels.data());
    for (const PictureOpPtr& op : ops) {
      if (op) op->apply(picture, rng, scratch);
    }
    state.view = PixelView{picture.pixels.data(), picture.height, picture.width, picture.channels, true, false, 0};
    state.buffer = -1;
    state.box = CropBox{0, 0, picture.height, picture.width};
    state.flip = false;
  }
  void* out = target(state.box.height, state.box.width);
  if (written) {
    if (state.flip) mirror_planes(static_cast<uint8_t*>(out), channels, state.box.height, state.box.width);
  } else if (to_float) {
    write_float(state.view, state.box, state.flip, lut, static_cast<float*>(out));
  } else {
    copy_box(state.view, state.box, state.flip, static_cast<uint8_t*>(out));
  }
  for (const ImageStep& step : steps) {
    if (const auto* s = std::get_if<image_steps::RandomErasing>(&step)) {
      picture_fn::random_erasing(*s, rng, state.view.channels, state.box.height, state.box.width, out, to_float);
    }
  }
}

// The sample decoded into this thread's buffer, which keeps its room between samples (with read slack after the
// pixels).
PixelView decode_with_slack(const EncodedSample& sample, const DecodeOptions& options) {
  thread_local std::vector<uint8_t> pixels;
  const ImageInfo info = probe_image(sample.bytes, sample.name);
  const int channels = options.gray ? 1 : 3;
  if (static_cast<int64_t>(info.width) * info.height > options.max_pixels) {
    decode_image(sample.bytes, sample.name, options);  // throws the decoder's error for too many pixels
    throw InvalidFile(sample.name + ": more than " + std::to_string(options.max_pixels) + " pixels");
  }
  const size_t bytes = static_cast<size_t>(info.width) * info.height * channels;
  decode_image_into(sample.bytes, sample.name, options, image_ops::detail::sized_with_slack(pixels, bytes), bytes);
  return PixelView{pixels.data(), info.height, info.width, channels, false, true, 0};
}

// The sample decoded for `steps` with ImageTransformOptions::reduced_decode: when the first step that changes the
// picture is a RandomResizedCrop (its box drawn here, from the full size) or a Resize, a JPEG or WebP decoded only
// in the window that holds that step's box, and smaller where options.reduced_scale_shrink allows it (a JPEG at
// n/8, a WebP to any size); other formats whole. `first` says where the step's box lies in what is returned.
PixelView decode_reduced(const EncodedSample& sample, const std::vector<ImageStep>& steps,
                         const ImageTransformOptions& transform_options, SampleRng& rng, Prepared& first) {
  const DecodeOptions& options = transform_options.decode;
  const auto step = std::find_if(steps.begin(), steps.end(), is_geometric);
  if (step == steps.end() || !(std::holds_alternative<image_steps::RandomResizedCrop>(*step) ||
                               std::holds_alternative<image_steps::Resize>(*step))) {
    return decode_with_slack(sample, options);
  }
  const ImageInfo info = probe_image(sample.bytes, sample.name);
  CropBox box{0, 0, info.height, info.width};
  if (const auto* s = std::get_if<image_steps::RandomResizedCrop>(&*step)) {
    box = image_ops::random_resized_crop_box(info.height, info.width, s->scale_min, s->scale_max, s->ratio_min,
                                             s->ratio_max, rng);
    if (box.height <= 0 || box.width <= 0) throw InvalidFile(no_pixels_left(info.height, info.width, *step));
    first.out_height = static_cast<int>(s->height), first.out_width = static_cast<int>(s->width);
  } else {
    const auto& resize = std::get<image_steps::Resize>(*step);
    std::tie(first.out_height, first.out_width) =
        image_ops::resize_size(info.height, info.width, resize.size, resize.max_size);
  }
  first.index = static_cast<size_t>(step - steps.begin());
  first.box = box;
  const bool whole = box.height == info.height && box.width == info.width;
  // The least shrink left to the resize after a smaller decode; 0: no smaller decode.
  const double least = transform_options.reduced_scale_shrink;
  if (info.format == ImageFormat::kJpeg) {
    const int n =
        least > 0 ? image_ops::detail::reduced_scale_eighths(box, first.out_height, first.out_width, least) : 8;
    if (n == 8 && whole) return decode_with_slack(sample, options);
    const CropBox scaled = image_ops::detail::scaled_box(box, n / 8.0, n / 8.0, jpeg_scaled_size(info.height, n, 8),
                                                         jpeg_scaled_size(info.width, n, 8));
    thread_local JpegRegion decoded;
    decoded = decode_jpeg_region(sample.bytes, sample.name, options, n, 8,
                                 ImageRegion{scaled.top, scaled.left, scaled.height, scaled.width});
    first.box = CropBox{0, 0, scaled.height, scaled.width};
    const DecodedImage& image = decoded.image;
    return PixelView{image.pixels.data(), image.height, image.width, image.channels, false, false, 0};
  }
  if (info.format != ImageFormat::kWebp) return decode_with_slack(sample, options);
  // WebP: libwebp crops the box's window and, without alpha (which its rescaler would weigh the colours by),
  // shrinks it straight to a size that leaves the box `least` times the output's.
  const double scale = least * std::max(static_cast<double>(first.out_height) / box.height,
                                        static_cast<double>(first.out_width) / box.width);
  thread_local DecodedImage decoded;
  if (least <= 0 || scale >= 1 || info.channels == 4) {
    if (whole) return decode_with_slack(sample, options);
    decoded = decode_webp_window(sample.bytes, sample.name, options,
                                 ImageRegion{box.top, box.left, box.height, box.width}, box.height, box.width);
    first.box = CropBox{0, 0, box.height, box.width};
  } else {
    // libwebp's window starts at even coordinates.
    const ImageRegion window{box.top & ~1, box.left & ~1, box.height + (box.top & 1), box.width + (box.left & 1)};
    const int height = std::max(1, static_cast<int>(std::lround(window.height * scale)));
    const int width = std::max(1, static_cast<int>(std::lround(window.width * scale)));
    decoded = decode_webp_window(sample.bytes, sample.name, options, window, height, width);
    first.box = image_ops::detail::scaled_box(CropBox{box.top & 1, box.left & 1, box.height, box.width},
                                              static_cast<double>(height) / window.height,
                                              static_cast<double>(width) / window.width, height, width);
  }
  return PixelView{decoded.pixels.data(), decoded.height, decoded.width, decoded.channels, false, false, 0};
}

// Every channel's float32 value of each pixel value: value / 255, then each Normalize, in float32 as torchvision
// computes them.
std::vector<float> float_table(const std::vector<ImageStep>& steps, int channels) {
  std::vector<float> lut(static_cast<size_t>(channels) * 256);
  for (int c = 0; c < channels; ++c) {
    for (int v = 0; v < 256; ++v) {
      float x = static_cast<float>(v) / 255.0f;
      for (const ImageStep& step : steps) {
        if (const auto* n = std::get_if<image_steps::Normalize>(&step)) {
          const float mean = static_cast<float>(n->mean.size() == 1 ? n->mean[0] : n->mean[c]);
          const float std = static_cast<float>(n->std.size() == 1 ? n->std[0] : n->std[c]);
          x = (x - mean) / std;
        }
      }
      lut[c * 256 + v] = x;
    }
  }
  return lut;
}

bool makes_float(const std::vector<ImageStep>& steps) {
  for (const ImageStep& step : steps) {
    if (std::holds_alternative<image_steps::ToTensor>(step)) return true;
  }
  return false;
}

}  // namespace

void ImageTransform::apply(const EncodedSample& sample, SampleRng& rng, const torch::Tensor& out) const {
  const SampleLayout expected = layout();
  if (out.scalar_type() != expected.dtype || out.sizes() != c10::IntArrayRef(expected.sizes) ||
      !out.is_contiguous()) {
    throw InvalidArgument("ImageTransform::apply: the output must be a contiguous tensor of the layout's sizes and "
                          "dtype, not " + std::string(c10::toString(out.scalar_type())) + " " +
                          c10::str(out.sizes()));
  }
  Prepared first;
  const PixelView image = options_.reduced_decode ? decode_reduced(sample, steps_, options_, rng, first)
                                                  : decode_with_slack(sample, options_.decode);
  const bool to_float = expected.dtype == torch::kFloat32;
  run_steps(steps_, ops_, image, first, rng, to_float, float_table_, [&](int height, int width) -> void* {
    if (height != expected.sizes[1] || width != expected.sizes[2]) {
      throw InvalidArgument("ImageTransform::apply: the steps made " + size_text(height, width) + " pixels, not " +
                            size_text(static_cast<int>(expected.sizes[1]), static_cast<int>(expected.sizes[2])));
    }
    return out.data_ptr();
  });
}

torch::Tensor ImageTransform::make(const EncodedSample& sample, SampleRng& rng) const {
  Prepared first;
  const PixelView image = options_.reduced_decode ? decode_reduced(sample, steps_, options_, rng, first)
                                                  : decode_with_slack(sample, options_.decode);
  const bool to_float = makes_float(steps_);
  torch::Tensor out;
  run_steps(steps_, ops_, image, first, rng, to_float, float_table_, [&](int height, int width) -> void* {
    if (!out.defined()) {
      out = torch::empty({output_channels(), height, width}, to_float ? torch::kFloat32 : torch::kUInt8);
    }
    return out.data_ptr();
  });
  return out;
}

}  // namespace feedline
