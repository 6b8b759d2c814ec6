// The functional forms of the colour and filter transforms (torchvision.transforms.functional on a PIL image) on
// a Picture, each computing what Pillow computes for the same pixels: the ImageEnhance blends in Pillow's
// arithmetic (ImagingBlend: in float, truncated, clipped to [0, 255] when extrapolating), the ImageOps tables,
// convert("L"), and the HSV round trip of F.adjust_hue. A 1-channel picture is an "L" image, a 3-channel one "RGB".
// Used by the colour ops (image_color.cpp) and the automatic augmentations (image_autoaugment.cpp).
// Thread-safety: pure functions of their arguments.
#pragma once

#include <string>

#include "dataset/picture_ops.h"

namespace feedline {
namespace picture_fn {

// ImageEnhance.Brightness(img).enhance(factor): blend of black and the picture.
void adjust_brightness(Picture& picture, double factor);
// ImageEnhance.Contrast: blend of the grey of int(mean of the "L" picture + 0.5) and the picture.
void adjust_contrast(Picture& picture, double factor);
// ImageEnhance.Color (F.adjust_saturation, AutoAugment's "Color"): blend of the "L" picture and the picture.
// A 1-channel picture is unchanged.
void adjust_saturation(Picture& picture, double factor);
// ImageEnhance.Sharpness: blend of ImageFilter.SMOOTH of the picture (border pixels kept) and the picture.
// `scratch` holds the smoothed picture.
void adjust_sharpness(Picture& picture, double factor, Picture& scratch);
// F.adjust_hue on a PIL image: H of Pillow's HSV shifted by uint8(hue_factor * 255), wrapping; hue_factor in
// [-0.5, 0.5]. A 1-channel picture is unchanged.
void adjust_hue(Picture& picture, double hue_factor);
// ImageOps.posterize: each value's top `bits` bits (bits in [0, 8]).
void posterize(Picture& picture, int bits);
// ImageOps.solarize: values >= threshold become 255 - value.
void solarize(Picture& picture, double threshold);
// ImageOps.autocontrast(img) (cutoff 0): each channel's [lowest, highest] value stretched to [0, 255].
void autocontrast(Picture& picture);
// ImageOps.equalize(img): each channel through Pillow's equalising table of its histogram (Pillow 9.4).
void equalize(Picture& picture);
// ImageOps.invert: 255 - value.
void invert(Picture& picture);
// F.rgb_to_grayscale on a PIL image: convert("L") ((R * 19595 + G * 38470 + B * 7471 + 0x8000) >> 16), repeated
// into 3 channels when num_output_channels is 3. A 1-channel picture stays as it is (repeated for 3).
void to_grayscale(Picture& picture, int num_output_channels);
// F.gaussian_blur on a PIL image: the picture as float32, convolved with the Gaussian kernel of
// kernel_width x kernel_height (odd) and the sigmas (reflect padding), rounded back to uint8. Torchvision convolves
// with the 2-D kernel, feedline with its two 1-D factors: the sums differ in their last bits, and a value that
// lands on a rounding boundary can differ by one level.
void gaussian_blur(Picture& picture, int kernel_width, int kernel_height, double sigma_x, double sigma_y);

// RandomErasing, torchvision's tensor step, on the output (channels x height x width, float32 when `is_float`,
// else uint8, where values are cast as torch casts them): with probability p, up to 10 tries of an area fraction
// and a log-uniform aspect ratio, the first that fits set to the value(s) or, for value='random', to standard
// normal noise.
void random_erasing(const image_steps::RandomErasing& step, SampleRng& rng, int channels, int height, int width,
                    void* out, bool is_float);
// Why torchvision would refuse the step's parameters for `channels`, or "" when it would not.
std::string check_random_erasing(const image_steps::RandomErasing& step, int channels);
// torchvision's repr: "RandomErasing(p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False)".
std::string describe_random_erasing(const image_steps::RandomErasing& step);

// Python's repr of a float ("0.5", "1.0", "inf"), for the ops' describe().
std::string py_float(double x);

}  // namespace picture_fn
}  // namespace feedline
