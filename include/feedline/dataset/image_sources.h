// Two SampleSources of compressed images that hand over each sample's bytes undecoded (a SampleTransform decodes):
//   ImageFolderSource - a tree of class folders, `root/<class>/**/<file>`, read as torchvision's ImageFolder reads it;
//   TarShardSource    - WebDataset tar shards, each sample an image member and a `.cls` label sharing one key.
// Both find their samples once, at construction, and are immutable after it: get() may be called from any number
// of threads at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "feedline/dataset/encoded.h"

namespace feedline {

class RandomAccessFile;
namespace detail {
class ReadAheadFetcher;
}

// The extensions torchvision's ImageFolder accepts (IMG_EXTENSIONS), matched case-insensitively at a name's end.
extern const std::vector<std::string> kImageFolderExtensions;

// A class-folder tree as torchvision.datasets.ImageFolder reads it, so that the same folder gives the same classes,
// class numbers and sample order in Python and here:
//   - classes are root's sub-folders (hidden ones too; links to folders count), sorted bytewise, which is Python's
//     order for UTF-8 names, and numbered 0.. in that order;
//   - each class folder is walked recursively, following links to folders; the folders found are sorted by path
//     and the files of each by name (torchvision's `sorted(os.walk(...))`), and a file is kept when its name ends
//     in one of kImageFolderExtensions in any case (hidden files too);
//   - paths are root joined with '/' as os.path.join does it, so samples() matches torchvision's `samples`.
// A link to one of its own ancestors is not followed again (torchvision would walk it until the path grew too
// long). A folder that cannot be listed below a class folder is passed over, as os.walk passes it over.
// Errors: IoError naming root when it cannot be listed, and IoError (ENOENT, Python's FileNotFoundError, as
// torchvision raises) naming root when it has no class folder or a class has no image file.
// The root may be an s3:// or gs:// folder: its objects are found by one listing, the
// first folder of each key under the root its class, and the same rules give the same classes and order as the
// folder downloaded would; will_read() then fetches the files the loader reads next. An http(s) root is
// InvalidArgument: a web server has no listing.
class ImageFolderSource : public SampleSource {
 public:
  explicit ImageFolderSource(std::string root);
  ~ImageFolderSource() override;

  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  // The file's bytes, its class number, and its path as the name. IoError naming the file when it is gone or
  // cannot be read; InvalidArgument for an index outside [0, size()).
  EncodedSample get(int64_t index) const override;
  // Each sample's class number, from samples().
  std::vector<int64_t> labels() const override;
  // classes(): the class folders' names.
  std::vector<std::string> class_names() const override { return classes_; }
  // A remote folder: fetches `ahead.samples` files in the order's order beyond those read.
  void will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const override;

  const std::string& root() const { return root_; }
  const std::vector<std::string>& classes() const { return classes_; }
  const std::map<std::string, int64_t>& class_to_idx() const { return class_to_idx_; }
  // (path, class number) per sample, in sample order.
  const std::vector<std::pair<std::string, int64_t>>& samples() const { return samples_; }

 private:
  void fetch(int64_t index) const;

  std::string root_;
  std::vector<std::string> classes_;
  std::map<std::string, int64_t> class_to_idx_;
  std::vector<std::pair<std::string, int64_t>> samples_;
  std::unique_ptr<detail::ReadAheadFetcher> fetcher_;  // a remote folder only
};

// The shard paths a WebDataset brace pattern names, in braceexpand's order: `train-{000000..000099}.tar` (a
// numeric range, zero-padded to its bounds' width when a bound has a leading zero; descending too), `{a,b}` (a
// list), several braces (every combination, the leftmost varying slowest) and braces inside a list. A pattern
// without braces is itself. InvalidArgument naming the pattern for an unbalanced brace or a `{...}` that is
// neither a list nor a numeric range.
std::vector<std::string> expand_shard_pattern(const std::string& pattern);

// WebDataset tar shards as a random-access source. Members are grouped into samples as WebDataset does
// (webdataset.tariterators): only regular files count, names starting `__...__` are metadata and skipped; a
// member's key is its path up to the first dot of its file name and the rest its suffix (base_plus_ext), a name
// without that dot is skipped; consecutive members with one key form one sample, and a sample never spans two
// shards. Each sample needs exactly one image member (suffix jpg, jpeg, png or webp, in any case) and a `cls`
// member holding its label as decimal text (surrounding white space allowed, no sign); other suffixes (txt, json,
// ...) are ignored. Sample order is shard order, then member order.
// Shards are read once at construction, several at once, recording where each image's bytes lie; get() reads them
// in place (pread, or a range of a remote shard). So shards must be plain, uncompressed tar files: a compressed one
// (.tar.gz, ...) is refused as Unsupported rather than held in memory or decompressed again for every sample.
// A shard may be a URL (s3://, gs://, http(s)://: feedline/io/remote.h): it is downloaded once to be indexed, and
// will_read() then fetches the samples of the shards the loader reads next, a shard's samples in few requests.
// Errors name the shard and, where one is at fault, the member: InvalidFile for a file that is no tar or is
// truncated, a sample without an image or without a label, two members with one suffix in a sample, a label that
// is no class number; IoError for a shard that cannot be opened; InvalidArgument for an empty list of shards or
// shards without a single sample.
class TarShardSource : public SampleSource {
 public:
  explicit TarShardSource(std::vector<std::string> shards);
  ~TarShardSource() override;

  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  // The image member's bytes, the label, and "<shard>:<member>" as the name.
  EncodedSample get(int64_t index) const override;
  // Each sample's label, from entries(). Class names: none (a shard holds numbers only).
  std::vector<int64_t> labels() const override;
  // The samples of each shard, in shard order (a shard is best read whole), leaving out shards without samples.
  std::vector<int64_t> shuffle_blocks() const override;
  // Remote shards: fetches the samples of `ahead.blocks` shards in the order's order beyond those read.
  void will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const override;

  const std::vector<std::string>& shards() const { return shards_; }
  // The distinct labels, sorted.
  const std::vector<int64_t>& classes() const { return classes_; }

  // Where one sample's image lies.
  struct Entry {
    int32_t shard = 0;
    int64_t offset = 0;  // of the member's data in the shard
    int64_t size = 0;
    int64_t label = 0;
    std::string member;  // the image member's name
  };
  const std::vector<Entry>& entries() const { return samples_; }

 private:
  void fetch_shard(int64_t shard, const std::vector<int64_t>& samples) const;

  std::vector<std::string> shards_;
  std::vector<std::unique_ptr<RandomAccessFile>> files_;
  std::vector<Entry> samples_;
  std::vector<int64_t> shard_first_;  // shard s's samples are [shard_first_[s], shard_first_[s + 1])
  std::vector<int64_t> classes_;
  std::unique_ptr<detail::ReadAheadFetcher> fetcher_;  // remote shards only
};

}  // namespace feedline
