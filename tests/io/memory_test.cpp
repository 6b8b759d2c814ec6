#include "io/memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "feedline/io/table.h"

namespace feedline {
namespace {

#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
constexpr bool kHugeScratch = true;
#else
constexpr bool kHugeScratch = false;
#endif
constexpr size_t kTwoMiB = size_t{2} << 20;

TEST(ScratchMemory, LargeRequestsGetWholeAlignedTwoMiBBlocks) {
  EXPECT_EQ(scratch_capacity(1000), 1000u);
  EXPECT_EQ(scratch_capacity(kMinHugeScratchBytes - 1), kMinHugeScratchBytes - 1);
  for (const size_t bytes : {kMinHugeScratchBytes, kTwoMiB, kTwoMiB + 1, 5 * kTwoMiB - 7}) {
    const size_t capacity = scratch_capacity(bytes);
    if (kHugeScratch) {
      EXPECT_EQ(capacity % kTwoMiB, 0u) << bytes;
      EXPECT_LT(capacity - bytes, kTwoMiB) << bytes;
    } else {
      EXPECT_EQ(capacity, bytes);
    }
    auto* p = static_cast<uint8_t*>(allocate_scratch(bytes));
    ASSERT_NE(p, nullptr);
    if (kHugeScratch) EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kTwoMiB, 0u) << bytes;
    // All that the capacity promises is writable and keeps what is written.
    std::memset(p, 0xab, capacity);
    EXPECT_EQ(p[0], 0xab);
    EXPECT_EQ(p[capacity - 1], 0xab);
    free_scratch(p, bytes);
  }
}

// A move assignment from a new string keeps the old buffer (libstdc++ copies the short string into it);
// release_memory gives it back.
TEST(ScratchMemory, ReleaseMemoryGivesAByteArraysBuffersBack) {
  ByteArrays v;
  v.push_back(std::string(1 << 20, 'x'));
  ASSERT_GE(v.bytes.capacity(), size_t{1} << 20);
  release_memory(v);
  EXPECT_LT(v.bytes.capacity(), size_t{1} << 10);
  EXPECT_EQ(v.offsets, (std::vector<int64_t>{0}));
  EXPECT_EQ(v.size(), 0);
}

TEST(ScratchMemory, SizeScratchGrowsOnlyWhenItMustAndUsesAllItsRoom) {
  ScratchVector<int64_t> v;
  size_scratch(v, 10);
  EXPECT_EQ(v.size(), 10u);
  size_scratch(v, 100000);  // 800,000 bytes: a large request
  ASSERT_EQ(v.size(), 100000u);
  EXPECT_EQ(v.capacity(), scratch_capacity(100000 * sizeof(int64_t)) / sizeof(int64_t));
  v.back() = 7;
  const int64_t* data = v.data();
  size_scratch(v, 50);  // smaller: nothing moves
  EXPECT_EQ(v.size(), 100000u);
  EXPECT_EQ(v.data(), data);
  EXPECT_EQ(v.back(), 7);
  if (kHugeScratch) {
    // Up to the 2 MiB the first growth took, the buffer grows in place.
    size_scratch(v, kTwoMiB / sizeof(int64_t));
    EXPECT_EQ(v.data(), data);
  }
  size_scratch(v, 3 * kTwoMiB / sizeof(int64_t) + 1);
  EXPECT_EQ(v.size(), 3 * kTwoMiB / sizeof(int64_t) + 1);
  v.back() = 9;
  EXPECT_EQ(v.back(), 9);
}

}  // namespace
}  // namespace feedline
