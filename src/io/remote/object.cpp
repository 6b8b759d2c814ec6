#include "io/remote/object.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "feedline/io/error.h"
#include "io/remote/fetch.h"

namespace feedline::remote::detail {
namespace {

using Clock = std::chrono::steady_clock;

// What the disk cache fetches for a read that nothing planned: a small object whole (a shard, an image), a large one
// in aligned blocks of this size.
constexpr int64_t kWholeObjectLimit = int64_t{64} << 20;
constexpr int64_t kCacheBlock = int64_t{16} << 20;
// How long a range fetched ahead and never read is kept from eviction: past it, its reader has given it up.
constexpr auto kUnreadLifetime = std::chrono::seconds(60);
// How long a listing's sizes and ETags stand in for a request of the object's own.
constexpr auto kListingLifetime = std::chrono::minutes(10);

std::string object_id(const ObjectKey& k) { return k.url + "\n" + k.etag + "\n" + std::to_string(k.size); }

// Threads that wait for the disk cache's downloads (its locks and files are blocking calls); the transfers themselves
// run on the fetch engine.
class FillThreads {
 public:
  explicit FillThreads(int n) {
    for (int i = 0; i < n; ++i) threads_.emplace_back([this] { run(); });
  }
  ~FillThreads() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

 private:
  void run() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
        if (stop_) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// Ranges fetched ahead of their reads, for every object of the process. Without a disk cache their bytes are held
// here, at most RemoteOptions::memory_limit of them (what was read least recently goes first; a range fetched ahead
// that would not fit is not fetched ahead); with one, they go to the cache, and here only while they download.
class RangeStore {
 public:
  static RangeStore& get() {
    static RangeStore store;
    return store;
  }

  // `wanted`: the bytes of the piece that reads will ask for (the rest are holes merged over); once they have been
  // read, the piece's memory is let go.
  void prefetch(const Url& url, const ObjectKey& key, ByteRange piece, int64_t wanted, bool ahead) {
    auto cache = DiskCache::current();
    std::lock_guard<std::mutex> lock(mu_);
    keys_by_url_[key.url] = key;
    auto& pieces = pieces_[object_id(key)];
    if (Piece* held = covering(pieces, piece)) {
      // Held already. Partly read (an epoch that did not read all it asked for): its bytes serve this prefetch's
      // reads, and it is kept until they have been made. Not read yet: the same reads asked for twice.
      if (held->bytes && *held->read > 0) {
        *held->read = 0;
        *held->wanted = std::min(wanted, piece.size);
      }
      return;
    }
    Piece p;
    p.range = piece;
    p.last_use = ++clock_;
    *p.wanted = std::min(wanted, piece.size);
    if (cache) {
      auto promise = std::make_shared<std::promise<void>>();
      p.filled = promise->get_future().share();
      pieces.emplace(piece.offset, p);
      const std::string id = object_id(key);
      fill_threads().post([this, cache, url, key, piece, promise, id, ahead] {
        try {
          fill_unless_held(*cache, url, key, piece, ahead);
          promise->set_value();
        } catch (...) {
          promise->set_exception(std::current_exception());
        }
        std::lock_guard<std::mutex> lock(mu_);
        auto it = pieces_.find(id);
        if (it != pieces_.end()) {
          it->second.erase(piece.offset);
          if (it->second.empty()) forget(it);
        }
      });
      return;
    }
    const int64_t limit = options().memory_limit;
    if (!make_room(piece.size, limit)) return;
    p.bytes = std::shared_ptr<char[]>(new char[static_cast<size_t>(piece.size)]);
    Request r;
    r.url = url;
    r.offset = piece.offset;
    r.size = piece.size;
    r.etag = key.etag;
    r.out = p.bytes.get();
    r.background = ahead;
    r.hold = p.bytes;
    p.fetched = submit(std::move(r));
    held_ += piece.size;
    pieces.emplace(piece.offset, p);
  }

  void read(const Url& url, const ObjectKey& key, int64_t offset, int64_t size, char* out) {
    const int64_t end = offset + size;
    const std::string id = object_id(key);
    std::shared_ptr<DiskCache> cache;
    bool cache_known = false;
    while (offset < end) {
      // A range fetched ahead that holds `offset`: wait for it.
      Piece found;
      int64_t gap_end = end;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto obj = pieces_.find(id);
        if (obj != pieces_.end()) {
          auto& pieces = obj->second;
          auto it = pieces.upper_bound(offset);
          if (it != pieces.end()) gap_end = std::min(gap_end, it->first);
          if (it != pieces.begin() && std::prev(it)->second.range.end() > offset) {
            found = std::prev(it)->second;
            std::prev(it)->second.last_use = ++clock_;
          }
        }
      }
      if (found.range.size > 0) {
        const auto start = Clock::now();
        if (found.bytes) {
          try {
            found.fetched.get();
          } catch (...) {
            // A later read asks again rather than taking this failure for its answer.
            std::lock_guard<std::mutex> lock(mu_);
            drop(id, found);
            throw;
          }
          add_wait_seconds(std::chrono::duration<double>(Clock::now() - start).count());
          const int64_t n = std::min(end, found.range.end()) - offset;
          std::memcpy(out, found.bytes.get() + (offset - found.range.offset), static_cast<size_t>(n));
          consumed(id, found, n);
          out += n;
          offset += n;
          continue;
        }
        found.filled.get();  // in the disk cache now, read below
        add_wait_seconds(std::chrono::duration<double>(Clock::now() - start).count());
      }
      if (!cache_known) {
        cache = DiskCache::current();
        cache_known = true;
      }
      if (!cache) {
        // Nothing fetched ahead and no cache: ask for what is missing, up to the next range fetched ahead.
        const auto start = Clock::now();
        Request r;
        r.url = url;
        r.offset = offset;
        r.size = gap_end - offset;
        r.etag = key.etag;
        r.out = out;
        fetch(std::move(r));
        add_wait_seconds(std::chrono::duration<double>(Clock::now() - start).count());
        out += gap_end - offset;
        offset = gap_end;
        continue;
      }
      auto entry = cache->find(key, offset);
      if (!entry) {
        const auto start = Clock::now();
        // A small object whole, else the aligned block that holds `offset`.
        ByteRange block{0, key.size};
        if (key.size > kWholeObjectLimit) {
          block.offset = offset / kCacheBlock * kCacheBlock;
          block.size = std::min(kCacheBlock, key.size - block.offset);
        }
        entry = fill_entry(*cache, url, key, block);
        add_wait_seconds(std::chrono::duration<double>(Clock::now() - start).count());
      } else {
        add_cache_counts(1, 0, 0);
      }
      const int64_t n = std::min(end, entry->range().end()) - offset;
      entry->read(offset, static_cast<size_t>(n), out);
      out += n;
      offset += n;
    }
  }

  // The object of `url` that ranges were fetched ahead for lately, if any.
  std::optional<ObjectKey> key_of(const std::string& url) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = keys_by_url_.find(url);
    if (it == keys_by_url_.end()) return std::nullopt;
    return it->second;
  }

 private:
  struct Piece {
    ByteRange range{0, 0};
    // The bytes reads will take from it (the rest are holes merged over), and those read so far, shared by its
    // copies; a prefetch that asks again for what it holds after reads began counts them anew.
    std::shared_ptr<int64_t> wanted = std::make_shared<int64_t>(0);
    std::shared_ptr<int64_t> read = std::make_shared<int64_t>(0);
    std::shared_ptr<char[]> bytes;             // memory: the range's bytes, once `fetched` is ready
    std::shared_future<Response> fetched;
    std::shared_future<void> filled;           // disk: the range's entry is in the cache
    uint64_t last_use = 0;
    Clock::time_point arrived_by = Clock::now();  // when it was asked for
  };

  // Counts `n` bytes read from a memory piece; a piece whose wanted bytes have all been read is let go.
  void consumed(const std::string& id, const Piece& piece, int64_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    *piece.read += n;
    if (*piece.read >= *piece.wanted) drop(id, piece);
  }

  // Lets a memory piece go (under mu_), unless another has taken its place.
  void drop(const std::string& id, const Piece& piece) {
    auto obj = pieces_.find(id);
    if (obj == pieces_.end()) return;
    auto it = obj->second.find(piece.range.offset);
    if (it == obj->second.end() || it->second.bytes != piece.bytes) return;
    held_ -= piece.range.size;
    obj->second.erase(it);
    if (obj->second.empty()) forget(obj);
  }

  // An object without ranges fetched ahead any more (under mu_).
  void forget(std::unordered_map<std::string, std::map<int64_t, Piece>>::iterator obj) {
    keys_by_url_.erase(obj->first.substr(0, obj->first.find('\n')));
    pieces_.erase(obj);
  }

  static FillThreads& fill_threads() {
    static FillThreads threads(8);
    return threads;
  }

  static std::shared_ptr<CacheEntry> fill_entry(DiskCache& cache, const Url& url, const ObjectKey& key,
                                                ByteRange range, bool background = false) {
    return cache.fill(key, range, [&](int fd) {
      Request r;
      r.url = url;
      r.offset = range.offset;
      r.size = range.size;
      r.etag = key.etag;
      r.fd = fd;
      r.background = background;
      fetch(std::move(r));
    });
  }

  // Fills the range's entry unless one entry already holds all of it (the whole object, read before): a read within
  // it then takes it from there.
  static void fill_unless_held(DiskCache& cache, const Url& url, const ObjectKey& key, ByteRange range,
                               bool background) {
    const auto held = cache.find(key, range.offset);
    if (held && held->range().end() >= range.end()) return;
    fill_entry(cache, url, key, range, background);
  }

  // The piece that holds all of `r`, or null.
  static Piece* covering(std::map<int64_t, Piece>& pieces, ByteRange r) {
    auto it = pieces.upper_bound(r.offset);
    if (it == pieces.begin() || std::prev(it)->second.range.end() < r.end()) return nullptr;
    return &std::prev(it)->second;
  }

  // Frees memory ranges that have arrived, read least recently first, until `size` more fits; false when it will not.
  bool make_room(int64_t size, int64_t limit) {
    // Ranges fetched ahead and not read yet are what the prefetch is for: they go only once they are stale (their
    // reader gave them up). Ranges read from go first, least recently read first.
    const auto now = Clock::now();
    while (held_ + size > limit) {
      std::map<int64_t, Piece>* oldest_map = nullptr;
      std::map<int64_t, Piece>::iterator oldest;
      for (auto& [id, pieces] : pieces_) {
        for (auto it = pieces.begin(); it != pieces.end(); ++it) {
          const Piece& p = it->second;
          if (!p.bytes || p.fetched.wait_for(std::chrono::seconds(0)) != std::future_status::ready) continue;
          if (*p.read == 0 && now - p.arrived_by < kUnreadLifetime) continue;
          if (oldest_map == nullptr || p.last_use < oldest->second.last_use) {
            oldest_map = &pieces;
            oldest = it;
          }
        }
      }
      if (oldest_map == nullptr) return false;
      held_ -= oldest->second.range.size;
      oldest_map->erase(oldest);  // an object's map left empty goes with its next use or its last piece's read
    }
    return true;
  }

  std::mutex mu_;
  std::unordered_map<std::string, std::map<int64_t, Piece>> pieces_;
  std::unordered_map<std::string, ObjectKey> keys_by_url_;
  int64_t held_ = 0;
  uint64_t clock_ = 0;
};

std::mutex g_listing_mu;
std::unordered_map<std::string, std::pair<ObjectInfo, Clock::time_point>> g_listed;

}  // namespace

void remember_objects(const std::vector<ObjectInfo>& objects) {
  std::lock_guard<std::mutex> lock(g_listing_mu);
  const auto now = Clock::now();
  if (g_listed.size() > 1000000) g_listed.clear();
  for (const auto& o : objects) g_listed[o.url] = {o, now};
}

std::optional<ObjectInfo> recall_object(const std::string& url) {
  std::lock_guard<std::mutex> lock(g_listing_mu);
  auto it = g_listed.find(url);
  if (it == g_listed.end() || Clock::now() - it->second.second > kListingLifetime) return std::nullopt;
  return it->second.first;
}

ObjectReader::ObjectReader(const std::string& url, int64_t tail_bytes) : url_(parse_url(url)) {
  key_.url = url_.text;
  if (auto known = recall_object(url_.text); known && tail_bytes <= 0) {
    key_.size = known->size;
    key_.etag = known->etag;
    return;
  }
  Request r;
  r.url = url_;
  if (tail_bytes > 0) {
    r.suffix = tail_bytes;
    Response resp = fetch(std::move(r));
    if (resp.object_size < 0) throw IoError(url_.text + ": the server did not say the object's size");
    key_.size = resp.object_size;
    key_.etag = resp.etag;
    tail_ = std::move(resp.body);
    tail_offset_ = resp.first_byte;
    if (tail_offset_ + static_cast<int64_t>(tail_.size()) != key_.size) {
      throw IoError(url_.text + ": the end of the object came back as " + std::to_string(tail_.size()) +
                    " bytes from offset " + std::to_string(tail_offset_) + " of " + std::to_string(key_.size));
    }
    return;
  }
  r.method = Method::kHead;
  const Response resp = fetch(std::move(r));
  if (resp.object_size < 0) throw IoError(url_.text + ": the server did not say the object's size");
  key_.size = resp.object_size;
  key_.etag = resp.etag;
}

ObjectReader::~ObjectReader() = default;

void ObjectReader::read(int64_t offset, size_t size, void* out) const {
  if (offset < 0 || offset + static_cast<int64_t>(size) > key_.size) {
    throw IoError(url_.text + ": ends at offset " + std::to_string(key_.size) + ", a read asked for bytes " +
                  std::to_string(offset) + "-" + std::to_string(offset + static_cast<int64_t>(size)));
  }
  if (size == 0) return;
  auto* dst = static_cast<char*>(out);
  int64_t end = offset + static_cast<int64_t>(size);
  const int64_t tail_end = tail_offset_ + static_cast<int64_t>(tail_.size());
  // The part of the read that the tail holds is copied from it (a chunk that ends in the footer's request needs only
  // its beginning asked for); the rest comes from the store.
  if (!tail_.empty() && end > tail_offset_ && end <= tail_end) {
    const int64_t from = std::max(offset, tail_offset_);
    std::memcpy(dst + (from - offset), tail_.data() + (from - tail_offset_), static_cast<size_t>(end - from));
    end = from;
    // What is left ends where the tail begins (the rest of a footer longer than the tail): asked for as it is, never
    // as the whole object the disk cache takes for a small object's unplanned reads.
    if (end > offset) RangeStore::get().prefetch(url_, key_, {offset, end - offset}, end - offset, /*ahead=*/false);
  }
  if (end > offset) RangeStore::get().read(url_, key_, offset, end - offset, dst);
}

void ObjectReader::prefetch(const std::vector<ByteRange>& ranges, bool ahead) const {
  int64_t hole = 0, limit = 0;
  merge_limits(&hole, &limit);
  std::vector<ByteRange> wanted;
  const int64_t tail_end = tail_offset_ + static_cast<int64_t>(tail_.size());
  for (ByteRange r : ranges) {
    r.offset = std::max<int64_t>(0, r.offset);
    const int64_t end = std::min(key_.size, r.end());
    // What the tail holds needs no request.
    const int64_t stop = !tail_.empty() && end > tail_offset_ && end <= tail_end ? std::max(r.offset, tail_offset_)
                                                                                 : end;
    if (stop > r.offset) wanted.push_back({r.offset, stop - r.offset});
  }
  for (const ByteRange& piece : coalesce_ranges(wanted, hole, limit)) {
    int64_t asked = 0;
    for (const ByteRange& w : wanted) {
      asked += std::max<int64_t>(0, std::min(w.end(), piece.end()) - std::max(w.offset, piece.offset));
    }
    RangeStore::get().prefetch(url_, key_, piece, asked, ahead);
  }
}

std::string read_object(const std::string& url) {
  // Fetched ahead (prefetch_object): from there.
  const Url u = parse_url(url);
  if (auto key = RangeStore::get().key_of(u.text)) {
    std::string out(static_cast<size_t>(key->size), '\0');
    if (!out.empty()) RangeStore::get().read(u, *key, 0, key->size, out.data());
    return out;
  }
  if (!DiskCache::current()) {
    // One request: the whole object, its length from the answer.
    const auto start = Clock::now();
    Request r;
    r.url = parse_url(url);
    if (auto known = recall_object(r.url.text)) r.etag = known->etag;
    Response resp = fetch(std::move(r));
    add_wait_seconds(std::chrono::duration<double>(Clock::now() - start).count());
    return std::move(resp.body);
  }
  ObjectReader reader(url, 0);
  std::string out(static_cast<size_t>(reader.key().size), '\0');
  reader.read(0, out.size(), out.data());
  return out;
}

void prefetch_object(const std::string& url) {
  const ObjectReader reader(url, 0);
  if (reader.key().size > 0) reader.prefetch({{0, reader.key().size}});
}

}  // namespace feedline::remote::detail
