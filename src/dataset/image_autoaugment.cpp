// The automatic augmentations of torchvision 0.14 (transforms/autoaugment.py) as PictureOps: AutoAugment with
// the ImageNet policy, RandAugment and TrivialAugmentWide. Their choices (sub-policy, op, magnitude bin, sign,
// probability) come from the sample's SampleRng, drawn as torchvision draws them from torch: the same
// distributions, in the same order; the ops themselves are _apply_op's, on the colour functions
// (image_color.h) and the warps (image_geometry.h).
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dataset/image_color.h"
#include "dataset/image_geometry.h"
#include "feedline/io/error.h"

namespace feedline {

void apply_augment_op(Picture& picture, const std::string& name, double magnitude,
                      image_steps::WarpInterpolation interpolation, const std::vector<uint8_t>& fill,
                      Picture& scratch) {
  constexpr double kRadToDeg = 180.0 / 3.14159265358979323846;  // CPython's math.degrees: x * (180 / pi)
  const std::pair<double, double> origin{0.0, 0.0};
  if (name == "Identity") return;
  if (name == "ShearX") {
    geometry::affine(picture, 0.0, 0, 0, 1.0, std::atan(magnitude) * kRadToDeg, 0.0, interpolation, fill, origin,
                     scratch);
  } else if (name == "ShearY") {
    geometry::affine(picture, 0.0, 0, 0, 1.0, 0.0, std::atan(magnitude) * kRadToDeg, interpolation, fill, origin,
                     scratch);
  } else if (name == "TranslateX") {
    geometry::affine(picture, 0.0, std::trunc(magnitude), 0, 1.0, 0.0, 0.0, interpolation, fill, std::nullopt,
                     scratch);
  } else if (name == "TranslateY") {
    geometry::affine(picture, 0.0, 0, std::trunc(magnitude), 1.0, 0.0, 0.0, interpolation, fill, std::nullopt,
                     scratch);
  } else if (name == "Rotate") {
    geometry::rotate(picture, magnitude, interpolation, false, std::nullopt, fill, scratch);
  } else if (name == "Brightness") {
    picture_fn::adjust_brightness(picture, 1.0 + magnitude);
  } else if (name == "Color") {
    picture_fn::adjust_saturation(picture, 1.0 + magnitude);
  } else if (name == "Contrast") {
    picture_fn::adjust_contrast(picture, 1.0 + magnitude);
  } else if (name == "Sharpness") {
    picture_fn::adjust_sharpness(picture, 1.0 + magnitude, scratch);
  } else if (name == "Posterize") {
    picture_fn::posterize(picture, static_cast<int>(magnitude));
  } else if (name == "Solarize") {
    picture_fn::solarize(picture, magnitude);
  } else if (name == "AutoContrast") {
    picture_fn::autocontrast(picture);
  } else if (name == "Equalize") {
    picture_fn::equalize(picture);
  } else if (name == "Invert") {
    picture_fn::invert(picture);
  } else {
    throw InvalidArgument("The provided operator " + name + " is not recognized.");
  }
}

namespace {

using image_steps::WarpInterpolation;

// torch.linspace(start, end, n)[i] in float32, as torch's CPU kernel computes it: from the start for the first
// half, from the end for the second.
double linspace_at(double start, double end, int64_t n, int64_t i) {
  if (n == 1) return static_cast<float>(start);
  const float s = static_cast<float>(start), e = static_cast<float>(end);
  const float step = (e - s) / static_cast<float>(n - 1);
  if (i < n / 2) return s + step * static_cast<float>(i);
  return e - step * static_cast<float>(n - i - 1);
}

enum class Space { kAutoAugment, kRandAugment, kTrivialAugmentWide };

// The magnitude of op `op` at `bin` in `space`, for a picture of width x height.
double magnitude_at(Space space, const std::string& op, int64_t bins, int64_t bin, int width, int height) {
  const bool wide = space == Space::kTrivialAugmentWide;
  if (op == "ShearX" || op == "ShearY") return linspace_at(0.0, wide ? 0.99 : 0.3, bins, bin);
  if (op == "TranslateX") return linspace_at(0.0, wide ? 32.0 : 150.0 / 331.0 * width, bins, bin);
  if (op == "TranslateY") return linspace_at(0.0, wide ? 32.0 : 150.0 / 331.0 * height, bins, bin);
  if (op == "Rotate") return linspace_at(0.0, wide ? 135.0 : 30.0, bins, bin);
  if (op == "Brightness" || op == "Color" || op == "Contrast" || op == "Sharpness") {
    return linspace_at(0.0, wide ? 0.99 : 0.9, bins, bin);
  }
  if (op == "Posterize") {
    // 8 - (torch.arange(bins) / ((bins - 1) / d)).round().int(), in float32.
    const float divisor = static_cast<float>((bins - 1) / (wide ? 6.0 : 4.0));
    return 8 - static_cast<int>(std::nearbyint(static_cast<float>(bin) / divisor));
  }
  if (op == "Solarize") return linspace_at(255.0, 0.0, bins, bin);
  return 0.0;
}

bool is_signed(const std::string& op) {
  return op == "ShearX" || op == "ShearY" || op == "TranslateX" || op == "TranslateY" || op == "Rotate" ||
         op == "Brightness" || op == "Color" || op == "Contrast" || op == "Sharpness";
}

bool has_bins(const std::string& op) {
  return op != "Identity" && op != "AutoContrast" && op != "Equalize" && op != "Invert";
}

// RandAugment's and TrivialAugmentWide's ops, in their dict's order (op indices index this).
const std::vector<std::string>& wide_ops() {
  static const std::vector<std::string> ops = {"Identity",   "ShearX",    "ShearY",   "TranslateX", "TranslateY",
                                               "Rotate",     "Brightness", "Color",   "Contrast",   "Sharpness",
                                               "Posterize",  "Solarize",  "AutoContrast", "Equalize"};
  return ops;
}

struct PolicyOp {
  const char* name;
  double p;
  int bin;  // -1: none
};

// AutoAugmentPolicy.IMAGENET's 25 sub-policies.
const PolicyOp kImageNetPolicy[25][2] = {
    {{"Posterize", 0.4, 8}, {"Rotate", 0.6, 9}},        {{"Solarize", 0.6, 5}, {"AutoContrast", 0.6, -1}},
    {{"Equalize", 0.8, -1}, {"Equalize", 0.6, -1}},     {{"Posterize", 0.6, 7}, {"Posterize", 0.6, 6}},
    {{"Equalize", 0.4, -1}, {"Solarize", 0.2, 4}},      {{"Equalize", 0.4, -1}, {"Rotate", 0.8, 8}},
    {{"Solarize", 0.6, 3}, {"Equalize", 0.6, -1}},      {{"Posterize", 0.8, 5}, {"Equalize", 1.0, -1}},
    {{"Rotate", 0.2, 3}, {"Solarize", 0.6, 8}},         {{"Equalize", 0.6, -1}, {"Posterize", 0.4, 6}},
    {{"Rotate", 0.8, 8}, {"Color", 0.4, 0}},            {{"Rotate", 0.4, 9}, {"Equalize", 0.6, -1}},
    {{"Equalize", 0.0, -1}, {"Equalize", 0.8, -1}},     {{"Invert", 0.6, -1}, {"Equalize", 1.0, -1}},
    {{"Color", 0.6, 4}, {"Contrast", 1.0, 8}},          {{"Rotate", 0.8, 8}, {"Color", 1.0, 2}},
    {{"Color", 0.8, 8}, {"Solarize", 0.8, 7}},          {{"Sharpness", 0.4, 7}, {"Invert", 0.6, -1}},
    {{"ShearX", 0.6, 5}, {"Equalize", 1.0, -1}},        {{"Color", 0.4, 0}, {"Equalize", 0.6, -1}},
    {{"Equalize", 0.4, -1}, {"Solarize", 0.2, 4}},      {{"Solarize", 0.6, 5}, {"AutoContrast", 0.6, -1}},
    {{"Invert", 0.6, -1}, {"Equalize", 1.0, -1}},       {{"Color", 0.6, 4}, {"Contrast", 1.0, 8}},
    {{"Equalize", 0.8, -1}, {"Equalize", 0.6, -1}},
};

// torchvision's repr of an InterpolationMode: "InterpolationMode.NEAREST".
std::string mode_repr(WarpInterpolation interpolation) {
  return interpolation == WarpInterpolation::kBilinear ? "InterpolationMode.BILINEAR" : "InterpolationMode.NEAREST";
}

// The fill of a picture, checked against its channels.
std::vector<uint8_t> fill_of(const image_steps::WarpFill& fill, const Picture& picture, const char* name) {
  return geometry::fill_bytes(fill, picture.channels, name);
}

class AutoAugmentOp : public PictureOp {
 public:
  explicit AutoAugmentOp(image_steps::AutoAugment s) : s_(std::move(s)) {}
  std::string describe() const override {
    return "AutoAugment(policy=AutoAugmentPolicy.IMAGENET, fill=" + geometry::fill_repr(s_.fill) + ")";
  }
  void apply(Picture& picture, SampleRng& rng, Picture& scratch) const override {
    // AutoAugment.get_params: the sub-policy, two probabilities, two signs.
    const auto& policy = kImageNetPolicy[rng.below(25)];
    const double probs[2] = {static_cast<double>(static_cast<float>(rng.uniform())),
                             static_cast<double>(static_cast<float>(rng.uniform()))};
    const uint64_t signs[2] = {rng.below(2), rng.below(2)};
    const auto fill = fill_of(s_.fill, picture, "AutoAugment");
    for (int i = 0; i < 2; ++i) {
      const PolicyOp& op = policy[i];
      if (!(probs[i] <= op.p)) continue;
      double magnitude = 0.0;
      if (op.bin >= 0) {
        magnitude = magnitude_at(Space::kAutoAugment, op.name, 10, op.bin, picture.width, picture.height);
      }
      if (is_signed(op.name) && signs[i] == 0) magnitude *= -1.0;
      apply_augment_op(picture, op.name, magnitude, s_.interpolation, fill, scratch);
    }
  }

 private:
  image_steps::AutoAugment s_;
};

void check_bins(int64_t bins, const char* name) {
  if (bins < 2) {
    throw InvalidArgument(std::string(name) + ": num_magnitude_bins should be at least 2, got " +
                          std::to_string(bins));
  }
}

class RandAugmentOp : public PictureOp {
 public:
  explicit RandAugmentOp(image_steps::RandAugment s) : s_(std::move(s)) {
    check_bins(s_.num_magnitude_bins, "RandAugment");
    if (s_.magnitude < 0 || s_.magnitude >= s_.num_magnitude_bins) {
      throw InvalidArgument("RandAugment: magnitude should be in [0, num_magnitude_bins), got magnitude=" +
                            std::to_string(s_.magnitude) + " with num_magnitude_bins=" +
                            std::to_string(s_.num_magnitude_bins));
    }
    if (s_.num_ops < 0) {
      throw InvalidArgument("RandAugment: num_ops should not be negative, got " + std::to_string(s_.num_ops));
    }
  }
  std::string describe() const override {
    return "RandAugment(num_ops=" + std::to_string(s_.num_ops) + ", magnitude=" + std::to_string(s_.magnitude) +
           ", num_magnitude_bins=" + std::to_string(s_.num_magnitude_bins) +
           ", interpolation=" + mode_repr(s_.interpolation) + ", fill=" + geometry::fill_repr(s_.fill) + ")";
  }
  void apply(Picture& picture, SampleRng& rng, Picture& scratch) const override {
    const auto fill = fill_of(s_.fill, picture, "RandAugment");
    const auto& ops = wide_ops();
    for (int64_t k = 0; k < s_.num_ops; ++k) {
      const std::string& op = ops[rng.below(ops.size())];
      double magnitude = 0.0;
      if (has_bins(op)) {
        magnitude = magnitude_at(Space::kRandAugment, op, s_.num_magnitude_bins, s_.magnitude, picture.width,
                                 picture.height);
      }
      if (is_signed(op) && rng.below(2) == 1) magnitude *= -1.0;
      apply_augment_op(picture, op, magnitude, s_.interpolation, fill, scratch);
    }
  }

 private:
  image_steps::RandAugment s_;
};

class TrivialAugmentWideOp : public PictureOp {
 public:
  explicit TrivialAugmentWideOp(image_steps::TrivialAugmentWide s) : s_(std::move(s)) {
    check_bins(s_.num_magnitude_bins, "TrivialAugmentWide");
  }
  std::string describe() const override {
    return "TrivialAugmentWide(num_magnitude_bins=" + std::to_string(s_.num_magnitude_bins) +
           ", interpolation=" + mode_repr(s_.interpolation) + ", fill=" + geometry::fill_repr(s_.fill) + ")";
  }
  void apply(Picture& picture, SampleRng& rng, Picture& scratch) const override {
    const auto fill = fill_of(s_.fill, picture, "TrivialAugmentWide");
    const auto& ops = wide_ops();
    const std::string& op = ops[rng.below(ops.size())];
    double magnitude = 0.0;
    if (has_bins(op)) {
      const int64_t bin = static_cast<int64_t>(rng.below(static_cast<uint64_t>(s_.num_magnitude_bins)));
      magnitude = magnitude_at(Space::kTrivialAugmentWide, op, s_.num_magnitude_bins, bin, picture.width,
                               picture.height);
    }
    if (is_signed(op) && rng.below(2) == 1) magnitude *= -1.0;
    apply_augment_op(picture, op, magnitude, s_.interpolation, fill, scratch);
  }

 private:
  image_steps::TrivialAugmentWide s_;
};

}  // namespace

PictureOpPtr make_autoaugment_op(const ImageStep& step) {
  if (const auto* s = std::get_if<image_steps::AutoAugment>(&step)) return std::make_shared<AutoAugmentOp>(*s);
  if (const auto* s = std::get_if<image_steps::RandAugment>(&step)) return std::make_shared<RandAugmentOp>(*s);
  if (const auto* s = std::get_if<image_steps::TrivialAugmentWide>(&step)) {
    return std::make_shared<TrivialAugmentWideOp>(*s);
  }
  return nullptr;
}

}  // namespace feedline
