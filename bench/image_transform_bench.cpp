// ImageTransform on one thread: RandomResizedCrop(224) (and RandomHorizontalFlip, ToTensor) applied to the JPEG
// photos of tests/data/images, with ImageTransformOptions::reduced_decode off (Whole), on (Reduced: the box's window
// alone) and on with reduced_scale_shrink = 1 (Scaled: also the smallest n/8 that leaves the box the output's
// size), in images per second. Each iteration draws the next sample's box (SampleRng of its index), as an epoch
// does. BM_*_Large runs the same on china.jpg enlarged to 2560 x 1708 and encoded again (encode_jpeg, quality 90):
// a camera-sized photo, where the DCT scales drop furthest.
//   build/bench/feedline_image_transform_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "feedline/dataset/image_transforms.h"
#include "feedline/io/file.h"
#include "io/image_encode.h"

namespace feedline {
namespace {

std::string photo(const std::string& file) {
  return read_file(std::string(FEEDLINE_TEST_DATA_DIR) + "/images/" + file);
}

// china.jpg resampled (Pillow's bilinear, through image_ops) to 4 times its size and encoded as a JPEG again.
std::string large_photo() {
  const DecodedImage china = decode_image(photo("china.jpg"), "china.jpg");
  const DecodedImage big = image_ops::resized_crop(china, {0, 0, china.height, china.width}, china.height * 4,
                                                   china.width * 4);
  JpegEncodeOptions options;
  options.quality = 90;
  options.subsampling = JpegSubsampling::k420;
  return encode_jpeg(PixelView{big.pixels.data(), big.width, big.height, 3}, options);
}

void run(benchmark::State& state, const std::vector<EncodedSample>& samples, bool reduced, double shrink = 0) {
  ImageTransformOptions options;
  options.reduced_decode = reduced;
  options.reduced_scale_shrink = shrink;
  const ImageTransform transform(
      {image_steps::RandomResizedCrop{224, 224}, image_steps::RandomHorizontalFlip{}, image_steps::ToTensor{}},
      options);
  torch::Tensor out = torch::empty({3, 224, 224}, torch::kFloat32);
  int64_t index = 0;
  for (auto _ : state) {
    const EncodedSample& sample = samples[static_cast<size_t>(index) % samples.size()];
    SampleRng rng(0, 0, index++);
    transform.apply(sample, rng, out);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  state.SetItemsProcessed(state.iterations());
}

const std::vector<EncodedSample>& photos() {
  static const std::vector<EncodedSample> samples = [] {
    std::vector<EncodedSample> s;
    for (const char* file : {"china.jpg", "chelsea_444_progressive.jpg", "chelsea_gray.jpg", "chelsea_cmyk.jpg"}) {
      s.push_back(EncodedSample{photo(file), 0, file});
    }
    return s;
  }();
  return samples;
}

const std::vector<EncodedSample>& china() {
  static const std::vector<EncodedSample> samples = {EncodedSample{photo("china.jpg"), 0, "china.jpg"}};
  return samples;
}

const std::vector<EncodedSample>& large() {
  static const std::vector<EncodedSample> samples = {EncodedSample{large_photo(), 0, "china_x4.jpg"}};
  return samples;
}

void BM_Photos_Whole(benchmark::State& state) { run(state, photos(), false); }
void BM_Photos_Reduced(benchmark::State& state) { run(state, photos(), true); }
void BM_Photos_Scaled(benchmark::State& state) { run(state, photos(), true, 1.0); }
void BM_China_Whole(benchmark::State& state) { run(state, china(), false); }
void BM_China_Reduced(benchmark::State& state) { run(state, china(), true); }
void BM_China_Scaled(benchmark::State& state) { run(state, china(), true, 1.0); }
void BM_Large_Whole(benchmark::State& state) { run(state, large(), false); }
void BM_Large_Reduced(benchmark::State& state) { run(state, large(), true); }
void BM_Large_Scaled(benchmark::State& state) { run(state, large(), true, 1.0); }
BENCHMARK(BM_Photos_Whole);
BENCHMARK(BM_Photos_Reduced);
BENCHMARK(BM_Photos_Scaled);
BENCHMARK(BM_China_Whole);
BENCHMARK(BM_China_Reduced);
BENCHMARK(BM_China_Scaled);
BENCHMARK(BM_Large_Whole);
BENCHMARK(BM_Large_Reduced);
BENCHMARK(BM_Large_Scaled);

}  // namespace
}  // namespace feedline

BENCHMARK_MAIN();
