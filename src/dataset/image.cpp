#include "feedline/dataset/image.h"

#include <spng.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "feedline/io/error.h"

namespace feedline {
namespace {

constexpr char kSignature[] = "\x89PNG\r\n\x1a\n";

struct ContextFree {
  void operator()(spng_ctx* ctx) const { spng_ctx_free(ctx); }
};
using Context = std::unique_ptr<spng_ctx, ContextFree>;

Context new_context(int flags) {
  Context ctx(spng_ctx_new(flags));
  if (!ctx) throw std::bad_alloc();
  return ctx;
}

void check(int err, const char* what) {
  if (err != 0) throw InvalidArgument(std::string(what) + ": " + spng_strerror(err));
}

}  // namespace

bool is_png(std::string_view bytes) { return bytes.size() >= 8 && std::memcmp(bytes.data(), kSignature, 8) == 0; }

void decode_png_gray8(std::string_view png, int64_t height, int64_t width, uint8_t* out) {
  if (!is_png(png)) throw InvalidArgument("not a PNG image (no PNG signature)");
  Context ctx = new_context(0);
  // The header is checked against the expected size before anything is allocated; chunk limits bound the rest.
  check(spng_set_chunk_limits(ctx.get(), png.size(), png.size()), "PNG");
  check(spng_set_png_buffer(ctx.get(), png.data(), png.size()), "PNG");
  spng_ihdr ihdr{};
  check(spng_get_ihdr(ctx.get(), &ihdr), "PNG header");
  if (static_cast<int64_t>(ihdr.width) != width || static_cast<int64_t>(ihdr.height) != height) {
    throw InvalidArgument("PNG of " + std::to_string(ihdr.width) + "x" + std::to_string(ihdr.height) +
                          " pixels, expected " + std::to_string(width) + "x" + std::to_string(height));
  }
  if (ihdr.color_type != SPNG_COLOR_TYPE_GRAYSCALE || ihdr.bit_depth != 8) {
    throw InvalidArgument("PNG of colour type " + std::to_string(ihdr.color_type) + " and bit depth " +
                          std::to_string(ihdr.bit_depth) + ", expected 8-bit grayscale");
  }
  size_t size = 0;
  check(spng_decoded_image_size(ctx.get(), SPNG_FMT_PNG, &size), "PNG");
  if (size != static_cast<size_t>(height * width)) throw InvalidArgument("PNG decodes to an unexpected size");
  check(spng_decode_image(ctx.get(), out, size, SPNG_FMT_PNG, 0), "PNG data");
}

std::string encode_png_gray8(const uint8_t* pixels, int64_t height, int64_t width) {
  if (height < 1 || width < 1 || height > 1 << 24 || width > 1 << 24) {
    throw InvalidArgument("PNG of " + std::to_string(width) + "x" + std::to_string(height) + " pixels");
  }
  Context ctx = new_context(SPNG_CTX_ENCODER);
  check(spng_set_option(ctx.get(), SPNG_ENCODE_TO_BUFFER, 1), "PNG encoder");
  spng_ihdr ihdr{};
  ihdr.width = static_cast<uint32_t>(width);
  ihdr.height = static_cast<uint32_t>(height);
  ihdr.bit_depth = 8;
  ihdr.color_type = SPNG_COLOR_TYPE_GRAYSCALE;
  check(spng_set_ihdr(ctx.get(), &ihdr), "PNG encoder");
  check(spng_encode_image(ctx.get(), pixels, static_cast<size_t>(height * width), SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE),
        "PNG encoder");
  size_t len = 0;
  int err = 0;
  void* buffer = spng_get_png_buffer(ctx.get(), &len, &err);
  check(err, "PNG encoder");
  std::string out(static_cast<const char*>(buffer), len);
  std::free(buffer);
  return out;
}

}  // namespace feedline
