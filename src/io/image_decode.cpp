#include "feedline/io/image_decode.h"

#include <spng.h>
#include <turbojpeg.h>
#include <webp/decode.h>

#include <cstring>
#include <memory>

#include "feedline/io/error.h"

namespace feedline {
namespace {

constexpr unsigned char kPngMagic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

const unsigned char* ubytes(std::string_view bytes) { return reinterpret_cast<const unsigned char*>(bytes.data()); }

[[noreturn]] void corrupt(const std::string& name, ImageFormat format, const std::string& why) {
  throw InvalidFile(name + ": corrupt or truncated " + image_format_name(format) + " data: " + why);
}

// Pillow's convert("L") from RGB: ITU-R 601-2 luma in 16-bit fixed point, rounded (Convert.c's L24).
inline uint8_t luma(uint8_t r, uint8_t g, uint8_t b) {
  return static_cast<uint8_t>((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
}

// Pillow reads every CMYK JPEG with Adobe polarity (stored values inverted, "CMYK;I"), then converts CMYK to RGB
// as nk - c * nk / 255 with nk = 255 - k, rounded as its MULDIV255 does. In stored values s (c = 255 - s_c,
// nk = s_k) that is s_k - (255 - s_c) * s_k / 255.
inline uint8_t cmyk_channel(uint8_t stored_c, uint8_t stored_k) {
  const unsigned tmp = (255u - stored_c) * stored_k + 128u;
  return static_cast<uint8_t>(stored_k - (((tmp >> 8) + tmp) >> 8));
}

// `pixels` pixels of `in_channels` (3 RGB or 4 stored CMYK) to `gray` ? L : RGB.
void convert_pixels(const uint8_t* in, int in_channels, size_t pixels, bool gray, uint8_t* out) {
  for (size_t i = 0; i < pixels; ++i, in += in_channels) {
    uint8_t r = in[0], g = in[1], b = in[2];
    if (in_channels == 4) {
      r = cmyk_channel(in[0], in[3]), g = cmyk_channel(in[1], in[3]), b = cmyk_channel(in[2], in[3]);
    }
    if (gray) {
      *out++ = luma(r, g, b);
    } else {
      out[0] = r, out[1] = g, out[2] = b;
      out += 3;
    }
  }
}

// Decodes RGB with `decode_rgb(buffer)`, straight into `out`, or for gray through a scratch buffer turned into luma.
template <class DecodeRgb>
void rgb_or_gray(size_t pixels, bool gray, uint8_t* out, DecodeRgb decode_rgb) {
  if (!gray) return decode_rgb(out);
  std::vector<uint8_t> rgb(pixels * 3);
  decode_rgb(rgb.data());
  convert_pixels(rgb.data(), 3, pixels, true, out);
}

// --- JPEG (TurboJPEG). A handle per call: its error state is then the call's own, whatever thread runs it.

struct TjFree {
  void operator()(void* handle) const { tjDestroy(handle); }
};
using TjHandle = std::unique_ptr<void, TjFree>;

TjHandle tj_decompressor() {
  TjHandle handle(tjInitDecompress());
  if (!handle) throw Error(std::string("TurboJPEG cannot start a decompressor: ") + tjGetErrorStr2(nullptr));
  return handle;
}

struct JpegHeader {
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
};

JpegHeader jpeg_header(tjhandle tj, std::string_view bytes, const std::string& name) {
  JpegHeader h;
  if (tjDecompressHeader3(tj, ubytes(bytes), bytes.size(), &h.width, &h.height, &h.subsamp, &h.colorspace) != 0) {
    corrupt(name, ImageFormat::kJpeg, tjGetErrorStr2(tj));
  }
  return h;
}

int jpeg_channels(int colorspace) {
  if (colorspace == TJCS_GRAY) return 1;
  return colorspace == TJCS_CMYK || colorspace == TJCS_YCCK ? 4 : 3;
}

void decode_jpeg(std::string_view bytes, const std::string& name, tjhandle tj, const ImageInfo& info, bool gray,
                 uint8_t* out) {
  // Any warning stops the decoder: a truncated or corrupt stream would otherwise come back as grey blocks.
  // LIMITSCANS refuses progressive files of absurdly many scans, each a full pass over the image.
  const int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;
  const auto decompress = [&](uint8_t* dst, int pixel_format) {
    if (tjDecompress2(tj, ubytes(bytes), bytes.size(), dst, info.width, 0, info.height, pixel_format, flags) != 0) {
      corrupt(name, ImageFormat::kJpeg, tjGetErrorStr2(tj));
    }
  };
  const size_t pixels = static_cast<size_t>(info.width) * static_cast<size_t>(info.height);
  if (info.channels == 1) {  // gray: straight out, or replicated to RGB by libjpeg
    decompress(out, gray ? TJPF_GRAY : TJPF_RGB);
  } else if (info.channels == 3) {  // colour to L goes through RGB, as Pillow's does
    rgb_or_gray(pixels, gray, out, [&](uint8_t* rgb) { decompress(rgb, TJPF_RGB); });
  } else {  // CMYK and YCCK, through libjpeg's CMYK
    std::vector<uint8_t> cmyk(pixels * 4);
    decompress(cmyk.data(), TJPF_CMYK);
    convert_pixels(cmyk.data(), 4, pixels, gray, out);
  }
}

// --- PNG (libspng)

struct SpngFree {
  void operator()(spng_ctx* ctx) const { spng_ctx_free(ctx); }
};
using SpngContext = std::unique_ptr<spng_ctx, SpngFree>;

SpngContext png_context(std::string_view bytes, const std::string& name, spng_ihdr* ihdr) {
  SpngContext ctx(spng_ctx_new(0));
  if (!ctx) throw Error("libspng cannot start a decoder for " + name);
  const auto check = [&](int err) {
    if (err != 0) corrupt(name, ImageFormat::kPng, spng_strerror(err));
  };
  // No chunk may claim more than the file holds.
  check(spng_set_chunk_limits(ctx.get(), bytes.size(), bytes.size()));
  check(spng_set_png_buffer(ctx.get(), bytes.data(), bytes.size()));
  check(spng_get_ihdr(ctx.get(), ihdr));
  return ctx;
}

int png_channels(const spng_ihdr& ihdr) {
  switch (ihdr.color_type) {
    case SPNG_COLOR_TYPE_GRAYSCALE: return 1;
    case SPNG_COLOR_TYPE_GRAYSCALE_ALPHA: return 2;
    case SPNG_COLOR_TYPE_TRUECOLOR_ALPHA: return 4;
    default: return 3;  // truecolor, indexed
  }
}

// libspng's RGB8 expands palettes and gray (low bit depths scaled to 0..255), cuts 16-bit samples to their high
// byte and leaves alpha and transparency out: Pillow's convert("RGB"). Gamma is not applied, as Pillow does not.
void decode_png(const std::string& name, spng_ctx* ctx, const ImageInfo& info, bool gray, uint8_t* out) {
  const size_t pixels = static_cast<size_t>(info.width) * static_cast<size_t>(info.height);
  // Gray replicated to RGB gives its own value back as luma, so L of any PNG is exactly Pillow's.
  rgb_or_gray(pixels, gray, out, [&](uint8_t* rgb) {
    const int err = spng_decode_image(ctx, rgb, pixels * 3, SPNG_FMT_RGB8, 0);
    if (err != 0) corrupt(name, ImageFormat::kPng, spng_strerror(err));
  });
}

// --- WebP (libwebp)

const char* webp_status_text(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data (truncated)";
    default: return "decoder error";
  }
}

WebPBitstreamFeatures webp_features(std::string_view bytes, const std::string& name) {
  WebPBitstreamFeatures features{};
  const VP8StatusCode status = WebPGetFeatures(ubytes(bytes), bytes.size(), &features);
  if (status != VP8_STATUS_OK) corrupt(name, ImageFormat::kWebp, webp_status_text(status));
  if (features.has_animation) throw Unsupported(name + ": animated WebP images are not decoded");
  return features;
}

// Pillow decodes WebP as RGB or RGBA with libwebp, unpremultiplied; RGB here is that without the alpha.
void decode_webp(std::string_view bytes, const std::string& name, const ImageInfo& info, bool gray, uint8_t* out) {
  const size_t pixels = static_cast<size_t>(info.width) * static_cast<size_t>(info.height);
  rgb_or_gray(pixels, gray, out, [&](uint8_t* rgb) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) throw Error("libwebp: version mismatch decoding " + name);
    config.output.colorspace = MODE_RGB;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = rgb;
    config.output.u.RGBA.stride = info.width * 3;
    config.output.u.RGBA.size = pixels * 3;
    const VP8StatusCode status = WebPDecode(ubytes(bytes), bytes.size(), &config);
    WebPFreeDecBuffer(&config.output);  // frees nothing of ours (external memory), but is the documented pairing
    if (status != VP8_STATUS_OK) corrupt(name, ImageFormat::kWebp, webp_status_text(status));
  });
}

// --- Shared

// A header read, with the decoder that read it kept for the decode (a JPEG's TurboJPEG handle, a PNG's libspng
// context), so that a decode starts neither a second decoder nor a second parse of the header.
struct Probe {
  ImageInfo info;
  TjHandle tj;
  SpngContext png;
};

Probe probe(std::string_view bytes, const std::string& name);

Probe probe_checked(std::string_view bytes, const std::string& name, const DecodeOptions& options) {
  Probe probed = probe(bytes, name);
  const ImageInfo& info = probed.info;
  const int64_t pixels = static_cast<int64_t>(info.width) * info.height;
  if (pixels > options.max_pixels) {
    throw InvalidFile(name + ": the " + image_format_name(info.format) + " header declares " +
                      std::to_string(info.width) + " x " + std::to_string(info.height) + " = " +
                      std::to_string(pixels) + " pixels, more than the limit of " +
                      std::to_string(options.max_pixels) + " (DecodeOptions::max_pixels)");
  }
  return probed;
}

void decode_checked(std::string_view bytes, const std::string& name, const Probe& probed, bool gray, uint8_t* out) {
  const ImageInfo& info = probed.info;
  switch (info.format) {
    case ImageFormat::kJpeg: return decode_jpeg(bytes, name, probed.tj.get(), info, gray, out);
    case ImageFormat::kPng: return decode_png(name, probed.png.get(), info, gray, out);
    case ImageFormat::kWebp: return decode_webp(bytes, name, info, gray, out);
  }
}

std::string hex_start(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string text;
  for (size_t i = 0; i < bytes.size() && i < 8; ++i) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    text += kDigits[byte >> 4];
    text += kDigits[byte & 15];
    text += ' ';
  }
  if (!text.empty()) text.pop_back();
  return text;
}

}  // namespace

const char* image_format_name(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kWebp: return "WebP";
  }
  return "image";
}

std::optional<ImageFormat> sniff_image_format(std::string_view bytes) {
  const unsigned char* b = ubytes(bytes);
  if (bytes.size() >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) return ImageFormat::kJpeg;
  if (bytes.size() >= 8 && std::memcmp(b, kPngMagic, 8) == 0) return ImageFormat::kPng;
  if (bytes.size() >= 12 && bytes.substr(0, 4) == "RIFF" && bytes.substr(8, 4) == "WEBP") return ImageFormat::kWebp;
  return std::nullopt;
}

namespace {

Probe probe(std::string_view bytes, const std::string& name) {
  if (bytes.empty()) throw InvalidFile(name + ": empty image data (0 bytes)");
  const std::optional<ImageFormat> format = sniff_image_format(bytes);
  if (!format) {
    throw InvalidFile(name + ": not a JPEG, PNG or WebP image (" + std::to_string(bytes.size()) +
                      " bytes starting " + hex_start(bytes) + ")");
  }
  Probe probed;
  ImageInfo& info = probed.info;
  info.format = *format;
  if (*format == ImageFormat::kJpeg) {
    probed.tj = tj_decompressor();
    const JpegHeader h = jpeg_header(probed.tj.get(), bytes, name);
    info.width = h.width, info.height = h.height, info.channels = jpeg_channels(h.colorspace);
  } else if (*format == ImageFormat::kPng) {
    spng_ihdr ihdr{};
    probed.png = png_context(bytes, name, &ihdr);
    info.width = static_cast<int>(ihdr.width), info.height = static_cast<int>(ihdr.height);
    info.channels = png_channels(ihdr);
  } else {
    const WebPBitstreamFeatures features = webp_features(bytes, name);
    info.width = features.width, info.height = features.height, info.channels = features.has_alpha ? 4 : 3;
  }
  if (info.width <= 0 || info.height <= 0) corrupt(name, info.format, "the header declares no pixels");
  return probed;
}

}  // namespace

ImageInfo probe_image(std::string_view bytes, const std::string& name) { return probe(bytes, name).info; }

DecodedImage decode_image(std::string_view bytes, const std::string& name, const DecodeOptions& options) {
  const Probe probed = probe_checked(bytes, name, options);
  const ImageInfo& info = probed.info;
  DecodedImage image;
  image.width = info.width, image.height = info.height, image.channels = options.gray ? 1 : 3;
  image.pixels.resize(static_cast<size_t>(info.width) * static_cast<size_t>(info.height) *
                      static_cast<size_t>(image.channels));
  decode_checked(bytes, name, probed, options.gray, image.pixels.data());
  return image;
}

void decode_image_into(std::string_view bytes, const std::string& name, const DecodeOptions& options, uint8_t* out,
                       size_t out_size) {
  const Probe probed = probe_checked(bytes, name, options);
  const ImageInfo& info = probed.info;
  const size_t channels = options.gray ? 1 : 3;
  const size_t need = static_cast<size_t>(info.width) * static_cast<size_t>(info.height) * channels;
  if (out_size != need || out == nullptr) {
    throw InvalidArgument(name + ": a " + std::to_string(info.width) + " x " + std::to_string(info.height) + " x " +
                          std::to_string(channels) + " image needs a buffer of " + std::to_string(need) +
                          " bytes, not " + std::to_string(out_size));
  }
  decode_checked(bytes, name, probed, options.gray, out);
}

}  // namespace feedline
