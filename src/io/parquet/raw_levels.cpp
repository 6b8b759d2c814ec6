// Any column's chunk as its level entries (RawChunk), for putting nested values back together (VARIANT).
#include <cstring>

#include "io/parquet/chunk_reader.h"
#include "io/parquet/levels.h"
#include "io/parquet/list_levels.h"
#include "io/parquet/page_data.h"
#include "io/parquet/paged_chunk_reader.h"
#include "io/parquet/pages.h"
#include "io/parquet/scratch.h"
#include "io/parquet/typed_reader.h"
#include "io/parquet/values.h"

namespace feedline::parquet::detail {

namespace {

template <class T>
class RawLevelsReader final : public PagedChunkReader {
 public:
  explicit RawLevelsReader(const ChunkSource& source) : PagedChunkReader(source) {}

  void read(ChunkTarget* target) override;
};

template <class T>
void RawLevelsReader<T>::read(ChunkTarget* target) {
  const int64_t entries = walk_.load();
  ColumnSchema flat = leaf_.schema;
  flat.is_list = false;
  flat.inner_list_nullable.clear();
  RawChunk& raw = *target->raw;
  raw = RawChunk{{}, {}, make_column(flat)};
  if (entries == 0) return;
  const int64_t width = (std::is_same_v<T, ByteArrays> ? 8 : static_cast<int64_t>(sizeof(T))) + 3;
  if (entries > walk_.budget() / width)
    throw InvalidFile(std::to_string(entries) + " values would exceed the memory limit");
  raw.rep.reserve(static_cast<size_t>(entries));
  raw.def.reserve(static_cast<size_t>(entries));
  const int max_rep = leaf_.max_rep, max_def = leaf_.max_def;
  int64_t rows = 0;
  walk_.walk<T>([&](const PageData& page, const uint8_t* body, size_t size) {
    const int64_t n = page.num_values;
    std::vector<uint8_t>& levels = scratch().levels;
    if (levels.size() < static_cast<size_t>(3 * n)) levels.resize(static_cast<size_t>(3 * n));
    uint8_t* rep = levels.data();
    uint8_t* def = rep + n;
    uint8_t* valid = def + n;
    const uint8_t* p = body;
    const uint8_t* end = body + size;
    if (max_rep == 0) std::memset(rep, 0, static_cast<size_t>(n));
    if (max_def == 0) std::memset(def, 0, static_cast<size_t>(n));
    if (page.v2) {
      if (max_rep > 0) read_levels_v2(page.v2_rep_levels, page.v2_rep_size, n, max_rep, rep);
      if (max_def > 0) read_levels_v2(page.v2_def_levels, page.v2_def_size, n, max_def, def);
    } else {
      if (max_rep > 0) read_levels(page.repetition_level_encoding, p, end, n, max_rep, rep);
      if (max_def > 0) read_levels(page.definition_level_encoding, p, end, n, max_def, def);
    }
    for (int64_t i = 0; i < n; ++i) {
      if (rep[i] > max_rep || def[i] > max_def) {
        throw InvalidFile("level entry " + std::to_string(i) + " above the column's maximum levels");
      }
      valid[i] = def[i] == max_def;
      rows += rep[i] == 0;
    }
    append_list_values<T>(values_, page.encoding, p, end, valid, static_cast<int64_t>(raw.def.size()), n, &raw.values);
    raw.rep.insert(raw.rep.end(), rep, rep + n);
    raw.def.insert(raw.def.end(), def, def + n);
  });
  if (rows != walk_.num_rows()) {
    throw InvalidFile("levels start " + std::to_string(rows) + " rows, the row group holds " +
                      std::to_string(walk_.num_rows()));
  }
}

}  // namespace

std::unique_ptr<ColumnChunkReader> make_raw_levels_reader(const ChunkSource& source) {
  return make_typed_reader<RawLevelsReader>(source);
}

}  // namespace feedline::parquet::detail
