// The checks of the command line's flag values, shared by the commands' definitions. Each validator answers in
// words a person can act on; CLI11 puts the flag's name before it: "--epochs: 'abc' is not a whole number".
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "feedline/dataset/dataset_mode.h"
#include "feedline/dist/device_choice.h"
#include "feedline/io/columns.h"

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

// The words of a flag whose values are an enum's, each with its value; read once, where the flags are parsed.
template <class Enum>
using Choices = std::vector<std::pair<std::string, Enum>>;

// The words of `names`, each with the value `parse` (the inverse of the enum's names function) reads from it.
template <class Enum, class Parse>
Choices<Enum> choices_of(const std::vector<std::string>& names, Parse parse) {
  Choices<Enum> out;
  for (const auto& name : names) out.emplace_back(name, parse(name));
  return out;
}

// The word of `value` among `words`.
template <class Enum>
std::string word_of(const Choices<Enum>& words, Enum value) {
  for (const auto& [word, v] : words) {
    if (v == value) return word;
  }
  return "";
}

// A flag whose words name the values of an enum: checked by one_of() (the same message for a word it lacks), then
// stored as the enum; the help shows the word of `target`'s value as the default.
template <class Enum>
CLI::Option* add_choice(CLI::App* app, const std::string& flag, Enum& target, const Choices<Enum>& words,
                        const std::string& help) {
  std::vector<std::string> names;
  for (const auto& choice : words) names.push_back(choice.first);
  return app
      ->add_option_function<std::string>(
          flag,
          [&target, words](const std::string& text) {
            for (const auto& [word, value] : words) {
              if (word == text) target = value;
            }
          },
          help)
      ->check(one_of(names))
      ->default_str(word_of(words, target));
}

// The same for a flag of several words (`--modes row tensor`), its default shown as CLI11 shows a list.
template <class Enum>
CLI::Option* add_choices(CLI::App* app, const std::string& flag, std::vector<Enum>& target, const Choices<Enum>& words,
                         const std::string& help) {
  std::vector<std::string> names;
  for (const auto& choice : words) names.push_back(choice.first);
  std::string shown;
  for (const Enum value : target) shown += (shown.empty() ? "" : ",") + word_of(words, value);
  return app
      ->add_option_function<std::vector<std::string>>(
          flag,
          [&target, words](const std::vector<std::string>& texts) {
            target.clear();
            for (const auto& text : texts) {
              for (const auto& [word, value] : words) {
                if (word == text) target.push_back(value);
              }
            }
          },
          help)
      ->check(one_of(names))
      ->default_str("[" + shown + "]");
}

// --device: auto, cpu, cuda or cuda:N, checked as it is parsed (parse_device_choice's message) and stored.
CLI::Option* add_device_flag(CLI::App* app, DeviceChoice& target);

// The table formats' words, as their extensions spell them.
Choices<FileFormat> format_choices();
// The dataset modes' words and values, with or without stream.
Choices<DatasetMode> dataset_mode_choices(bool with_stream);

extern const std::vector<std::string> kDatasets;
extern const std::vector<std::string> kCodecs;
// How every command that reads data takes many Parquet files as one table.
extern const std::string kManyFiles;

}  // namespace feedline::cli
