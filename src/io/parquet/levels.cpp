// Definition and repetition levels (v1 and v2 pages), and nulls spread among a page's values.
#include "io/parquet/levels.h"

#include <cstring>
#include <type_traits>

#include "io/memory.h"
#include "io/parquet/dictionary.h"
#include "io/parquet/list_levels.h"
#include "io/parquet/rle.h"
#include "io/parquet/scratch.h"

namespace feedline::parquet::detail {

void spread_byte_arrays(ByteArrays* out, size_t base, const uint8_t* validity, int64_t n, int64_t present) {
  // offsets[base - 1] is where the page's first value starts; offsets[base .. base + present) end each value.
  auto& off = out->offsets;
  grow_populated(off, base + static_cast<size_t>(n));
  int64_t k = present;
  for (int64_t i = n - 1; i >= 0; --i) {
    off[base + static_cast<size_t>(i)] = off[base - 1 + static_cast<size_t>(k)];
    if (validity[i]) --k;
  }
}

// Fills out[0..n) with the levels (each at most max_level) at p, encoded as a v1 data page encodes them, and
// moves p past them. For max_level 1, returns how many levels are 1 (values present); above 1, nothing useful.
int64_t read_levels(int32_t encoding, const uint8_t*& p, const uint8_t* end, int64_t n, int max_level, uint8_t* out) {
  const int width = bit_width_for(static_cast<uint64_t>(max_level));
  if (encoding == format::encoding::kRle) {
    if (end - p < 4) throw InvalidFile("levels truncated");
    uint32_t len;
    std::memcpy(&len, p, 4);
    p += 4;
    if (len > static_cast<uint64_t>(end - p)) throw InvalidFile("levels run past the page");
    RleBitPackedDecoder dec(p, len, width);
    LevelSink sink{out};
    dec.decode(n, sink);
    p += len;
    return sink.present;
  }
  if (encoding == format::encoding::kBitPacked) {
    // Deprecated BIT_PACKED: most significant bit first, no length prefix.
    const uint64_t bits = static_cast<uint64_t>(n) * static_cast<uint64_t>(width);
    const size_t bytes = static_cast<size_t>((bits + 7) / 8);
    if (bytes > static_cast<size_t>(end - p)) throw InvalidFile("levels truncated");
    uint64_t bit = 0;
    int64_t sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      int v = 0;
      for (int b = 0; b < width; ++b, ++bit) v = (v << 1) | ((p[bit / 8] >> (7 - bit % 8)) & 1);
      out[i] = static_cast<uint8_t>(v);
      sum += v;
    }
    p += bytes;
    return sum;
  }
  throw Unsupported(std::string("level encoding ") + format::encoding_name(encoding));
}

// v2 levels: RLE / bit-packed hybrid without a length prefix. Returns what read_levels returns.
int64_t read_levels_v2(const uint8_t* p, size_t size, int64_t n, int max_level, uint8_t* out) {
  RleBitPackedDecoder dec(p, size, bit_width_for(static_cast<uint64_t>(max_level)));
  LevelSink sink{out};
  dec.decode(n, sink);
  return sink.present;
}

ListPageLevels read_list_levels(const Leaf& leaf, const PageData& page, const uint8_t* body, size_t size) {
  const int64_t n = page.num_values;
  std::vector<uint8_t>& levels = scratch().levels;
  if (levels.size() < static_cast<size_t>(3 * n)) levels.resize(static_cast<size_t>(3 * n));
  ListPageLevels out{levels.data(), levels.data() + n, levels.data() + 2 * n, body};
  if (page.v2) {
    read_levels_v2(page.v2_rep_levels, page.v2_rep_size, n, leaf.max_rep, out.rep);
    read_levels_v2(page.v2_def_levels, page.v2_def_size, n, leaf.max_def, out.def);
  } else {
    const uint8_t* end = body + size;
    read_levels(page.repetition_level_encoding, out.values, end, n, leaf.max_rep, out.rep);
    read_levels(page.definition_level_encoding, out.values, end, n, leaf.max_def, out.def);
  }
  return out;
}

int64_t count_present(const uint8_t* validity, int64_t n) {
  int64_t present = 0;
  for (int64_t i = 0; i < n; ++i) present += validity[i] != 0;
  return present;
}

void drop_validity_without_nulls(Column* col) {
  const auto all_present = [](const std::vector<uint8_t>& v) {
    return count_present(v.data(), static_cast<int64_t>(v.size())) == static_cast<int64_t>(v.size());
  };
  if (all_present(col->validity)) std::vector<uint8_t>().swap(col->validity);
  for (ListLevel& level : col->inner_lists) {
    if (all_present(level.validity)) std::vector<uint8_t>().swap(level.validity);
  }
}

}  // namespace feedline::parquet::detail
