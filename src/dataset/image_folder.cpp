// ImageFolderSource: torchvision's find_classes and make_dataset over POSIX directory calls (or one listing of a
// remote folder), so that the order of classes and samples is the one Python users already have.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "dataset/read_ahead.h"
#include "feedline/dataset/image_sources.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "io/remote_glob.h"

namespace feedline {

const std::vector<std::string> kImageFolderExtensions = {".jpg", ".jpeg", ".png",  ".ppm", ".bmp",
                                                         ".pgm", ".tif",  ".tiff", ".webp"};

namespace {

// os.path.join(a, b) for a relative b.
std::string join(const std::string& a, const std::string& b) {
  if (a.empty() || a.back() == '/') return a + b;
  return a + "/" + b;
}

// has_file_allowed_extension: the lower-cased name ends in one of the extensions.
bool has_image_extension(const std::string& name) {
  std::string lower = name;
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  for (const std::string& ext : kImageFolderExtensions) {
    if (lower.size() >= ext.size() && lower.compare(lower.size() - ext.size(), ext.size(), ext) == 0) return true;
  }
  return false;
}

struct Listing {
  std::vector<std::string> folders;  // entries that are folders, links to folders included
  std::vector<std::string> files;    // everything else, broken links included (os.walk's `filenames`)
};

// One folder's entries split as os.scandir's is_dir() splits them (following links). False when the folder cannot
// be opened, with errno set.
bool list_folder(const std::string& path, Listing& out) {
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return false;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st;
    if (stat(join(path, name).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      out.folders.push_back(name);
    } else {
      out.files.push_back(name);
    }
  }
  closedir(dir);
  return true;
}

struct WalkedFolder {
  std::string path;
  std::vector<std::string> files;
};

// os.walk(top, followlinks=True): every folder under `top` with its files. `ancestors` holds the (device, inode) of
// the folders above, so that a link back to one of them is not walked in a circle.
void walk(const std::string& top, std::set<std::pair<dev_t, ino_t>>& ancestors, std::vector<WalkedFolder>& out) {
  struct stat st;
  if (stat(top.c_str(), &st) != 0 || !ancestors.insert({st.st_dev, st.st_ino}).second) return;
  Listing listing;
  if (list_folder(top, listing)) {
    out.push_back({top, std::move(listing.files)});
    for (const std::string& folder : listing.folders) walk(join(top, folder), ancestors, out);
  }
  ancestors.erase({st.st_dev, st.st_ino});
}

std::string extension_list() {
  std::string out;
  for (const std::string& ext : kImageFolderExtensions) out += (out.empty() ? "" : ", ") + ext;
  return out;
}

// The class folders under a root and, for each, every folder under it with its files (in any order).
struct Tree {
  std::vector<std::string> classes;
  std::vector<std::vector<WalkedFolder>> folders;
};

Tree local_tree(const std::string& root) {
  Listing top;
  if (!list_folder(root, top)) {
    const int code = errno;
    throw IoError(root + ": cannot list the image folder: " + std::strerror(code), code);
  }
  Tree tree;
  tree.classes = std::move(top.folders);
  std::sort(tree.classes.begin(), tree.classes.end());
  for (const std::string& name : tree.classes) {
    std::set<std::pair<dev_t, ino_t>> ancestors;
    walk(join(root, name), ancestors, tree.folders.emplace_back());
  }
  return tree;
}

// The same from one listing of the objects under the root: a class is the first folder of a key that has one, and
// a key ending in '/' (a folder's marker) makes its folder without a file.
Tree remote_tree(const std::string& root) {
  const std::vector<remote::ObjectInfo> objects = remote::folder_objects(root);
  if (objects.empty()) throw IoError(root + ": no such image folder (no object's key begins with it)", ENOENT);
  const size_t from = (root.back() == '/' ? root.size() - 1 : root.size()) + 1;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> by_class;  // class -> folder -> files
  for (const remote::ObjectInfo& object : objects) {
    const std::string rel = object.url.substr(std::min(from, object.url.size()));
    const size_t slash = rel.find('/');
    if (slash == std::string::npos || slash == 0) continue;  // beside the class folders
    const std::string name = rel.substr(0, slash);
    const size_t last = rel.rfind('/');
    auto& folder = by_class[name][join(root, rel.substr(0, last))];
    if (last + 1 < rel.size()) folder.push_back(rel.substr(last + 1));
  }
  Tree tree;
  for (auto& [name, folders] : by_class) {
    tree.classes.push_back(name);
    auto& walked = tree.folders.emplace_back();
    for (auto& [path, files] : folders) walked.push_back({path, std::move(files)});
  }
  return tree;
}

}  // namespace

ImageFolderSource::ImageFolderSource(std::string root) : root_(std::move(root)) {
  Tree tree = is_remote_path(root_) ? remote_tree(root_) : local_tree(root_);
  classes_ = std::move(tree.classes);
  if (classes_.empty()) throw IoError(root_ + ": couldn't find any class folder", ENOENT);

  std::vector<std::string> empty_classes;
  for (size_t c = 0; c < classes_.size(); ++c) {
    const int64_t index = static_cast<int64_t>(c);
    class_to_idx_[classes_[c]] = index;
    std::vector<WalkedFolder>& folders = tree.folders[c];
    // sorted(os.walk(...)): by the folder's path, then its files by name.
    std::sort(folders.begin(), folders.end(),
              [](const WalkedFolder& a, const WalkedFolder& b) { return a.path < b.path; });
    const size_t before = samples_.size();
    for (WalkedFolder& folder : folders) {
      std::sort(folder.files.begin(), folder.files.end());
      for (const std::string& file : folder.files) {
        if (has_image_extension(file)) samples_.emplace_back(join(folder.path, file), index);
      }
    }
    if (samples_.size() == before) empty_classes.push_back(classes_[c]);
  }
  if (!empty_classes.empty()) {
    std::string names;
    for (const std::string& name : empty_classes) names += (names.empty() ? "" : ", ") + name;
    throw IoError(root_ + ": found no valid file for the classes " + names +
                      " (supported extensions are: " + extension_list() + ")",
                  ENOENT);
  }
  if (is_remote_path(root_)) {
    fetcher_ = std::make_unique<detail::ReadAheadFetcher>([](int64_t index) { return index; },
                                                          [this](int64_t index, const std::vector<int64_t>&) { fetch(index); });
  }
}

ImageFolderSource::~ImageFolderSource() = default;

void ImageFolderSource::will_read(const std::vector<int64_t>& order, const ReadAhead& ahead) const {
  if (fetcher_) fetcher_->start(order, ahead.samples);
}

void ImageFolderSource::fetch(int64_t index) const {
  // A file that cannot be fetched ahead is read when its sample is, whose read reports what fails.
  try {
    prefetch_file(samples_[static_cast<size_t>(index)].first);
  } catch (const Error&) {
  }
}

EncodedSample ImageFolderSource::get(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw InvalidArgument(root_ + ": sample " + std::to_string(index) + " is outside [0, " +
                          std::to_string(size()) + ")");
  }
  if (fetcher_) fetcher_->read(index);
  const auto& [path, label] = samples_[static_cast<size_t>(index)];
  EncodedSample sample;
  sample.bytes = read_file(path);
  sample.label = label;
  sample.name = path;
  return sample;
}

std::vector<int64_t> ImageFolderSource::labels() const {
  std::vector<int64_t> out;
  out.reserve(samples_.size());
  for (const auto& sample : samples_) out.push_back(sample.second);
  return out;
}

}  // namespace feedline
