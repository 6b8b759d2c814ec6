// The checks of the command line's flag values, shared by the commands' definitions. Each validator answers in
// words a person can act on; CLI11 puts the flag's name before it: "--epochs: 'abc' is not a whole number".
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace feedline::cli {

std::string in_quotes(const std::string& text);
// A whole number in [min, max], written in decimal digits with an optional minus sign.
CLI::Validator whole(int64_t min, int64_t max = std::numeric_limits<int64_t>::max());
// A whole number from 0 to 2^64 - 1 (seeds).
CLI::Validator unsigned_whole();
// Whether `text` is, whole, a finite number; its value in *value.
bool finite_number(const std::string& text, double* value);
// A finite number above 0 (learning rates).
CLI::Validator positive_number();
// A finite number of 0 or more.
CLI::Validator non_negative_number();
// A share above 0 and at most 1.
CLI::Validator share();
// A number in [0, 1).
CLI::Validator below_one();
// A duration in seconds, 0 or more.
CLI::Validator seconds();
// One of a few words.
CLI::Validator one_of(std::vector<std::string> words);
// The dataset modes' names (DatasetMode), with or without stream, which reads a file rather than a table.
std::vector<std::string> dataset_modes(bool with_stream);
// A file that exists, or Parquet files (a folder, a pattern or a list: see parquet::is_dataset_spec), which are
// listed and checked when read; a URL is checked when read (its remote flags apply only after parsing).
CLI::Validator existing_input();

extern const std::vector<std::string> kDatasets;
extern const std::vector<std::string> kCodecs;
extern const std::vector<std::string> kFormats;
// How every command that reads data takes many Parquet files as one table.
extern const std::string kManyFiles;

}  // namespace feedline::cli
