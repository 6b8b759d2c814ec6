// MixUp and CutMix over whole batches (BatchMix in loader.h), as torchvision's reference classification scripts
// apply them. lambda ~ Beta(alpha, alpha) is drawn as X / (X + Y) from two Gamma(alpha) draws (what
// torch._sample_dirichlet does for two classes), by Marsaglia and Tsang's method on SampleRng's uniform(), so
// that a seed gives the same draws with every standard library.
#include <torch/torch.h>

#include <cmath>
#include <string>

#include "feedline/dataset/encoded.h"
#include "feedline/io/error.h"
#include "feedline/loader/loader.h"

namespace feedline {
namespace {

constexpr double kPi = 3.14159265358979323846;

// A standard normal draw (Box-Muller, one of the pair).
double normal_draw(SampleRng& rng) {
  const double u1 = 1.0 - rng.uniform();  // (0, 1]: the log is finite
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
}

// Gamma(alpha, 1) for alpha > 0: Marsaglia and Tsang (2000), with their boost for alpha < 1:
// Gamma(alpha) = Gamma(alpha + 1) * U^(1 / alpha).
double gamma_draw(SampleRng& rng, double alpha) {
  if (alpha < 1.0) {
    const double boost = std::pow(1.0 - rng.uniform(), 1.0 / alpha);
    return gamma_draw(rng, alpha + 1.0) * boost;
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0, v = 0;
    do {
      x = normal_draw(rng);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = rng.uniform();
    const double x2 = x * x;
    if (u < 1.0 - 0.0331 * x2 * x2) return d * v;
    if (std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v;
  }
}

// Beta(alpha, alpha). Both Gamma draws can underflow to 0 for a tiny alpha; the two halves are then equally likely.
double beta_draw(SampleRng& rng, double alpha) {
  const double x = gamma_draw(rng, alpha);
  const double y = gamma_draw(rng, alpha);
  if (x + y == 0.0) return rng.below(2) == 0 ? 0.0 : 1.0;
  return x / (x + y);
}

std::string number(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
  return s;
}

}  // namespace

void check_batch_mix(const BatchMix& mix) {
  if (mix.num_classes() < 1) {
    throw InvalidArgument("batch mix: num_classes " + std::to_string(mix.num_classes()) + ": use 1 or more");
  }
  for (const auto& [name, alpha] : {std::pair<const char*, double>{"MixUp", mix.mixup_alpha()},
                                    std::pair<const char*, double>{"CutMix", mix.cutmix_alpha()}}) {
    if (!(alpha >= 0.0) || !std::isfinite(alpha)) {
      throw InvalidArgument(std::string("batch mix: ") + name + "'s alpha " + number(alpha) +
                            ": use a finite number above 0 (0 turns it off)");
    }
  }
  if (mix.mixup_alpha() == 0.0 && mix.cutmix_alpha() == 0.0) {
    throw InvalidArgument("batch mix: both alphas are 0: give MixUp's or CutMix's above 0");
  }
  if (!(mix.p() >= 0.0 && mix.p() <= 1.0)) {
    throw InvalidArgument("batch mix: probability " + number(mix.p()) + ": use one in [0, 1]");
  }
}

MixDraw draw_batch_mix(const BatchMix& mix, int64_t height, int64_t width, uint64_t seed) {
  check_batch_mix(mix);
  SampleRng rng(seed, 0, 0);
  MixDraw draw;
  const bool both = mix.mixup_alpha() > 0.0 && mix.cutmix_alpha() > 0.0;
  const bool cutmix = both ? rng.below(2) == 1 : mix.cutmix_alpha() > 0.0;  // RandomChoice: equally likely
  // torchvision: the batch is left as it is when rand() >= p.
  if (!(rng.uniform() < mix.p())) return draw;
  const double lambda = beta_draw(rng, cutmix ? mix.cutmix_alpha() : mix.mixup_alpha());
  if (!cutmix) {
    draw.kind = MixDraw::Kind::kMixUp;
    draw.lambda = lambda;
    return draw;
  }
  draw.kind = MixDraw::Kind::kCutMix;
  const auto r_x = static_cast<int64_t>(rng.below(static_cast<uint64_t>(std::max<int64_t>(width, 1))));
  const auto r_y = static_cast<int64_t>(rng.below(static_cast<uint64_t>(std::max<int64_t>(height, 1))));
  const double r = 0.5 * std::sqrt(1.0 - lambda);
  const auto r_w_half = static_cast<int64_t>(r * static_cast<double>(width));
  const auto r_h_half = static_cast<int64_t>(r * static_cast<double>(height));
  draw.x1 = std::max<int64_t>(r_x - r_w_half, 0);
  draw.y1 = std::max<int64_t>(r_y - r_h_half, 0);
  draw.x2 = std::min<int64_t>(r_x + r_w_half, width);
  draw.y2 = std::min<int64_t>(r_y + r_h_half, height);
  // The share of the image the box leaves to the batch's own pixels.
  draw.lambda = width * height == 0 ? 1.0
                                    : 1.0 - static_cast<double>((draw.x2 - draw.x1) * (draw.y2 - draw.y1)) /
                                                static_cast<double>(width * height);
  return draw;
}

Example apply_batch_mix(const BatchMix& mix, const Example& batch, const MixDraw& draw) {
  check_batch_mix(mix);
  const auto& x = batch.data;
  const auto& labels = batch.target;
  if (x.dim() != 4) {
    throw InvalidArgument("batch mix: images must be a batch (N, C, H, W), not a tensor of " +
                          std::to_string(x.dim()) + " dimensions");
  }
  if (!x.is_floating_point()) {
    throw InvalidArgument(std::string("batch mix: the images are ") + c10::toString(x.scalar_type()) +
                          ": MixUp and CutMix mix floating-point images (after ToTensor or ConvertImageDtype), as "
                          "torchvision's do");
  }
  if (labels.dim() != 1 || labels.size(0) != x.size(0) || labels.is_floating_point() || labels.is_complex() ||
      labels.scalar_type() == torch::kBool) {
    throw InvalidArgument("batch mix: labels must be " + std::to_string(x.size(0)) +
                          " class numbers (one integer per image), not a " + c10::toString(labels.scalar_type()) +
                          " tensor of shape " + c10::str(labels.sizes()));
  }
  const auto classes = labels.to(torch::kInt64);
  if (classes.numel() > 0) {
    const int64_t low = classes.min().item<int64_t>();
    const int64_t high = classes.max().item<int64_t>();
    if (low < 0 || high >= mix.num_classes()) {
      const int64_t bad = low < 0 ? low : high;
      const int64_t at = (classes == bad).nonzero()[0][0].item<int64_t>();
      throw InvalidArgument("batch mix: label " + std::to_string(bad) + " (image " + std::to_string(at) +
                            " of the batch) is outside [0, " + std::to_string(mix.num_classes()) +
                            "): num_classes must exceed every label");
    }
  }
  auto target = torch::zeros({x.size(0), mix.num_classes()}, x.options());
  target.scatter_(1, classes.unsqueeze(1).to(x.device()), 1.0);
  if (draw.kind == MixDraw::Kind::kNone) return {x, target};
  const double lambda = draw.lambda;
  // The targets mix by lambda in the images' dtype, as torchvision's one_hot(...).to(batch.dtype) then mul_/add_.
  auto mixed_target = target.mul(lambda).add_(target.roll(1, 0).mul_(1.0 - lambda));
  torch::Tensor images;
  if (draw.kind == MixDraw::Kind::kMixUp) {
    images = x.mul(lambda).add_(x.roll(1, 0).mul_(1.0 - lambda));
  } else {
    const int64_t h = x.size(2), w = x.size(3);
    if (draw.x1 < 0 || draw.y1 < 0 || draw.x2 > w || draw.y2 > h) {
      throw InvalidArgument("batch mix: CutMix's box [" + std::to_string(draw.x1) + ", " + std::to_string(draw.x2) +
                            ") x [" + std::to_string(draw.y1) + ", " + std::to_string(draw.y2) +
                            ") does not fit images of " + std::to_string(w) + " x " + std::to_string(h));
    }
    images = x.clone();
    if (draw.x2 > draw.x1 && draw.y2 > draw.y1) {
      const auto box = [&](const torch::Tensor& t) {
        return t.slice(2, draw.y1, draw.y2).slice(3, draw.x1, draw.x2);
      };
      box(images).copy_(box(x).roll(1, 0));
    }
  }
  return {images, mixed_target};
}

Example mix_batch(const BatchMix& mix, const Example& batch, uint64_t seed) {
  const int64_t h = batch.data.dim() == 4 ? batch.data.size(2) : 0;
  const int64_t w = batch.data.dim() == 4 ? batch.data.size(3) : 0;
  return apply_batch_mix(mix, batch, draw_batch_mix(mix, h, w, seed));
}

}  // namespace feedline
