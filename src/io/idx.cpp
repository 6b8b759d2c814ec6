#include "feedline/io/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "feedline/io/error.h"

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

// One byte per row, src[r * stride], widened into an integer column.
template <class T>
void widen_bytes(const uint8_t* src, size_t stride, size_t count, std::vector<T>* out) {
  out->resize(count);
  for (size_t r = 0; r < count; ++r) (*out)[r] = src[r * stride];
}

// Checked once so that every layout indexes within the split's vectors.
void check_split(const ImageSplit& split) {
  const bool dims_ok = split.count >= 0 && split.rows >= 0 && split.cols >= 0 &&
                       (split.rows == 0 || split.cols <= std::numeric_limits<int32_t>::max() / split.rows);
  const auto pixels = dims_ok ? static_cast<uint64_t>(split.rows * split.cols) : 0;
  const auto count = static_cast<uint64_t>(split.count);
  const bool sizes_ok =
      dims_ok && split.labels.size() == count &&
      (pixels == 0 ? split.images.empty()
                   : split.images.size() % pixels == 0 && split.images.size() / pixels == count);
  if (!sizes_ok) {
    throw InvalidArgument("image split of " + std::to_string(split.count) + " images of " +
                          std::to_string(split.rows) + " x " + std::to_string(split.cols) + " pixels holds " +
                          std::to_string(split.images.size()) + " pixels and " +
                          std::to_string(split.labels.size()) + " labels");
  }
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
  // Grow with the data actually there, never to what a (possibly hostile) header declares up front: a
  // 16-byte file must not cost gigabytes.
  constexpr int64_t kChunk = int64_t{1} << 22;
  int64_t got = 0;
  while (got < total) {
    const int64_t want = std::min(kChunk, total - got);
    out.data.resize(static_cast<size_t>(got + want));
    const int64_t n = read_fully(f.get(), out.data.data() + got, want, path);
    got += n;
    if (n < want) break;
  }
  out.data.resize(static_cast<size_t>(got));
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
  return image_split_to_table(split, ImageTableLayoutKind::kPixelColumnsUInt8);
}

Table image_split_to_table(const ImageSplit& split, ImageTableLayoutKind layout) {
  check_split(split);
  const int64_t pixels = split.rows * split.cols;
  const auto count = static_cast<size_t>(split.count);
  const bool int64 = layout == ImageTableLayoutKind::kPixelColumnsInt64;
  Table t;
  t.num_rows = split.count;
  // One integer column filled from bytes: src[r * stride] for each row r.
  auto add_ints = [&](std::string name, const uint8_t* src, int64_t stride) {
    ColumnSchema s;
    s.name = std::move(name);
    s.type = int64 ? PhysicalType::kInt64 : PhysicalType::kInt32;
    if (!int64) s.int_annotation = IntAnnotation{8, false};
    t.columns.push_back(make_column(std::move(s)));
    Column& c = t.columns.back();
    if (int64) {
      widen_bytes(src, static_cast<size_t>(stride), count, &c.as<int64_t>());
    } else {
      widen_bytes(src, static_cast<size_t>(stride), count, &c.as<int32_t>());
    }
  };
  if (layout == ImageTableLayoutKind::kRowMajor) {
    add_ints("label", split.labels.data(), 1);
    ColumnSchema s;
    s.name = "image";
    s.type = PhysicalType::kFixedLenByteArray;
    s.type_length = static_cast<int32_t>(pixels);
    Column image = make_column(std::move(s));
    auto& bytes = std::get<ByteArrays>(image.values);
    bytes.bytes.assign(reinterpret_cast<const char*>(split.images.data()), split.images.size());
    bytes.offsets.resize(count + 1);
    for (size_t r = 0; r <= count; ++r) bytes.offsets[r] = static_cast<int64_t>(r) * pixels;
    t.columns.push_back(std::move(image));
    return t;
  }
  t.columns.reserve(static_cast<size_t>(pixels) + 1);
  add_ints("label", split.labels.data(), 1);
  for (int64_t p = 0; p < pixels; ++p) add_ints("pixel" + std::to_string(p + 1), split.images.data() + p, pixels);
  return t;
}

}  // namespace feedline
