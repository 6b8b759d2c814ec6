// Small file helpers shared by every reader and writer: whole-file reads with clear errors, and writes that
// never leave a half-written output behind (write to a temporary file beside the target, then rename). The reads take
// a URL where they take a path (s3://, gs://, http://, https://: feedline/io/remote.h); writes are local.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "feedline/io/remote.h"

namespace feedline {

namespace remote::detail {
class ObjectReader;
}

// Reads the whole file (or remote object) into memory. Throws IoError naming the path on any failure.
std::string read_file(const std::string& path);

// For a URL: starts fetching the whole object in the background (within RemoteOptions' limits), so that a
// read_file() of it later takes the bytes from there. Nothing for a local path. Throws IoError naming the URL when
// the object cannot be opened.
void prefetch_file(const std::string& path);

// Size of a file (or remote object) in bytes; throws IoError when it cannot be read.
int64_t file_size(const std::string& path);

// Removes a file or a folder with everything in it, never following a symbolic link (the link goes, not what it
// points to). Best effort, for scratch folders: it goes on past what it cannot remove, and says whether nothing is
// left at `path` (a missing path counts as removed). POSIX nftw(), not std::filesystem::remove_all(): pip torch's
// libtorch.so exports a std::filesystem of its own that programs linking it bind to, and its
// remove_all(path, error_code&) crashed on a folder tree (a null call, seen with torch 2.11 on a GPU machine).
bool remove_tree(const std::string& path) noexcept;

// A file opened for reads at any offset (pread), from many threads at once. Throws IoError naming the path
// when it cannot be opened or read, or when it is shorter than a read asks (changed while reading). A URL opens the
// remote object: reads are range requests (or come from what prefetch() fetched, or from the disk cache).
class RandomAccessFile {
 public:
  explicit RandomAccessFile(std::string path) : RandomAccessFile(std::move(path), 0) {}
  // For a URL, the request that opens it also asks for the file's last `tail_bytes` (a footer read next), which
  // later reads of those bytes take without a request of their own.
  RandomAccessFile(std::string path, int64_t tail_bytes);
  ~RandomAccessFile();
  RandomAccessFile(const RandomAccessFile&) = delete;
  RandomAccessFile& operator=(const RandomAccessFile&) = delete;

  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Reads bytes [offset, offset + size) into `out`.
  void read_at(int64_t offset, size_t size, void* out) const;
  bool is_remote() const { return remote_ != nullptr; }
  // Starts fetching these ranges of a remote file in the background, merged as RemoteOptions says, at most
  // RemoteOptions::max_in_flight requests at once over the process; later reads within them wait for them rather
  // than asking again. `ahead`: for reads to come later (a loader's next blocks), fetched one after another in the
  // order asked; false: for a read about to be made (a Parquet read's chunks), all at once and before any fetched
  // ahead. Nothing for a local file (the page cache does that job).
  void prefetch(const std::vector<remote::ByteRange>& ranges, bool ahead = true) const;

 private:
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
  std::shared_ptr<const remote::detail::ObjectReader> remote_;
};

// Writes to `<path>.tmp-<pid>-<n>` and renames onto `path` on commit(). Destroyed without commit(), it
// removes the temporary file, so a failed or interrupted write leaves the old output (or nothing) in place.
// Not thread-safe: one writer per object.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);
  void write(std::string_view s) { write(s.data(), s.size()); }
  int64_t bytes_written() const { return written_; }
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string tmp_path_;
  std::FILE* file_ = nullptr;
  int64_t written_ = 0;
};

}  // namespace feedline
