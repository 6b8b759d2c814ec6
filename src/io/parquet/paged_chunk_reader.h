// Internal to the Parquet reader: what the reader of every column shape holds (PagedChunkReader): its leaf, the
// walk over its chunk's pages (pages.h) and the decoder of their values (values.h), which reads the walk's
// dictionary. Each shape's reader derives from it; like them, one is used by one thread.
#pragma once

#include <cstdint>

#include "io/parquet/chunk_reader.h"
#include "io/parquet/pages.h"
#include "io/parquet/values.h"

namespace feedline::parquet::detail {

class PagedChunkReader : public ColumnChunkReader {
 public:
  int64_t page_offset() const override;

 protected:
  explicit PagedChunkReader(const ChunkSource& source);

  const Leaf& leaf_;
  PageWalk walk_;
  ValueDecoder values_;
};

}  // namespace feedline::parquet::detail
