#include "cli/flag_checks.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "feedline/dataset/dataset_mode.h"
#include "feedline/io/error.h"
#include "feedline/io/parquet_dataset.h"
#include "feedline/io/remote.h"

namespace feedline::cli {

std::string in_quotes(const std::string& text) { return "'" + text + "'"; }

// A whole number in [min, max], written in decimal digits with an optional minus sign.
CLI::Validator whole(int64_t min, int64_t max) {
  std::string description = min == 0 ? "0 or more" : "at least " + std::to_string(min);
  if (max != std::numeric_limits<int64_t>::max()) description = std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, description](std::string& text) -> std::string {
        const bool negative = !text.empty() && text[0] == '-';
        const std::string digits = negative ? text.substr(1) : text;
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
          return in_quotes(text) + " is not a whole number";
        }
        errno = 0;
        const long long value = std::strtoll(text.c_str(), nullptr, 10);
        if (errno == ERANGE || value < min || value > max) {
          if (max != std::numeric_limits<int64_t>::max()) return "must be from " + description + ", not " + text;
          if (negative || value < min) return "must be " + description + ", not " + text;
          return text + " is too large";
        }
        return "";
      },
      description);
}

// A whole number from 0 to 2^64 - 1 (seeds).
CLI::Validator unsigned_whole() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
          return in_quotes(text) + " is not a whole number of 0 or more";
        }
        errno = 0;
        std::strtoull(text.c_str(), nullptr, 10);
        if (errno == ERANGE) return text + " is too large (at most 18446744073709551615)";
        return "";
      },
      "0 or more");
}

// Whether `text` is, whole, a finite number; its value in *value.
bool finite_number(const std::string& text, double* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && errno != ERANGE && std::isfinite(*value);
}

namespace {

// A finite number that `ok` accepts; anything else "must be <words>, not <text>".
CLI::Validator number_where(bool (*ok)(double), const std::string& words, const std::string& description) {
  return CLI::Validator(
      [ok, words](std::string& text) -> std::string {
        double value = 0;
        if (!finite_number(text, &value)) return in_quotes(text) + " is not a number";
        if (!ok(value)) return "must be " + words + ", not " + text;
        return "";
      },
      description);
}

}  // namespace

// A finite number above 0 (learning rates).
CLI::Validator positive_number() {
  return number_where([](double v) { return v > 0; }, "above 0", "above 0");
}

// A share above 0 and at most 1.
CLI::Validator share() {
  return number_where([](double v) { return v > 0 && v <= 1; }, "above 0 and at most 1", "(0, 1]");
}

// A duration in seconds, 0 or more.
CLI::Validator seconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        if (!finite_number(text, &value) || value < 0) {
          return "must be a number of seconds, 0 or more, not " + in_quotes(text);
        }
        return "";
      },
      "seconds");
}

// One of a few words.
CLI::Validator one_of(std::vector<std::string> words) {
  std::string list;
  for (const auto& w : words) list += (list.empty() ? "" : ", ") + w;
  return CLI::Validator(
      [words, list](std::string& text) -> std::string {
        if (std::find(words.begin(), words.end(), text) != words.end()) return "";
        return in_quotes(text) + " is not one of " + list;
      },
      "{" + list + "}");
}

// The dataset modes' names (DatasetMode), with or without stream, which reads a file rather than a table.
std::vector<std::string> dataset_modes(bool with_stream) {
  std::vector<std::string> names;
  for (const DatasetMode mode : kDatasetModes) {
    if (with_stream || mode != DatasetMode::kStream) names.emplace_back(dataset_mode_name(mode));
  }
  return names;
}

// A file that exists, or Parquet files (a folder, a pattern or a list: see parquet::is_dataset_spec), which are
// listed and checked when read; a URL is checked when read (its remote flags apply only after parsing).
CLI::Validator existing_input() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (is_remote_path(text) || parquet::is_dataset_spec(text)) return "";
        std::error_code ec;
        if (std::filesystem::is_regular_file(text, ec)) return "";
        if (std::filesystem::exists(text, ec)) return in_quotes(text) + " is not a file";
        return in_quotes(text) + ": no such file";
      },
      "PATH");
}

const std::vector<std::string> kDatasets{"mnist", "fashion-mnist"};
const std::vector<std::string> kCodecs{"uncompressed", "snappy", "gzip", "zstd", "lz4_raw", "brotli"};

CLI::Option* add_device_flag(CLI::App* app, DeviceChoice& target) {
  return app
      ->add_option_function<std::string>(
          "--device", [&target](const std::string& text) { target = parse_device_choice(text); },
          "auto, cpu, cuda or cuda:N")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              parse_device_choice(text);
            } catch (const InvalidArgument& e) {
              return e.what();
            }
            return "";
          },
          ""))
      ->default_str(device_choice_text(target));
}

Choices<FileFormat> format_choices() {
  Choices<FileFormat> out;
  for (const FileFormat format : {FileFormat::kParquet, FileFormat::kCsv}) {
    out.emplace_back(file_format_name(format), format);
  }
  return out;
}

Choices<DatasetMode> dataset_mode_choices(bool with_stream) {
  return choices_of<DatasetMode>(dataset_modes(with_stream), parse_dataset_mode);
}

// How every command that reads data takes many Parquet files as one table.
const std::string kManyFiles =
    "a folder (its Parquet files at any depth), a quoted glob ('data/train-*.parquet') or a comma-separated "
    "list; key=value folders add Hive columns";

CLI::Validator non_negative_number() {
  return number_where([](double v) { return v >= 0; }, "0 or more", "0 or more");
}

CLI::Validator below_one() {
  return number_where([](double v) { return v >= 0 && v < 1; }, "0 or more and below 1", "[0, 1)");
}

}  // namespace feedline::cli
