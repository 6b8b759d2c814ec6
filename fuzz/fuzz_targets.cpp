#include "fuzz_targets.h"

#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include "feedline/csv.h"
#include "feedline/error.h"
#include "feedline/idx.h"
#include "feedline/parquet.h"

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

std::string read_parquet(const uint8_t* data, size_t size) {
  return feed(".parquet", data, size, [](const std::string& path) {
    parquet::read_file_info(path);
    parquet::ReadOptions options;
    options.num_threads = 1;
    parquet::read_table(path, options);
  });
}

std::string read_csv_file(const uint8_t* data, size_t size) {
  return feed(".csv", data, size, [](const std::string& path) {
    CsvReadOptions text;
    text.text_columns = true;
    for (int threads : {1, 2}) {
      text.num_threads = threads;
      read_csv(path, text);
    }
    read_csv(path, CsvReadOptions{1});
    read_csv(path, CsvReadOptions{2});
  });
}

std::string read_idx_file(const uint8_t* data, size_t size) {
  return feed(".idx", data, size, [](const std::string& path) { read_idx(path); });
}

}  // namespace

void parquet(const uint8_t* data, size_t size) { read_parquet(data, size); }
void csv(const uint8_t* data, size_t size) { read_csv_file(data, size); }
void idx(const uint8_t* data, size_t size) { read_idx_file(data, size); }

std::string run(const std::string& target, const std::string& bytes) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  if (target == "parquet") return read_parquet(data, bytes.size());
  if (target == "csv") return read_csv_file(data, bytes.size());
  if (target == "idx") return read_idx_file(data, bytes.size());
  throw std::invalid_argument("unknown fuzz target '" + target + "'");
}

}  // namespace feedline::fuzz
