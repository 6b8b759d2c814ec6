// Encoding 8-bit gray or colour pixels (height x width x channels, row-major, channels last: what decode_image
// gives) as PNG files with libspng and JPEG files with TurboJPEG, in memory. `feedline prepare --images` writes the
// experiment's datasets as image files with these. Every function is pure (a TurboJPEG handle per call): safe to
// call from many threads at once.
#pragma once

#include <cstdint>
#include <string>

namespace feedline {

// Pixels to encode: width * height * channels bytes at `pixels`, channels 1 (gray), 3 (RGB) or 4 (RGBA, PNG only).
struct PixelView {
  const uint8_t* pixels = nullptr;
  int width = 0, height = 0, channels = 0;
};

// A PNG file: 8-bit gray, RGB or RGBA as the channels say, zlib's default compression, adaptive filtering (what
// libspng chooses). InvalidArgument for an empty size or a channel count other than 1, 3 or 4; InvalidFile with
// libspng's message when it fails.
std::string encode_png(const PixelView& image);

// Chroma subsampling of a colour JPEG (gray JPEGs have one component and none).
enum class JpegSubsampling { k444, k422, k420 };

struct JpegEncodeOptions {
  int quality = 90;                                     // 1..100
  JpegSubsampling subsampling = JpegSubsampling::k420;  // Pillow's default for colour
};

// A baseline JPEG file (JFIF): a gray image as one component, a colour one as YCbCr subsampled as options say.
// InvalidArgument for an empty size, a channel count other than 1 or 3, or a quality outside 1..100; InvalidFile
// with TurboJPEG's message when it fails.
std::string encode_jpeg(const PixelView& image, const JpegEncodeOptions& options = {});

}  // namespace feedline
