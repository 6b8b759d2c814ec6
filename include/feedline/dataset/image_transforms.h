// Image transforms with torchvision's names and meanings (torchvision.transforms on PIL images, what
// torchvision's ImageFolder pipelines run), applied in C++ on the loader's worker threads:
//   image_ops      - the functional forms (torchvision.transforms.functional): the crop boxes and output sizes
//                    torchvision computes, and resampling of a crop box to a size;
//   ImageStep      - one step of a pipeline: Resize, CenterCrop, RandomResizedCrop, RandomHorizontalFlip,
//                    ToTensor, PILToTensor, Normalize;
//   ImageTransform - decoding (feedline/io/image_decode.h) and a list of steps as a SampleTransform: each sample
//                    is decoded, cropped, resized and flipped, then written as channels x height x width into its
//                    slot of the batch, uint8 or float32.
// Resampling is libswscale's SWS_BILINEAR: a triangle filter widened by the scale factor when shrinking, which is
// what Pillow's resize(BILINEAR) does (and torchvision's antialiased bilinear on tensors); on the same decoded
// image and box the two differ by at most a few levels (a mean difference of about 0.2 on photos) for shrinks of
// up to about 5 times, and part further past that (up to about 10 levels at 20 times). Crops and flips copy
// pixels, and ToTensor and Normalize compute in float32 as torchvision does: without a resize, exactly
// torchvision's values. OpenCV's INTER_LINEAR does not antialias (mean differences of 1-4 levels, up to 78, when
// shrinking) and its INTER_AREA is a box filter; libvips matches Pillow when shrinking but not when enlarging, at
// 10-30x libswscale's time per call for the sizes of a training crop.
// Random draws come from the SampleRng that the dataset seeds from (seed, epoch, sample index) alone.
// Thread-safety: every function is pure (scratch buffers and libswscale contexts are per thread), and an
// ImageTransform is immutable after construction.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "feedline/dataset/encoded.h"
#include "feedline/io/image_decode.h"

namespace feedline {

// A box of an image: rows [top, top + height), columns [left, left + width). It may reach outside the image
// (a centre crop larger than the image), where pixels are zero.
struct CropBox {
  int top = 0, left = 0, height = 0, width = 0;
};

namespace image_ops {

// torchvision 0.14's F.resize output size for an image of height x width: `size` {n} makes the shorter side n
// and the longer int(n * long / short) (truncated, as torchvision does), `max_size` > 0 then bounds the longer
// side as torchvision's max_size does; {h, w} is exact. InvalidArgument for an empty or negative size or more
// than two numbers. Returns {height, width}.
std::pair<int, int> resize_size(int height, int width, const std::vector<int64_t>& size, int64_t max_size = 0);

// torchvision's F.center_crop box for an output of out_height x out_width: top = int(round((height -
// out_height) / 2.0)), left likewise (Python's round, half to even); where the image is smaller than the crop,
// torchvision pads (out_height - height) // 2 zero rows above (columns to the left), so top = -((out_height -
// height) // 2): negative, the box reaching outside.
CropBox center_crop_box(int height, int width, int out_height, int out_width);

// transforms.RandomResizedCrop.get_params, with `rng` in place of torch's generator: up to 10 tries of an area
// fraction uniform in [scale_min, scale_max] and a log-uniform aspect ratio in [ratio_min, ratio_max], each kept
// when it fits (w = int(round(sqrt(area * ratio))), h = int(round(sqrt(area / ratio))), then a top-left corner
// uniform over the places it fits); else the fallback centre crop of the ratio clamped to the range.
CropBox random_resized_crop_box(int height, int width, double scale_min, double scale_max, double ratio_min,
                                double ratio_max, SampleRng& rng);

// Pillow's crop(box).resize((out_width, out_height), BILINEAR), which is torchvision's F.resized_crop on a PIL
// image; out of the box's pixels outside the image come zeros. InvalidArgument for an empty box or output size.
DecodedImage resized_crop(const DecodedImage& image, const CropBox& box, int out_height, int out_width);

// The same, written as planes, channels x out_height x out_width, to `out` (what a batch slot holds).
void resized_crop_planes(const DecodedImage& image, const CropBox& box, int out_height, int out_width,
                         uint8_t* out);

// F.hflip of a decoded (interleaved) image, in place.
void hflip(DecodedImage& image);

}  // namespace image_ops

// The steps of a pipeline, each as torchvision's class of the name (constructor arguments alike).
namespace image_steps {
struct Resize {
  std::vector<int64_t> size;  // {n}: shorter side n; {h, w}: exact
  int64_t max_size = 0;       // > 0: with {n}, the longer side's bound
};
struct CenterCrop {
  int64_t height = 0, width = 0;
};
struct RandomResizedCrop {
  int64_t height = 0, width = 0;
  double scale_min = 0.08, scale_max = 1.0;
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;
};
struct RandomHorizontalFlip {
  double p = 0.5;
};
struct ToTensor {};     // float32 in [0, 1]: pixel / 255
struct PILToTensor {};  // uint8, as decoded
struct Normalize {      // (x - mean[c]) / std[c], on float32 (after ToTensor); one value or one per channel
  std::vector<double> mean, std;
};
}  // namespace image_steps

using ImageStep = std::variant<image_steps::Resize, image_steps::CenterCrop, image_steps::RandomResizedCrop,
                               image_steps::RandomHorizontalFlip, image_steps::ToTensor, image_steps::PILToTensor,
                               image_steps::Normalize>;

// torchvision's repr of a step, less the interpolation and antialias fields (always antialiased bilinear):
// "RandomResizedCrop(size=(224, 224), scale=(0.08, 1.0), ratio=(0.75, 1.3333))", "Resize(size=256, max_size=None)",
// "Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])".
std::string describe(const ImageStep& step);

struct ImageTransformOptions {
  DecodeOptions decode;  // gray, max_pixels
  // JPEGs decoded only as far as the output needs: when the first step that changes the picture is a
  // RandomResizedCrop or Resize, at the smallest DCT scale (1/2, 1/4 or 1/8 of the size, libjpeg-turbo's scaled
  // decoding) that still leaves the crop box at least the output's size, and only the box's rows and columns (the
  // box drawn from the full size, as without the option, then mapped to the nearest scaled pixels). The rows after
  // the box are still entropy-decoded, so a file corrupt anywhere is refused as before. Faster where the scale
  // drops, and no longer torchvision's values there (a mean difference of 2-4 levels: the DCT scaling filters as a
  // box does where the resize would have filtered as a triangle); where no scale drops, the output is the same.
  // Off: every pixel is decoded, as Pillow decodes it.
  bool reduced_decode = false;
};

// Decoding and `steps` as one transform: the steps that change the picture (Resize, CenterCrop,
// RandomResizedCrop, RandomHorizontalFlip) in their order, then the conversion (ToTensor or PILToTensor; uint8
// without either) and Normalize. The output is channels x height x width (3, or 1 with options.decode.gray).
// InvalidArgument naming the step for what torchvision refuses too: a size or probability out of range, a
// Normalize before ToTensor or on uint8, a step after the conversion other than Normalize, mean or std of the
// wrong length, a std of zero.
class ImageTransform : public SampleTransform {
 public:
  explicit ImageTransform(std::vector<ImageStep> steps, ImageTransformOptions options = {});

  const std::vector<ImageStep>& steps() const { return steps_; }
  const ImageTransformOptions& options() const { return options_; }
  // Whether every output has one size (the last step that changes it gives one): the steps can make batches.
  bool fixed_size() const;
  // The output's size for any input when fixed_size(): {channels, height, width} and the dtype. InvalidArgument
  // otherwise, saying which step to add ("end with a CenterCrop or RandomResizedCrop, or Resize to (h, w)").
  SampleLayout layout() const override;
  // Writes the sample into `out` (layout()'s sizes and dtype). InvalidFile/Unsupported from the decoder; the
  // dataset adds the sample's name.
  void apply(const EncodedSample& sample, SampleRng& rng, const torch::Tensor& out) const override;
  // One sample of any size, as a new tensor (ds[i] in Python): channels x height x width.
  torch::Tensor make(const EncodedSample& sample, SampleRng& rng) const;

 private:
  std::vector<ImageStep> steps_;
  ImageTransformOptions options_;
  std::vector<float> float_table_;  // with ToTensor: each channel's output for each pixel value (256 a channel)
};

}  // namespace feedline
