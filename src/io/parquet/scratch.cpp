// The scratch each thread decodes a column chunk into, and what it gives back when a chunk made it large.
#include "io/parquet/scratch.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "io/parquet/limits.h"

namespace feedline::parquet::detail {

Scratch& scratch() {
  static thread_local Scratch s;
  return s;
}

namespace {

std::atomic<size_t> kept_chunk_bytes{0};

// Counts `bytes` more against kKeptScratchBytes if they fit under it.
bool keep_more(size_t bytes) {
  size_t kept = kept_chunk_bytes.load(std::memory_order_relaxed);
  do {
    if (bytes > kKeptScratchBytes - kept) return false;
  } while (!kept_chunk_bytes.compare_exchange_weak(kept, kept + bytes, std::memory_order_relaxed));
  return true;
}

// Gives back the room of byte arrays whose bytes or offsets grew past kMaxScratchBytes.
void release_byte_arrays(ByteArrays* v) {
  if (v->offsets.capacity() * sizeof(int64_t) > static_cast<size_t>(kMaxScratchBytes) ||
      v->bytes.capacity() > static_cast<size_t>(kMaxScratchBytes)) {
    release_memory(*v);
  }
}

}  // namespace

size_t kept_scratch_bytes() { return kept_chunk_bytes.load(std::memory_order_relaxed); }

Scratch::~Scratch() { kept_chunk_bytes.fetch_sub(kept_, std::memory_order_relaxed); }

void Scratch::trim() {
  const auto release = [](auto& v) {
    if (v.capacity() * sizeof(v[0]) > static_cast<size_t>(kMaxScratchBytes)) release_memory(v);
  };
  const size_t have = chunk.capacity() > static_cast<size_t>(kMaxScratchBytes) ? chunk.capacity() : 0;
  if (have != kept_) {
    kept_chunk_bytes.fetch_sub(kept_, std::memory_order_relaxed);
    kept_ = 0;
    if (have > 0 && keep_more(have)) kept_ = have;
  }
  if (kept_ == 0) release(chunk);
  release(inner_offsets);
  release(inner_valid);
  release(validity);
  release(dict);
  release_byte_arrays(&dict_bytes);
  for (ByteArrays& values : page_values) release_byte_arrays(&values);
}

}  // namespace feedline::parquet::detail
