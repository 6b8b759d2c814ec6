#include "feedline/idx.h"

#include <zlib.h>

#include <limits>
#include <memory>
#include <string>

#include "feedline/error.h"

namespace feedline {
namespace {

constexpr uint8_t kUnsignedByte = 0x08;
constexpr int kMaxDims = 4;
// MNIST is 47 MB; anything past 4 GiB is a hostile header, not a dataset.
constexpr int64_t kMaxPayload = int64_t{4} << 30;

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzPtr = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

// Reads exactly n bytes or reports how many it got (gzread also passes plain files through).
int64_t read_fully(gzFile f, uint8_t* out, int64_t n, const std::string& path) {
  int64_t got = 0;
  while (got < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<int64_t>(n - got, 1 << 30));
    const int r = gzread(f, out + got, chunk);
    if (r < 0) {
      int errnum = 0;
      const char* msg = gzerror(f, &errnum);
      throw InvalidFile(path + ": corrupt compressed data: " + (msg != nullptr ? msg : "unknown zlib error"));
    }
    if (r == 0) break;
    got += r;
  }
  return got;
}

}  // namespace

IdxArray read_idx(const std::string& path) {
  GzPtr f(gzopen(path.c_str(), "rb"));
  if (!f) throw IoError(path + ": cannot open");
  gzbuffer(f.get(), 1 << 17);
  uint8_t magic[4];
  if (read_fully(f.get(), magic, 4, path) != 4) throw InvalidFile(path + ": not an IDX file: shorter than its magic");
  if (magic[0] != 0 || magic[1] != 0) throw InvalidFile(path + ": not an IDX file: bad magic");
  if (magic[2] != kUnsignedByte) {
    throw Unsupported(path + ": IDX element type 0x" + std::to_string(magic[2]) + " (only unsigned bytes, 0x08)");
  }
  const int ndims = magic[3];
  if (ndims < 1 || ndims > kMaxDims) {
    throw InvalidFile(path + ": IDX header declares " + std::to_string(ndims) + " dimensions (1 to 4 allowed)");
  }
  IdxArray out;
  int64_t total = 1;
  for (int d = 0; d < ndims; ++d) {
    uint8_t b[4];
    if (read_fully(f.get(), b, 4, path) != 4) throw InvalidFile(path + ": truncated IDX header");
    const int64_t dim = (int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | b[3];
    if (dim == 0 || dim > kMaxPayload || total > kMaxPayload / dim) {
      throw InvalidFile(path + ": IDX dimension " + std::to_string(d) + " = " + std::to_string(dim) +
                        " gives an impossible size");
    }
    total *= dim;
    out.dims.push_back(dim);
  }
  out.data.resize(static_cast<size_t>(total));
  const int64_t got = read_fully(f.get(), out.data.data(), total, path);
  if (got != total) {
    throw InvalidFile(path + ": truncated: header declares " + std::to_string(total) + " data bytes, file has " +
                      std::to_string(got));
  }
  uint8_t extra;
  if (read_fully(f.get(), &extra, 1, path) != 0) {
    throw InvalidFile(path + ": trailing bytes after the " + std::to_string(total) + " data bytes");
  }
  return out;
}

ImageSplit read_idx_split(const std::string& images_path, const std::string& labels_path) {
  IdxArray images = read_idx(images_path);
  IdxArray labels = read_idx(labels_path);
  if (images.dims.size() != 3) throw InvalidFile(images_path + ": expected 3 dimensions (count, rows, cols)");
  if (labels.dims.size() != 1) throw InvalidFile(labels_path + ": expected 1 dimension (count)");
  if (images.dims[0] != labels.dims[0]) {
    throw InvalidFile(images_path + " has " + std::to_string(images.dims[0]) + " images but " + labels_path +
                      " has " + std::to_string(labels.dims[0]) + " labels");
  }
  ImageSplit s;
  s.count = images.dims[0];
  s.rows = images.dims[1];
  s.cols = images.dims[2];
  s.images = std::move(images.data);
  s.labels = std::move(labels.data);
  return s;
}

Table image_split_to_table(const ImageSplit& split) {
  const int64_t pixels = split.rows * split.cols;
  Table t;
  t.num_rows = split.count;
  t.columns.reserve(static_cast<size_t>(pixels) + 1);
  const IntAnnotation u8{8, false};
  auto add = [&](std::string name) -> std::vector<int32_t>& {
    ColumnSchema s;
    s.name = std::move(name);
    s.type = PhysicalType::kInt32;
    s.int_annotation = u8;
    t.columns.push_back(make_column(std::move(s)));
    auto& v = t.columns.back().as<int32_t>();
    v.resize(static_cast<size_t>(split.count));
    return v;
  };
  auto& labels = add("label");
  for (int64_t r = 0; r < split.count; ++r) labels[r] = split.labels[r];
  for (int64_t p = 0; p < pixels; ++p) {
    auto& col = add("pixel" + std::to_string(p + 1));
    const uint8_t* src = split.images.data() + p;
    for (int64_t r = 0; r < split.count; ++r) col[r] = src[r * pixels];
  }
  return t;
}

}  // namespace feedline
