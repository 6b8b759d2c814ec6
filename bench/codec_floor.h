// The codec floor of a Parquet read: what the read's compression library alone takes to decompress every page of a
// file (SNAPPY, ZSTD, ...; an uncompressed page is copied), on the read's threads with the column chunks shared
// among them, plus one memcpy of as many bytes as the decoded table holds. A reader can hardly beat it: it is the
// decompression it must do and one write of its output, without decoding. The pages are found as a reader finds
// them: each chunk's first page at the footer's offset, then page header after page header.
// Thread-safety: the functions share nothing; codec_floor() runs its work on feedline's pool (parallel.h).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/table.h"
#include "io/parallel.h"
#include "io/parquet/codec.h"
#include "io/parquet/metadata.h"

namespace feedline::bench {

// One page's compressed part: `size` bytes at `data` that decompress to `uncompressed` bytes (a data page v2's
// levels, never compressed, are left out).
struct PageBody {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t uncompressed = 0;
  bool compressed = true;  // false: a v2 page written with is_compressed false
};

struct ChunkPages {
  parquet::Codec codec = parquet::Codec::kUncompressed;
  std::vector<PageBody> pages;
  size_t uncompressed = 0;  // the pages' bodies, decompressed
};

// Every column chunk of the Parquet file whose bytes are `file` (which must outlive the result), in row-group then
// column order. Throws InvalidFile naming `name` for a file whose footer, chunk offsets or page headers are bad.
inline std::vector<ChunkPages> file_pages(const std::string& file, const std::string& name) {
  namespace format = parquet::format;
  const auto* bytes = reinterpret_cast<const uint8_t*>(file.data());
  if (file.size() < 12 || file.compare(0, 4, "PAR1") != 0 || file.compare(file.size() - 4, 4, "PAR1") != 0) {
    throw InvalidFile(name + ": not a Parquet file");
  }
  uint32_t footer_len = 0;
  std::memcpy(&footer_len, bytes + file.size() - 8, 4);
  if (footer_len > file.size() - 12) throw InvalidFile(name + ": footer length " + std::to_string(footer_len));
  const size_t footer_at = file.size() - 8 - footer_len;
  parquet::thrift::CompactReader footer(bytes + footer_at, footer_len, static_cast<int64_t>(footer_at));
  const format::FileMetaData md = format::read_file_metadata(footer);
  std::vector<ChunkPages> chunks;
  for (const format::RowGroup& rg : md.row_groups) {
    for (const format::ColumnChunk& chunk : rg.columns) {
      if (!chunk.meta_data) throw InvalidFile(name + ": a column chunk lacks its metadata");
      const format::ColumnMetaData& meta = *chunk.meta_data;
      ChunkPages out;
      out.codec = parquet::codec_from_thrift(meta.codec);
      int64_t at = meta.data_page_offset;
      if (meta.dictionary_page_offset && *meta.dictionary_page_offset > 0 && *meta.dictionary_page_offset < at) {
        at = *meta.dictionary_page_offset;
      }
      const int64_t end = std::min<int64_t>(at + meta.total_compressed_size, static_cast<int64_t>(footer_at));
      if (at < 4 || at > end) throw InvalidFile(name + ": chunk offset " + std::to_string(at) + " outside the file");
      while (at < end) {
        parquet::thrift::CompactReader in(bytes + at, static_cast<size_t>(end - at), at);
        const format::PageHeader h = format::read_page_header(in);
        at += static_cast<int64_t>(in.position());
        if (h.compressed_page_size < 0 || h.uncompressed_page_size < 0 || h.compressed_page_size > end - at) {
          throw InvalidFile(name + ": page at " + std::to_string(at) + " exceeds its chunk");
        }
        PageBody page{bytes + at, static_cast<size_t>(h.compressed_page_size),
                      static_cast<size_t>(h.uncompressed_page_size), true};
        if (h.data_page_header_v2) {
          const format::DataPageHeaderV2& v2 = *h.data_page_header_v2;
          const int64_t levels = int64_t{v2.repetition_levels_byte_length} + v2.definition_levels_byte_length;
          if (levels < 0 || levels > h.compressed_page_size || levels > h.uncompressed_page_size) {
            throw InvalidFile(name + ": page at " + std::to_string(at) + " has bad level sizes");
          }
          page.data += levels;
          page.size -= static_cast<size_t>(levels);
          page.uncompressed -= static_cast<size_t>(levels);
          page.compressed = v2.is_compressed;
        }
        if (h.type != format::page_type::kIndexPage) {
          out.pages.push_back(page);
          out.uncompressed += page.uncompressed;
        }
        at += h.compressed_page_size;
      }
      chunks.push_back(std::move(out));
    }
  }
  return chunks;
}

// The bytes a decoded Table holds: every column's values (a byte array column's bytes and offsets), validity,
// list offsets and element validity, at every list level.
inline size_t table_bytes(const Table& table) {
  size_t total = 0;
  for (const Column& c : table.columns) {
    std::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, ByteArrays>) {
            total += v.bytes.size() + v.offsets.size() * sizeof(int64_t);
          } else {
            total += v.size() * sizeof(v[0]);
          }
        },
        c.values);
    total += c.validity.size() + c.list_offsets.size() * sizeof(int64_t) + c.element_validity.size();
    for (const ListLevel& level : c.inner_lists) {
      total += level.offsets.size() * sizeof(int64_t) + level.validity.size();
    }
  }
  return total;
}

struct FloorTimes {
  double decompress_s = 0;  // every page, decompressed (or copied) on `threads` threads
  double copy_s = 0;        // the output's bytes copied once, on `threads` threads
  size_t pages = 0, compressed_bytes = 0, decompressed_bytes = 0;
  double total() const { return decompress_s + copy_s; }
};

// Times one decompression of every page of `chunks` (each thread decompressing the pages of the chunks it takes,
// largest chunks first, into a buffer of its own that it reuses, as the reader does) and one memcpy of
// `output_bytes` (in blocks of `copy_block` bytes, each from and to memory that has been written before, so that
// no page fault is timed; blocks far larger than the caches cost what one copy of the whole does). The pages'
// input is in memory already: no file read is timed.
inline FloorTimes codec_floor(const std::vector<ChunkPages>& chunks, size_t output_bytes, int threads,
                              size_t copy_block = size_t{256} << 20) {
  threads = resolve_threads(threads);
  FloorTimes t;
  std::vector<size_t> order(chunks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return chunks[a].uncompressed > chunks[b].uncompressed; });
  for (const ChunkPages& c : chunks) {
    t.pages += c.pages.size();
    t.decompressed_bytes += c.uncompressed;
    for (const PageBody& p : c.pages) t.compressed_bytes += p.size;
  }
  // Each thread's page buffer, sized (and written) before the clock starts.
  size_t largest = 0;
  for (const ChunkPages& c : chunks) {
    for (const PageBody& p : c.pages) largest = std::max(largest, p.uncompressed);
  }
  std::vector<std::vector<uint8_t>> buffers(static_cast<size_t>(threads), std::vector<uint8_t>(largest + 64, 1));
  std::vector<uint8_t> in_use(buffers.size(), 0);
  const auto clock = [] { return std::chrono::steady_clock::now(); };
  const auto start = clock();
  // parallel_for gives no thread number: each task takes a free buffer (at most `threads` run at once).
  std::mutex lock;
  parallel_for(order.size(), threads, [&](size_t i) {
    size_t slot = 0;
    {
      std::lock_guard<std::mutex> hold(lock);
      while (in_use[slot]) ++slot;
      in_use[slot] = 1;
    }
    const ChunkPages& c = chunks[order[i]];
    uint8_t* dst = buffers[slot].data();
    for (const PageBody& p : c.pages) {
      parquet::decompress(p.compressed ? c.codec : parquet::Codec::kUncompressed, p.data, p.size, dst, p.uncompressed);
    }
    std::lock_guard<std::mutex> hold(lock);
    in_use[slot] = 0;
  });
  const auto decompressed = clock();
  t.decompress_s = std::chrono::duration<double>(decompressed - start).count();
  const size_t block = std::max<size_t>(1, std::min(copy_block, output_bytes));
  std::vector<uint8_t> from(block, 2), to(block, 3);
  const auto copy_start = clock();
  for (size_t done = 0; done < output_bytes; done += block) {
    const auto n = static_cast<int64_t>(std::min(block, output_bytes - done));
    parallel_for_blocks(0, n, 1 << 20, threads, [&](int64_t b, int64_t e) {
      std::memcpy(to.data() + b, from.data() + b, static_cast<size_t>(e - b));
    });
  }
  t.copy_s = std::chrono::duration<double>(clock() - copy_start).count();
  return t;
}

}  // namespace feedline::bench
