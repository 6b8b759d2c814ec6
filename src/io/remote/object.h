// Internal to the remote layer: one object opened for reads (what a RandomAccessFile of a URL holds), and the
// process's store of ranges fetched ahead of their reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "feedline/io/remote.h"
#include "io/remote/cache.h"
#include "io/remote/url.h"

namespace feedline::remote::detail {

class ObjectReader {
 public:
  // Opens `url`: its size and ETag from a listing of the last minutes, else from one request, which asks for the
  // last `tail_bytes` of it (kept, for a footer) when tail_bytes > 0, else a HEAD. Throws IoError naming the URL.
  ObjectReader(const std::string& url, int64_t tail_bytes);
  ~ObjectReader();
  ObjectReader(const ObjectReader&) = delete;
  ObjectReader& operator=(const ObjectReader&) = delete;

  const Url& url() const { return url_; }
  const ObjectKey& key() const { return key_; }
  // Bytes [offset, offset + size): from the tail read at open, ranges fetched ahead (waiting for them), the disk
  // cache, or a request. Throws IoError naming the URL for a range past the end or a read that fails.
  void read(int64_t offset, size_t size, void* out) const;
  // Starts fetching these ranges (merged by RemoteOptions' limits) in the background; reads within them then wait
  // for them rather than asking again.
  void prefetch(const std::vector<ByteRange>& ranges, bool ahead = true) const;

 private:
  Url url_;
  ObjectKey key_;
  std::string tail_;
  int64_t tail_offset_ = 0;
};

// The limits planned ranges are merged with now (RemoteOptions::hole_limit, range_limit, or measured).
void merge_limits(int64_t* hole_limit, int64_t* range_limit);

// Objects seen in listings lately, so that opening one needs no request of its own.
void remember_objects(const std::vector<ObjectInfo>& objects);
std::optional<ObjectInfo> recall_object(const std::string& url);

// The keys a listing asks for per page (ListObjectsV2's max-keys); 0: the server's default (1000). For tests, which
// see many pages of a few objects so.
void set_listing_page_keys(int keys);

// The whole object, for read_file(): from what prefetch_object() fetched, the disk cache, or one request.
std::string read_object(const std::string& url);
// Starts fetching the whole object (for a read_file() to come).
void prefetch_object(const std::string& url);

}  // namespace feedline::remote::detail
