#include "feedline/io/file.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "feedline/io/error.h"
#include "io/remote/object.h"

namespace feedline {
namespace {

std::string errno_text() { return std::strerror(errno); }

}  // namespace

std::string read_file(const std::string& path) {
  if (is_remote_path(path)) return remote::detail::read_object(path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    const int code = errno;
    throw IoError(path + ": cannot open: " + errno_text(), code);
  }
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw IoError(path + ": read failed");
  return out;
}

void prefetch_file(const std::string& path) {
  if (is_remote_path(path)) remote::detail::prefetch_object(path);
}

int64_t file_size(const std::string& path) {
  if (is_remote_path(path)) return remote::stat(path).size;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw IoError(path + ": " + ec.message(), ec.value());
  return static_cast<int64_t>(size);
}

bool remove_tree(const std::string& path) noexcept {
  // Depth first (FTW_DEPTH), so a folder comes after what is in it; FTW_PHYS: links are not followed. A callback
  // that returns 0 lets the walk go on past an entry it could not remove.
  const auto remove_entry = [](const char* entry, const struct stat*, int, struct FTW*) -> int {
    std::remove(entry);
    return 0;
  };
  ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  struct stat st {};
  return ::lstat(path.c_str(), &st) != 0 && errno == ENOENT;
}

RandomAccessFile::RandomAccessFile(std::string path, int64_t tail_bytes) : path_(std::move(path)) {
  if (is_remote_path(path_)) {
    auto reader = std::make_shared<const remote::detail::ObjectReader>(path_, tail_bytes);
    size_ = reader->key().size;
    remote_ = std::move(reader);
    return;
  }
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    const int code = errno;
    throw IoError(path_ + ": cannot open: " + errno_text(), code);
  }
  struct stat st {};
  const bool stat_ok = ::fstat(fd_, &st) == 0;
  if (!stat_ok || !S_ISREG(st.st_mode)) {
    const std::string why = !stat_ok ? "cannot stat: " + errno_text()
                            : S_ISDIR(st.st_mode) ? std::string("is a directory")
                                                  : std::string("not a regular file");
    ::close(fd_);
    throw IoError(path_ + ": " + why, !stat_ok ? 0 : S_ISDIR(st.st_mode) ? EISDIR : 0);
  }
  size_ = static_cast<int64_t>(st.st_size);
}

RandomAccessFile::~RandomAccessFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RandomAccessFile::prefetch(const std::vector<remote::ByteRange>& ranges, bool ahead) const {
  if (remote_) remote_->prefetch(ranges, ahead);
}

void RandomAccessFile::read_at(int64_t offset, size_t size, void* out) const {
  if (remote_) {
    remote_->read(offset, size, out);
    return;
  }
  auto* dst = static_cast<char*>(out);
  while (size > 0) {
    const ssize_t got = ::pread(fd_, dst, size, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw IoError(path_ + ": read failed at offset " + std::to_string(offset) + ": " + errno_text());
    }
    if (got == 0) throw IoError(path_ + ": ends at offset " + std::to_string(offset) + " (file changed while reading?)");
    dst += got;
    offset += got;
    size -= static_cast<size_t>(got);
  }
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  if (is_remote_path(path_)) {
    throw InvalidArgument(path_ + ": feedline writes local files only; write here and upload with your storage's "
                          "own tools");
  }
  static std::atomic<int> counter{0};
  tmp_path_ = path_ + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  const auto parent = std::filesystem::path(path_).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) throw IoError(path_ + ": cannot create directory " + parent.string() + ": " + ec.message());
  }
  file_ = std::fopen(tmp_path_.c_str(), "wb");
  if (file_ == nullptr) {
    const int code = errno;
    throw IoError(path_ + ": cannot create " + tmp_path_ + ": " + errno_text(), code);
  }
  static thread_local char buffer[1 << 20];
  std::setvbuf(file_, buffer, _IOFBF, sizeof buffer);
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::remove(tmp_path_.c_str());
  }
}

void AtomicFile::write(const void* data, size_t size) {
  if (size == 0) return;
  if (std::fwrite(data, 1, size, file_) != size) throw IoError(path_ + ": write failed: " + errno_text());
  written_ += static_cast<int64_t>(size);
}

void AtomicFile::commit() {
  if (file_ == nullptr) throw IoError(path_ + ": already committed");
  const bool ok = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  std::fclose(file_);
  file_ = nullptr;
  if (!ok) {
    std::remove(tmp_path_.c_str());
    throw IoError(path_ + ": write failed: " + errno_text());
  }
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    const std::string why = errno_text();
    std::remove(tmp_path_.c_str());
    throw IoError(path_ + ": cannot rename from " + tmp_path_ + ": " + why);
  }
}

}  // namespace feedline
