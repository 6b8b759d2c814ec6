// Internal to the remote layer: the disk cache (RemoteOptions::cache_dir), shared by the processes of one host.
//
// An entry is one byte range of one version of one object: a file named by its range, in a folder named by a hash
// of the URL, the ETag and the size (so another version of the object is another folder, never mixed with this
// one), beside a file holding the URL, ETag and size that the hash is checked against. An entry is written to a
// temporary file and renamed into place, so a process killed while it downloads leaves no entry, only a temporary
// file that a later eviction pass removes; and one is trusted only when its size is the size its name says.
//
// A download takes an exclusive lock on the entry's lock file: a second process (or thread) that wants the same
// entry waits on that lock and then reads what the first wrote. A reader holds a shared lock on the entry's file
// for as long as it has the entry open; eviction removes only entries it can lock exclusively (that no one reads),
// least recently used first (a read sets the entry's modification time).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "feedline/io/remote.h"

namespace feedline::remote::detail {

// One version of one object.
struct ObjectKey {
  std::string url;
  std::string etag;
  int64_t size = 0;
};

// A cached range of an object, open for reading: no process evicts it while this lives.
class CacheEntry {
 public:
  CacheEntry(int fd, ByteRange range, std::string path);
  ~CacheEntry();
  CacheEntry(const CacheEntry&) = delete;
  CacheEntry& operator=(const CacheEntry&) = delete;
  const ByteRange& range() const { return range_; }
  // Reads bytes [offset, offset + size) of the object, which must lie within range().
  void read(int64_t offset, size_t size, void* out) const;

 private:
  int fd_;
  ByteRange range_;
  std::string path_;
};

class DiskCache {
 public:
  DiskCache(std::string dir, int64_t limit);

  // The cache of RemoteOptions::cache_dir, made again when the options change; null when there is none.
  static std::shared_ptr<DiskCache> current();

  // The entry holding the byte at `offset` that reaches furthest, or null when none holds it.
  std::shared_ptr<CacheEntry> find(const ObjectKey& key, int64_t offset);
  // The start of the first entry past `offset` (the end of a gap before it), or the object's size.
  int64_t next_start(const ObjectKey& key, int64_t offset);
  // The entry of exactly `range`: the one there, else made by `download(fd)`, which writes the range's bytes at
  // offsets 0.. of the file (and throws when it cannot). Processes and threads that want the same entry at once
  // download it once. Removes entries no one reads, least recently used first, to make room.
  std::shared_ptr<CacheEntry> fill(const ObjectKey& key, ByteRange range, const std::function<void(int fd)>& download);

  const std::string& dir() const { return dir_; }
  int64_t limit() const { return limit_; }

 private:
  std::string object_dir(const ObjectKey& key);
  void make_room(int64_t adding);

  std::string dir_;
  int64_t limit_;
  std::mutex mu_;
  int64_t bytes_ = -1;  // what this process believes the cache holds; -1 until it has looked
  std::mutex dirs_mu_;
  std::unordered_map<std::string, std::string> dirs_;  // an object's folder, by its description
};

}  // namespace feedline::remote::detail
