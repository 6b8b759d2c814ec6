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
class ImageFolderSource : public SampleSource {
 public:
  explicit ImageFolderSource(std::string root);

  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  // The file's bytes, its class number, and its path as the name. IoError naming the file when it is gone or
  // cannot be read; InvalidArgument for an index outside [0, size()).
  EncodedSample get(int64_t index) const override;

  const std::string& root() const { return root_; }
  const std::vector<std::string>& classes() const { return classes_; }
  const std::map<std::string, int64_t>& class_to_idx() const { return class_to_idx_; }
  // (path, class number) per sample, in sample order.
  const std::vector<std::pair<std::string, int64_t>>& samples() const { return samples_; }

 private:
  std::string root_;
  std::vector<std::string> classes_;
  std::map<std::string, int64_t> class_to_idx_;
  std::vector<std::pair<std::string, int64_t>> samples_;
};

}  // namespace feedline
