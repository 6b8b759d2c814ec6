// The geometric functional ops of the pixel steps, on Picture planes, as torchvision 0.14's F.rotate and F.affine
// compute them on a PIL image: Pillow's Image.rotate and Image.transform(AFFINE) with NEAREST or BILINEAR and a
// fill colour, reproducing Pillow's arithmetic (the pixel-centre offsets, its 16.16 fixed point for nearest, the
// truncation of bilinear) so that nearest gives exactly Pillow's pixels and bilinear at most one level apart.
// RandomRotation and RandomAffine use them (image_geometry.cpp), and so do the automatic augmentations'
// Rotate, ShearX/Y and TranslateX/Y (image_autoaugment.cpp).
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dataset/picture_ops.h"

namespace feedline {
namespace geometry {

// One fill byte per channel of a picture with `channels` channels, as torchvision's _parse_fill makes them for a
// PIL image: a number for every channel, a sequence one per channel (InvalidArgument naming `what` when its length
// is not the channel count), each truncated to an integer; values outside [0, 255] are refused.
std::vector<uint8_t> fill_bytes(const image_steps::WarpFill& fill, int channels, const std::string& what);

// Pillow's Image.transform((out_width, out_height), AFFINE, matrix, filter, fillcolor): output pixel (x, y) takes
// the input at matrix . (x + 0.5, y + 0.5), and `fill` where that falls outside the input. `out` must not be `in`.
void warp_affine(const Picture& in, Picture& out, int out_height, int out_width, const std::array<double, 6>& matrix,
                 image_steps::WarpInterpolation interpolation, const std::vector<uint8_t>& fill);

// torchvision's F.rotate on a PIL image (Pillow's Image.rotate): `angle` degrees counter-clockwise about `center`
// (the picture's centre when none), the output enlarged to hold the whole rotated picture with `expand`.
void rotate(Picture& picture, double angle, image_steps::WarpInterpolation interpolation, bool expand,
            const std::optional<std::pair<double, double>>& center, const std::vector<uint8_t>& fill,
            Picture& scratch);

// torchvision's F.affine on a PIL image: rotation by `angle` degrees, translation by (tx, ty) pixels, `scale` and
// shears (degrees) about `center` (the picture's centre, (width * 0.5, height * 0.5), when none).
void affine(Picture& picture, double angle, double tx, double ty, double scale, double shear_x, double shear_y,
            image_steps::WarpInterpolation interpolation, const std::vector<uint8_t>& fill,
            const std::optional<std::pair<double, double>>& center, Picture& scratch);

// A number as Python prints what it was given: an integral value as an int ("0", "128"), another as a float.
std::string py_number_repr(double x);
// torchvision's repr of a fill: "None" for none, the number, or "[a, b, c]".
std::string fill_repr(const image_steps::WarpFill& fill);
const char* interpolation_name(image_steps::WarpInterpolation interpolation);  // "nearest", "bilinear"

}  // namespace geometry

// torchvision's autoaugment._apply_op on a PIL image: the op `name` ("Identity", "ShearX", "ShearY",
// "TranslateX", "TranslateY", "Rotate", "Brightness", "Color", "Contrast", "Sharpness", "Posterize", "Solarize",
// "AutoContrast", "Equalize", "Invert") at the signed `magnitude`. InvalidArgument for another name.
void apply_augment_op(Picture& picture, const std::string& name, double magnitude,
                      image_steps::WarpInterpolation interpolation, const std::vector<uint8_t>& fill,
                      Picture& scratch);

// The op of an AutoAugment, RandAugment or TrivialAugmentWide step (image_autoaugment.cpp); nullptr for others.
PictureOpPtr make_autoaugment_op(const ImageStep& step);

}  // namespace feedline
