// The part every column shape's reader shares: its page walk and value decoder, made over one chunk.
#include "io/parquet/paged_chunk_reader.h"

namespace feedline::parquet::detail {

PagedChunkReader::PagedChunkReader(const ChunkSource& source)
    : leaf_(source.leaf), walk_(source), values_(source.leaf, source.budget, walk_.dictionary().view()) {}

int64_t PagedChunkReader::page_offset() const { return walk_.page_offset(); }

}  // namespace feedline::parquet::detail
