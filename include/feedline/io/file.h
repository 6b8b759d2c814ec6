// Small file helpers shared by every reader and writer: whole-file reads with clear errors, and writes that
// never leave a half-written output behind (write to a temporary file beside the target, then rename).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace feedline {

// Reads the whole file into memory. Throws IoError naming the path on any failure.
std::string read_file(const std::string& path);

// Size of a file in bytes; throws IoError when it cannot be read.
int64_t file_size(const std::string& path);

// Removes a file or a folder with everything in it, never following a symbolic link (the link goes, not what it
// points to). Best effort, for scratch folders: it goes on past what it cannot remove, and says whether nothing is
// left at `path` (a missing path counts as removed). POSIX nftw(), not std::filesystem::remove_all(): pip torch's
// libtorch.so exports a std::filesystem of its own that programs linking it bind to, and its
// remove_all(path, error_code&) crashed on a folder tree (a null call, seen with torch 2.11 on a GPU machine).
bool remove_tree(const std::string& path) noexcept;

// A file opened for reads at any offset (pread), from many threads at once. Throws IoError naming the path
// when it cannot be opened or read, or when it is shorter than a read asks (changed while reading).
class RandomAccessFile {
 public:
  explicit RandomAccessFile(std::string path);
  ~RandomAccessFile();
  RandomAccessFile(const RandomAccessFile&) = delete;
  RandomAccessFile& operator=(const RandomAccessFile&) = delete;

  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Reads bytes [offset, offset + size) into `out`.
  void read_at(int64_t offset, size_t size, void* out) const;

 private:
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
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
