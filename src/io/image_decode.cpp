#include "feedline/io/image_decode.h"

#include <spng.h>
#include <turbojpeg.h>
#include <webp/decode.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>  // jpeglib.h's FILE
#include <cstring>
#include <memory>

#include <jpeglib.h>

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

// --- JPEG regions (the libjpeg API of libjpeg-turbo, which TurboJPEG wraps and which alone crops). libjpeg
// reports errors by longjmp: the functions between setjmp and libjpeg hold nothing with a destructor.

constexpr int kMaxProgressiveScans = 500;  // TurboJPEG's TJFLAG_LIMITSCANS

struct JpegErrors {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpeg_fail(j_common_ptr cinfo) {
  auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, errors->message);
  std::longjmp(errors->jump, 1);
}

// A warning (level -1) is an error, as TJFLAG_STOPONWARNING makes it; trace messages are dropped.
void jpeg_warning(j_common_ptr cinfo, int level) {
  if (level < 0) jpeg_fail(cinfo);
}

void jpeg_limit_scans(j_common_ptr cinfo) {
  const auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->progressive_mode && d->input_scan_number > kMaxProgressiveScans) {
    auto* errors = reinterpret_cast<JpegErrors*>(cinfo->err);
    std::snprintf(errors->message, sizeof(errors->message), "Progressive JPEG image has more than %d scans",
                  kMaxProgressiveScans);
    std::longjmp(errors->jump, 1);
  }
}

struct JpegDecompress {
  jpeg_decompress_struct cinfo;
  JpegErrors errors;
  jpeg_progress_mgr progress;
  bool created = false;
};

// Starts the decompressor on `bytes` at scale_num/scale_denom, out_color_space `space`. False (errors.message says
// why) on a libjpeg error.
bool jpeg_region_start(JpegDecompress& d, std::string_view bytes, int scale_num, int scale_denom,
                       J_COLOR_SPACE space) {
  d.cinfo.err = jpeg_std_error(&d.errors.mgr);
  d.errors.mgr.error_exit = jpeg_fail;
  d.errors.mgr.emit_message = jpeg_warning;
  d.errors.message[0] = '\0';
  if (setjmp(d.errors.jump)) return false;
  jpeg_create_decompress(&d.cinfo);
  d.created = true;
  d.progress.progress_monitor = jpeg_limit_scans;
  d.cinfo.progress = &d.progress;
  jpeg_mem_src(&d.cinfo, ubytes(bytes), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&d.cinfo, TRUE);
  d.cinfo.out_color_space = space;
  d.cinfo.scale_num = static_cast<unsigned>(scale_num);
  d.cinfo.scale_denom = static_cast<unsigned>(scale_denom);
  jpeg_calc_output_dimensions(&d.cinfo);
  return true;
}

// Decodes rows [top, top + height) of columns [*left, *left + *width) (widened by libjpeg to whole blocks, which
// it writes back) into `out`, `row_bytes` a row, which must hold the widened width; then reads the rest of the
// data to its end, through `spare_row` (as many bytes). False (errors.message says why) on a libjpeg error.
bool jpeg_region_read(JpegDecompress& d, int top, int height, JDIMENSION* left, JDIMENSION* width,
                      size_t row_bytes, uint8_t* out, uint8_t* spare_row) {
  if (setjmp(d.errors.jump)) return false;
  jpeg_start_decompress(&d.cinfo);
  jpeg_crop_scanline(&d.cinfo, left, width);
  if (top > 0) jpeg_skip_scanlines(&d.cinfo, static_cast<JDIMENSION>(top));
  for (int y = 0; y < height; ++y) {
    JSAMPROW row = out + static_cast<size_t>(y) * row_bytes;
    jpeg_read_scanlines(&d.cinfo, &row, 1);
  }
  // Skipping to the end would take libjpeg's word for the rest: skip all but the last row (entropy-decoded, not
  // transformed) and read that, so that a truncated or corrupt tail is found as a whole decode finds it.
  const JDIMENSION rows = d.cinfo.output_height;
  if (d.cinfo.output_scanline < rows) {
    if (d.cinfo.output_scanline + 1 < rows) jpeg_skip_scanlines(&d.cinfo, rows - 1 - d.cinfo.output_scanline);
    JSAMPROW row = spare_row;
    jpeg_read_scanlines(&d.cinfo, &row, 1);
  }
  jpeg_finish_decompress(&d.cinfo);
  return true;
}

struct JpegDestroy {
  JpegDecompress* d;
  ~JpegDestroy() {
    if (d->created) jpeg_destroy_decompress(&d->cinfo);
  }
};

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
  const auto decode = [&](uint8_t* dst, size_t size, int format) {
    const int err = spng_decode_image(ctx, dst, size, format, 0);
    if (err != 0) corrupt(name, ImageFormat::kPng, spng_strerror(err));
  };
  // Gray replicated to RGB gives its own value back as luma, so L of any PNG is exactly Pillow's; an 8-bit gray
  // PNG's samples are that L as stored.
  if (gray && info.channels == 1 && info.bit_depth == 8) return decode(out, pixels, SPNG_FMT_PNG);
  rgb_or_gray(pixels, gray, out, [&](uint8_t* rgb) { decode(rgb, pixels * 3, SPNG_FMT_RGB8); });
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
    info.bit_depth = ihdr.bit_depth;
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

namespace feedline {

int jpeg_scaled_size(int size, int scale_denom) { return jpeg_scaled_size(size, 1, scale_denom); }

int jpeg_scaled_size(int size, int scale_num, int scale_denom) {
  return static_cast<int>((static_cast<int64_t>(size) * scale_num + scale_denom - 1) / scale_denom);
}

JpegRegion decode_jpeg_region(std::string_view bytes, const std::string& name, const DecodeOptions& options,
                              int scale_denom, const ImageRegion& region) {
  return decode_jpeg_region(bytes, name, options, 1, scale_denom, region);
}

JpegRegion decode_jpeg_region(std::string_view bytes, const std::string& name, const DecodeOptions& options,
                              int scale_num, int scale_denom, const ImageRegion& region) {
  // libjpeg scales by n/8 (n = 1..16; here at most 8/8): the scale as eighths, exactly.
  const bool eighths = scale_num > 0 && scale_denom > 0 && scale_denom <= 8 * scale_num &&
                       scale_num <= scale_denom && (8 * scale_num) % scale_denom == 0;
  if (!eighths) {
    throw InvalidArgument(name + ": a JPEG region decodes at n/8 of the size for an n of 1 to 8, not at " +
                          std::to_string(scale_num) + "/" + std::to_string(scale_denom));
  }
  const std::string scale_text = std::to_string(scale_num) + "/" + std::to_string(scale_denom);
  const Probe probed = probe_checked(bytes, name, options);
  const ImageInfo& info = probed.info;
  if (info.format != ImageFormat::kJpeg) {
    throw InvalidArgument(name + ": decode_jpeg_region decodes JPEG data, not " + image_format_name(info.format));
  }
  JpegRegion result;
  result.scaled_height = jpeg_scaled_size(info.height, scale_num, scale_denom);
  result.scaled_width = jpeg_scaled_size(info.width, scale_num, scale_denom);
  if (region.height <= 0 || region.width <= 0 || region.top < 0 || region.left < 0 ||
      region.top > result.scaled_height - region.height || region.left > result.scaled_width - region.width) {
    throw InvalidArgument(name + ": the region (top " + std::to_string(region.top) + ", left " +
                          std::to_string(region.left) + ", height " + std::to_string(region.height) + ", width " +
                          std::to_string(region.width) + ") is not a part of the picture's " +
                          std::to_string(result.scaled_height) + " x " + std::to_string(result.scaled_width) +
                          " pixels at " + scale_text);
  }
  // The colour spaces decode_jpeg asks TurboJPEG for.
  const J_COLOR_SPACE space = info.channels == 1 ? (options.gray ? JCS_GRAYSCALE : JCS_RGB)
                              : info.channels == 3 ? JCS_RGB
                                                   : JCS_CMYK;
  const int components = space == JCS_GRAYSCALE ? 1 : space == JCS_RGB ? 3 : 4;
  JpegDecompress d;
  const JpegDestroy destroy{&d};
  if (!jpeg_region_start(d, bytes, scale_num, scale_denom, space)) {
    corrupt(name, ImageFormat::kJpeg, d.errors.message);
  }
  if (static_cast<int>(d.cinfo.output_height) != result.scaled_height ||
      static_cast<int>(d.cinfo.output_width) != result.scaled_width) {
    throw Error(name + ": libjpeg scales the JPEG to " + std::to_string(d.cinfo.output_height) + " x " +
                std::to_string(d.cinfo.output_width) + " pixels at " + scale_text + ", not " +
                std::to_string(result.scaled_height) + " x " + std::to_string(result.scaled_width));
  }
  // libjpeg decodes whole iMCUs of columns from an iMCU's left edge, and replicates the edge columns of a crop
  // where the whole decode's chroma upsampling would have used its neighbours': the columns asked for are an iMCU
  // wider each side (where the picture has them), and the region is cut from them exactly.
  const int imcu = d.cinfo.max_h_samp_factor * d.cinfo.min_DCT_scaled_size;
  const int ask_left = std::max(0, region.left - imcu);
  const int ask_end = std::min(result.scaled_width, region.left + region.width + imcu);
  const int room = std::min(result.scaled_width, ask_end - ask_left + imcu);
  const size_t row_bytes = static_cast<size_t>(room) * static_cast<size_t>(components);
  DecodedImage& image = result.image;
  image.pixels.resize(row_bytes * static_cast<size_t>(region.height));
  std::vector<uint8_t> spare_row(row_bytes);
  auto left = static_cast<JDIMENSION>(ask_left), width = static_cast<JDIMENSION>(ask_end - ask_left);
  if (!jpeg_region_read(d, region.top, region.height, &left, &width, row_bytes, image.pixels.data(),
                        spare_row.data())) {
    corrupt(name, ImageFormat::kJpeg, d.errors.message);
  }
  if (static_cast<int>(width) > room || static_cast<int>(left) > ask_left ||
      static_cast<int>(left + width) < ask_end) {
    throw Error(name + ": libjpeg widened the JPEG region's columns [" + std::to_string(ask_left) + ", " +
                std::to_string(ask_end) + ") to [" + std::to_string(left) + ", " + std::to_string(left + width) + ")");
  }
  // Rows cut to the region and packed, then converted in place: the output never outruns the input.
  const size_t packed = static_cast<size_t>(region.width) * static_cast<size_t>(components);
  const size_t skip = static_cast<size_t>(region.left - static_cast<int>(left)) * static_cast<size_t>(components);
  for (int y = 0; y < region.height; ++y) {
    std::memmove(image.pixels.data() + y * packed, image.pixels.data() + y * row_bytes + skip, packed);
  }
  const size_t pixels = static_cast<size_t>(region.width) * static_cast<size_t>(region.height);
  image.channels = options.gray ? 1 : 3;
  if (components != image.channels) {
    convert_pixels(image.pixels.data(), components, pixels, options.gray, image.pixels.data());
  }
  image.pixels.resize(pixels * static_cast<size_t>(image.channels));
  image.width = region.width, image.height = region.height;
  result.region = region;
  return result;
}

DecodedImage decode_webp_window(std::string_view bytes, const std::string& name, const DecodeOptions& options,
                                const ImageRegion& window, int height, int width) {
  const Probe probed = probe_checked(bytes, name, options);
  const ImageInfo& info = probed.info;
  if (info.format != ImageFormat::kWebp) {
    throw InvalidArgument(name + ": decode_webp_window decodes WebP data, not " + image_format_name(info.format));
  }
  const auto text = [](const ImageRegion& r) {
    return "(top " + std::to_string(r.top) + ", left " + std::to_string(r.left) + ", height " +
           std::to_string(r.height) + ", width " + std::to_string(r.width) + ")";
  };
  if (window.height <= 0 || window.width <= 0 || window.top < 0 || window.left < 0 ||
      window.top > info.height - window.height || window.left > info.width - window.width) {
    throw InvalidArgument(name + ": the window " + text(window) + " is not a part of the picture's " +
                          std::to_string(info.height) + " x " + std::to_string(info.width) + " pixels");
  }
  if (height <= 0 || width <= 0 || height > window.height || width > window.width) {
    throw InvalidArgument(name + ": the window " + text(window) + " is not resampled by libwebp to " +
                          std::to_string(height) + " x " + std::to_string(width) + " pixels (it only shrinks)");
  }
  const bool scaled = height != window.height || width != window.width;
  // libwebp starts a lossy picture's crop at even coordinates and upsamples the chroma of its edge pixels from the
  // crop alone: unscaled, a window two pixels wider each side (from even coordinates) is decoded and the window cut
  // from it exactly; scaled, the window is libwebp's own, and must start at even coordinates.
  ImageRegion crop = window;
  if (!scaled) {
    crop.top = std::max(0, window.top - 2) & ~1, crop.left = std::max(0, window.left - 2) & ~1;
    crop.height = std::min(info.height, window.top + window.height + 2) - crop.top;
    crop.width = std::min(info.width, window.left + window.width + 2) - crop.left;
  } else if ((window.top | window.left) & 1) {
    throw InvalidArgument(name + ": a WebP window resampled by libwebp starts at even coordinates, not " +
                          text(window));
  }
  const int out_height = scaled ? height : crop.height, out_width = scaled ? width : crop.width;
  const size_t pixels = static_cast<size_t>(out_height) * static_cast<size_t>(out_width);
  std::vector<uint8_t> rgb(pixels * 3);
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) throw Error("libwebp: version mismatch decoding " + name);
  config.options.use_cropping = 1;
  config.options.crop_top = crop.top, config.options.crop_left = crop.left;
  config.options.crop_height = crop.height, config.options.crop_width = crop.width;
  if (scaled) {
    config.options.use_scaling = 1;
    config.options.scaled_height = height, config.options.scaled_width = width;
  }
  config.output.colorspace = MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = rgb.data();
  config.output.u.RGBA.stride = out_width * 3;
  config.output.u.RGBA.size = rgb.size();
  const VP8StatusCode status = WebPDecode(ubytes(bytes), bytes.size(), &config);
  WebPFreeDecBuffer(&config.output);
  if (status != VP8_STATUS_OK) corrupt(name, ImageFormat::kWebp, webp_status_text(status));
  DecodedImage image;
  image.height = scaled ? height : window.height, image.width = scaled ? width : window.width;
  image.channels = options.gray ? 1 : 3;
  image.pixels.resize(static_cast<size_t>(image.height) * image.width * image.channels);
  const int top = window.top - crop.top, left = window.left - crop.left;
  for (int y = 0; y < image.height; ++y) {
    const uint8_t* row = rgb.data() + (static_cast<size_t>(y + top) * out_width + left) * 3;
    uint8_t* to = image.pixels.data() + static_cast<size_t>(y) * image.width * image.channels;
    if (options.gray) {
      convert_pixels(row, 3, static_cast<size_t>(image.width), true, to);
    } else {
      std::memcpy(to, row, static_cast<size_t>(image.width) * 3);
    }
  }
  return image;
}

}  // namespace feedline
