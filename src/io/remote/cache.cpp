#include "io/remote/cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "io/remote/fetch.h"

namespace feedline::remote::detail {
namespace {

constexpr const char* kLayout = "feedline-cache-v1";

std::string errno_text() { return std::strerror(errno); }

// FNV-1a, 64 bits, twice with different offsets: a name for the folder (collisions are caught by the folder's
// description file).
std::string name_hash(const std::string& text) {
  uint64_t a = 14695981039346656037ull;
  uint64_t b = 1099511628211ull * 31 + 7;
  for (const unsigned char c : text) {
    a = (a ^ c) * 1099511628211ull;
    b = (b ^ c) * 1099511628211ull + 0x9e3779b97f4a7c15ull;
  }
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return out;
}

void make_dirs(const std::string& path) {
  std::string at;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || (path[i] == '/' && i > 0)) {
      at = path.substr(0, i);
      if (::mkdir(at.c_str(), 0755) != 0 && errno != EEXIST) {
        throw IoError("cache folder " + at + ": cannot create: " + errno_text(), errno);
      }
    }
  }
}

std::string entry_name(ByteRange r) { return std::to_string(r.offset) + "-" + std::to_string(r.size); }

bool parse_entry_name(const char* name, ByteRange* r) {
  long long offset = 0, size = 0;
  char tail = 0;
  if (std::sscanf(name, "%lld-%lld%c", &offset, &size, &tail) != 2 || offset < 0 || size <= 0) return false;
  *r = {offset, size};
  return entry_name(*r) == name;  // nothing else after the numbers: not a lock or a temporary file
}

std::vector<std::pair<ByteRange, std::string>> list_entries(const std::string& dir) {
  std::vector<std::pair<ByteRange, std::string>> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    ByteRange r;
    if (parse_entry_name(e->d_name, &r)) out.emplace_back(r, dir + "/" + e->d_name);
  }
  ::closedir(d);
  return out;
}

// Opens an entry for reading with a shared lock; null when it is gone (evicted between listing and opening) or its
// size is not the one its name says (a file no one should trust).
std::shared_ptr<CacheEntry> open_entry(const std::string& path, ByteRange r) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  while (::flock(fd, LOCK_SH) != 0 && errno == EINTR) {
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_nlink == 0 || st.st_size != r.size) {
    ::close(fd);
    return nullptr;
  }
  ::futimens(fd, nullptr);  // used now: last in line for eviction
  return std::make_shared<CacheEntry>(fd, r, path);
}

bool pid_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

std::atomic<int> g_temp_counter{0};

}  // namespace

CacheEntry::CacheEntry(int fd, ByteRange range, std::string path) : fd_(fd), range_(range), path_(std::move(path)) {}

CacheEntry::~CacheEntry() { ::close(fd_); }

void CacheEntry::read(int64_t offset, size_t size, void* out) const {
  auto* dst = static_cast<char*>(out);
  int64_t at = offset - range_.offset;
  while (size > 0) {
    const ssize_t got = ::pread(fd_, dst, size, static_cast<off_t>(at));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw IoError(path_ + ": cache entry read failed at offset " + std::to_string(at));
    dst += got;
    at += got;
    size -= static_cast<size_t>(got);
  }
}

DiskCache::DiskCache(std::string dir, int64_t limit) : dir_(std::move(dir)), limit_(limit) {}

std::shared_ptr<DiskCache> DiskCache::current() {
  static std::mutex mu;
  static std::shared_ptr<DiskCache> cache;
  const RemoteOptions o = options();
  std::lock_guard<std::mutex> lock(mu);
  if (o.cache_dir.empty()) {
    cache.reset();
  } else if (!cache || cache->dir() != o.cache_dir + "/" + kLayout || cache->limit() != o.cache_limit) {
    cache = std::make_shared<DiskCache>(o.cache_dir + "/" + kLayout, o.cache_limit);
  }
  return cache;
}

std::string DiskCache::object_dir(const ObjectKey& key) {
  const std::string h = name_hash(key.url + "\n" + key.etag + "\n" + std::to_string(key.size));
  const std::string dir = dir_ + "/" + h.substr(0, 2) + "/" + h;
  const std::string description = key.url + "\n" + key.etag + "\n" + std::to_string(key.size) + "\n";
  {
    std::lock_guard<std::mutex> lock(dirs_mu_);
    const auto it = dirs_.find(description);
    if (it != dirs_.end()) return it->second;
  }
  // The description written once, atomically; a folder whose description is another object's is a collision of
  // the hash (astronomically rare), which gets a folder of its own.
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::string d = attempt == 0 ? dir : dir + "-" + name_hash(description);
    const std::string a = d + "/object";
    char buf[4096];
    const int fd = ::open(a.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      ::close(fd);
      if (n > 0 && std::string(buf, static_cast<size_t>(n)) == description) {
        std::lock_guard<std::mutex> lock(dirs_mu_);
        return dirs_[description] = d;
      }
      if (n > 0) continue;
    }
    make_dirs(d);
    const std::string tmp = a + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(g_temp_counter++);
    const int w = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w < 0) throw IoError("cache folder " + d + ": cannot write: " + errno_text(), errno);
    const bool ok = ::write(w, description.data(), description.size()) == static_cast<ssize_t>(description.size());
    ::close(w);
    if (!ok || ::rename(tmp.c_str(), a.c_str()) != 0) {
      ::unlink(tmp.c_str());
      throw IoError("cache folder " + d + ": cannot write: " + errno_text(), errno);
    }
    std::lock_guard<std::mutex> lock(dirs_mu_);
    return dirs_[description] = d;
  }
  return dir + "-" + name_hash(description);
}

std::shared_ptr<CacheEntry> DiskCache::find(const ObjectKey& key, int64_t offset) {
  const std::string dir = object_dir(key);
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::pair<ByteRange, std::string> best{{0, 0}, {}};
    for (auto& e : list_entries(dir)) {
      if (e.first.offset <= offset && e.first.end() > offset && e.first.end() > best.first.end()) best = e;
    }
    if (best.second.empty()) return nullptr;
    if (auto entry = open_entry(best.second, best.first)) return entry;
  }
  return nullptr;
}

int64_t DiskCache::next_start(const ObjectKey& key, int64_t offset) {
  int64_t next = key.size;
  for (auto& e : list_entries(object_dir(key))) {
    if (e.first.offset > offset) next = std::min(next, e.first.offset);
  }
  return next;
}

std::shared_ptr<CacheEntry> DiskCache::fill(const ObjectKey& key, ByteRange range,
                                            const std::function<void(int)>& download) {
  const std::string dir = object_dir(key);
  const std::string path = dir + "/" + entry_name(range);
  const std::string lock_path = path + ".lock";
  make_dirs(dir);  // again: someone may have removed the cache's folders since
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (auto entry = open_entry(path, range)) {
      add_cache_counts(1, 0, 0);
      return entry;
    }
    const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0) throw IoError("cache " + lock_path + ": cannot open: " + errno_text(), errno);
    while (::flock(lock, LOCK_EX) != 0 && errno == EINTR) {
    }
    // The lock file this process holds may have been removed by the downloader before it (which then made the
    // entry): look again.
    struct stat held {}, now {};
    if (::fstat(lock, &held) != 0 || ::stat(lock_path.c_str(), &now) != 0 || held.st_ino != now.st_ino) {
      ::close(lock);
      continue;
    }
    if (auto entry = open_entry(path, range)) {
      ::close(lock);
      add_cache_counts(1, 0, 0);
      return entry;
    }
    make_room(range.size);
    const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(g_temp_counter++);
    const int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int code = errno;
      ::unlink(lock_path.c_str());
      ::close(lock);
      throw IoError("cache " + tmp + ": cannot create: " + errno_text(), code);
    }
    try {
      download(fd);
      struct stat st {};
      if (::fstat(fd, &st) != 0 || st.st_size != range.size) {
        throw IoError("cache " + tmp + ": holds " + std::to_string(st.st_size) + " bytes after its download, not " +
                      std::to_string(range.size));
      }
      if (::rename(tmp.c_str(), path.c_str()) != 0) throw IoError("cache " + path + ": cannot rename: " + errno_text());
    } catch (...) {
      ::close(fd);
      ::unlink(tmp.c_str());
      ::unlink(lock_path.c_str());
      ::close(lock);
      throw;
    }
    ::close(fd);
    auto entry = open_entry(path, range);
    ::unlink(lock_path.c_str());
    ::close(lock);
    {
      std::lock_guard<std::mutex> guard(mu_);
      if (bytes_ >= 0) bytes_ += range.size;
    }
    add_cache_counts(0, 1, 0);
    if (entry) return entry;
  }
  throw IoError("cache " + path + ": the entry kept disappearing while it was made (a cache limit too small for "
                "what is being read at once?)");
}

void DiskCache::make_room(int64_t adding) {
  std::lock_guard<std::mutex> guard(mu_);
  if (bytes_ >= 0 && bytes_ + adding <= limit_) return;
  // Look at the whole cache: every process adds to it, so this process's count is only an estimate.
  struct Found {
    std::string path;
    int64_t size;
    int64_t mtime_ns;
  };
  std::vector<Found> entries;
  int64_t total = 0;
  DIR* top = ::opendir(dir_.c_str());
  if (top != nullptr) {
    while (dirent* a = ::readdir(top)) {
      if (a->d_name[0] == '.') continue;
      const std::string level = dir_ + "/" + a->d_name;
      DIR* mid = ::opendir(level.c_str());
      if (mid == nullptr) continue;
      while (dirent* b = ::readdir(mid)) {
        if (b->d_name[0] == '.') continue;
        const std::string object = level + "/" + b->d_name;
        DIR* inner = ::opendir(object.c_str());
        if (inner == nullptr) continue;
        while (dirent* c = ::readdir(inner)) {
          const std::string name = c->d_name;
          const std::string path = object + "/" + name;
          const size_t tmp = name.find(".tmp-");
          if (tmp != std::string::npos) {
            // A temporary file of a process that is gone: a download that never finished.
            const long pid = std::strtol(name.c_str() + tmp + 5, nullptr, 10);
            if (!pid_alive(pid)) ::unlink(path.c_str());
            continue;
          }
          ByteRange r;
          struct stat st {};
          if (!parse_entry_name(name.c_str(), &r) || ::stat(path.c_str(), &st) != 0) continue;
          total += st.st_size;
          entries.push_back({path, static_cast<int64_t>(st.st_size),
                             static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec});
        }
        ::closedir(inner);
      }
      ::closedir(mid);
    }
    ::closedir(top);
  }
  std::sort(entries.begin(), entries.end(), [](const Found& a, const Found& b) { return a.mtime_ns < b.mtime_ns; });
  int64_t evicted = 0;
  for (const Found& e : entries) {
    if (total + adding <= limit_) break;
    const int fd = ::open(e.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      // No one reads it: gone. A reader that opened it but has not locked it yet sees it unlinked and looks again.
      if (::unlink(e.path.c_str()) == 0) {
        total -= e.size;
        ++evicted;
      }
    }
    ::close(fd);
  }
  // Entries in use may hold more than the limit: the cache then stays above it until they are let go, rather than
  // failing the read.
  bytes_ = total;
  if (evicted > 0) add_cache_counts(0, 0, evicted);
}

}  // namespace feedline::remote::detail
