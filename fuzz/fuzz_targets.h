// The fuzzing entry points, shared by the libFuzzer binaries (fuzz/) and the replay test
// (tests/io/fuzz_replay_test.cpp). Each feeds its bytes to a reader through a file, as users' files arrive,
// and accepts a feedline::Error: anything else (another exception, a crash, a sanitizer report) is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace feedline::fuzz {

// The Parquet footer, schema, page headers, levels, every encoding and codec: read_file_info, then read_table;
// a table read is written back by our writer (which may refuse it) and must read back the same.
void parquet(const uint8_t* data, size_t size);
// The CSV reader (one and two threads), and CsvStreamReader with small blocks, which must agree with it; a table
// read is written back by write_csv and must read back the same.
void csv(const uint8_t* data, size_t size);
// The IDX reader, plain or gzip.
void idx(const uint8_t* data, size_t size);
// The image decoders (JPEG, PNG, WebP) with a small pixel limit: RGB and gray must both decode or both fail
// alike, in the sizes probe_image reads from the header.
void image(const uint8_t* data, size_t size);

// A CSV file's text cut after its header and first `n` records (whole when it holds fewer): what
// CsvStreamOptions::limit = n reads of it. Records end at a line end outside quotes; empty lines are not records.
std::string csv_first_records(const std::string& text, int64_t n);

// Runs `target` ("parquet", "csv", "idx" or "image") on the bytes; returns the feedline::Error message, or "" when
// the input was read.
std::string run(const std::string& target, const std::string& bytes);

}  // namespace feedline::fuzz
