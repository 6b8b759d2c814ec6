#include "cli/prepare_images.h"

#include <archive.h>
#include <archive_entry.h>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <utility>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "io/parallel.h"

namespace feedline::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// `value` in decimal, zero-padded to `width`.
std::string padded(int64_t value, int width) { return fmt::format("{:0{}d}", value, width); }

int digits(int64_t value) { return static_cast<int>(std::to_string(std::max<int64_t>(value, 0)).size()); }

// Class folders of one image format: <dir>/<class>/<index>.<ext>.
ImageLayoutResult write_class_folders(const std::vector<std::string>& files, const std::vector<int64_t>& labels,
                                      const std::string& dir, const std::string& ext, int threads) {
  const int64_t n = static_cast<int64_t>(files.size());
  const int64_t max_label = *std::max_element(labels.begin(), labels.end());
  const int class_width = digits(max_label), index_width = std::max(5, digits(n - 1));
  StagedFolder staged(dir);
  std::vector<bool> present(static_cast<size_t>(max_label + 1));
  for (const int64_t label : labels) present[static_cast<size_t>(label)] = true;
  for (int64_t c = 0; c <= max_label; ++c) {
    if (present[static_cast<size_t>(c)]) make_dirs(staged.path() + "/" + padded(c, class_width));
  }
  std::atomic<int64_t> bytes{0};
  parallel_for_blocks(0, n, 256, threads, [&](int64_t begin, int64_t end) {
    int64_t written = 0;
    for (int64_t i = begin; i < end; ++i) {
      write_whole(staged.path() + "/" + padded(labels[i], class_width) + "/" + padded(i, index_width) + "." + ext,
                  files[i]);
      written += static_cast<int64_t>(files[i].size());
    }
    bytes += written;
  });
  staged.commit();
  return {ext == "png" ? "png" : "jpeg", dir, n, bytes.load(), 0};
}

// The `huggingface` key-value metadata of an image dataset: an Image feature and a ClassLabel of these names.
std::string huggingface_metadata(const std::vector<std::string>& class_names) {
  nlohmann::ordered_json features;
  features["image"] = {{"_type", "Image"}};
  features["label"] = {{"names", class_names}, {"_type", "ClassLabel"}};
  return nlohmann::ordered_json{{"info", {{"features", features}}}}.dump();
}

// Hugging Face's layout: image{bytes, path}, label.
ImageLayoutResult write_hf_parquet(const std::vector<std::string>& png, const std::vector<int64_t>& labels,
                                   const std::string& path, const ImageLayoutOptions& options) {
  const int64_t n = static_cast<int64_t>(png.size());
  const int index_width = std::max(5, digits(n - 1));
  Table table;
  table.num_rows = n;
  Column bytes, names, label;
  bytes.schema.name = "image.bytes";
  bytes.schema.type = PhysicalType::kByteArray;
  names.schema.name = "image.path";
  names.schema.type = PhysicalType::kByteArray;
  names.schema.is_string = true;
  label.schema.name = "label";
  label.schema.type = PhysicalType::kInt64;
  ByteArrays image_bytes, image_names;
  for (int64_t i = 0; i < n; ++i) {
    image_bytes.push_back(png[i]);
    image_names.push_back(padded(i, index_width) + ".png");
  }
  bytes.values = std::move(image_bytes);
  names.values = std::move(image_names);
  label.values = labels;
  table.columns = {std::move(bytes), std::move(names), std::move(label)};
  parquet::WriteOptions wopts;
  wopts.codec = parquet::parse_codec(options.codec);
  wopts.num_threads = options.threads;
  wopts.dotted_names_as_structs = true;
  wopts.dictionary = false;  // encoded images do not repeat
  std::vector<std::string> class_names = options.class_names;
  if (class_names.empty()) {
    const int64_t max_label = *std::max_element(labels.begin(), labels.end());
    for (int64_t c = 0; c <= max_label; ++c) class_names.push_back(std::to_string(c));
  }
  wopts.key_value_metadata = {{"huggingface", huggingface_metadata(class_names)}};
  make_dirs(fs::path(path).parent_path().string());
  parquet::write_table(path, table, wopts);
  return {"parquet", path, 1, file_size(path), 0};
}

struct ArchiveFree {
  void operator()(archive* a) const { archive_write_free(a); }
};
struct EntryFree {
  void operator()(archive_entry* e) const { archive_entry_free(e); }
};

// <dir>/<split>-NNNNNN.tar, written in a folder beside them and moved in when all are whole; the split's earlier
// shards go first.
ImageLayoutResult write_tar_shards(const std::vector<std::string>& png, const std::vector<int64_t>& labels,
                                   const std::string& dir, const std::string& split,
                                   const ImageLayoutOptions& options) {
  const int64_t n = static_cast<int64_t>(png.size());
  const int64_t per = options.samples_per_shard;
  const int64_t shards = (n + per - 1) / per;
  const int key_width = std::max(6, digits(n - 1));
  make_dirs(dir);
  StagedFolder staged(dir + "/." + split);
  auto name = [&](int64_t s) { return split + "-" + padded(s, 6) + ".tar"; };
  parallel_for(static_cast<size_t>(shards), options.threads, [&](size_t s) {
    const auto begin = static_cast<int64_t>(s) * per;
    write_tar_shard(staged.path() + "/" + name(static_cast<int64_t>(s)), png.data() + begin, labels.data() + begin,
                    std::min(n, begin + per) - begin, begin, key_width, "png");
  });
  // The split's shards of an earlier run, which a smaller split would leave behind.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind(split + "-", 0) == 0 && entry.path().extension() == ".tar") fs::remove(entry.path(), ec);
  }
  ImageLayoutResult r{"shards", fmt::format("{}/{}-{{{}..{}}}.tar", dir, split, padded(0, 6), padded(shards - 1, 6)),
                      shards, 0, 0};
  for (int64_t s = 0; s < shards; ++s) {
    const std::string from = staged.path() + "/" + name(s), to = dir + "/" + name(s);
    r.bytes += file_size(from);
    if (std::rename(from.c_str(), to.c_str()) != 0) throw IoError(to + ": cannot rename: " + std::strerror(errno));
  }
  return r;  // the staging folder, empty now, goes with `staged`
}

}  // namespace

void make_dirs(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) throw IoError(path + ": cannot make the folder: " + ec.message());
}

void write_whole(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw IoError(path + ": cannot create: " + std::strerror(errno));
  const size_t n = std::fwrite(bytes.data(), 1, bytes.size(), f);
  const bool closed = std::fclose(f) == 0;
  if (n != bytes.size() || !closed) throw IoError(path + ": cannot write: " + std::strerror(errno));
}

StagedFolder::StagedFolder(std::string target)
    : target_(std::move(target)), staging_(target_ + ".tmp-" + std::to_string(::getpid())) {
  remove_tree(staging_);
  make_dirs(staging_);
}

StagedFolder::~StagedFolder() {
  if (!committed_) remove_tree(staging_);
}

void StagedFolder::commit() {
  const std::string old = target_ + ".old-" + std::to_string(::getpid());
  const bool had_old = ::access(target_.c_str(), F_OK) == 0;
  if (had_old && std::rename(target_.c_str(), old.c_str()) != 0) {
    throw IoError(target_ + ": cannot move the previous folder aside: " + std::strerror(errno));
  }
  if (std::rename(staging_.c_str(), target_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    if (had_old) std::rename(old.c_str(), target_.c_str());
    throw IoError(target_ + ": cannot rename " + staging_ + " onto it: " + why);
  }
  committed_ = true;
  if (had_old) remove_tree(old);
}

void write_tar_shard(const std::string& path, const std::string* files, const int64_t* labels, int64_t count,
                     int64_t first_key, int key_width, const std::string& ext) {
  std::unique_ptr<archive, ArchiveFree> a(archive_write_new());
  auto check = [&](int rc, const std::string& what) {
    if (rc != ARCHIVE_OK) throw IoError(path + ": " + what + ": " + archive_error_string(a.get()));
  };
  check(archive_write_set_format_ustar(a.get()), "cannot choose the tar format");
  check(archive_write_open_filename(a.get(), path.c_str()), "cannot create");
  auto add = [&](const std::string& name, const std::string& data) {
    std::unique_ptr<archive_entry, EntryFree> e(archive_entry_new());
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(data.size()));
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    archive_entry_set_mtime(e.get(), 0, 0);  // the same bytes on every run
    check(archive_write_header(a.get(), e.get()), "cannot write the header of " + name);
    if (archive_write_data(a.get(), data.data(), data.size()) != static_cast<la_ssize_t>(data.size())) {
      throw IoError(path + ": cannot write " + name + ": " + archive_error_string(a.get()));
    }
  };
  for (int64_t i = 0; i < count; ++i) {
    const std::string key = padded(first_key + i, key_width);
    add(key + "." + ext, files[i]);
    add(key + ".cls", std::to_string(labels[i]));
  }
  check(archive_write_close(a.get()), "cannot finish");
}

std::vector<ImageLayoutResult> write_image_layouts(const ImageSplit& split, const std::string& images_dir,
                                                   const std::string& split_name, const ImageLayoutOptions& options,
                                                   const std::function<void(const std::string&)>& progress) {
  if (split.count <= 0) throw InvalidArgument(images_dir + ": the " + split_name + " split has no images");
  const int64_t n = split.count;
  const size_t pixels = static_cast<size_t>(split.rows * split.cols);
  std::vector<int64_t> labels(split.labels.begin(), split.labels.end());
  std::vector<std::string> png(static_cast<size_t>(n)), jpeg(static_cast<size_t>(n));
  progress(fmt::format("encoding {} images as PNG and as JPEG (quality {})", n, options.jpeg.quality));
  auto t = Clock::now();
  parallel_for_blocks(0, n, 256, options.threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const PixelView view{split.images.data() + static_cast<size_t>(i) * pixels, static_cast<int>(split.cols),
                           static_cast<int>(split.rows), 1};
      png[i] = encode_png(view);
      jpeg[i] = encode_jpeg(view, options.jpeg);
    }
  });
  const double encode_seconds = seconds_since(t) / 2;  // shared between the two folder layouts

  std::vector<ImageLayoutResult> results;
  auto timed = [&](const std::string& what, double extra, const std::function<ImageLayoutResult()>& write) {
    progress("writing " + what);
    const auto start = Clock::now();
    ImageLayoutResult r = write();
    r.seconds = seconds_since(start) + extra;
    results.push_back(r);
  };
  const std::string png_dir = images_dir + "/png/" + split_name, jpeg_dir = images_dir + "/jpeg/" + split_name;
  timed(png_dir, encode_seconds, [&] { return write_class_folders(png, labels, png_dir, "png", options.threads); });
  timed(jpeg_dir, encode_seconds, [&] { return write_class_folders(jpeg, labels, jpeg_dir, "jpg", options.threads); });
  const std::string parquet_path = images_dir + "/parquet/" + split_name + ".parquet";
  timed(parquet_path, 0, [&] { return write_hf_parquet(png, labels, parquet_path, options); });
  const std::string shard_dir = images_dir + "/shards";
  timed(shard_dir + "/" + split_name + "-*.tar", 0,
        [&] { return write_tar_shards(png, labels, shard_dir, split_name, options); });
  return results;
}

}  // namespace feedline::cli
