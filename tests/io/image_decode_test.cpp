// The image decoders against Pillow (the values torchvision's default loader gives) on the photos and derived
// files of tests/data/images, and every way an input can be refused.
#include "feedline/io/image_decode.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "feedline/io/error.h"
#include "io/image_encode.h"
#include "test_paths.h"

namespace feedline {
namespace {

std::string images_dir() { return feedline::testing::test_data_dir() + "/images"; }

std::string image_bytes(const std::string& file) { return testing::file_bytes(images_dir() + "/" + file); }

bool have_pillow() { return std::system("/usr/bin/python3 -W ignore -c 'import PIL' >/dev/null 2>&1") == 0; }

// Pillow's Image.open(file).convert(mode).tobytes(), written by /usr/bin/python3 to a scratch file.
std::string pillow_pixels(const std::string& file, const char* mode) {
  static const std::string dir = feedline::testing::scratch_dir("image_decode_pillow");
  const std::string out = dir + "/" + file + "." + mode + ".raw";
  const std::string command =
      "/usr/bin/python3 -W ignore -c 'import sys; from PIL import Image; "
      "open(sys.argv[2], \"wb\").write(Image.open(sys.argv[1]).convert(sys.argv[3]).tobytes())' '" +
      images_dir() + "/" + file + "' '" + out + "' " + mode;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return testing::file_bytes(out);
}

double mean_abs_difference(const std::vector<uint8_t>& ours, const std::string& pillow) {
  double total = 0;
  for (size_t i = 0; i < ours.size(); ++i) total += std::abs(int(ours[i]) - int(uint8_t(pillow[i])));
  return ours.empty() ? 0 : total / static_cast<double>(ours.size());
}

struct Case {
  const char* file;
  ImageFormat format;
  int width, height, stored_channels;
  double max_mean_difference;  // 0: identical to Pillow's bytes
};

// Pillow's libjpeg and TurboJPEG may differ in IDCT and upsampling; PNG and WebP decode with the same libraries'
// arithmetic, so they must agree exactly.
const Case kCases[] = {
    {"china.jpg", ImageFormat::kJpeg, 640, 427, 3, 1.0},
    {"chelsea_gray.jpg", ImageFormat::kJpeg, 225, 150, 1, 1.0},
    {"chelsea_cmyk.jpg", ImageFormat::kJpeg, 225, 150, 4, 1.0},
    {"chelsea_444_progressive.jpg", ImageFormat::kJpeg, 225, 150, 3, 1.0},
    {"chelsea.png", ImageFormat::kPng, 451, 300, 3, 0},
    {"chelsea_rgba.png", ImageFormat::kPng, 225, 150, 4, 0},
    {"chelsea_la.png", ImageFormat::kPng, 225, 150, 2, 0},
    {"chelsea_1bit.png", ImageFormat::kPng, 225, 150, 1, 0},
    {"chelsea_palette_trns.png", ImageFormat::kPng, 225, 150, 3, 0},
    {"chelsea_rgb16.png", ImageFormat::kPng, 64, 48, 3, 0},
    {"green_palette.png", ImageFormat::kPng, 320, 240, 3, 0},
    {"foo3x5x4indexed.png", ImageFormat::kPng, 5, 3, 3, 0},
    {"png_named.jpg", ImageFormat::kPng, 64, 48, 3, 0},
    {"chelsea_lossy.webp", ImageFormat::kWebp, 225, 150, 3, 0},
    {"chelsea_lossless.webp", ImageFormat::kWebp, 225, 150, 3, 0},
    {"chelsea_alpha.webp", ImageFormat::kWebp, 225, 150, 4, 0},
};

TEST(ImageDecode, ProbeReadsTheHeaderAndTellsFormatsByTheirBytes) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.file);
    const ImageInfo info = probe_image(image_bytes(c.file), c.file);
    EXPECT_EQ(info.format, c.format);
    EXPECT_EQ(info.width, c.width);
    EXPECT_EQ(info.height, c.height);
    EXPECT_EQ(info.channels, c.stored_channels);
  }
  EXPECT_EQ(sniff_image_format(image_bytes("png_named.jpg")), ImageFormat::kPng);
  EXPECT_EQ(sniff_image_format("RIFF\x10\0\0\0WAVE"), std::nullopt);
  EXPECT_EQ(sniff_image_format("\xff\xd8"), std::nullopt);
  EXPECT_EQ(sniff_image_format(""), std::nullopt);
}

TEST(ImageDecode, RgbAndGrayAreWhatPillowsConvertGives) {
  if (!have_pillow()) GTEST_SKIP() << "/usr/bin/python3 cannot import PIL (Debian: python3-pil), the tests' oracle";
  for (const Case& c : kCases) {
    for (const bool gray : {false, true}) {
      SCOPED_TRACE(std::string(c.file) + (gray ? " as L" : " as RGB"));
      DecodeOptions options;
      options.gray = gray;
      const DecodedImage image = decode_image(image_bytes(c.file), c.file, options);
      EXPECT_EQ(image.width, c.width);
      EXPECT_EQ(image.height, c.height);
      ASSERT_EQ(image.channels, gray ? 1 : 3);
      const std::string pillow = pillow_pixels(c.file, gray ? "L" : "RGB");
      ASSERT_EQ(image.pixels.size(), pillow.size());
      const double difference = mean_abs_difference(image.pixels, pillow);
      if (c.max_mean_difference == 0) {
        EXPECT_EQ(difference, 0.0);
      } else {
        EXPECT_LT(difference, c.max_mean_difference);
      }
    }
  }
}

TEST(ImageDecode, SixteenBitSamplesKeepTheirHighByte) {
  // make_derived.py wrote chelsea_rgb16.png's samples as v * 256 + a varying low byte: the v are a downscaled
  // chelsea, whose first pixel the 8-bit PNG beside it (png_named.jpg, the same pixels) holds.
  const DecodedImage wide = decode_image(image_bytes("chelsea_rgb16.png"), "chelsea_rgb16.png");
  const DecodedImage narrow = decode_image(image_bytes("png_named.jpg"), "png_named.jpg");
  EXPECT_EQ(wide.pixels, narrow.pixels);
}

TEST(ImageDecode, SixteenBitGrayKeepsItsHighByteWherePillowClips) {
  // Pillow opens 16-bit gray as mode I and its convert("L") clips to 255 (1000 -> 255); the high byte keeps the
  // image's shape, as for 16-bit colour.
  const DecodedImage rgb = decode_image(image_bytes("gray16.png"), "gray16.png");
  EXPECT_EQ(rgb.pixels, (std::vector<uint8_t>{3, 3, 3, 1, 1, 1, 255, 255, 255, 0, 0, 0}));
  DecodeOptions gray;
  gray.gray = true;
  EXPECT_EQ(decode_image(image_bytes("gray16.png"), "gray16.png", gray).pixels, (std::vector<uint8_t>{3, 1, 255, 0}));
}

TEST(ImageDecode, ProbeTellsTheBitsOfASample) {
  EXPECT_EQ(probe_image(image_bytes("chelsea_1bit.png"), "chelsea_1bit.png").bit_depth, 1);
  EXPECT_EQ(probe_image(image_bytes("chelsea.png"), "chelsea.png").bit_depth, 8);
  EXPECT_EQ(probe_image(image_bytes("green_palette.png"), "green_palette.png").bit_depth, 8);
  EXPECT_EQ(probe_image(image_bytes("gray16.png"), "gray16.png").bit_depth, 16);
  EXPECT_EQ(probe_image(image_bytes("chelsea_rgb16.png"), "chelsea_rgb16.png").bit_depth, 16);
  EXPECT_EQ(probe_image(image_bytes("china.jpg"), "china.jpg").bit_depth, 8);
  EXPECT_EQ(probe_image(image_bytes("chelsea_lossy.webp"), "chelsea_lossy.webp").bit_depth, 8);
}

TEST(ImageDecode, AnEightBitGrayPngIsItsSamplesAsLAndThemRepeatedAsRgb) {
  // Pillow's convert("L") of an L image is the image itself: its samples are the oracle.
  const int width = 29, height = 17;
  std::vector<uint8_t> samples(static_cast<size_t>(width * height));
  for (size_t i = 0; i < samples.size(); ++i) samples[i] = static_cast<uint8_t>(i * 37 + i / 29);
  const std::string png = encode_png({samples.data(), width, height, 1});
  const ImageInfo info = probe_image(png, "gray.png");
  EXPECT_EQ(info.channels, 1);
  EXPECT_EQ(info.bit_depth, 8);
  DecodeOptions gray;
  gray.gray = true;
  EXPECT_EQ(decode_image(png, "gray.png", gray).pixels, samples);
  const DecodedImage rgb = decode_image(png, "gray.png");
  ASSERT_EQ(rgb.pixels.size(), samples.size() * 3);
  for (size_t i = 0; i < samples.size(); ++i) {
    ASSERT_EQ(rgb.pixels[i * 3], samples[i]) << i;
    ASSERT_EQ(rgb.pixels[i * 3 + 1], samples[i]) << i;
    ASSERT_EQ(rgb.pixels[i * 3 + 2], samples[i]) << i;
  }
  // Cut short, the gray path refuses it as the RGB one does.
  const std::string cut = png.substr(0, png.size() / 2);
  EXPECT_THROW(decode_image(cut, "cut.png", gray), InvalidFile);
  EXPECT_THROW(decode_image(cut, "cut.png"), InvalidFile);
}

TEST(ImageDecode, IntoACallersBufferOfTheRightSize) {
  const std::string bytes = image_bytes("chelsea_lossless.webp");
  const DecodedImage whole = decode_image(bytes, "a.webp");
  std::vector<uint8_t> buffer(whole.pixels.size(), 7);
  decode_image_into(bytes, "a.webp", {}, buffer.data(), buffer.size());
  EXPECT_EQ(buffer, whole.pixels);
  DecodeOptions gray;
  gray.gray = true;
  std::vector<uint8_t> gray_buffer(225 * 150);
  decode_image_into(bytes, "a.webp", gray, gray_buffer.data(), gray_buffer.size());
  EXPECT_EQ(gray_buffer, decode_image(bytes, "a.webp", gray).pixels);
  try {
    decode_image_into(bytes, "a.webp", gray, buffer.data(), buffer.size());
    FAIL() << "a buffer of the RGB size was taken for a gray image";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("a.webp: a 225 x 150 x 1 image needs a buffer of 33750 bytes, not 101250"),
              std::string::npos)
        << e.what();
  }
}

TEST(ImageDecode, ManyThreadsAtOnceDecodeWhatOneDoes) {
  const char* files[] = {"china.jpg", "chelsea_cmyk.jpg", "chelsea_rgba.png", "chelsea_lossy.webp"};
  std::vector<std::vector<uint8_t>> want;
  for (const char* file : files) want.push_back(decode_image(image_bytes(file), file).pixels);
  std::vector<std::string> bytes;
  for (const char* file : files) bytes.push_back(image_bytes(file));
  std::vector<int> mismatches(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (size_t f = 0; f < bytes.size(); ++f) {
          if (decode_image(bytes[f], files[f]).pixels != want[f]) ++mismatches[t];
          try {
            decode_image(bytes[0].substr(0, bytes[0].size() / 2), "half.jpg");  // errors interleave with work
            ++mismatches[t];
          } catch (const InvalidFile&) {
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

// Decoding `file` throws E with a message holding each of `parts`.
template <class E>
void expect_refused(const std::string& file, const std::vector<std::string>& parts, DecodeOptions options = {}) {
  SCOPED_TRACE(file);
  try {
    decode_image(image_bytes(file), file, options);
    ADD_FAILURE() << file << " decoded";
  } catch (const E& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << "'" << part << "' not in: " << e.what();
    }
  }
}

TEST(ImageDecode, BrokenInputsAreRefusedWithTheSamplesNameAndTheProblem) {
  expect_refused<InvalidFile>("empty.jpg", {"empty.jpg: empty image data"});
  expect_refused<InvalidFile>("not_an_image.jpg",
                              {"not_an_image.jpg: not a JPEG, PNG or WebP image", "starting 6c 61 62 65"});
  // A premature end is a libjpeg warning: refused, not grey pixels.
  expect_refused<InvalidFile>("china_truncated.jpg", {"china_truncated.jpg: corrupt or truncated JPEG data",
                                                      "Premature end of JPEG file"});
  expect_refused<InvalidFile>("truncated.jpg", {"truncated.jpg: corrupt or truncated JPEG data"});
  expect_refused<InvalidFile>("chelsea_rgba_truncated.png", {"chelsea_rgba_truncated.png: corrupt or truncated PNG"});
  expect_refused<InvalidFile>("chelsea_lossy_truncated.webp",
                              {"chelsea_lossy_truncated.webp: corrupt or truncated WebP data"});
  // The same through the probe and into a buffer.
  EXPECT_THROW(probe_image("", "x"), InvalidFile);
  std::vector<uint8_t> buffer(640 * 427 * 3);
  EXPECT_THROW(decode_image_into(image_bytes("china_truncated.jpg"), "x", {}, buffer.data(), buffer.size()),
               InvalidFile);
}

TEST(ImageDecode, HeadersDeclaringTooManyPixelsAreRefusedBeforeAllocating) {
  // 100000 x 100000 x 3 bytes would be 30 GB: the refusal must come from the header alone, and ASan's allocator
  // would fail the test on an attempt of that size.
  expect_refused<InvalidFile>("huge_header.png",
                              {"huge_header.png: the PNG header declares 100000 x 100000 = 10000000000 pixels",
                               "more than the limit of 89478485 (DecodeOptions::max_pixels)"});
  expect_refused<InvalidFile>("huge_header.jpg", {"huge_header.jpg: the JPEG header declares 65000 x 65000"});
  const ImageInfo info = probe_image(image_bytes("huge_header.png"), "huge_header.png");
  EXPECT_EQ(info.width, 100000);
  EXPECT_EQ(info.height, 100000);
  DecodeOptions small;
  small.max_pixels = 320 * 240 - 1;
  expect_refused<InvalidFile>("green_palette.png", {"320 x 240 = 76800 pixels, more than the limit of 76799"}, small);
  small.max_pixels = 320 * 240;
  EXPECT_EQ(decode_image(image_bytes("green_palette.png"), "green_palette.png", small).pixels.size(), 320u * 240 * 3);
}

TEST(ImageDecode, AnimatedWebPIsUnsupported) {
  // A minimal animated WebP container: RIFF, VP8X with the animation flag, ANIM; no frame is needed to tell.
  std::string vp8x("VP8X\x0a\0\0\0\x02\0\0\0\0\0\0\0\0\0", 18);
  std::string anim("ANIM\x06\0\0\0\0\0\0\0\0\0", 14);
  const std::string body = "WEBP" + vp8x + anim;
  std::string riff = "RIFF";
  for (int i = 0; i < 4; ++i) riff += static_cast<char>((body.size() >> (8 * i)) & 0xff);
  try {
    decode_image(riff + body, "anim.webp");
    FAIL() << "an animated WebP decoded";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("anim.webp: animated WebP"), std::string::npos) << e.what();
  } catch (const InvalidFile& e) {
    FAIL() << e.what();
  }
}

}  // namespace
}  // namespace feedline
