// decode_jpeg_region: regions of the JPEG photos of tests/data/images at every scale against the whole decode
// (decode_image), every region of a 4:2:0 JPEG (chroma upsampled at its edges), and inputs refused as decode_image
// refuses them, wherever the region lies.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/image_decode.h"
#include "test_paths.h"

namespace feedline {
namespace {

std::string image_bytes(const std::string& file) {
  return testing::file_bytes(testing::test_data_dir() + "/images/" + file);
}

DecodeOptions with_gray(bool gray) {
  DecodeOptions options;
  options.gray = gray;
  return options;
}

// The pixel at (y, x) of `region`'s image, given in the scaled picture's coordinates.
const uint8_t* pixel_at(const JpegRegion& r, int y, int x) {
  return r.image.pixels.data() +
         (static_cast<size_t>(y - r.region.top) * r.image.width + (x - r.region.left)) * r.image.channels;
}

bool holds(const ImageRegion& outer, const ImageRegion& inner) {
  return outer.top <= inner.top && outer.left <= inner.left && outer.top + outer.height >= inner.top + inner.height &&
         outer.left + outer.width >= inner.left + inner.width;
}

const char* const kJpegs[] = {"china.jpg", "chelsea_gray.jpg", "chelsea_cmyk.jpg", "chelsea_444_progressive.jpg"};

TEST(JpegRegion, ScaledSizesAreLibjpegsRoundingUp) {
  EXPECT_EQ(jpeg_scaled_size(640, 8), 80);
  EXPECT_EQ(jpeg_scaled_size(427, 8), 54);
  EXPECT_EQ(jpeg_scaled_size(427, 2), 214);
  EXPECT_EQ(jpeg_scaled_size(427, 1), 427);
  const JpegRegion r = decode_jpeg_region(image_bytes("china.jpg"), "china.jpg", {}, 4, {0, 0, 107, 160});
  EXPECT_EQ(r.scaled_height, 107);
  EXPECT_EQ(r.scaled_width, 160);
  EXPECT_EQ(r.image.height, 107);
  EXPECT_EQ(r.image.width, 160);
}

TEST(JpegRegion, AtFullScaleARegionIsTheWholeDecodesPixels) {
  for (const char* file : kJpegs) {
    for (bool gray : {false, true}) {
      SCOPED_TRACE(std::string(file) + (gray ? " gray" : " rgb"));
      const std::string bytes = image_bytes(file);
      const DecodedImage whole = decode_image(bytes, file, with_gray(gray));
      // Edges inside blocks and on them (a crop's edge columns take their chroma from the neighbours).
      for (const ImageRegion asked :
           {ImageRegion{13, 37, 50, 61}, ImageRegion{0, 0, whole.height, whole.width},
            ImageRegion{whole.height - 9, whole.width - 17, 9, 17}, ImageRegion{16, 32, 16, 32},
            ImageRegion{7, 15, 9, 17}, ImageRegion{4, 5, 4, 5}, ImageRegion{0, 0, 12, 10}}) {
        const JpegRegion r = decode_jpeg_region(bytes, file, with_gray(gray), 1, asked);
        ASSERT_TRUE(holds(r.region, asked));
        ASSERT_TRUE(holds(asked, r.region));
        ASSERT_EQ(r.image.height, asked.height);
        ASSERT_EQ(r.image.width, asked.width);
        ASSERT_EQ(r.image.channels, whole.channels);
        ASSERT_EQ(r.image.pixels.size(), static_cast<size_t>(r.region.height) * r.region.width * whole.channels);
        int differing = 0;
        for (int y = asked.top; y < asked.top + asked.height; ++y) {
          for (int x = asked.left; x < asked.left + asked.width; ++x) {
            const uint8_t* want = whole.pixels.data() + (static_cast<size_t>(y) * whole.width + x) * whole.channels;
            for (int c = 0; c < whole.channels; ++c) differing += pixel_at(r, y, x)[c] != want[c];
          }
        }
        EXPECT_EQ(differing, 0);
      }
    }
  }
}

TEST(JpegRegion, EveryRegionOfAChromaSubsampledJpegIsTheWholeDecodes) {
  // 16 x 12, 4:2:0 (the photos are 4:4:4 or gray): a crop's edge pixels take chroma from beyond its columns.
  const std::string bytes = image_bytes("../../fuzz/seeds/image/rgb.jpg");
  const DecodedImage whole = decode_image(bytes, "rgb.jpg");
  ASSERT_EQ(whole.width, 16);
  ASSERT_EQ(whole.height, 12);
  int regions = 0, differing = 0;
  for (int top : {0, 1, 4, 7}) {
    for (int height : {1, 2, 5}) {
      for (int left = 0; left < whole.width; ++left) {
        for (int width = 1; left + width <= whole.width; ++width) {
          const ImageRegion asked{top, left, height, width};
          const JpegRegion r = decode_jpeg_region(bytes, "rgb.jpg", {}, 1, asked);
          ++regions;
          for (int y = top; y < top + height; ++y) {
            for (int x = left; x < left + width; ++x) {
              const uint8_t* want = whole.pixels.data() + (static_cast<size_t>(y) * whole.width + x) * 3;
              for (int c = 0; c < 3; ++c) differing += pixel_at(r, y, x)[c] != want[c];
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(regions, 4 * 3 * 136);
  EXPECT_EQ(differing, 0);
}

TEST(JpegRegion, ScaledDecodesAverageBlocksOfTheWholeDecode) {
  for (const char* file : kJpegs) {
    const std::string bytes = image_bytes(file);
    const DecodedImage whole = decode_image(bytes, file);
    for (int denom : {2, 4, 8}) {
      SCOPED_TRACE(std::string(file) + " at 1/" + std::to_string(denom));
      const int h = jpeg_scaled_size(whole.height, denom), w = jpeg_scaled_size(whole.width, denom);
      const JpegRegion full = decode_jpeg_region(bytes, file, {}, denom, {0, 0, h, w});
      ASSERT_EQ(full.image.height, h);
      ASSERT_EQ(full.image.width, w);
      // Against the mean of each denom x denom block of the whole decode (whole blocks only).
      double total = 0;
      size_t count = 0;
      for (int y = 0; y < whole.height / denom; ++y) {
        for (int x = 0; x < whole.width / denom; ++x) {
          for (int c = 0; c < 3; ++c) {
            int sum = 0;
            for (int dy = 0; dy < denom; ++dy) {
              for (int dx = 0; dx < denom; ++dx) {
                sum += whole.pixels[(static_cast<size_t>(y * denom + dy) * whole.width + x * denom + dx) * 3 + c];
              }
            }
            total += std::abs(sum / double(denom * denom) - pixel_at(full, y, x)[c]);
            ++count;
          }
        }
      }
      EXPECT_LT(total / count, 1.0);  // about 0.25-0.47 on these photos
      // A region of the scaled picture is that picture's pixels.
      const ImageRegion asked{h / 3, w / 3 + 1, h / 3, w / 3};
      const JpegRegion part = decode_jpeg_region(bytes, file, {}, denom, asked);
      ASSERT_TRUE(holds(part.region, asked));
      int differing = 0;
      for (int y = asked.top; y < asked.top + asked.height; ++y) {
        for (int x = asked.left; x < asked.left + asked.width; ++x) {
          for (int c = 0; c < 3; ++c) differing += pixel_at(part, y, x)[c] != pixel_at(full, y, x)[c];
        }
      }
      EXPECT_EQ(differing, 0);
    }
  }
}

TEST(JpegRegion, AtEveryNOver8ARegionIsTheScaledPicturesPixels) {
  EXPECT_EQ(jpeg_scaled_size(427, 7, 8), 374);  // 373.625 rounded up
  EXPECT_EQ(jpeg_scaled_size(640, 3, 8), 240);
  EXPECT_EQ(jpeg_scaled_size(427, 2, 8), jpeg_scaled_size(427, 4));
  for (const char* file : kJpegs) {
    const std::string bytes = image_bytes(file);
    const DecodedImage whole = decode_image(bytes, file);
    for (int n = 1; n <= 8; ++n) {
      for (bool gray : {false, true}) {
        SCOPED_TRACE(std::string(file) + " at " + std::to_string(n) + "/8" + (gray ? " gray" : ""));
        const int h = jpeg_scaled_size(whole.height, n, 8), w = jpeg_scaled_size(whole.width, n, 8);
        const JpegRegion full = decode_jpeg_region(bytes, file, with_gray(gray), n, 8, {0, 0, h, w});
        ASSERT_EQ(full.image.height, h);
        ASSERT_EQ(full.image.width, w);
        ASSERT_EQ(full.scaled_height, h);
        if (n == 8) EXPECT_EQ(full.image.pixels, decode_image(bytes, file, with_gray(gray)).pixels);
        const int c = full.image.channels;
        for (const ImageRegion asked : {ImageRegion{h / 3, w / 3 + 1, h / 3, w / 3}, ImageRegion{0, 0, 5, 7},
                                        ImageRegion{h - 9, w - 13, 9, 13}, ImageRegion{1, 11, h - 2, 1}}) {
          const JpegRegion part = decode_jpeg_region(bytes, file, with_gray(gray), n, 8, asked);
          ASSERT_TRUE(holds(part.region, asked));
          int differing = 0;
          for (int y = asked.top; y < asked.top + asked.height; ++y) {
            for (int x = asked.left; x < asked.left + asked.width; ++x) {
              for (int k = 0; k < c; ++k) differing += pixel_at(part, y, x)[k] != pixel_at(full, y, x)[k];
            }
          }
          EXPECT_EQ(differing, 0) << "region at " << asked.top << ", " << asked.left;
        }
      }
    }
  }
}

// decode_jpeg_region of `bytes` throws E with a message holding each of `parts`.
template <class E>
void expect_refused(const std::string& bytes, int denom, const ImageRegion& region,
                    const std::vector<std::string>& parts) {
  try {
    decode_jpeg_region(bytes, "sample.jpg", {}, denom, region);
    ADD_FAILURE() << "decoded";
  } catch (const E& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << "'" << part << "' not in: " << e.what();
    }
  }
}

TEST(JpegRegion, CorruptDataAnywhereIsRefusedAsTheWholeDecodeRefusesIt) {
  const std::string china = image_bytes("china.jpg");
  // Cut after the region's rows: the rest is still read.
  expect_refused<InvalidFile>(china.substr(0, china.size() * 9 / 10), 1, {0, 0, 16, 16},
                              {"sample.jpg: corrupt or truncated JPEG data", "Premature end of JPEG file"});
  expect_refused<InvalidFile>(china.substr(0, china.size() - 2), 8, {0, 0, 2, 2},
                              {"sample.jpg: corrupt or truncated JPEG data"});
  expect_refused<InvalidFile>(image_bytes("china_truncated.jpg"), 2, {200, 300, 10, 10},
                              {"sample.jpg: corrupt or truncated JPEG data"});
  expect_refused<InvalidFile>(image_bytes("truncated.jpg"), 1, {0, 0, 1, 1},
                              {"sample.jpg: corrupt or truncated JPEG data"});
  // Flipped bits in the entropy data past the region.
  std::string flipped = china;
  for (size_t i = flipped.size() * 3 / 4; i < flipped.size() * 3 / 4 + 64; ++i) flipped[i] = '\xff';
  expect_refused<InvalidFile>(flipped, 4, {0, 0, 8, 8}, {"sample.jpg: corrupt or truncated JPEG data"});
  expect_refused<InvalidFile>("", 1, {0, 0, 1, 1}, {"sample.jpg: empty image data"});
  expect_refused<InvalidFile>(image_bytes("huge_header.jpg"), 8, {0, 0, 1, 1},
                              {"sample.jpg: the JPEG header declares 65000 x 65000"});
}

TEST(JpegRegion, RegionsScalesAndFormatsOutsideTheContractAreInvalidArguments) {
  const std::string china = image_bytes("china.jpg");
  expect_refused<InvalidArgument>(china, 8, {50, 0, 5, 5}, {"sample.jpg: the region (top 50, left 0, height 5",
                                                            "picture's 54 x 80 pixels at 1/8"});
  expect_refused<InvalidArgument>(china, 1, {0, 0, 0, 5}, {"sample.jpg: the region"});
  expect_refused<InvalidArgument>(china, 1, {-1, 0, 5, 5}, {"sample.jpg: the region"});
  expect_refused<InvalidArgument>(china, 3, {0, 0, 5, 5}, {"not at 1/3"});
  for (const auto& [num, denom] : {std::pair{9, 8}, std::pair{0, 8}, std::pair{3, 16}, std::pair{5, 6}}) {
    try {
      decode_jpeg_region(china, "sample.jpg", {}, num, denom, {0, 0, 5, 5});
      ADD_FAILURE() << num << "/" << denom << " decoded";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("n/8 of the size for an n of 1 to 8"), std::string::npos) << e.what();
    }
  }
  expect_refused<InvalidArgument>(image_bytes("chelsea.png"), 1, {0, 0, 5, 5}, {"JPEG data, not PNG"});
}

}  // namespace
}  // namespace feedline
