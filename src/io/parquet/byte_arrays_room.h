// Internal to the Parquet reader: room for a chunk's variable-length byte arrays made once, from its page headers,
// before its pages decode (the readers of flat and list columns), so that the column's bytes neither move as they
// grow nor take more memory than their values.
#pragma once

#include "io/parquet/pages.h"

namespace feedline::parquet::detail {

// Room for the rest of the chunk's byte arrays in `out`, made once (after the walk's first window) from the
// headers of a chunk of 1 MiB or more (uncompressed), within the walk's budget: for values of more than
// kMaxScratchBytes (a page's, or the dictionary's), reserved and not faulted in; for pages whose values' bytes the
// headers tell exactly (none dictionary-encoded), populated for writing. Where it finds the dictionary huge, it
// has the walk give it back after the last page that uses it. Returns whether room was made: false where the
// headers leave the size unknown (a DELTA_BYTE_ARRAY page, whose shared prefixes make values longer than the
// page; a header that cannot be read, whose error the walk meets in turn), or bound it only loosely; the reader
// then projects the room from the bytes its pages take, as they come (make_room_for_rest).
bool make_room_from_headers(PageWalk& walk, ByteArrays* out);

}  // namespace feedline::parquet::detail
