// The chunk buffers the reader's threads keep between chunks: one larger than kMaxScratchBytes is kept while the
// process's threads keep no more than kKeptScratchBytes of them, given back past that, and counted no longer once
// its thread ends.
#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <thread>

#include "io/parquet/limits.h"
#include "io/parquet/scratch.h"

namespace feedline::parquet::detail {
namespace {

// Runs `f` on a thread of its own (whose scratch ends with it), and waits for it.
void on_new_thread(const std::function<void()>& f) { std::thread(f).join(); }

// A chunk buffer of `bytes` on the calling thread, reserved (not written, so it takes no memory) and trimmed as a
// chunk's walk ends; returns the room the thread keeps.
size_t chunk_after_trim(size_t bytes) {
  Scratch& s = scratch();
  s.chunk.reserve(bytes);
  s.trim();
  return s.chunk.capacity();
}

TEST(ParquetScratch, LargeChunkBuffersAreKeptUpToTheProcessCapAndCountedUntilTheirThreadEnds) {
  const size_t base = kept_scratch_bytes();
  const auto large = static_cast<size_t>(kMaxScratchBytes) + (size_t{1} << 20);
  ASSERT_GE(kKeptScratchBytes - base, 2 * large) << "this test's threads need room under the cap";

  on_new_thread([&] {
    // A small buffer is the thread's own, kept and not counted; a large one is kept and counted.
    EXPECT_EQ(chunk_after_trim(1 << 20), size_t{1} << 20);
    EXPECT_EQ(kept_scratch_bytes(), base);
    const size_t kept = chunk_after_trim(large);
    EXPECT_GE(kept, large);
    EXPECT_EQ(kept_scratch_bytes(), base + kept);

    // Another thread's buffer that would take the process past the cap is given back, and not counted.
    const size_t too_much = kKeptScratchBytes - base - kept + 1;
    on_new_thread([&] {
      EXPECT_EQ(chunk_after_trim(too_much), 0u);
      EXPECT_EQ(kept_scratch_bytes(), base + kept);
    });
    EXPECT_EQ(kept_scratch_bytes(), base + kept);

    // Once this thread's buffer is given back, that one fits.
    scratch().chunk.reserve(0);
    scratch().chunk.shrink_to_fit();
    scratch().trim();
    EXPECT_EQ(kept_scratch_bytes(), base);
    on_new_thread([&] {
      EXPECT_GE(chunk_after_trim(too_much), too_much);
      EXPECT_GE(kept_scratch_bytes(), base + too_much);
    });
    EXPECT_EQ(kept_scratch_bytes(), base);  // (counted no longer: its thread has ended)
    EXPECT_GE(chunk_after_trim(large), large);
  });
  EXPECT_EQ(kept_scratch_bytes(), base);
}

}  // namespace
}  // namespace feedline::parquet::detail
