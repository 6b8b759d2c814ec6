// TarShardSource: WebDataset's grouping of tar members into samples (webdataset.tariterators), done once with
// libarchive to record where each image lies, so that samples can then be read in any order with pread.
#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <memory>
#include <optional>
#include <set>

#include "dataset/read_ahead.h"
#include "feedline/dataset/image_sources.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "io/parallel.h"

namespace feedline {

namespace {

// Remote shards indexed at once: each is a download, bounded by the network rather than by the cores.
constexpr int kRemoteIndexThreads = 8;

// A `.cls` member longer than this is no label.
constexpr int64_t kMaxLabelBytes = 64;

std::string at(const std::string& shard, const std::string& member) { return shard + ": member " + member + ": "; }

// base_plus_ext: ^((?:.*/|)[^.]+)[.]([^/]*)$. The key is the name up to the first dot of its last component, the
// suffix what follows; a last component starting with a dot makes the folder path itself the key when that path
// holds no dot (the regex's empty alternative). Nothing when the name does not split so.
std::optional<std::pair<std::string, std::string>> base_plus_ext(const std::string& name) {
  const size_t slash = name.rfind('/');
  const size_t start = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = name.find('.', start);
  if (dot == std::string::npos) return std::nullopt;
  if (dot > start) return std::make_pair(name.substr(0, dot), name.substr(dot + 1));
  // The last component starts with a dot: the key must be [^.]+ from the start, ending at that dot.
  if (dot == 0 || name.find('.') != dot) return std::nullopt;
  return std::make_pair(name.substr(0, dot), name.substr(dot + 1));
}

// tar_file_iterator's skip_meta: names matching ^__[^/]*__($|/).
bool is_metadata(const std::string& name) {
  if (name.compare(0, 2, "__") != 0) return false;
  const size_t end = name.find('/');
  const std::string first = name.substr(0, end);
  return first.size() >= 4 && first.compare(first.size() - 2, 2, "__") == 0;
}

std::string lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// 1 to 18 decimal digits: what fits an int64_t without a check.
bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 18 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_image_suffix(const std::string& suffix) {
  return suffix == "jpg" || suffix == "jpeg" || suffix == "png" || suffix == "webp";
}

// Decimal digits with white space around them, as a class number.
int64_t parse_label(const std::string& text, const std::string& where) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  const size_t last = text.find_last_not_of(" \t\r\n");
  const std::string digits = first == std::string::npos ? "" : text.substr(first, last - first + 1);
  if (!all_digits(digits)) throw InvalidFile(where + "label \"" + text.substr(0, 32) + "\" is no class number");
  return std::stoll(digits);
}

// One sample being gathered: the members seen so far under its key.
struct Pending {
  std::string key;
  std::string first_member;
  std::set<std::string> suffixes;
  std::optional<TarShardSource::Entry> image;
  std::optional<int64_t> label;
};

// A shard as libarchive's input: read through RandomAccessFile in pieces, a path or a URL alike. A remote shard is
// asked for a window ahead of the reads, so that its download streams instead of taking a request per piece.
class ShardInput {
 public:
  static constexpr size_t kPiece = size_t{1} << 20;
  static constexpr int64_t kRemoteAhead = int64_t{32} << 20;

  explicit ShardInput(const RandomAccessFile& file) : file_(file) {}

  // What a read that failed threw, for the indexer to rethrow as it was.
  std::exception_ptr error;

  // libarchive's callbacks. A read that fails is kept in `error` and told to libarchive as a fatal error: no
  // exception crosses its C.
  static la_ssize_t read(archive* a, void* self, const void** buffer) {
    auto* in = static_cast<ShardInput*>(self);
    try {
      return in->next(buffer);
    } catch (...) {
      in->error = std::current_exception();
      archive_set_error(a, EIO, "the shard could not be read");
      return ARCHIVE_FATAL;
    }
  }
  static la_int64_t skip(archive*, void* self, la_int64_t request) {
    auto* in = static_cast<ShardInput*>(self);
    const la_int64_t n = std::min<la_int64_t>(request, in->file_.size() - in->offset_);
    in->offset_ += n;
    return n;
  }

 private:
  la_ssize_t next(const void** buffer) {
    const auto n = static_cast<size_t>(std::min<int64_t>(file_.size() - offset_, static_cast<int64_t>(kPiece)));
    if (file_.is_remote() && offset_ + static_cast<int64_t>(n) + kRemoteAhead / 2 > ahead_to_) {
      const int64_t from = std::max(ahead_to_, offset_);
      ahead_to_ = std::min(file_.size(), std::max(from, offset_ + static_cast<int64_t>(n)) + kRemoteAhead);
      file_.prefetch({{from, ahead_to_ - from}});
    }
    piece_.resize(n);
    file_.read_at(offset_, n, piece_.data());
    offset_ += static_cast<int64_t>(n);
    *buffer = piece_.data();
    return static_cast<la_ssize_t>(n);
  }

  const RandomAccessFile& file_;
  std::string piece_;
  int64_t offset_ = 0, ahead_to_ = 0;
};

class ShardIndexer {
 public:
  ShardIndexer(const RandomAccessFile& file, int32_t index, std::vector<TarShardSource::Entry>& out)
      : file_(file), input_(file), shard_(file.path()), index_(index), out_(out) {}

  void run();

 private:
  void add_member(archive* a, archive_entry* entry);
  void finish_sample();
  [[noreturn]] void fail(archive* a, const std::string& what) const;

  const RandomAccessFile& file_;
  ShardInput input_;
  const std::string& shard_;
  int32_t index_;
  std::vector<TarShardSource::Entry>& out_;
  std::optional<Pending> pending_;
  std::string last_member_;
  int64_t shard_size_ = 0;
};

void ShardIndexer::fail(archive* a, const std::string& what) const {
  if (input_.error) std::rethrow_exception(input_.error);  // the shard's read failed: its own error says why
  const char* why = archive_error_string(a);
  const std::string after = last_member_.empty() ? "" : " (after member " + last_member_ + ")";
  throw InvalidFile(shard_ + ": " + what + after + ": " + (why != nullptr ? why : "unknown libarchive error"));
}

void ShardIndexer::run() {
  std::unique_ptr<archive, decltype(&archive_read_free)> a(archive_read_new(), archive_read_free);
  archive_read_support_format_tar(a.get());
  archive_read_support_filter_all(a.get());
  shard_size_ = file_.size();
  archive_read_set_read_callback(a.get(), ShardInput::read);
  // A remote shard is read through, not skipped over: its window ahead holds those bytes already, and a window
  // read whole is let go at once.
  if (!file_.is_remote()) archive_read_set_skip_callback(a.get(), ShardInput::skip);
  archive_read_set_callback_data(a.get(), &input_);
  // Opening reads the first block to recognise the format, so a failure here is mostly a file that is no tar.
  if (archive_read_open1(a.get()) != ARCHIVE_OK) fail(a.get(), "not a readable tar file");
  archive_entry* entry = nullptr;
  while (true) {
    const int r = archive_read_next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) fail(a.get(), "not a readable tar file");
    if (archive_filter_code(a.get(), 0) != ARCHIVE_FILTER_NONE) {
      throw Unsupported(shard_ + ": a " + archive_filter_name(a.get(), 0) +
                        "-compressed shard; only plain .tar shards are read (their samples are read in place)");
    }
    add_member(a.get(), entry);
  }
  finish_sample();
}

void ShardIndexer::add_member(archive* a, archive_entry* entry) {
  const char* path = archive_entry_pathname(entry);
  const std::string name = path != nullptr ? path : "";
  last_member_ = name;
  if (archive_entry_filetype(entry) != AE_IFREG || name.empty() || is_metadata(name)) return;
  const auto split = base_plus_ext(name);
  if (!split) return;
  const std::string suffix = lower(split->second);
  if (!pending_ || pending_->key != split->first) {
    finish_sample();
    pending_ = Pending{split->first, name, {}, std::nullopt, std::nullopt};
  }
  if (!pending_->suffixes.insert(suffix).second) {
    throw InvalidFile(at(shard_, name) + "a second ." + suffix + " member for key " + pending_->key);
  }
  const int64_t size = archive_entry_size(entry);
  if (is_image_suffix(suffix)) {
    if (pending_->image) {
      throw InvalidFile(at(shard_, name) + "a second image for key " + pending_->key + " (the first is " +
                        pending_->image->member + ")");
    }
    if (archive_entry_sparse_count(entry) > 0) throw Unsupported(at(shard_, name) + "a sparse tar member");
    // The tar reader has consumed the member's headers: the data starts where the archive stands now.
    const int64_t offset = archive_filter_bytes(a, 0);
    if (size < 0 || offset + size > shard_size_) {
      throw InvalidFile(at(shard_, name) + "truncated: its data ends past the shard's end");
    }
    pending_->image = TarShardSource::Entry{index_, offset, size, 0, name};
  } else if (suffix == "cls") {
    if (size > kMaxLabelBytes) throw InvalidFile(at(shard_, name) + "a label of " + std::to_string(size) + " bytes");
    std::string text(static_cast<size_t>(size), '\0');
    if (archive_read_data(a, text.data(), text.size()) != static_cast<la_ssize_t>(text.size())) {
      fail(a, "cannot read member " + name);
    }
    pending_->label = parse_label(text, at(shard_, name));
  }
}

void ShardIndexer::finish_sample() {
  if (!pending_) return;
  Pending p = std::move(*pending_);
  pending_.reset();
  if (!p.image) {
    throw InvalidFile(at(shard_, p.first_member) + "sample " + p.key + " has no image (.jpg, .jpeg, .png, .webp)");
  }
  if (!p.label) throw InvalidFile(at(shard_, p.image->member) + "sample " + p.key + " has no .cls label");
  p.image->label = *p.label;
  out_.push_back(std::move(*p.image));
}

}  // namespace

std::vector<std::string> expand_shard_pattern(const std::string& pattern) {
  const auto bad = [&](const std::string& why) { return InvalidArgument("shard pattern " + pattern + ": " + why); };
  const size_t open = pattern.find('{');
  const size_t stray = pattern.find('}');
  if (open == std::string::npos) {
    if (stray != std::string::npos) throw bad("a '}' without its '{'");
    return {pattern};
  }
  if (stray < open) throw bad("a '}' without its '{'");
  // The brace that closes the first one, and the commas at its own level.
  size_t close = std::string::npos;
  std::vector<size_t> commas;
  int depth = 0;
  for (size_t i = open; i < pattern.size() && close == std::string::npos; ++i) {
    if (pattern[i] == '{') ++depth;
    if (pattern[i] == '}' && --depth == 0) close = i;
    if (pattern[i] == ',' && depth == 1) commas.push_back(i);
  }
  if (close == std::string::npos) throw bad("a '{' without its '}'");
  const std::string head = pattern.substr(0, open), body = pattern.substr(open + 1, close - open - 1);
  std::vector<std::string> choices;
  if (!commas.empty()) {
    size_t from = open + 1;
    for (size_t i = 0; i <= commas.size(); ++i) {
      const size_t to = i < commas.size() ? commas[i] : close;
      for (std::string& s : expand_shard_pattern(pattern.substr(from, to - from))) choices.push_back(std::move(s));
      from = to + 1;
    }
  } else {
    const size_t dots = body.find("..");
    if (dots == std::string::npos || !all_digits(body.substr(0, dots)) || !all_digits(body.substr(dots + 2))) {
      throw bad("{" + body + "} is neither a list {a,b} nor a numeric range {000..099}");
    }
    const std::string lo = body.substr(0, dots), hi = body.substr(dots + 2);
    const bool padded = (lo.size() > 1 && lo[0] == '0') || (hi.size() > 1 && hi[0] == '0');
    const size_t width = padded ? std::max(lo.size(), hi.size()) : 0;
    const int64_t a = std::stoll(lo), b = std::stoll(hi), step = a <= b ? 1 : -1;
    for (int64_t v = a;; v += step) {
      std::string s = std::to_string(v);
      if (s.size() < width) s.insert(0, width - s.size(), '0');
      choices.push_back(std::move(s));
      if (v == b) break;
    }
  }
  std::vector<std::string> out;
  const std::vector<std::string> tails = expand_shard_pattern(pattern.substr(close + 1));
  for (const std::string& choice : choices) {
    for (const std::string& tail : tails) out.push_back(head + choice + tail);
  }
  return out;
}

TarShardSource::TarShardSource(std::vector<std::string> shards) : shards_(std::move(shards)) {
  if (shards_.empty()) throw InvalidArgument("TarShardSource: no shards given");
  // Shards are indexed side by side (a remote one is a whole download, which waits on the network more than on a
  // core); the first shard that fails is the error, as if they were read in turn.
  const bool remote = std::any_of(shards_.begin(), shards_.end(), [](const std::string& s) {
    return is_remote_path(s);
  });
  std::vector<std::vector<Entry>> found(shards_.size());
  files_.resize(shards_.size());
  parallel_for(shards_.size(), remote ? kRemoteIndexThreads : resolve_threads(0), [&](size_t s) {
    files_[s] = std::make_unique<RandomAccessFile>(shards_[s]);
    ShardIndexer(*files_[s], static_cast<int32_t>(s), found[s]).run();
  });
  for (size_t s = 0; s < shards_.size(); ++s) {
    shard_first_.push_back(static_cast<int64_t>(samples_.size()));
    samples_.insert(samples_.end(), std::make_move_iterator(found[s].begin()),
                    std::make_move_iterator(found[s].end()));
  }
  shard_first_.push_back(static_cast<int64_t>(samples_.size()));
  if (remote) {
    fetcher_ = std::make_unique<detail::ReadAheadFetcher>(
        [this](int64_t index) { return static_cast<int64_t>(samples_[static_cast<size_t>(index)].shard); },
        [this](int64_t shard, const std::vector<int64_t>& samples) { fetch_shard(shard, samples); });
  }
  if (samples_.empty()) {
    throw InvalidArgument(shards_.front() + (shards_.size() > 1 ? " and the other shards" : "") +
                          ": not a single sample (an image member and a .cls label sharing a key)");
  }
  std::set<int64_t> labels;
  for (const Entry& e : samples_) labels.insert(e.label);
  classes_.assign(labels.begin(), labels.end());
}

TarShardSource::~TarShardSource() = default;

EncodedSample TarShardSource::get(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw InvalidArgument(shards_.front() + ": sample " + std::to_string(index) + " is outside [0, " +
                          std::to_string(size()) + ")");
  }
  if (fetcher_) fetcher_->read(index);
  const Entry& e = samples_[static_cast<size_t>(index)];
  EncodedSample sample;
  sample.bytes.resize(static_cast<size_t>(e.size));
  files_[static_cast<size_t>(e.shard)]->read_at(e.offset, sample.bytes.size(), sample.bytes.data());
  sample.label = e.label;
  sample.name = shards_[static_cast<size_t>(e.shard)] + ":" + e.member;
  return sample;
}

void TarShardSource::will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const {
  if (fetcher_) fetcher_->start(order, ahead.blocks);
}

void TarShardSource::fetch_shard(int64_t shard, const std::vector<int64_t>& samples) const {
  // The samples this epoch reads, and no others: the remote layer frees the memory of what was fetched ahead once
  // every byte of it has been read.
  std::vector<remote::ByteRange> ranges;
  for (const int64_t i : samples) {
    ranges.push_back({samples_[static_cast<size_t>(i)].offset, samples_[static_cast<size_t>(i)].size});
  }
  // A shard that cannot be fetched ahead is read sample by sample, whose reads report what fails.
  try {
    files_[static_cast<size_t>(shard)]->prefetch(ranges);
  } catch (const Error&) {
  }
}

std::vector<int64_t> TarShardSource::labels() const {
  std::vector<int64_t> out;
  out.reserve(samples_.size());
  for (const Entry& e : samples_) out.push_back(e.label);
  return out;
}

std::vector<int64_t> TarShardSource::shuffle_blocks() const {
  std::vector<int64_t> out;
  for (size_t at = 0; at < samples_.size();) {
    // Samples are in shard order, so each shard's are one run.
    size_t end = at;
    while (end < samples_.size() && samples_[end].shard == samples_[at].shard) ++end;
    out.push_back(static_cast<int64_t>(end - at));
    at = end;
  }
  return out;
}

}  // namespace feedline
