#include "feedline/io/parquet_dataset.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "io/parallel.h"
#include "io/remote_glob.h"
#include "io/value_text.h"

namespace feedline::parquet {
namespace {

constexpr const char* kHiveNull = "__HIVE_DEFAULT_PARTITION__";
// Folders deeper than this under a dataset's folder are refused: a link that points back up would never end.
constexpr int kMaxFolderDepth = 64;

// POSIX stat, not std::filesystem: see remove_tree() in feedline/io/file.h on pip torch's std::filesystem.
bool stat_path(const std::string& path, struct stat* st) { return ::stat(path.c_str(), st) == 0; }

bool is_folder(const std::string& path) {
  struct stat st;
  return stat_path(path, &st) && S_ISDIR(st.st_mode);
}

bool has_wildcard(const std::string& text) { return text.find_first_of("*?[") != std::string::npos; }

bool ends_with_parquet(const std::string& name) {
  constexpr std::string_view kExt = ".parquet";
  if (name.size() <= kExt.size()) return false;
  for (size_t i = 0; i < kExt.size(); ++i) {
    const char c = name[name.size() - kExt.size() + i];
    if (std::tolower(static_cast<unsigned char>(c)) != kExt[i]) return false;
  }
  return true;
}

// A file whose name has no extension and that begins with Parquet's magic, as Hive names its files (000000_0).
// Files with another extension (.csv, .json, .crc, .parquet.encrypted) are not opened.
bool is_parquet_without_extension(const std::string& path, const std::string& name) {
  if (name.find('.') != std::string::npos) return false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char magic[4];
  const bool parquet = ::pread(fd, magic, 4, 0) == 4 && std::memcmp(magic, "PAR1", 4) == 0;
  ::close(fd);
  return parquet;
}

std::string join(const std::string& dir, const std::string& name) {
  return !dir.empty() && dir.back() == '/' ? dir + name : dir + "/" + name;
}

// The names in folder `dir` (`depth` below where the walk started) that a dataset's walk takes: none that starts
// with `.` or `_` (as Spark, Hive and DuckDB leave out _SUCCESS, _metadata, .crc files, _temporary folders). False,
// with errno set, when the folder cannot be listed.
bool folder_names(const std::string& dir, int depth, std::vector<std::string>* names) {
  if (depth > kMaxFolderDepth) {
    throw InvalidArgument(dir + ": folders nested more than " + std::to_string(kMaxFolderDepth) +
                          " deep (a link to a folder above?)");
  }
  DIR* d = ::opendir(dir.empty() ? "." : dir.c_str());
  if (d == nullptr) return false;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.empty() || name[0] == '.' || name[0] == '_') continue;
    names->push_back(name);
  }
  ::closedir(d);
  return true;
}

// Every *.parquet file under `dir` (and every Parquet file whose name has no extension), as folder_names() leaves
// them.
void walk_folder(const std::string& dir, int depth, std::vector<std::string>* out) {
  std::vector<std::string> names;
  if (!folder_names(dir, depth, &names)) {
    const int code = errno;
    throw IoError(dir + ": cannot list the folder: " + std::strerror(code), code);
  }
  for (const std::string& name : names) {
    const std::string path = join(dir, name);
    struct stat st;
    if (!stat_path(path, &st)) continue;  // a dangling link
    if (S_ISDIR(st.st_mode)) {
      walk_folder(path, depth + 1, out);
    } else if (S_ISREG(st.st_mode) && (ends_with_parquet(name) || is_parquet_without_extension(path, name))) {
      out->push_back(path);
    }
  }
}

// The paths a pattern matches, sorted (POSIX glob: `*`, `?` and `[...]` within one path segment).
std::vector<std::string> glob_paths(const std::string& pattern) {
  glob_t g{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
  std::vector<std::string> out;
  if (rc == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  if (rc != 0 && rc != GLOB_NOMATCH) throw IoError(pattern + ": cannot list the files this pattern names");
  return out;
}

// `dir` and every folder under it, as folder_names() leaves them ("" is the current folder).
void every_folder(const std::string& dir, int depth, std::vector<std::string>* out) {
  out->push_back(dir);
  std::vector<std::string> names;
  if (!folder_names(dir, depth, &names)) return;  // (matched, then gone or unreadable: nothing under it)
  for (const std::string& name : names) {
    const std::string path = dir.empty() ? name : join(dir, name);
    if (is_folder(path)) every_folder(path, depth + 1, out);
  }
}

// The paths a pattern matches: POSIX glob, where a path segment that is `**` matches any number of folders (none
// too) at that point, as in DuckDB's and Python's globs: `data/**/*.parquet`, `data/**`.
std::vector<std::string> match_pattern(const std::string& pattern) {
  size_t at = std::string::npos;
  for (size_t pos = pattern.find("**"); pos != std::string::npos; pos = pattern.find("**", pos + 1)) {
    const bool starts = pos == 0 || pattern[pos - 1] == '/';
    const bool ends = pos + 2 == pattern.size() || pattern[pos + 2] == '/';
    if (starts && ends) {
      at = pos;
      break;
    }
  }
  if (at == std::string::npos) return glob_paths(pattern);
  // The folders the part before `**` names, then the rest matched under each of them and every folder below.
  std::string head = pattern.substr(0, at), tail = pattern.substr(at + 2);
  while (head.size() > 1 && head.back() == '/') head.pop_back();
  if (!tail.empty()) tail.erase(0, 1);
  std::vector<std::string> bases;
  if (head.empty()) {
    bases.push_back("");
  } else if (has_wildcard(head)) {
    for (const std::string& path : glob_paths(head)) {
      if (is_folder(path)) bases.push_back(path);
    }
  } else if (is_folder(head)) {
    bases.push_back(head);
  }
  std::vector<std::string> out;
  for (const std::string& base : bases) {
    if (tail.empty()) {  // the folder, whose files are every file under it
      out.push_back(base.empty() ? "." : base);
      continue;
    }
    std::vector<std::string> folders;
    every_folder(base, 0, &folders);
    for (const std::string& folder : folders) {
      for (std::string& path : match_pattern(folder.empty() ? tail : join(folder, tail))) {
        out.push_back(std::move(path));
      }
    }
  }
  return out;
}

// An object under a folder (or a folder a pattern matched) that a dataset takes, as walk_folder() takes a file:
// named *.parquet, and no name below the folder, its own included, starting with `.` or `_`. `from` is where the
// folder ends in the object's URL.
bool walks_to(const std::string& url, size_t from) {
  size_t start = from < url.size() && url[from] == '/' ? from + 1 : from;
  for (size_t slash = url.find('/', start);; slash = url.find('/', start)) {
    const std::string name = url.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (name.empty() || name[0] == '.' || name[0] == '_') return false;
    if (slash == std::string::npos) return ends_with_parquet(name);
    start = slash + 1;
  }
}

// One remote entry of a spec (an object, a folder or a pattern) as objects, from one listing. A folder's objects
// are taken by their names alone: telling a Parquet file without an extension by its magic would cost a request
// for every object.
void expand_remote_entry(const std::string& entry, std::vector<std::string>* out) {
  const size_t before = out->size();
  if (remote::has_wildcard(entry)) {
    for (remote::GlobMatch& match : remote::glob_objects(entry)) {
      if (match.folder == 0 || walks_to(match.object.url, match.folder)) out->push_back(std::move(match.object.url));
    }
    if (out->size() == before) throw InvalidArgument(entry + ": no object matches this pattern");
    return;
  }
  if (!remote::is_folder_url(entry)) {
    // An http(s) URL names a file: it has no listing.
    if (!remote::is_object_store_url(entry) || remote::exists(entry)) {
      out->push_back(entry);
      return;
    }
  }
  const std::vector<remote::ObjectInfo> objects = remote::folder_objects(entry);
  const size_t from = entry.back() == '/' ? entry.size() - 1 : entry.size();
  for (const remote::ObjectInfo& object : objects) {
    if (walks_to(object.url, from)) out->push_back(object.url);
  }
  if (objects.empty()) {
    throw IoError(entry + (remote::is_folder_url(entry) ? ": no such folder (no object's key begins with it)"
                                                        : ": no such object, nor a folder of objects under it"),
                  ENOENT);
  }
  if (out->size() == before) {
    throw InvalidArgument(entry + ": no .parquet object in this folder or below it (names starting with . or _ are "
                                  "left out)");
  }
}

// One entry of a spec (a file, a folder or a pattern) as files.
void expand_entry(const std::string& entry, std::vector<std::string>* out) {
  if (is_remote_path(entry)) {
    expand_remote_entry(entry, out);
    return;
  }
  struct stat st;
  if (stat_path(entry, &st)) {
    if (!S_ISDIR(st.st_mode)) {
      out->push_back(entry);
      return;
    }
    const size_t before = out->size();
    walk_folder(entry, 0, out);
    if (out->size() == before) {
      throw InvalidArgument(entry + ": no .parquet file in this folder or its subfolders (names starting with . "
                                    "or _ are left out)");
    }
    return;
  }
  if (!has_wildcard(entry)) throw IoError(entry + ": no such file or folder", ENOENT);
  const size_t before = out->size();
  for (const std::string& path : match_pattern(entry)) {
    if (is_folder(path)) {
      walk_folder(path, 0, out);
    } else {
      out->push_back(path);
    }
  }
  if (out->size() == before) throw InvalidArgument(entry + ": no file matches this pattern");
}

// %XX escapes (Hive and Spark write /, =, % and others so) decoded; anything else kept as it is.
std::string percent_decode(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned value = 0;
    if (text[i] == '%' && i + 2 < text.size() &&
        std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16).ptr == text.data() + i + 3) {
      out += static_cast<char>(value);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// The `key=value` folders of a path, outside in.
std::vector<std::pair<std::string, std::optional<std::string>>> hive_pairs(const std::string& path) {
  std::vector<std::pair<std::string, std::optional<std::string>>> pairs;
  size_t start = 0;
  for (size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', start)) {
    const std::string segment = path.substr(start, slash - start);
    start = slash + 1;
    const size_t eq = segment.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string value = segment.substr(eq + 1);
    pairs.emplace_back(percent_decode(segment.substr(0, eq)),
                       value == kHiveNull ? std::nullopt : std::optional<std::string>(percent_decode(value)));
  }
  return pairs;
}

// A Hive value as a whole number ("2024", "-3", "+7", "01"), or nullopt.
std::optional<int64_t> whole_number(const std::string& text) {
  int64_t v = 0;
  const char* begin = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  if (begin == end || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

std::string key_list(const std::vector<std::pair<std::string, std::optional<std::string>>>& pairs) {
  std::string text;
  for (const auto& [key, value] : pairs) text += (text.empty() ? "" : ", ") + key;
  return text.empty() ? "none" : text;
}

// The type as messages name it: "INT32", "INT64 (TIMESTAMP(MICROS,UTC))", "list of BYTE_ARRAY (STRING)".
std::string type_text(const ColumnSchema& s) {
  std::string text = to_string(s.type);
  if (const std::string logical = logical_type_text(s); !logical.empty()) text += " (" + logical + ")";
  for (int k = 0; k < s.list_depth(); ++k) text = "list of " + text;
  return text;
}

// A column's integer annotation, but none for INT(32, signed) on INT32 or INT(64, signed) on INT64, which say no
// more than the physical type (DuckDB annotates every integer column so, most writers none).
std::optional<IntAnnotation> int_meaning(const ColumnSchema& s) {
  const int physical_width = s.type == PhysicalType::kInt32 ? 32 : s.type == PhysicalType::kInt64 ? 64 : 0;
  if (s.int_annotation && s.int_annotation->is_signed && s.int_annotation->bit_width == physical_width) return {};
  return s.int_annotation;
}

// Whether two files' columns hold the same type of values (their nullability may differ).
bool same_values(const ColumnSchema& a, const ColumnSchema& b) {
  return a.type == b.type && a.type_length == b.type_length && int_meaning(a) == int_meaning(b) &&
         a.is_string == b.is_string && a.logical == b.logical && a.list_depth() == b.list_depth();
}

// Empty when the file `path` holds the columns of `reference` (the first file's, `reference_path`), by name and
// type; else the first difference, naming both files and the column.
std::string schema_difference(const std::vector<ColumnSchema>& reference, const std::string& reference_path,
                              const std::vector<ColumnSchema>& schema, const std::string& path) {
  std::unordered_map<std::string, size_t> index;
  for (size_t c = 0; c < schema.size(); ++c) index.emplace(schema[c].name, c);
  for (const ColumnSchema& column : reference) {
    const auto it = index.find(column.name);
    if (it == index.end()) return path + ": has no column '" + column.name + "', which " + reference_path + " has";
    const ColumnSchema& theirs = schema[it->second];
    if (!same_values(column, theirs)) {
      return path + ": column '" + column.name + "' is " + type_text(theirs) + ", but " + reference_path +
             " has it as " + type_text(column);
    }
  }
  if (schema.size() > reference.size()) {
    std::unordered_map<std::string, size_t> known;
    for (size_t c = 0; c < reference.size(); ++c) known.emplace(reference[c].name, c);
    for (const ColumnSchema& theirs : schema) {
      if (known.count(theirs.name) == 0) {
        return path + ": has a column '" + theirs.name + "', which " + reference_path + " has not";
      }
    }
  }
  return "";
}

// `into` made nullable wherever `schema` (a file of the same columns, in any order) is, at every level.
void widen_nullability(std::vector<ColumnSchema>& into, const std::vector<ColumnSchema>& schema) {
  std::unordered_map<std::string, size_t> index;
  for (size_t c = 0; c < schema.size(); ++c) index.emplace(schema[c].name, c);
  for (ColumnSchema& column : into) {
    const auto it = index.find(column.name);
    if (it == index.end()) continue;
    const ColumnSchema& other = schema[it->second];
    column.nullable = column.nullable || other.nullable;
    column.element_nullable = column.element_nullable || other.element_nullable;
    for (size_t k = 0; k < column.inner_list_nullable.size() && k < other.inner_list_nullable.size(); ++k) {
      column.inner_list_nullable[k] = column.inner_list_nullable[k] || other.inner_list_nullable[k];
    }
  }
}

// A Hive column of `rows` rows, each the one value (null for nullopt).
Column partition_column(const ColumnSchema& schema, const std::optional<std::string>& value, int64_t rows) {
  Column c = make_column(schema);
  const auto n = static_cast<size_t>(rows);
  if (schema.type == PhysicalType::kInt64) {
    c.as<int64_t>().assign(n, value ? whole_number(*value).value_or(0) : 0);
  } else {
    ByteArrays& bytes = std::get<ByteArrays>(c.values);
    const std::string text = value.value_or("");
    bytes.bytes.reserve(text.size() * n);
    bytes.offsets.reserve(n + 1);
    for (size_t r = 0; r < n; ++r) bytes.push_back(text);
  }
  if (!value) c.validity.assign(n, 0);
  return c;
}

}  // namespace

bool is_dataset_spec(const std::string& spec) {
  if (is_remote_path(spec)) {
    if (spec.find(',') != std::string::npos || remote::has_wildcard(spec) || remote::is_folder_url(spec)) return true;
    // No object at the key: a folder, or nothing, which the listing then says.
    return remote::is_object_store_url(spec) && !remote::exists(spec);
  }
  struct stat st;
  if (stat_path(spec, &st)) return S_ISDIR(st.st_mode);
  return spec.find_first_of("*?[,") != std::string::npos;
}

DatasetFiles list_dataset_files(const std::string& spec) {
  DatasetFiles files;
  if (!is_dataset_spec(spec)) {
    files.paths.push_back(spec);
    files.partition_values.emplace_back();
    return files;
  }
  std::vector<std::string> entries;
  if (struct stat st; stat_path(spec, &st)) {
    entries.push_back(spec);
  } else {
    size_t start = 0;
    while (start <= spec.size()) {
      const size_t comma = std::min(spec.find(',', start), spec.size());
      if (comma > start) entries.push_back(spec.substr(start, comma - start));
      start = comma + 1;
    }
    if (entries.empty()) throw InvalidArgument("'" + spec + "': names no file");
  }
  for (const std::string& entry : entries) expand_entry(entry, &files.paths);
  std::sort(files.paths.begin(), files.paths.end());
  files.paths.erase(std::unique(files.paths.begin(), files.paths.end()), files.paths.end());

  // Hive keys: the first file's, which every other path must repeat in the same order.
  const auto first = hive_pairs(files.paths.front());
  for (size_t k = 0; k < first.size(); ++k) {
    for (size_t j = 0; j < k; ++j) {
      if (first[j].first == first[k].first) {
        throw InvalidArgument(files.paths.front() + ": Hive key '" + first[k].first + "' appears twice in the path");
      }
    }
  }
  std::vector<bool> whole(first.size(), true), has_null(first.size(), false), has_value(first.size(), false);
  for (const std::string& path : files.paths) {
    const auto pairs = hive_pairs(path);
    bool same = pairs.size() == first.size();
    for (size_t k = 0; same && k < pairs.size(); ++k) same = pairs[k].first == first[k].first;
    if (!same) {
      throw InvalidArgument(path + ": its Hive keys (" + key_list(pairs) + ") differ from those of " +
                            files.paths.front() + " (" + key_list(first) +
                            "); every file's path must name the same keys in the same order");
    }
    std::vector<std::optional<std::string>> values;
    for (size_t k = 0; k < pairs.size(); ++k) {
      const std::optional<std::string>& v = pairs[k].second;
      if (v) {
        has_value[k] = true;
        whole[k] = whole[k] && whole_number(*v).has_value();
      } else {
        has_null[k] = true;
      }
      values.push_back(v);
    }
    files.partition_values.push_back(std::move(values));
  }
  for (size_t k = 0; k < first.size(); ++k) {
    ColumnSchema s;
    s.name = first[k].first;
    s.nullable = has_null[k];
    if (whole[k] && has_value[k]) {
      s.type = PhysicalType::kInt64;
    } else {
      s.type = PhysicalType::kByteArray;
      s.is_string = true;
    }
    files.partition_columns.push_back(std::move(s));
  }
  return files;
}

struct DatasetReader::OpenFiles {
  size_t capacity = kDefaultMaxOpenFiles;
  std::mutex mutex;
  std::list<std::pair<size_t, std::shared_ptr<const FileReader>>> files;  // the most recently used first
  int64_t opens = 0;
};

DatasetReader::DatasetReader(std::string spec, int num_threads, size_t max_open_files)
    : spec_(std::move(spec)), open_(std::make_unique<OpenFiles>()) {
  if (max_open_files == 0) throw InvalidArgument(spec_ + ": max_open_files must be at least 1");
  open_->capacity = max_open_files;
  files_ = list_dataset_files(spec_);
  const size_t n = files_.paths.size();
  // The first file's schema is the one the others are held to. Each footer is parsed once; only the first files
  // stay open, and only what the reads need of the others is kept (a schema of each would be megabytes a file
  // for hundreds of columns).
  auto first = std::make_shared<const FileReader>(files_.paths.front());
  schema_ = first->info().schema;
  const std::vector<ColumnSchema> reference = schema_;
  std::vector<std::vector<int64_t>> groups(n);
  std::vector<std::string> disagreements(n);
  std::vector<std::shared_ptr<const FileReader>> kept(std::min(n, max_open_files));
  kept[0] = first;
  file_rows_.assign(n, 0);
  std::mutex widen_mutex;
  // Remote footers wait on the network, not on cores: as many at once as requests may be in flight.
  const bool remote = std::any_of(files_.paths.begin(), files_.paths.end(), [](const std::string& p) {
    return is_remote_path(p);
  });
  const int footer_threads = remote ? std::max(resolve_threads(num_threads), remote::options().max_in_flight / 2)
                                    : num_threads;
  parallel_for(n, footer_threads, [&](size_t i) {
    std::shared_ptr<const FileReader> reader = i == 0 ? first : std::make_shared<const FileReader>(files_.paths[i]);
    const FileInfo& info = reader->info();
    file_rows_[i] = info.num_rows;
    for (const RowGroupInfo& rg : info.row_groups) groups[i].push_back(rg.num_rows);
    if (i > 0) {
      disagreements[i] = schema_difference(reference, files_.paths.front(), info.schema, files_.paths[i]);
      if (disagreements[i].empty()) {
        std::lock_guard<std::mutex> lock(widen_mutex);
        widen_nullability(schema_, info.schema);
      }
    }
    if (i < kept.size()) kept[i] = std::move(reader);
  });
  // The first file that disagrees, whichever thread found it.
  for (const std::string& d : disagreements) {
    if (!d.empty()) throw InvalidArgument(d);
  }
  open_->opens = static_cast<int64_t>(n);
  for (size_t i = kept.size(); i-- > 0;) open_->files.emplace_front(i, std::move(kept[i]));

  file_columns_ = schema_.size();
  for (const ColumnSchema& key : files_.partition_columns) {
    for (size_t c = 0; c < file_columns_; ++c) {
      if (schema_[c].name == key.name) {
        throw InvalidArgument(files_.paths.front() + ": Hive key '" + key.name +
                              "' of its path is also a column of the file");
      }
    }
    schema_.push_back(key);
  }
  first_group_.push_back(0);
  for (size_t i = 0; i < n; ++i) {
    num_rows_ += file_rows_[i];
    for (size_t g = 0; g < groups[i].size(); ++g) row_groups_.push_back({i, static_cast<int64_t>(g), groups[i][g]});
    first_group_.push_back(row_groups_.size());
  }
}

std::shared_ptr<const FileReader> DatasetReader::open_file(size_t i) const {
  {
    std::lock_guard<std::mutex> lock(open_->mutex);
    auto& files = open_->files;
    const auto it = std::find_if(files.begin(), files.end(), [&](const auto& f) { return f.first == i; });
    if (it != files.end()) {
      files.splice(files.begin(), files, it);
      return it->second;
    }
  }
  // Opened without the lock: other files are read meanwhile. A file evicted while a reader still uses it stays
  // open until that reader lets it go.
  auto reader = std::make_shared<const FileReader>(files_.paths[i]);
  std::lock_guard<std::mutex> lock(open_->mutex);
  ++open_->opens;
  auto& files = open_->files;
  if (std::none_of(files.begin(), files.end(), [&](const auto& f) { return f.first == i; })) {
    files.emplace_front(i, reader);
    while (files.size() > open_->capacity) files.pop_back();
  }
  return reader;
}

int64_t DatasetReader::file_opens() const {
  std::lock_guard<std::mutex> lock(open_->mutex);
  return open_->opens;
}

DatasetReader::~DatasetReader() = default;
DatasetReader::DatasetReader(DatasetReader&&) noexcept = default;
DatasetReader& DatasetReader::operator=(DatasetReader&&) noexcept = default;

Table DatasetReader::read_file(size_t i, const ReadOptions& options) const {
  std::vector<std::string> names = options.columns;
  if (names.empty()) {
    for (const ColumnSchema& s : schema_) names.push_back(s.name);
  }
  // Each asked name as an index into schema_ where it is a Hive key (read from the path), else into the read.
  std::vector<std::string> file_names;
  std::vector<std::optional<size_t>> keys;
  for (const std::string& name : names) {
    std::optional<size_t> key;
    for (size_t k = file_columns_; k < schema_.size(); ++k) {
      if (schema_[k].name == name) key = k;
    }
    if (key && std::count(names.begin(), names.end(), name) > 1) {
      throw InvalidArgument(spec_ + ": column '" + name + "' asked for twice");
    }
    if (!key) file_names.push_back(name);
    keys.push_back(key);
  }
  Table read;
  if (!file_names.empty()) {
    const std::shared_ptr<const FileReader> file = open_file(i);
    ReadOptions file_options = options;
    // Every column asked for as read_table asks for it (none named), so that a column it cannot read is refused,
    // not left out; the columns are put in the dataset's order below.
    if (!options.columns.empty()) file_options.columns = file_names;
    read = file->read(file_options);
  } else {  // Hive columns alone: the rows from the footer
    const auto groups = static_cast<int64_t>(file_row_groups(i));
    if (options.row_groups.empty()) read.num_rows = file_rows_[i];
    for (const int64_t g : options.row_groups) {
      if (g < 0 || g >= groups) {
        throw InvalidArgument(files_.paths[i] + ": no row group " + std::to_string(g) + " (it has " +
                              std::to_string(groups) + ")");
      }
      read.num_rows += row_groups_[first_group_[i] + static_cast<size_t>(g)].num_rows;
    }
  }
  std::unordered_map<std::string, size_t> dataset_index;  // the files' columns in schema_ by name
  for (size_t c = 0; c < file_columns_; ++c) dataset_index.emplace(schema_[c].name, c);
  std::unordered_map<std::string, size_t> read_index;  // the read's columns by name
  for (size_t c = 0; c < read.columns.size(); ++c) read_index.emplace(read.columns[c].schema.name, c);
  Table out;
  out.num_rows = read.num_rows;
  for (size_t k = 0; k < names.size(); ++k) {
    if (keys[k]) {
      const size_t key = *keys[k] - file_columns_;
      out.columns.push_back(partition_column(schema_[*keys[k]], files_.partition_values[i][key], read.num_rows));
      continue;
    }
    Column c = std::move(read.columns[read_index.at(names[k])]);
    if (const auto it = dataset_index.find(names[k]); it != dataset_index.end()) {
      if (!same_values(c.schema, schema_[it->second])) {  // a file opened again that was replaced meanwhile
        throw InvalidFile(files_.paths[i] + ": column '" + names[k] + "' is now " + type_text(c.schema) +
                          ", not the " + type_text(schema_[it->second]) + " it held when the dataset was opened");
      }
      c.schema = schema_[it->second];  // the dataset's nullability
    }
    out.columns.push_back(std::move(c));
  }
  return out;
}

void DatasetReader::prefetch_file(size_t i, const ReadOptions& options) const {
  if (!is_remote_path(files_.paths[i])) return;
  ReadOptions file_options = options;
  file_options.columns.clear();
  for (const std::string& name : options.columns) {
    const auto key = std::find_if(schema_.begin() + static_cast<std::ptrdiff_t>(file_columns_), schema_.end(),
                                  [&](const ColumnSchema& c) { return c.name == name; });
    if (key == schema_.end()) file_options.columns.push_back(name);
  }
  if (!options.columns.empty() && file_options.columns.empty()) return;  // Hive columns alone
  open_file(i)->prefetch(file_options);
}

Table DatasetReader::read(const ReadOptions& options) const {
  // A window of files as many as the threads is read at once (a file of few columns or row groups would keep only
  // some of them busy, each file's own read taking the threads it can), then appended in order. An error is the
  // first file's that fails, as when read one after another.
  const auto window = static_cast<size_t>(resolve_threads(options.num_threads));
  Table out;
  for (size_t first = 0; first < num_files(); first += window) {
    std::vector<Table> parts(std::min(window, num_files() - first));
    parallel_for(parts.size(), static_cast<int>(window), [&](size_t k) { parts[k] = read_file(first + k, options); });
    for (size_t k = 0; k < parts.size(); ++k) {
      if (first + k == 0) {
        out = std::move(parts[k]);
      } else {
        append_rows(out, parts[k], 0, parts[k].num_rows);
      }
      parts[k] = Table();
    }
  }
  return out;
}

Table read_dataset(const std::string& spec, const ReadOptions& options) {
  return DatasetReader(spec, options.num_threads).read(options);
}

std::string dataset_json(const DatasetReader& dataset) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["dataset"] = dataset.spec();
  int64_t bytes = 0;
  ordered_json files = ordered_json::array();
  const DatasetFiles& listed = dataset.files();
  for (size_t i = 0; i < dataset.num_files(); ++i) {
    const int64_t size = file_size(listed.paths[i]);
    bytes += size;
    ordered_json f = {{"file", listed.paths[i]},
                      {"bytes", size},
                      {"num_rows", dataset.file_rows(i)},
                      {"num_row_groups", dataset.file_row_groups(i)}};
    if (!listed.partition_columns.empty()) {
      ordered_json keys = ordered_json::object();
      for (size_t k = 0; k < listed.partition_columns.size(); ++k) {
        const std::optional<std::string>& v = listed.partition_values[i][k];
        const ColumnSchema& s = listed.partition_columns[k];
        if (!v) {
          keys[s.name] = nullptr;
        } else if (s.type == PhysicalType::kInt64) {
          keys[s.name] = partition_column(s, v, 1).as<int64_t>()[0];
        } else {
          keys[s.name] = *v;
        }
      }
      f["partition"] = keys;
    }
    files.push_back(f);
  }
  j["num_files"] = dataset.num_files();
  j["bytes"] = bytes;
  j["num_rows"] = dataset.num_rows();
  j["num_row_groups"] = dataset.row_groups().size();
  j["schema"] = ordered_json::array();
  const size_t file_columns = dataset.schema().size() - listed.partition_columns.size();
  for (size_t c = 0; c < dataset.schema().size(); ++c) {
    const ColumnSchema& s = dataset.schema()[c];
    ordered_json col = {{"name", s.name}, {"physical_type", to_string(s.type)}, {"nullable", s.nullable}};
    if (const std::string lt = logical_type_text(s); !lt.empty()) col["logical_type"] = lt;
    if (s.is_list) col["list_depth"] = s.list_depth();
    if (c >= file_columns) col["partition"] = true;
    j["schema"].push_back(col);
  }
  j["files"] = files;
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace);
}

}  // namespace feedline::parquet
