// Telling image layouts apart by their spec, opening each as its SampleSource, and the image dataset the loader
// serves.
#include "feedline/dataset/image_dataset.h"

#include <dirent.h>
#include <glob.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <string>
#include <utility>
#include <vector>

#include "feedline/dataset/image_sources.h"
#include "feedline/io/error.h"
#include "io/remote_glob.h"

namespace feedline {
namespace {

bool ends_with_any_case(const std::string& s, const std::string& tail) {
  if (s.size() < tail.size()) return false;
  for (size_t i = 0; i < tail.size(); ++i) {
    const auto a = static_cast<unsigned char>(s[s.size() - tail.size() + i]);
    if (std::tolower(a) != std::tolower(static_cast<unsigned char>(tail[i]))) return false;
  }
  return true;
}

bool is_tar_name(const std::string& path) {
  for (const char* tail : {".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar.zst"}) {
    if (ends_with_any_case(path, tail)) return true;
  }
  return false;
}

bool is_parquet_name(const std::string& path) { return ends_with_any_case(path, ".parquet"); }

// A wildcard as glob() reads it; in an http(s) URL only `*` (remote::has_wildcard).
bool has_glob(const std::string& s) {
  return is_remote_path(s) ? remote::has_wildcard(s) : s.find_first_of("*?[") != std::string::npos;
}

std::vector<std::string> split_list(const std::string& spec) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (true) {
    const size_t comma = spec.find(',', begin);
    std::string part = spec.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (!part.empty()) out.push_back(std::move(part));
    if (comma == std::string::npos) return out;
    begin = comma + 1;
  }
}

enum class PathKind { kMissing, kFile, kFolder };

PathKind path_kind(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return PathKind::kMissing;
  return S_ISDIR(st.st_mode) ? PathKind::kFolder : PathKind::kFile;
}

// The entries of a folder, without "." and "..": empty when it cannot be listed.
std::vector<std::string> list_folder(const std::string& path) {
  std::vector<std::string> out;
  DIR* dir = opendir(path.c_str());
  if (!dir) return out;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  closedir(dir);
  return out;
}

bool is_image_name(const std::string& name) {
  for (const std::string& extension : kImageFolderExtensions) {
    if (ends_with_any_case(name, extension)) return true;
  }
  return false;
}

// Whether a file `wanted` accepts lies in `folder` or below it, `depth` levels down at most; stops at the first.
template <typename Wanted>
bool holds_file(const std::string& folder, const Wanted& wanted, int depth) {
  std::vector<std::string> subfolders;
  for (const std::string& name : list_folder(folder)) {
    const std::string path = folder + "/" + name;
    const PathKind kind = path_kind(path);
    if (kind == PathKind::kFile && wanted(name)) return true;
    if (kind == PathKind::kFolder) subfolders.push_back(path);
  }
  if (depth <= 0) return false;
  for (const std::string& sub : subfolders) {
    if (holds_file(sub, wanted, depth - 1)) return true;
  }
  return false;
}

constexpr int kSearchDepth = 8;  // folders below a class folder or a dataset's root that the check looks into

// A folder of Parquet files (as parquet::list_dataset_files finds them, leaving out `.` and `_` names) and no class
// folder of images: Parquet files in it or in its sub-folders, none of which holds an image.
bool is_parquet_folder(const std::string& root) {
  const auto parquet = [](const std::string& name) {
    return is_parquet_name(name) && name[0] != '.' && name[0] != '_';
  };
  bool has_parquet = false;
  for (const std::string& name : list_folder(root)) {
    const std::string path = root + "/" + name;
    const PathKind kind = path_kind(path);
    if (kind == PathKind::kFile && parquet(name)) has_parquet = true;
    if (kind != PathKind::kFolder) continue;
    if (holds_file(path, is_image_name, kSearchDepth)) return false;  // a class folder
    if (!has_parquet && name[0] != '.' && name[0] != '_') has_parquet = holds_file(path, parquet, kSearchDepth);
  }
  return has_parquet;
}

// The paths a wildcard pattern of tar shards matches, sorted; the pattern itself when it matches nothing (then
// reported missing).
std::vector<std::string> glob_shards(const std::string& pattern) {
  glob_t matches{};
  std::vector<std::string> out;
  if (glob(pattern.c_str(), 0, nullptr, &matches) == 0) {
    for (size_t i = 0; i < matches.gl_pathc; ++i) out.emplace_back(matches.gl_pathv[i]);
  }
  globfree(&matches);
  if (out.empty()) out.push_back(pattern);
  return out;
}

// The objects a remote wildcard pattern of tar shards matches, sorted. IoError (ENOENT) naming it when none does,
// as for a local pattern.
std::vector<std::string> glob_remote_shards(const std::string& pattern) {
  std::vector<std::string> out;
  for (remote::GlobMatch& match : remote::glob_objects(pattern)) {
    if (match.folder == 0) out.push_back(std::move(match.object.url));
  }
  if (out.empty()) throw IoError(pattern + ": no object matches this pattern of tar shards", ENOENT);
  return out;
}

// Whether the objects under a remote folder are Parquet files and no class folders of images, as
// is_parquet_folder() tells a local one; IoError naming the folder when no object is under it.
bool is_parquet_objects(const std::string& url) {
  const std::vector<remote::ObjectInfo> objects = remote::folder_objects(url);
  if (objects.empty()) throw IoError(url + ": no such folder (no object's key begins with it)", ENOENT);
  const size_t from = (url.back() == '/' ? url.size() - 1 : url.size()) + 1;
  bool has_parquet = false;
  for (const remote::ObjectInfo& object : objects) {
    const std::string rel = object.url.substr(std::min(from, object.url.size()));
    const std::string name = rel.substr(rel.rfind('/') + 1);
    if (rel.find('/') != std::string::npos && is_image_name(name)) return false;  // a class folder
    const bool hidden = rel.empty() || rel[0] == '.' || rel[0] == '_' || rel.find("/.") != std::string::npos ||
                        rel.find("/_") != std::string::npos;
    has_parquet = has_parquet || (!hidden && is_parquet_name(name));
  }
  return has_parquet;
}

// What a remote path that is neither a tar shard nor named .parquet holds: an s3:// or gs:// object is a Parquet
// file named otherwise; a folder, Parquet files or class folders. An http(s) URL is a file, or a folder that
// ImageFolderSource refuses (no listing).
ImageSourceKind remote_kind(const std::string& url) {
  if (!remote::is_object_store_url(url)) {
    return remote::is_folder_url(url) ? ImageSourceKind::kFolder : ImageSourceKind::kParquet;
  }
  if (!remote::is_folder_url(url) && remote::exists(url)) return ImageSourceKind::kParquet;
  return is_parquet_objects(url) ? ImageSourceKind::kParquet : ImageSourceKind::kFolder;
}

// The entries a spec lists: its comma-separated parts, each brace pattern expanded, and each wildcard pattern of
// tar shards (Parquet's are parquet::DatasetReader's to expand).
std::vector<std::string> spec_entries(const std::string& spec) {
  std::vector<std::string> out;
  for (const std::string& part : split_list(spec)) {
    for (std::string& path : part.find('{') != std::string::npos ? expand_shard_pattern(part)
                                                                  : std::vector<std::string>{part}) {
      if (has_glob(path) && is_tar_name(path)) {
        for (std::string& match : is_remote_path(path) ? glob_remote_shards(path) : glob_shards(path)) {
          out.push_back(std::move(match));
        }
      } else {
        out.push_back(std::move(path));
      }
    }
  }
  return out;
}

std::string join_list(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& p : paths) out += (out.empty() ? "" : ",") + p;
  return out;
}

}  // namespace

const char* image_source_kind_name(ImageSourceKind kind) {
  switch (kind) {
    case ImageSourceKind::kFolder:
      return "folder";
    case ImageSourceKind::kParquet:
      return "parquet";
    case ImageSourceKind::kTarShards:
      return "tar shards";
  }
  return "unknown";
}

ImageSourceKind image_source_kind(const std::string& spec) {
  const std::vector<std::string> entries = spec_entries(spec);
  if (entries.empty()) throw InvalidArgument("an image source: the spec \"" + spec + "\" names no path");
  bool any_exists = false;
  for (const std::string& entry : entries) {
    // A URL is taken as there: telling would cost a request, and its reader says when it is not.
    if (is_remote_path(entry) || (has_glob(entry) && !is_tar_name(entry)) || path_kind(entry) != PathKind::kMissing) {
      any_exists = true;
    }
  }
  if (!any_exists) {
    throw IoError(spec + ": no such file or folder (an image source: a class-folder tree, Parquet files or tar shards)",
                  ENOENT);
  }
  const std::string& first = entries.front();
  if (is_tar_name(first)) return ImageSourceKind::kTarShards;
  if (entries.size() > 1 || has_glob(first) || is_parquet_name(first)) return ImageSourceKind::kParquet;
  if (is_remote_path(first)) return remote_kind(first);
  const PathKind kind = path_kind(first);
  if (kind == PathKind::kFile) return ImageSourceKind::kParquet;  // a Parquet file named otherwise (Hive's 000000_0)
  return is_parquet_folder(first) ? ImageSourceKind::kParquet : ImageSourceKind::kFolder;
}

std::shared_ptr<const SampleSource> open_image_source(const std::string& spec, const ImageSourceOptions& options) {
  switch (image_source_kind(spec)) {
    case ImageSourceKind::kTarShards:
      return std::make_shared<TarShardSource>(spec_entries(spec));
    case ImageSourceKind::kParquet:
      // A brace pattern of Parquet files as the list parquet::DatasetReader reads.
      return std::make_shared<ParquetImageSource>(
          spec.find('{') == std::string::npos ? spec : join_list(spec_entries(spec)), options.parquet);
    case ImageSourceKind::kFolder:
      break;
  }
  return std::make_shared<ImageFolderSource>(spec);
}

std::shared_ptr<EncodedDataset> make_image_dataset(std::shared_ptr<const SampleSource> source,
                                                   std::vector<ImageStep> steps,
                                                   ImageTransformOptions transform_options, OnError on_error) {
  // EncodedDataset asks the layout at once: steps without one output size are refused here.
  auto transform = std::make_shared<ImageTransform>(std::move(steps), std::move(transform_options));
  return std::make_shared<EncodedDataset>(std::move(source), std::move(transform), on_error);
}

}  // namespace feedline
