#include "dataset/image.h"

#include <algorithm>
#include <string>

#include "feedline/io/error.h"
#include "feedline/io/image_decode.h"
#include "io/image_encode.h"

namespace feedline {
namespace {

// What io's codec calls the bytes in its messages; the caller names the column and row.
constexpr const char* kName = "PNG image";

// ImageInfo::channels of a PNG, in words.
constexpr const char* kSampleKinds[] = {"gray", "gray and alpha", "colour", "colour and alpha"};

}  // namespace

bool is_png(std::string_view bytes) { return sniff_image_format(bytes) == ImageFormat::kPng; }

void decode_png_gray8(std::string_view png, int64_t height, int64_t width, uint8_t* out) {
  if (!is_png(png)) throw InvalidArgument("not a PNG image (no PNG signature)");
  // The header is checked against the expected size and kind before anything is decoded.
  ImageInfo info;
  try {
    info = probe_image(png, kName);
  } catch (const InvalidFile& e) {
    throw InvalidArgument(e.what());
  }
  if (info.width != width || info.height != height) {
    throw InvalidArgument("PNG of " + std::to_string(info.width) + "x" + std::to_string(info.height) +
                          " pixels, expected " + std::to_string(width) + "x" + std::to_string(height));
  }
  if (info.channels != 1 || info.bit_depth != 8) {
    throw InvalidArgument(std::string("PNG of ") + kSampleKinds[std::clamp(info.channels, 1, 4) - 1] +
                          " samples of " + std::to_string(info.bit_depth) + " bits, expected 8-bit grayscale");
  }
  DecodeOptions gray;
  gray.gray = true;
  gray.max_pixels = height * width;  // the size asked for, whatever it is
  try {
    decode_image_into(png, kName, gray, out, static_cast<size_t>(height * width));
  } catch (const InvalidFile& e) {
    throw InvalidArgument(e.what());
  }
}

std::string encode_png_gray8(const uint8_t* pixels, int64_t height, int64_t width) {
  if (height < 1 || width < 1 || height > 1 << 24 || width > 1 << 24) {
    throw InvalidArgument("PNG of " + std::to_string(width) + "x" + std::to_string(height) + " pixels");
  }
  try {
    return encode_png(PixelView{pixels, static_cast<int>(width), static_cast<int>(height), 1});
  } catch (const InvalidFile& e) {
    throw InvalidArgument(e.what());
  }
}

}  // namespace feedline
