#include "io/image_encode.h"

#include <spng.h>
#include <turbojpeg.h>

#include <cstdlib>
#include <memory>

#include "feedline/io/error.h"

namespace feedline {
namespace {

std::string size_text(const PixelView& image) {
  return std::to_string(image.width) + "x" + std::to_string(image.height) + "x" + std::to_string(image.channels);
}

void check_view(const PixelView& image, const char* what, bool alpha_allowed) {
  const bool channels_ok = image.channels == 1 || image.channels == 3 || (alpha_allowed && image.channels == 4);
  if (image.pixels == nullptr || image.width <= 0 || image.height <= 0 || !channels_ok) {
    throw InvalidArgument(std::string(what) + " encoding takes a non-empty image of 1, 3" +
                          (alpha_allowed ? " or 4" : "") + " channels, not " + size_text(image));
  }
}

struct SpngFree {
  void operator()(spng_ctx* ctx) const { spng_ctx_free(ctx); }
};

struct TjFree {
  void operator()(void* handle) const { tjDestroy(handle); }
};

struct TjBufferFree {
  void operator()(unsigned char* buffer) const { tjFree(buffer); }
};

}  // namespace

std::string encode_png(const PixelView& image) {
  check_view(image, "PNG", /*alpha_allowed=*/true);
  std::unique_ptr<spng_ctx, SpngFree> ctx(spng_ctx_new(SPNG_CTX_ENCODER));
  if (!ctx) throw InvalidFile("PNG encoding: cannot make a libspng context");
  auto check = [&](int rc, const char* step) {
    if (rc != 0) {
      throw InvalidFile(std::string("PNG encoding (") + step + ", " + size_text(image) + "): " + spng_strerror(rc));
    }
  };
  check(spng_set_option(ctx.get(), SPNG_ENCODE_TO_BUFFER, 1), "buffer");
  spng_ihdr ihdr{};
  ihdr.width = static_cast<uint32_t>(image.width);
  ihdr.height = static_cast<uint32_t>(image.height);
  ihdr.bit_depth = 8;
  ihdr.color_type = image.channels == 1   ? SPNG_COLOR_TYPE_GRAYSCALE
                    : image.channels == 3 ? SPNG_COLOR_TYPE_TRUECOLOR
                                          : SPNG_COLOR_TYPE_TRUECOLOR_ALPHA;
  check(spng_set_ihdr(ctx.get(), &ihdr), "header");
  const size_t bytes = static_cast<size_t>(image.width) * static_cast<size_t>(image.height) *
                       static_cast<size_t>(image.channels);
  check(spng_encode_image(ctx.get(), image.pixels, bytes, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE), "pixels");
  size_t length = 0;
  int rc = 0;
  void* png = spng_get_png_buffer(ctx.get(), &length, &rc);
  check(rc, "output");
  if (png == nullptr) throw InvalidFile("PNG encoding (" + size_text(image) + "): libspng gave no output");
  std::string out(static_cast<const char*>(png), length);
  std::free(png);  // the buffer is the caller's, allocated with libspng's default allocator (malloc)
  return out;
}

std::string encode_jpeg(const PixelView& image, const JpegEncodeOptions& options) {
  check_view(image, "JPEG", /*alpha_allowed=*/false);
  if (options.quality < 1 || options.quality > 100) {
    throw InvalidArgument("JPEG quality must be from 1 to 100, not " + std::to_string(options.quality));
  }
  std::unique_ptr<void, TjFree> handle(tjInitCompress());
  if (!handle) throw InvalidFile(std::string("JPEG encoding: cannot start TurboJPEG: ") + tjGetErrorStr2(nullptr));
  const bool gray = image.channels == 1;
  const int subsampling = gray                                              ? TJSAMP_GRAY
                          : options.subsampling == JpegSubsampling::k444 ? TJSAMP_444
                          : options.subsampling == JpegSubsampling::k422 ? TJSAMP_422
                                                                          : TJSAMP_420;
  unsigned char* buffer = nullptr;
  unsigned long length = 0;
  const int rc = tjCompress2(handle.get(), image.pixels, image.width, /*pitch=*/0, image.height,
                             gray ? TJPF_GRAY : TJPF_RGB, &buffer, &length, subsampling, options.quality, 0);
  std::unique_ptr<unsigned char, TjBufferFree> owned(buffer);
  if (rc != 0) {
    throw InvalidFile("JPEG encoding (" + size_text(image) + "): " + tjGetErrorStr2(handle.get()));
  }
  return std::string(reinterpret_cast<const char*>(buffer), length);
}

}  // namespace feedline
