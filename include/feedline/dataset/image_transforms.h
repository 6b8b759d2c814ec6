// Image transforms with torchvision's names and meanings (torchvision.transforms on PIL images, what
// torchvision's ImageFolder pipelines run), applied in C++ on the loader's worker threads:
//   image_ops      - the functional forms (torchvision.transforms.functional): the crop boxes and output sizes
//                    torchvision computes, and resampling of a crop box to a size;
//   ImageStep      - one step of a pipeline: Resize, CenterCrop, RandomResizedCrop, RandomHorizontalFlip,
//                    ToTensor, PILToTensor, Normalize;
//   ImageTransform - decoding (feedline/io/image_decode.h) and a list of steps as a SampleTransform: each sample
//                    is decoded, cropped, resized and flipped, then written as channels x height x width into its
//                    slot of the batch, uint8 or float32.
// Resampling is Pillow's resize (BILINEAR or BICUBIC, antialiased: the filter widened by the scale factor when
// shrinking), with Pillow's fixed-point arithmetic, so its bytes are Pillow's on the same decoded image and box.
// Crops and flips copy pixels, and ToTensor and Normalize compute in float32 as torchvision does: on the same
// decoded image, torchvision's values. OpenCV's INTER_LINEAR does not antialias (mean differences of 1-4 levels, up
// to 78, when shrinking) and its INTER_AREA is a box filter.
// Random draws come from the SampleRng that the dataset seeds from (seed, epoch, sample index) alone.
// Thread-safety: every function is pure (scratch buffers are per thread), and an
// ImageTransform is immutable after construction.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
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

// The resampling filter of a resize, as torchvision's InterpolationMode names it: Pillow's BILINEAR (a triangle)
// or BICUBIC (Keys' cubic, a = -0.5), each antialiased.
enum class Interpolation { kBilinear, kBicubic };

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

// Pillow's crop(box).resize((out_width, out_height), BILINEAR or BICUBIC), which is torchvision's F.resized_crop
// on a PIL image; out of the box's pixels outside the image come zeros. InvalidArgument for an empty box or output
// size.
DecodedImage resized_crop(const DecodedImage& image, const CropBox& box, int out_height, int out_width,
                          Interpolation interpolation = Interpolation::kBilinear);

// The same, written as planes, channels x out_height x out_width, to `out` (what a batch slot holds).
void resized_crop_planes(const DecodedImage& image, const CropBox& box, int out_height, int out_width,
                         uint8_t* out, Interpolation interpolation = Interpolation::kBilinear);

// F.hflip of a decoded (interleaved) image, in place.
void hflip(DecodedImage& image);

}  // namespace image_ops

// The steps of a pipeline, each as torchvision's class of the name (constructor arguments alike).
namespace image_steps {
struct Resize {
  std::vector<int64_t> size;  // {n}: shorter side n; {h, w}: exact
  int64_t max_size = 0;       // > 0: with {n}, the longer side's bound
  Interpolation interpolation = Interpolation::kBilinear;
};
struct CenterCrop {
  int64_t height = 0, width = 0;
};
struct RandomResizedCrop {
  int64_t height = 0, width = 0;
  double scale_min = 0.08, scale_max = 1.0;
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;
  Interpolation interpolation = Interpolation::kBilinear;
};
struct RandomHorizontalFlip {
  double p = 0.5;
};
struct ToTensor {};     // float32 in [0, 1]: pixel / 255
struct PILToTensor {};  // uint8, as decoded
struct Normalize {      // (x - mean[c]) / std[c], on float32 (after ToTensor); one value or one per channel
  std::vector<double> mean, std;
};
// The colour and filter steps (torchvision's pixel transforms), run on the picture after the steps above.
// A range is (min, max); `enabled` false is torchvision's None (the factor not drawn, the op not run).
struct Range {
  bool enabled = false;
  double min = 0, max = 0;
};
struct ColorJitter {  // brightness, contrast, saturation around 1 (factors >= 0); hue around 0, in [-0.5, 0.5]
  Range brightness, contrast, saturation, hue;
};
struct Grayscale {
  int64_t num_output_channels = 1;  // 1 or 3
};
struct RandomGrayscale {  // Grayscale keeping the number of channels, with probability p
  double p = 0.1;
};
struct GaussianBlur {  // kernel of kernel_width x kernel_height (odd), sigma uniform in [sigma_min, sigma_max]
  int64_t kernel_width = 3, kernel_height = 3;
  double sigma_min = 0.1, sigma_max = 2.0;
};
struct RandomErasing {  // on the tensor, after the conversion: with probability p, a box of the area fraction
                        // `scale` and the aspect ratio `ratio` (log-uniform) set to `value`
  double p = 0.5;
  double scale_min = 0.02, scale_max = 0.33;
  double ratio_min = 0.3, ratio_max = 3.3;
  std::vector<double> value{0.0};  // one value or one per channel
  bool random = false;             // value='random': standard normal noise in place of `value`
  bool inplace = false;            // torchvision's flag, shown in describe() only
};
// The geometric and automatic-augmentation steps, run on the picture as the colour steps are. They resample as
// Pillow's Image.transform does (torchvision's F.rotate / F.affine on a PIL image), nearest by default.
enum class WarpInterpolation { kNearest, kBilinear };
// The colour of the pixels a warp brings in from outside the picture: none (torchvision's None: 0), one number
// for every channel, or one per channel (`sequence`: its length must be the picture's channels).
struct WarpFill {
  std::vector<double> values;
  bool sequence = false;
};
struct RandomRotation {  // an angle uniform in [degrees_min, degrees_max], counter-clockwise
  double degrees_min = 0, degrees_max = 0;
  WarpInterpolation interpolation = WarpInterpolation::kNearest;
  bool expand = false;                       // the output holds the whole rotated picture
  bool has_center = false;                   // else the picture's centre
  double center_x = 0, center_y = 0;         // pixels from the top-left corner
  WarpFill fill{{0.0}, false};
};
struct RandomAffine {
  double degrees_min = 0, degrees_max = 0;
  bool has_translate = false;                // fractions of the width and height: |tx| <= translate_x * width
  double translate_x = 0, translate_y = 0;
  bool has_scale = false;
  double scale_min = 1, scale_max = 1;
  std::vector<double> shear;                 // none, {x_min, x_max} or {x_min, x_max, y_min, y_max} (degrees)
  WarpInterpolation interpolation = WarpInterpolation::kNearest;
  WarpFill fill{{0.0}, false};
  bool has_center = false;
  double center_x = 0, center_y = 0;
};
enum class AutoAugmentPolicy { kImageNet };
struct AutoAugment {  // the policy's 25 sub-policies of two ops with their probabilities and magnitudes
  AutoAugmentPolicy policy = AutoAugmentPolicy::kImageNet;
  WarpInterpolation interpolation = WarpInterpolation::kNearest;
  WarpFill fill;
};
struct RandAugment {  // num_ops ops, uniform among 14, at bin `magnitude` of num_magnitude_bins
  int64_t num_ops = 2, magnitude = 9, num_magnitude_bins = 31;
  WarpInterpolation interpolation = WarpInterpolation::kNearest;
  WarpFill fill;
};
struct TrivialAugmentWide {  // one op uniform among 14 at a bin uniform among num_magnitude_bins
  int64_t num_magnitude_bins = 31;
  WarpInterpolation interpolation = WarpInterpolation::kNearest;
  WarpFill fill;
};
}  // namespace image_steps

using ImageStep = std::variant<image_steps::Resize, image_steps::CenterCrop, image_steps::RandomResizedCrop,
                               image_steps::RandomHorizontalFlip, image_steps::ToTensor, image_steps::PILToTensor,
                               image_steps::Normalize, image_steps::ColorJitter, image_steps::Grayscale,
                               image_steps::RandomGrayscale, image_steps::GaussianBlur, image_steps::RandomErasing,
                               image_steps::RandomRotation, image_steps::RandomAffine, image_steps::AutoAugment,
                               image_steps::RandAugment, image_steps::TrivialAugmentWide>;

// torchvision's repr of a step, less the antialias field (always antialiased) and the interpolation where it is
// bilinear: "RandomResizedCrop(size=(224, 224), scale=(0.08, 1.0), ratio=(0.75, 1.3333))",
// "Resize(size=256, interpolation=bicubic, max_size=None)",
// "Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])".
std::string describe(const ImageStep& step);

class PictureOp;  // a colour, filter or geometric pixel step, built from its ImageStep (internal)

struct ImageTransformOptions {
  DecodeOptions decode;  // gray, max_pixels
  // JPEGs and WebPs decoded only as far as the output needs: when the first step that changes the picture is a
  // RandomResizedCrop or Resize, only the window that holds its box (the box drawn from the full size, as without
  // the option): of a JPEG the box's rows and the DCT blocks of its columns (libjpeg-turbo's crop and skip), of a
  // WebP libwebp's crop. The pixels, and so the outputs, are the whole decode's. A JPEG's rows after the box are
  // still entropy-decoded, so a JPEG corrupt anywhere is refused as before; a WebP's rows below the box are not
  // decoded (one cut short is still refused by its header's sizes, damage inside its data there goes unnoticed).
  // Off: every pixel is decoded.
  bool reduced_decode = true;
  // With reduced_decode, also decode smaller where the box keeps at least reduced_scale_shrink times the output's
  // size on each side (1 or more; 0: never, the default): a JPEG at the smallest n/8 (n = 1..7, libjpeg-turbo's
  // scaled IDCT), a WebP without alpha straight to that size (libwebp's rescaler, an area average). Faster where
  // the box is much larger than the output, and no longer torchvision's values: the scaled IDCT filters each block
  // otherwise than Pillow's antialiased resize, and a mapped box moves by up to half a scaled pixel. On photos the
  // outputs differ from torchvision's by 0.6 to 1.8 levels on average and by 13 to 98 at their largest, at every n
  // below 8 (at 7/8 with the resize still shrinking 2 to 4 times: 0.6 to 0.8, up to 43). Values below 1 (other
  // than 0) are InvalidArgument.
  double reduced_scale_shrink = 0;
};

// Decoding and `steps` as one transform: the steps that change the picture's box (Resize, CenterCrop,
// RandomResizedCrop, RandomHorizontalFlip) in their order, then the pixel steps (ColorJitter, Grayscale,
// RandomGrayscale, GaussianBlur, ...) in theirs on the picture as uint8, then the conversion (ToTensor or
// PILToTensor; uint8 without either), Normalize, and RandomErasing on the tensor. The output is channels x height
// x width (3, or 1 with options.decode.gray or a Grayscale to one channel).
// InvalidArgument naming the step for what torchvision refuses too: a size or probability out of range, a
// Normalize before ToTensor or on uint8, a step after the conversion other than Normalize and RandomErasing,
// mean or std of the wrong length, a std of zero; and for orders feedline does not run: a step that changes the
// box after a pixel step, RandomErasing before the conversion or before a Normalize.
class ImageTransform : public SampleTransform {
 public:
  explicit ImageTransform(std::vector<ImageStep> steps, ImageTransformOptions options = {});

  const std::vector<ImageStep>& steps() const { return steps_; }
  const ImageTransformOptions& options() const { return options_; }
  // The output's channels: 3, or 1 with options.decode.gray, as the pixel steps (Grayscale) leave them.
  int output_channels() const;
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
  std::vector<std::shared_ptr<const PictureOp>> ops_;  // each step's pixel op; null for the other steps
  ImageTransformOptions options_;
  std::vector<float> float_table_;  // with ToTensor: each channel's output for each pixel value (256 a channel)
};

}  // namespace feedline
