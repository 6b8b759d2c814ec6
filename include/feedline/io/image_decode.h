// Decoding compressed colour images (JPEG, PNG, WebP) held in memory, one sample at a time, into 8-bit RGB or
// gray pixels in height x width x channels order. The output follows Pillow's Image.open(f).convert("RGB") (and
// convert("L")), which torchvision's default loader gives, so that a model trained on either sees the same pixels.
// Every function is pure (a TurboJPEG handle per thread): safe to call from many threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace feedline {

enum class ImageFormat { kJpeg, kPng, kWebp };

// "JPEG", "PNG" or "WebP".
const char* image_format_name(ImageFormat format);

// The format the bytes' magic number says, whatever the file's name; nullopt for anything else.
std::optional<ImageFormat> sniff_image_format(std::string_view bytes);

struct ImageInfo {
  ImageFormat format = ImageFormat::kJpeg;
  int width = 0, height = 0;
  // As stored: 1 gray, 2 gray and alpha, 3 colour (palette, RGB, YCbCr), 4 colour and alpha, or CMYK/YCCK.
  int channels = 0;
  // Bits of a sample as stored: a PNG's 1, 2, 4, 8 or 16 (a palette's index bits); 8 for JPEG and WebP.
  int bit_depth = 8;
};

// Reads the header alone. Throws InvalidFile naming `name` (the sample, for messages) when the bytes are empty,
// not one of the three formats or the header is corrupt; Unsupported for an animated WebP.
ImageInfo probe_image(std::string_view bytes, const std::string& name);

// Pillow's Image.MAX_IMAGE_PIXELS: the size past which Pillow, too, suspects a decompression bomb.
constexpr int64_t kDefaultMaxImagePixels = 89478485;

struct DecodeOptions {
  // One channel of ITU-R 601-2 luma (Pillow's convert("L")) in place of RGB.
  bool gray = false;
  // A header that declares more pixels (width * height) is refused before any pixel is allocated.
  int64_t max_pixels = kDefaultMaxImagePixels;
};

struct DecodedImage {
  int width = 0, height = 0, channels = 0;  // channels: 3, or 1 with DecodeOptions::gray
  std::vector<uint8_t> pixels;              // height * width * channels, row-major, channels last
};

// Decodes a whole image: gray is replicated to RGB, a palette expanded, alpha dropped (not composited), CMYK and
// YCCK JPEGs converted as Pillow does (Adobe polarity), 16-bit samples cut to their high byte. Throws InvalidFile
// naming `name` for empty, unknown, truncated or corrupt data and for more than options.max_pixels pixels (before
// allocating them); Unsupported for what is valid but not decoded here (an animated WebP).
DecodedImage decode_image(std::string_view bytes, const std::string& name, const DecodeOptions& options = {});

// decode_image into the caller's buffer, which must hold exactly width * height * channels bytes (probe_image
// says the size; channels as DecodeOptions asks): InvalidArgument otherwise. The same errors as decode_image.
void decode_image_into(std::string_view bytes, const std::string& name, const DecodeOptions& options, uint8_t* out,
                       size_t out_size);

// --- Reduced decoding: a JPEG at n/8 of its size (libjpeg-turbo's scaled IDCT, n = 1..8; at 1/2, 1/4 and 1/8 it
// averages each block's pixels) and only a region of the picture (the columns of whole DCT blocks that hold it,
// exact rows); a WebP window cropped and scaled by libwebp.

// A rectangle of a picture: rows [top, top + height), columns [left, left + width).
struct ImageRegion {
  int top = 0, left = 0, height = 0, width = 0;
};

// The size that a side of `size` pixels has decoded at 1/scale_denom: libjpeg's ceil(size / scale_denom).
int jpeg_scaled_size(int size, int scale_denom);
// The size that a side of `size` pixels has decoded at scale_num/scale_denom: ceil(size * scale_num / scale_denom).
int jpeg_scaled_size(int size, int scale_num, int scale_denom);

// A region of a JPEG as decode_jpeg_region gives it.
struct JpegRegion {
  DecodedImage image;                       // the region's pixels (channels as DecodeOptions asks)
  ImageRegion region;                       // where they lie in the scaled picture: the region asked for
  int scaled_height = 0, scaled_width = 0;  // the scaled picture's size
};

// Decodes `region` (in the coordinates of the picture scaled to scale_num/scale_denom, a scale equal to n/8 for an
// n of 1..8: 1/8, 3/8, 1/2, 7/8, 1/1...) of a JPEG: of the columns only the DCT blocks that hold the region and
// its neighbours (whose chroma its edge pixels are upsampled from), of the rows those up to the region's last.
// Colours, gray and CMYK as decode_image converts them; at 1/1 the pixels are decode_image's. The rows after the
// region are still read (their entropy data, not their pixels), so that corrupt or truncated data anywhere is
// refused as decode_image refuses it: InvalidFile naming `name`, and for more than options.max_pixels pixels in
// the header. InvalidArgument for a region that is empty or not inside the scaled picture, another scale, or bytes
// of another format.
JpegRegion decode_jpeg_region(std::string_view bytes, const std::string& name, const DecodeOptions& options,
                              int scale_num, int scale_denom, const ImageRegion& region);
// The same at 1/scale_denom (1, 2, 4 or 8).
JpegRegion decode_jpeg_region(std::string_view bytes, const std::string& name, const DecodeOptions& options,
                              int scale_denom, const ImageRegion& region);

// Decodes `window` of a WebP (in the picture's own coordinates) resampled by libwebp to height x width pixels
// (its rescaler, an area average; the window's own size: no resampling, the window's pixels as decode_image gives
// them). Colours and gray as decode_image converts them. libwebp decodes the rows only down to the window's last:
// the data of those below is not read, so damage there goes unnoticed, but a file cut short is still refused (its
// RIFF header declares more bytes than it holds). InvalidFile naming `name` for corrupt or truncated data read and
// for more than options.max_pixels pixels in the header; Unsupported for an animated WebP; InvalidArgument for a
// window that is empty or not inside the picture, an enlargement, a resampled lossy window at odd coordinates, or
// bytes of another format.
DecodedImage decode_webp_window(std::string_view bytes, const std::string& name, const DecodeOptions& options,
                                const ImageRegion& window, int height, int width);

}  // namespace feedline
