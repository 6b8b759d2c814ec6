#include "feedline/io/idx.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "test_paths.h"

namespace feedline {
namespace {

std::vector<uint8_t> idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data, uint8_t type = 8) {
  std::vector<uint8_t> out{0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(d >> s));
  }
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

void write_plain(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

void write_gz(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(f);
}

std::string error_of(const std::string& path) {
  try {
    read_idx(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Idx, ReadsPlainAndGzip) {
  const auto dir = testing::scratch_dir("idx_ok");
  std::vector<uint8_t> data(2 * 3 * 4);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
  write_plain(dir + "/a.idx", idx_bytes({2, 3, 4}, data));
  write_gz(dir + "/a.idx.gz", idx_bytes({2, 3, 4}, data));
  for (const std::string p : {dir + "/a.idx", dir + "/a.idx.gz"}) {
    const IdxArray a = read_idx(p);
    EXPECT_EQ(a.dims, (std::vector<int64_t>{2, 3, 4})) << p;
    EXPECT_EQ(a.data, data) << p;
  }
}

TEST(Idx, RejectsBadFilesWithTheirName) {
  const auto dir = testing::scratch_dir("idx_bad");
  std::vector<uint8_t> data(6, 1);
  write_plain(dir + "/short.idx", {0, 0});
  write_plain(dir + "/magic.idx", {1, 2, 8, 1, 0, 0, 0, 1, 5});
  write_plain(dir + "/type.idx", idx_bytes({6}, data, 0x0D));
  write_plain(dir + "/ndims.idx", {0, 0, 8, 9});
  auto truncated = idx_bytes({2, 3}, data);
  truncated.pop_back();
  write_plain(dir + "/trunc.idx", truncated);
  write_gz(dir + "/trunc.idx.gz", truncated);
  auto trailing = idx_bytes({2, 3}, data);
  trailing.push_back(9);
  write_plain(dir + "/trailing.idx", trailing);
  write_plain(dir + "/huge.idx", idx_bytes({0xFFFFFFF0u, 0xFFFFFFF0u}, {}));
  write_plain(dir + "/zero.idx", idx_bytes({0}, {}));

  EXPECT_NE(error_of(dir + "/short.idx").find("short.idx: not an IDX file"), std::string::npos);
  EXPECT_NE(error_of(dir + "/magic.idx").find("bad magic"), std::string::npos);
  EXPECT_THROW(read_idx(dir + "/type.idx"), Unsupported);
  EXPECT_NE(error_of(dir + "/ndims.idx").find("9 dimensions"), std::string::npos);
  EXPECT_NE(error_of(dir + "/trunc.idx").find("trunc.idx: truncated"), std::string::npos);
  EXPECT_NE(error_of(dir + "/trunc.idx.gz").find("trunc.idx.gz"), std::string::npos);
  EXPECT_NE(error_of(dir + "/trailing.idx").find("trailing bytes"), std::string::npos);
  EXPECT_NE(error_of(dir + "/huge.idx").find("impossible size"), std::string::npos);
  EXPECT_NE(error_of(dir + "/zero.idx").find("impossible size"), std::string::npos);
  EXPECT_THROW(read_idx(dir + "/missing.idx"), IoError);

  // A gzip stream cut in the middle is an error too, not a short read.
  std::vector<uint8_t> big(5000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  write_gz(dir + "/full.gz", idx_bytes({5000}, big));
  std::string gz = testing::file_bytes(dir + "/full.gz");
  gz.resize(gz.size() / 2);
  std::ofstream(dir + "/cut.gz", std::ios::binary).write(gz.data(), static_cast<std::streamsize>(gz.size()));
  EXPECT_THROW(read_idx(dir + "/cut.gz"), InvalidFile);
}

TEST(Idx, SplitChecksCountsAndBuildsTheExperimentTable) {
  const auto dir = testing::scratch_dir("idx_split");
  std::vector<uint8_t> images(3 * 2 * 2);
  for (size_t i = 0; i < images.size(); ++i) images[i] = static_cast<uint8_t>(250 - i);
  write_plain(dir + "/img", idx_bytes({3, 2, 2}, images));
  write_plain(dir + "/lab", idx_bytes({3}, {7, 0, 9}));
  write_plain(dir + "/lab2", idx_bytes({2}, {7, 0}));
  const ImageSplit s = read_idx_split(dir + "/img", dir + "/lab");
  EXPECT_EQ(s.count, 3);
  EXPECT_EQ(s.rows, 2);
  EXPECT_THROW(read_idx_split(dir + "/img", dir + "/lab2"), InvalidFile);
  EXPECT_THROW(read_idx_split(dir + "/lab", dir + "/lab"), InvalidFile);

  const Table t = image_split_to_table(s);
  ASSERT_EQ(t.columns.size(), 5u);
  EXPECT_EQ(t.num_rows, 3);
  EXPECT_EQ(t.columns[0].schema.name, "label");
  EXPECT_EQ(t.columns[4].schema.name, "pixel4");
  EXPECT_EQ(t.columns[1].schema.int_annotation, (IntAnnotation{8, false}));
  EXPECT_EQ(t.columns[0].as<int32_t>(), (std::vector<int32_t>{7, 0, 9}));
  // pixel p of row r is images[r * 4 + p - 1]
  for (int r = 0; r < 3; ++r) {
    for (int p = 1; p <= 4; ++p) EXPECT_EQ(t.columns[p].as<int32_t>()[r], images[r * 4 + p - 1]);
  }
}

// Three images of 2 x 3 pixels with distinct values (some above 127, where a signed byte would turn negative).
ImageSplit small_split() {
  ImageSplit s;
  s.count = 3;
  s.rows = 2;
  s.cols = 3;
  for (int i = 0; i < 18; ++i) s.images.push_back(static_cast<uint8_t>(255 - 13 * i));
  s.labels = {9, 0, 200};
  return s;
}

TEST(Idx, PixelColumnLayouts) {
  const ImageSplit s = small_split();
  for (const auto layout : {ImageTableLayoutKind::kPixelColumnsUInt8, ImageTableLayoutKind::kPixelColumnsInt64}) {
    const bool int64 = layout == ImageTableLayoutKind::kPixelColumnsInt64;
    const Table t = image_split_to_table(s, layout);
    ASSERT_EQ(t.columns.size(), 7u);
    EXPECT_EQ(t.num_rows, 3);
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const ColumnSchema& schema = t.columns[c].schema;
      EXPECT_EQ(schema.name, c == 0 ? "label" : "pixel" + std::to_string(c));
      EXPECT_EQ(schema.type, int64 ? PhysicalType::kInt64 : PhysicalType::kInt32);
      EXPECT_EQ(schema.int_annotation, int64 ? std::nullopt : std::optional<IntAnnotation>(IntAnnotation{8, false}));
      EXPECT_FALSE(schema.nullable);
      EXPECT_TRUE(t.columns[c].validity.empty());
      for (int64_t r = 0; r < 3; ++r) {
        const int64_t expected = c == 0 ? s.labels[r] : s.images[r * 6 + c - 1];
        EXPECT_EQ(int64 ? t.columns[c].as<int64_t>()[r] : t.columns[c].as<int32_t>()[r], expected) << c << " " << r;
      }
    }
  }
  // The one-argument form is the UInt8 layout.
  const Table a = image_split_to_table(s);
  const Table b = image_split_to_table(s, ImageTableLayoutKind::kPixelColumnsUInt8);
  ASSERT_EQ(a.columns.size(), b.columns.size());
  for (size_t c = 0; c < a.columns.size(); ++c) EXPECT_EQ(a.columns[c].as<int32_t>(), b.columns[c].as<int32_t>());
}

TEST(Idx, RowMajorLayoutSurvivesParquet) {
  const ImageSplit s = small_split();
  const Table t = image_split_to_table(s, ImageTableLayoutKind::kRowMajor);
  ASSERT_EQ(t.columns.size(), 2u);
  EXPECT_EQ(t.num_rows, 3);
  EXPECT_EQ(t.columns[0].schema.name, "label");
  EXPECT_EQ(t.columns[0].schema.int_annotation, (IntAnnotation{8, false}));
  EXPECT_EQ(t.columns[0].as<int32_t>(), (std::vector<int32_t>{9, 0, 200}));
  const auto check_image = [&](const Table& table) {
    const Column& image = table.columns.at(1);
    EXPECT_EQ(image.schema.name, "image");
    EXPECT_EQ(image.schema.type, PhysicalType::kFixedLenByteArray);
    EXPECT_EQ(image.schema.type_length, 6);
    ASSERT_EQ(image.size(), 3);
    for (int64_t r = 0; r < 3; ++r) {
      const std::string_view v = image.byte_arrays().at(r);
      EXPECT_EQ(std::vector<uint8_t>(v.begin(), v.end()),
                std::vector<uint8_t>(s.images.begin() + r * 6, s.images.begin() + (r + 1) * 6));
    }
  };
  check_image(t);
  const std::string path = testing::scratch_dir("idx_row_major") + "/rows.parquet";
  parquet::write_table(path, t);
  const Table back = parquet::read_table(path);
  EXPECT_EQ(back.columns.at(0).as<int32_t>(), t.columns[0].as<int32_t>());
  check_image(back);
}

TEST(Idx, LayoutsRejectInconsistentSplits) {
  for (const auto layout : {ImageTableLayoutKind::kPixelColumnsUInt8, ImageTableLayoutKind::kPixelColumnsInt64,
                            ImageTableLayoutKind::kRowMajor}) {
    ImageSplit s = small_split();
    s.images.pop_back();
    EXPECT_THROW(image_split_to_table(s, layout), InvalidArgument);
    s = small_split();
    s.labels.push_back(1);
    EXPECT_THROW(image_split_to_table(s, layout), InvalidArgument);
    s = small_split();
    s.rows = 1 << 16;
    s.cols = 1 << 16;  // rows * cols past INT32_MAX
    EXPECT_THROW(image_split_to_table(s, layout), InvalidArgument);
    ImageSplit empty;
    empty.rows = empty.cols = 28;
    EXPECT_EQ(image_split_to_table(empty, layout).num_rows, 0);
  }
}

TEST(Idx, ReadsThePackagedFashionMnistWhenInstalled) {
  const std::string dir = "/usr/share/datasets/fashion-mnist";
  const ImageSplit s = read_idx_split(dir + "/t10k-images-idx3-ubyte.gz", dir + "/t10k-labels-idx1-ubyte.gz");
  EXPECT_EQ(s.count, 10000);
  EXPECT_EQ(s.rows, 28);
  EXPECT_EQ(s.cols, 28);
  int64_t per_class[10] = {};
  for (uint8_t l : s.labels) {
    ASSERT_LT(l, 10);
    ++per_class[l];
  }
  for (int64_t c : per_class) EXPECT_EQ(c, 1000);  // FashionMNIST's test split is balanced
}

}  // namespace
}  // namespace feedline
