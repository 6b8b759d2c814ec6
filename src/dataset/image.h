// PNG images in byte columns, as Hugging Face datasets store them (an `image` struct whose `bytes` field holds
// the PNG file): 8-bit grayscale of a size known beforehand, through io's codec (feedline/io/image_decode.h,
// image_encode.h). Plain functions without state: safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace feedline {

// Whether `bytes` starts with the PNG signature.
bool is_png(std::string_view bytes);

// Decodes an 8-bit grayscale PNG of exactly height x width pixels into out[0 .. height * width), row-major.
// Throws InvalidArgument with the reason (not a PNG, corrupt, another size, colour or bit depth) otherwise.
void decode_png_gray8(std::string_view png, int64_t height, int64_t width, uint8_t* out);

// Encodes height x width 8-bit grayscale pixels as a PNG file.
std::string encode_png_gray8(const uint8_t* pixels, int64_t height, int64_t width);

}  // namespace feedline
