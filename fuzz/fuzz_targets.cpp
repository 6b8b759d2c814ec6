#include "fuzz_targets.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/idx.h"
#include "feedline/io/image_decode.h"
#include "feedline/io/parquet.h"
#include "feedline/io/table.h"
#include "io/parquet/reader_internal.h"

namespace feedline::fuzz {
namespace {

// One scratch file per process and target, in memory when /dev/shm is there.
std::string scratch_path(const char* extension) {
  const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  return std::string(dir) + "/feedline-fuzz-" + std::to_string(::getpid()) + extension;
}

void write_bytes(const std::string& path, const uint8_t* data, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("fuzz: cannot write " + path);
  if (size > 0 && std::fwrite(data, 1, size, f) != size) {
    std::fclose(f);
    throw std::runtime_error("fuzz: cannot write " + path);
  }
  std::fclose(f);
}

template <class Read>
std::string feed(const char* extension, const uint8_t* data, size_t size, Read read) {
  const std::string path = scratch_path(extension);
  write_bytes(path, data, size);
  std::string message;
  try {
    read(path);
  } catch (const Error& e) {
    message = e.what();
  }
  std::remove(path.c_str());
  return message;
}

// Throws std::logic_error (a bug) naming the first difference between two tables that should be the same (`got`
// is what `context` says): schema, nulls, list structure at every level, values (floats bit for bit).
void expect_same_table(const Table& want, const Table& got, const std::string& context) {
  const auto differ = [&](const std::string& what) {
    throw std::logic_error("fuzz: " + context + " differs in its " + what);
  };
  if (got.num_rows != want.num_rows || got.columns.size() != want.columns.size()) differ("rows or columns");
  for (size_t c = 0; c < want.columns.size(); ++c) {
    const Column &w = want.columns[c], &g = got.columns[c];
    const ColumnSchema &ws = w.schema, &gs = g.schema;
    const std::string where = " in column '" + ws.name + "'";
    if (gs.name != ws.name || gs.type != ws.type || gs.nullable != ws.nullable ||
        !(gs.int_annotation == ws.int_annotation) || gs.is_string != ws.is_string ||
        gs.type_length != ws.type_length || !(gs.logical == ws.logical) || gs.is_list != ws.is_list ||
        gs.element_nullable != ws.element_nullable || gs.inner_list_nullable != ws.inner_list_nullable) {
      differ("schema" + where);
    }
    if (g.validity != w.validity || g.element_validity != w.element_validity) differ("nulls" + where);
    if (g.list_offsets != w.list_offsets || g.inner_lists.size() != w.inner_lists.size()) differ("lists" + where);
    for (size_t k = 0; k < w.inner_lists.size(); ++k) {
      if (g.inner_lists[k].offsets != w.inner_lists[k].offsets ||
          g.inner_lists[k].validity != w.inner_lists[k].validity) {
        differ("inner lists" + where);
      }
    }
    if (g.values.index() != w.values.index()) differ("value type" + where);
    const bool same = std::visit(
        [&](const auto& wv) {
          using V = std::decay_t<decltype(wv)>;
          const V& gv = std::get<V>(g.values);
          if constexpr (std::is_same_v<V, ByteArrays>) {
            return gv == wv;
          } else {
            return gv.size() == wv.size() &&
                   (wv.empty() || std::memcmp(gv.data(), wv.data(), wv.size() * sizeof(wv[0])) == 0);
          }
        },
        w.values);
    if (!same) differ("values" + where);
  }
}

std::string read_parquet(const uint8_t* data, size_t size) {
  return feed(".parquet", data, size, [size](const std::string& path) {
    parquet::read_file_info(path);
    // Output bounded by the file's size alone (not the machine's memory, which the default also allows), within
    // what a fuzzer's memory limit leaves.
    const int64_t max_output = parquet::detail::file_output_budget(static_cast<int64_t>(size));
    parquet::ReadOptions options;
    options.num_threads = 1;
    options.max_output_bytes = max_output;
    // Read again on three threads, each chunk's pages on three where they can be: the same table or the same error.
    const auto read_threaded = [max_output](const std::string& file) {
      parquet::ReadOptions threaded;
      threaded.num_threads = 3;
      threaded.page_threads = 3;
      threaded.max_output_bytes = max_output;
      return parquet::read_table(file, threaded);
    };
    std::string threaded_error;
    Table threaded_table;
    try {
      threaded_table = read_threaded(path);
    } catch (const Error& e) {
      threaded_error = e.what();
    }
    Table table;
    try {
      table = parquet::read_table(path, options);
    } catch (const Error& e) {
      if (threaded_error != e.what()) {
        throw std::logic_error("fuzz: on one thread '" + std::string(e.what()) + "', on three '" +
                               (threaded_error.empty() ? "read" : threaded_error) + "'");
      }
      throw;
    }
    if (!threaded_error.empty()) throw std::logic_error("fuzz: read on one thread, on three '" + threaded_error + "'");
    expect_same_table(table, threaded_table, "the table read on three threads");
    // What reads must write back and read back the same; the writer may refuse a table (a value outside its
    // INT annotation, two columns of one name), never write one that reads otherwise. Small row groups and
    // pages, so that the cuts between them are fuzzed too.
    const std::string back = path + ".back.parquet";
    parquet::WriteOptions w;
    w.num_threads = 1;
    w.row_group_rows = 5;
    w.page_bytes = 16;
    try {
      parquet::write_table(back, table, w);
    } catch (const Error&) {
      return;
    }
    // A VARIANT column is written as its JSON text, a STRING annotated JSON: it reads back as a JSON column.
    for (Column& c : table.columns) {
      if (c.schema.logical.kind == LogicalKind::kVariant) c.schema.logical.kind = LogicalKind::kJson;
    }
    try {
      expect_same_table(table, parquet::read_table(back, options), "the table our writer wrote back");
      expect_same_table(table, read_threaded(back), "the table our writer wrote back, read on three threads,");
    } catch (const Error& e) {
      std::remove(back.c_str());
      throw std::logic_error(std::string("fuzz: the table written back by our writer does not read: ") + e.what());
    } catch (...) {
      std::remove(back.c_str());
      throw;
    }
    std::remove(back.c_str());
  });
}

// Throws std::logic_error (a bug, not a reader's error) unless rows [first, first + block.num_rows) of `want` are
// `block`, schema, nulls and values (doubles bit for bit).
void expect_rows(const Table& want, const Table& block, int64_t first) {
  const auto differ = [&](const std::string& what) {
    throw std::logic_error("fuzz: CsvStreamReader and read_csv differ from row " + std::to_string(first) + ": " + what);
  };
  if (block.num_rows < 1 || first + block.num_rows > want.num_rows) differ("rows");
  if (block.columns.size() != want.columns.size()) differ("columns");
  for (size_t c = 0; c < block.columns.size(); ++c) {
    const Column &g = block.columns[c], &w = want.columns[c];
    if (g.schema.name != w.schema.name || g.schema.type != w.schema.type || g.schema.nullable != w.schema.nullable ||
        g.schema.is_string != w.schema.is_string) {
      differ("column " + std::to_string(c) + "'s schema");
    }
    for (int64_t r = 0; r < block.num_rows; ++r) {
      const int64_t at = first + r;
      if (g.is_null(r) != w.is_null(at)) differ("column " + std::to_string(c) + "'s nulls");
      bool same = true;
      if (w.schema.type == PhysicalType::kInt64) {
        same = g.as<int64_t>()[r] == w.as<int64_t>()[at];
      } else if (w.schema.type == PhysicalType::kDouble) {
        same = std::memcmp(&g.as<double>()[r], &w.as<double>()[at], sizeof(double)) == 0;
      } else {
        same = g.byte_arrays().at(r) == w.byte_arrays().at(at);
      }
      if (!same) differ("column " + std::to_string(c) + "'s values");
    }
  }
}

// Reads `path` through CsvStreamReader with `options` and throws std::logic_error unless it gives `want`, block by
// block, or fails with `want_error`. `how` and `against` name the two sides in the message.
void expect_stream_reads(const std::string& path, const CsvStreamOptions& options, const Table& want,
                         const std::string& want_error, const std::string& how, const std::string& against) {
  std::string error;
  int64_t rows = 0;
  try {
    CsvStreamReader reader(path, options);
    Table block;
    while (reader.next(&block)) {
      if (want_error.empty()) expect_rows(want, block, rows);
      rows += block.num_rows;
    }
  } catch (const Error& e) {
    error = e.what();
  }
  if (error != want_error) {
    throw std::logic_error("fuzz: CsvStreamReader" + how + " says '" + error + "', " + against + " '" + want_error +
                           "'");
  }
  if (error.empty() && rows != want.num_rows) {
    throw std::logic_error("fuzz: CsvStreamReader" + how + " gave " + std::to_string(rows) + " rows, " + against +
                           " " + std::to_string(want.num_rows));
  }
}

// CsvStreamReader, with blocks small enough that records, quotes and line ends straddle them, must read what
// read_csv reads, or fail with its message.
void compare_stream_with_read_csv(const std::string& path, const CsvReadOptions& read_options, int64_t block_bytes) {
  Table want;
  std::string want_error;
  try {
    want = read_csv(path, read_options);
  } catch (const Error& e) {
    want_error = e.what();
  }
  CsvStreamOptions options;
  static_cast<CsvReadOptions&>(options) = read_options;
  options.block_bytes = block_bytes;
  expect_stream_reads(path, options, want, want_error, "", "read_csv");
}

// CsvStreamReader with a limit reads what read_csv reads of the file cut after that many records (the same
// table, or the same message, naming the whole file).
void compare_limit_with_cut_file(const std::string& path, const uint8_t* data, size_t size, int64_t limit,
                                 int64_t block_bytes) {
  const std::string cut_path = path + ".cut.csv";
  const std::string cut = csv_first_records(std::string(reinterpret_cast<const char*>(data), size), limit);
  write_bytes(cut_path, reinterpret_cast<const uint8_t*>(cut.data()), cut.size());
  Table want;
  std::string want_error;
  try {
    want = read_csv(cut_path, CsvReadOptions{1});
  } catch (const Error& e) {
    want_error = e.what();
    // Messages start with the path; the rest may hold anything the file does, the cut file's name too.
    if (want_error.compare(0, cut_path.size(), cut_path) == 0) want_error.replace(0, cut_path.size(), path);
  }
  std::remove(cut_path.c_str());
  CsvStreamOptions options;
  options.num_threads = 1;
  options.block_bytes = block_bytes;
  options.limit = limit;
  expect_stream_reads(path, options, want, want_error, " with limit " + std::to_string(limit),
                      "read_csv of the cut file");
}

// write_csv of a table read_csv made must be read back by read_csv as that table, but for what CSV cannot hold:
// a lone text column's nulls come back as empty strings. Any error on the way is a bug.
void expect_csv_write_back(const std::string& path, const Table& table, const CsvReadOptions& options) {
  const std::string back = path + ".back.csv";
  Table again;
  try {
    write_csv(back, table);
    again = read_csv(back, options);
  } catch (const Error& e) {
    std::remove(back.c_str());
    throw std::logic_error(std::string("fuzz: a table read_csv made does not write back and read: ") + e.what());
  }
  std::remove(back.c_str());
  Table want = table;
  if (want.columns.size() == 1 && want.columns[0].schema.type == PhysicalType::kByteArray) {
    want.columns[0].validity.clear();  // a null row's value is empty already
    want.columns[0].schema.nullable = false;
  }
  expect_same_table(want, again, "the table write_csv wrote back");
}

std::string read_csv_file(const uint8_t* data, size_t size) {
  return feed(".csv", data, size, [&](const std::string& path) {
    CsvReadOptions text;
    text.text_columns = true;
    text.num_threads = 1;
    const int64_t block_bytes = size > 0 ? 1 + data[0] % 32 : 1;  // the input chooses, so that fuzzing varies it
    compare_stream_with_read_csv(path, text, block_bytes);
    compare_stream_with_read_csv(path, CsvReadOptions{1}, block_bytes);
    compare_limit_with_cut_file(path, data, size, size > 1 ? 1 + data[size - 1] % 8 : 1, block_bytes);
    for (int threads : {1, 2}) {
      text.num_threads = threads;
      read_csv(path, text);
    }
    read_csv(path, CsvReadOptions{2});
    text.num_threads = 1;
    expect_csv_write_back(path, read_csv(path, text), text);
    expect_csv_write_back(path, read_csv(path, CsvReadOptions{1}), CsvReadOptions{1});
  });
}

std::string read_idx_file(const uint8_t* data, size_t size) {
  return feed(".idx", data, size, [](const std::string& path) { read_idx(path); });
}

// A JPEG that decoded whole (`whole`, RGB) decodes as regions too: at full scale the middle third's pixels are the
// whole decode's; at 1/8 the whole scaled picture has libjpeg's scaled size.
void decode_jpeg_regions(std::string_view bytes, DecodeOptions options, const DecodedImage& whole) {
  options.gray = false;
  const ImageRegion middle{whole.height / 3, whole.width / 3, std::max(1, whole.height / 3),
                           std::max(1, whole.width / 3)};
  try {
    const JpegRegion r = decode_jpeg_region(bytes, "input", options, 1, middle);
    for (int y = middle.top; y < middle.top + middle.height; ++y) {
      const size_t at = (static_cast<size_t>(y) * whole.width + middle.left) * 3;
      const size_t from = (static_cast<size_t>(y - r.region.top) * r.image.width + middle.left - r.region.left) * 3;
      if (std::memcmp(whole.pixels.data() + at, r.image.pixels.data() + from, static_cast<size_t>(middle.width) * 3)) {
        throw std::logic_error("fuzz: a JPEG region's pixels differ from the whole decode's");
      }
    }
    const int h = jpeg_scaled_size(whole.height, 8), w = jpeg_scaled_size(whole.width, 8);
    const JpegRegion scaled = decode_jpeg_region(bytes, "input", options, 8, {0, 0, h, w});
    if (scaled.image.height != h || scaled.image.width != w || scaled.image.pixels.size() != size_t(h) * w * 3) {
      throw std::logic_error("fuzz: a JPEG decoded at 1/8 has the wrong size");
    }
  } catch (const Error& e) {
    throw std::logic_error(std::string("fuzz: decoded whole, as a region '") + e.what() + "'");
  }
}

// Bytes straight to the decoders, as samples reach them from memory; messages name the sample "input".
std::string decode_image_bytes(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  DecodeOptions options;
  options.max_pixels = int64_t{1} << 22;  // within what a fuzzer's memory limit leaves, and quick to decode
  std::string rgb_error;
  DecodedImage rgb;
  try {
    rgb = decode_image(bytes, "input", options);
  } catch (const Error& e) {
    rgb_error = e.what();
  }
  options.gray = true;
  DecodedImage gray;
  try {
    gray = decode_image(bytes, "input", options);
  } catch (const Error& e) {
    if (rgb_error != e.what()) {
      throw std::logic_error("fuzz: as RGB '" + (rgb_error.empty() ? "decoded" : rgb_error) + "', as gray '" +
                             e.what() + "'");
    }
    try {  // the region decoder on data refused whole: any error, never a crash
      decode_jpeg_region(bytes, "input", options, 2, {0, 0, 1, 1});
    } catch (const Error&) {
    }
    return rgb_error;
  }
  if (!rgb_error.empty()) throw std::logic_error("fuzz: decoded as gray, as RGB '" + rgb_error + "'");
  const ImageInfo info = probe_image(bytes, "input");
  const size_t pixels = static_cast<size_t>(info.width) * static_cast<size_t>(info.height);
  if (rgb.width != info.width || rgb.height != info.height || rgb.pixels.size() != pixels * 3 ||
      gray.width != info.width || gray.height != info.height || gray.pixels.size() != pixels) {
    throw std::logic_error("fuzz: decoded sizes differ from the header's");
  }
  if (info.format == ImageFormat::kJpeg) decode_jpeg_regions(bytes, options, rgb);
  return "";
}

}  // namespace

std::string csv_first_records(const std::string& text, int64_t n) {
  size_t start = text.find('\n');
  if (start == std::string::npos) return text;
  ++start;
  bool quoted = false;
  for (size_t i = start; i < text.size(); ++i) {
    if (text[i] == '"') quoted = !quoted;
    if (text[i] != '\n' || quoted) continue;
    const size_t length = i - start - (i > start && text[i - 1] == '\r' ? 1 : 0);
    if (length > 0 && --n == 0) return text.substr(0, i + 1);
    start = i + 1;
  }
  return text;
}

void parquet(const uint8_t* data, size_t size) { read_parquet(data, size); }
void csv(const uint8_t* data, size_t size) { read_csv_file(data, size); }
void idx(const uint8_t* data, size_t size) { read_idx_file(data, size); }
void image(const uint8_t* data, size_t size) { decode_image_bytes(data, size); }

std::string run(const std::string& target, const std::string& bytes) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (target == "parquet") return read_parquet(data, bytes.size());
  if (target == "csv") return read_csv_file(data, bytes.size());
  if (target == "idx") return read_idx_file(data, bytes.size());
  if (target == "image") return decode_image_bytes(data, bytes.size());
  throw std::invalid_argument("unknown fuzz target '" + target + "'");
}

}  // namespace feedline::fuzz
