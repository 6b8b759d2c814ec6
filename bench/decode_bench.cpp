// Decoding throughput of each Parquet encoding feedline reads, in bytes of decoded values per second
// (Google Benchmark's bytes_per_second). Each benchmark encodes 1 Mi values once, checks that decoding gives
// them back, then times the decoder alone: no file, no codec, no page headers. And the CSV readers on one thread
// (read_csv, and CsvStreamReader's two passes), in bytes of file per second, on a file of the experiment's layout
// (the file is read from the page cache). And one row group of a wide file read with and without its footer parsed
// again, or with the dataset's columns resolved by name again (BM_RowGroup_*).
//   build/bench/feedline_decode_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/columns.h"
#include "feedline/io/csv.h"
#include "feedline/io/file.h"
#include "feedline/io/idx.h"
#include "feedline/io/parquet.h"
#include "feedline/io/table.h"
#include "io/parquet/delta.h"
#include "io/parquet/dictionary.h"
#include "io/parquet/plain.h"
#include "io/parquet/rle.h"

namespace feedline::parquet {
namespace {

constexpr size_t kValues = 1 << 20;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "decode_bench: %s does not round-trip\n", what);
    std::abort();
  }
}

// Sensor-like integers: a slow walk, as timestamps and ids tend to be.
std::vector<int32_t> walk(size_t n) {
  std::mt19937 gen(7);
  std::vector<int32_t> v(n);
  int32_t x = 1000;
  for (auto& e : v) e = x += static_cast<int32_t>(gen() % 64) - 20;
  return v;
}

std::vector<std::string> words(size_t n) {
  std::mt19937 gen(11);
  std::vector<std::string> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = "customer-" + std::to_string(100000 + i / 3) + std::string(gen() % 8, 'x');
  return v;
}

void BM_Plain_Int32(benchmark::State& state) {
  const auto values = walk(kValues);
  std::string encoded;
  encode_plain(values.data(), values.size(), &encoded);
  std::vector<int32_t> out(kValues);
  for (auto _ : state) {
    decode_plain(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(), kValues, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  check(out == values, "PLAIN");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kValues * 4));
}
BENCHMARK(BM_Plain_Int32);

// Dictionary indices of state.range(0) bits (a dictionary of 2^bits values), every run bit-packed.
void BM_RleDictionary_Int32(benchmark::State& state) {
  const auto bits = static_cast<int>(state.range(0));
  const size_t dict_size = size_t{1} << bits;
  std::vector<int32_t> dict(dict_size);
  std::vector<uint32_t> indices(kValues);
  for (size_t i = 0; i < dict_size; ++i) dict[i] = static_cast<int32_t>(i * 37);
  std::mt19937 gen(3);
  std::vector<int32_t> expect(kValues);
  for (size_t i = 0; i < kValues; ++i) expect[i] = dict[indices[i] = static_cast<uint32_t>(gen() % dict_size)];
  std::string encoded;
  rle_encode(indices.data(), indices.size(), bits, &encoded);
  std::vector<int32_t> out(kValues);
  for (auto _ : state) {
    RleBitPackedDecoder dec(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(), bits);
    DictionaryGather<int32_t> sink{dict.data(), static_cast<uint32_t>(dict.size()), out.data()};
    dec.decode(static_cast<int64_t>(kValues), sink);
    benchmark::DoNotOptimize(out.data());
  }
  check(out == expect, "RLE_DICTIONARY");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kValues * 4));
}
BENCHMARK(BM_RleDictionary_Int32)->Arg(5)->Arg(7)->Arg(8)->Arg(12);

// FIXED_LEN_BYTE_ARRAY(12) dictionary indices of state.range(0) bits (a dictionary of 2^bits keys, as hashed or
// space-filling-curve keys are stored), every run bit-packed; the dictionary carries the reader's room past its end.
void BM_RleDictionary_FixedBytes12(benchmark::State& state) {
  constexpr size_t kWidth = 12;
  const auto bits = static_cast<int>(state.range(0));
  const size_t dict_size = size_t{1} << bits;
  std::string dict(dict_size * kWidth + kShortCopyBytes, '\0');
  for (size_t i = 0; i < dict_size * kWidth; ++i) dict[i] = static_cast<char>(i * 131 + i / kWidth);
  std::vector<uint32_t> indices(kValues);
  std::mt19937 gen(5);
  std::string expect(kValues * kWidth, '\0');
  for (size_t i = 0; i < kValues; ++i) {
    indices[i] = static_cast<uint32_t>(gen() % dict_size);
    std::memcpy(&expect[i * kWidth], &dict[indices[i] * kWidth], kWidth);
  }
  std::string encoded;
  rle_encode(indices.data(), indices.size(), bits, &encoded);
  std::string out(kValues * kWidth, '\0');
  for (auto _ : state) {
    RleBitPackedDecoder dec(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(), bits);
    FixedBytesDictionaryGather sink{dict.data(), static_cast<uint32_t>(dict_size), kWidth, out.data()};
    dec.decode(static_cast<int64_t>(kValues), sink);
    benchmark::DoNotOptimize(out.data());
  }
  check(out == expect, "RLE_DICTIONARY (FIXED_LEN_BYTE_ARRAY)");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kValues * kWidth));
}
BENCHMARK(BM_RleDictionary_FixedBytes12)->Arg(8)->Arg(17);

void BM_DeltaBinaryPacked_Int32(benchmark::State& state) {
  const auto values = walk(kValues);
  const std::string encoded = encode_delta_binary_packed(values.data(), values.size());
  std::vector<int32_t> out(kValues);
  for (auto _ : state) {
    decode_delta_binary_packed(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(),
                               static_cast<int64_t>(kValues), out.data());
    benchmark::DoNotOptimize(out.data());
  }
  check(out == values, "DELTA_BINARY_PACKED");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kValues * 4));
}
BENCHMARK(BM_DeltaBinaryPacked_Int32);

void BM_ByteStreamSplit_Float(benchmark::State& state) {
  std::mt19937 gen(5);
  std::normal_distribution<float> normal;
  std::vector<float> values(kValues);
  for (auto& v : values) v = normal(gen);
  const std::string encoded = encode_byte_stream_split(reinterpret_cast<const uint8_t*>(values.data()), kValues, 4);
  std::vector<float> out(kValues);
  for (auto _ : state) {
    decode_byte_stream_split(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(),
                             static_cast<int64_t>(kValues), 4, reinterpret_cast<uint8_t*>(out.data()));
    benchmark::DoNotOptimize(out.data());
  }
  check(std::memcmp(out.data(), values.data(), kValues * 4) == 0, "BYTE_STREAM_SPLIT");
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kValues * 4));
}
BENCHMARK(BM_ByteStreamSplit_Float);

int64_t total_bytes(const std::vector<std::string>& v) {
  int64_t n = 0;
  for (const auto& s : v) n += static_cast<int64_t>(s.size());
  return n;
}

void BM_Plain_ByteArray(benchmark::State& state) {
  const auto values = words(kValues);
  ByteArrays in;
  std::vector<int64_t> rows(kValues);
  for (size_t i = 0; i < kValues; ++i) {
    in.push_back(values[i]);
    rows[i] = static_cast<int64_t>(i);
  }
  std::string encoded;
  encode_plain_byte_arrays(in, rows.data(), rows.size(), &encoded);
  const size_t encoded_size = encoded.size();
  encoded.append(kShortCopyBytes, '\0');  // (as a page buffer ends)
  ByteArrays out;
  for (auto _ : state) {
    out = ByteArrays();
    decode_plain_byte_arrays(reinterpret_cast<const uint8_t*>(encoded.data()), encoded_size,
                             static_cast<int64_t>(kValues), &out, SIZE_MAX);
    benchmark::DoNotOptimize(out.bytes.data());
  }
  check(out.bytes == in.bytes && out.offsets == in.offsets, "PLAIN byte arrays");
  state.SetBytesProcessed(state.iterations() * total_bytes(values));
}
BENCHMARK(BM_Plain_ByteArray);

void BM_DeltaLengthByteArray(benchmark::State& state) {
  const auto values = words(kValues);
  const std::string encoded = encode_delta_length_byte_arrays(values);
  ByteArrays out;
  for (auto _ : state) {
    out = ByteArrays();
    decode_delta_length_byte_arrays(reinterpret_cast<const uint8_t*>(encoded.data()), encoded.size(),
                                    static_cast<int64_t>(kValues), &out, SIZE_MAX);
    benchmark::DoNotOptimize(out.bytes.data());
  }
  check(out.size() == static_cast<int64_t>(kValues) && out.at(12345) == values[12345], "DELTA_LENGTH_BYTE_ARRAY");
  state.SetBytesProcessed(state.iterations() * total_bytes(values));
}
BENCHMARK(BM_DeltaLengthByteArray);

void BM_DeltaByteArray(benchmark::State& state) {
  const auto values = words(kValues);
  std::string encoded = encode_delta_byte_arrays(values);
  const size_t encoded_size = encoded.size();
  encoded.append(kShortCopyBytes, '\0');  // (as a page buffer ends)
  ByteArrays out;
  for (auto _ : state) {
    out = ByteArrays();
    decode_delta_byte_arrays(reinterpret_cast<const uint8_t*>(encoded.data()), encoded_size,
                             static_cast<int64_t>(kValues), &out, SIZE_MAX, 0);
    benchmark::DoNotOptimize(out.bytes.data());
  }
  check(out.size() == static_cast<int64_t>(kValues) && out.at(kValues - 1) == values[kValues - 1], "DELTA_BYTE_ARRAY");
  state.SetBytesProcessed(state.iterations() * total_bytes(values));
}
BENCHMARK(BM_DeltaByteArray);

// 10,000 rows of `label,pixel1..pixel784`, pixels 0..255 with many zeros, as the experiment's CSV files are,
// written to a file once (removed at exit). Returns its path and size.
std::pair<std::string, int64_t> csv_numbers_file() {
  static const std::pair<std::string, int64_t> file = [] {
    std::mt19937 gen(3);
    std::string text = "label";
    for (int p = 1; p <= 784; ++p) text += ",pixel" + std::to_string(p);
    text += '\n';
    for (int r = 0; r < 10000; ++r) {
      text += std::to_string(gen() % 10);
      for (int p = 0; p < 784; ++p) text += "," + std::to_string(gen() % 3 == 0 ? gen() % 256 : 0);
      text += '\n';
    }
    static const std::string path = "/tmp/feedline_decode_bench_" + std::to_string(::getpid()) + ".csv";
    std::FILE* f = std::fopen(path.c_str(), "wb");
    check(f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fclose(f) == 0,
          "writing the CSV file");
    std::atexit([] { std::remove(path.c_str()); });
    return std::make_pair(path, static_cast<int64_t>(text.size()));
  }();
  return file;
}

void BM_Csv_ReadNumbers(benchmark::State& state) {
  const auto [path, bytes] = csv_numbers_file();
  CsvReadOptions options;
  options.num_threads = 1;
  int64_t rows = 0;
  for (auto _ : state) {
    const Table t = read_csv(path, options);
    rows = t.num_rows;
    benchmark::DoNotOptimize(t.columns.data());
  }
  check(rows == 10000, "CSV");
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_Csv_ReadNumbers)->Unit(benchmark::kMillisecond);

// The same file through CsvStreamReader, blocks of state.range(0) bytes: the typing pass and every block, as
// `feedline convert` reads a file larger than memory. Two parses of the text to read_csv's one.
void BM_Csv_StreamNumbers(benchmark::State& state) {
  const auto [path, bytes] = csv_numbers_file();
  CsvStreamOptions options;
  options.num_threads = 1;
  options.block_bytes = state.range(0);
  int64_t rows = 0;
  for (auto _ : state) {
    CsvStreamReader reader(path, options);
    Table block;
    rows = 0;
    while (reader.next(&block)) {
      rows += block.num_rows;
      benchmark::DoNotOptimize(block.columns.data());
    }
  }
  check(rows == 10000, "CSV stream");
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_Csv_StreamNumbers)->Arg(1 << 20)->Arg(64 << 20)->Unit(benchmark::kMillisecond);

// One row group of a file of the experiment's layout (label + 784 INT(8,unsigned) pixel columns, written with the
// default options), in row groups of `range(0)` rows, read on one thread as a streamed dataset reads it: through
// read_table, which parses the footer at each call, or through one FileReader, which parsed it once. The images
// are FashionMNIST's training set where Debian's dataset-fashion-mnist is installed, else random pixels.
// Items are rows.
constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

bool have_fashion_mnist() {
  return ::access((std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz").c_str(), R_OK) == 0;
}

ImageSplit bench_images() {
  const std::string dir = kFashionMnistDir;
  if (have_fashion_mnist()) {
    return read_idx_split(dir + "/train-images-idx3-ubyte.gz", dir + "/train-labels-idx1-ubyte.gz");
  }
  std::mt19937 gen(5);
  ImageSplit s;
  s.count = 60000;
  s.rows = s.cols = 28;
  s.images.resize(static_cast<size_t>(s.count * 784));
  for (auto& p : s.images) p = static_cast<uint8_t>(gen() % 2 == 0 ? gen() % 256 : 0);
  for (int64_t i = 0; i < s.count; ++i) s.labels.push_back(static_cast<uint8_t>(gen() % 10));
  return s;
}

struct WideFile {
  std::string path;
  int64_t row_groups = 0;
  std::string label;  // its row groups, its footer's size, its images
};

// Written once a process for each row-group size, removed at exit.
const WideFile& wide_file(int64_t group_rows) {
  static std::mutex mutex;
  static std::map<int64_t, WideFile> files;
  static const struct Cleanup {
    ~Cleanup() {
      for (const auto& [rows, f] : files) std::remove(f.path.c_str());
    }
  } cleanup;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = files.find(group_rows);
  if (it != files.end()) return it->second;
  static const Table table = image_split_to_table(bench_images());
  WideFile f;
  f.path = "/tmp/feedline_decode_bench_" + std::to_string(::getpid()) + "_" + std::to_string(group_rows) + ".parquet";
  WriteOptions options;
  options.row_group_rows = group_rows;
  write_table(f.path, table, options);
  const std::string bytes = read_file(f.path);
  uint32_t footer_len;
  std::memcpy(&footer_len, bytes.data() + bytes.size() - 8, 4);
  f.row_groups = static_cast<int64_t>(read_file_info(f.path).row_groups.size());
  f.label = std::to_string(f.row_groups) + " row groups, footer " + std::to_string(footer_len / 1024) + " KiB, " +
            (have_fashion_mnist() ? "FashionMNIST" : "random pixels");
  return files.emplace(group_rows, f).first->second;
}

template <class Read>
void read_row_groups(benchmark::State& state, const WideFile& f, Read read) {
  int64_t g = 0, rows = 0;
  for (auto _ : state) {
    ReadOptions options;
    options.row_groups = {g};
    options.num_threads = 1;
    const Table t = read(options);
    rows += t.num_rows;
    benchmark::DoNotOptimize(t.columns.data());
    g = (g + 1) % f.row_groups;
  }
  check(rows > 0, "the row groups");
  state.SetItemsProcessed(rows);
  state.SetLabel(f.label);
}

void BM_RowGroup_ReadTable(benchmark::State& state) {
  const WideFile& f = wide_file(state.range(0));
  read_row_groups(state, f, [&](const ReadOptions& options) { return read_table(f.path, options); });
}
BENCHMARK(BM_RowGroup_ReadTable)->Arg(5000)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_RowGroup_FileReader(benchmark::State& state) {
  const WideFile& f = wide_file(state.range(0));
  const FileReader reader(f.path);
  read_row_groups(state, f, [&](const ReadOptions& options) { return reader.read(options); });
}
BENCHMARK(BM_RowGroup_FileReader)->Arg(5000)->Arg(1000)->Unit(benchmark::kMillisecond);

// Through read_dataset_table(), which also resolves the label and the `pixel*` features against the schema at each
// call. A streamed dataset resolves them once and reads its row groups as BM_RowGroup_FileReader does.
void BM_RowGroup_ReadDatasetTable(benchmark::State& state) {
  const WideFile& f = wide_file(state.range(0));
  const FileReader reader(f.path);
  DatasetColumns columns;
  columns.feature_count = 784;
  read_row_groups(state, f, [&](const ReadOptions& options) {
    columns.row_groups = options.row_groups;
    return read_dataset_table(reader, columns, options.num_threads);
  });
}
BENCHMARK(BM_RowGroup_ReadDatasetTable)->Arg(5000)->Arg(1000)->Unit(benchmark::kMillisecond);

// The footer alone: what each read_table call pays before reading anything.
void BM_RowGroup_OpenFileReader(benchmark::State& state) {
  const WideFile& f = wide_file(state.range(0));
  for (auto _ : state) {
    const FileReader reader(f.path);
    benchmark::DoNotOptimize(&reader);
  }
  state.SetLabel(f.label);
}
BENCHMARK(BM_RowGroup_OpenFileReader)->Arg(5000)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace feedline::parquet

BENCHMARK_MAIN();
