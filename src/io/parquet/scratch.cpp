// The scratch each thread decodes a column chunk into, and what it gives back when a chunk made it large.
#include "io/parquet/scratch.h"

#include <cstddef>
#include <cstdint>

#include "io/parquet/limits.h"

namespace feedline::parquet::detail {

Scratch& scratch() {
  static thread_local Scratch s;
  return s;
}

namespace {

// Gives back the room of byte arrays whose bytes or offsets grew past kMaxScratchBytes.
void release_byte_arrays(ByteArrays* v) {
  if (v->offsets.capacity() * sizeof(int64_t) > static_cast<size_t>(kMaxScratchBytes) ||
      v->bytes.capacity() > static_cast<size_t>(kMaxScratchBytes)) {
    release_memory(*v);
  }
}

}  // namespace

void Scratch::trim() {
  const auto release = [](auto& v) {
    if (v.capacity() * sizeof(v[0]) > static_cast<size_t>(kMaxScratchBytes)) release_memory(v);
  };
  release(chunk);
  release(inner_offsets);
  release(inner_valid);
  release(validity);
  release(dict);
  release_byte_arrays(&dict_bytes);
}

}  // namespace feedline::parquet::detail
