// Choosing which columns of a file make a dataset: a label column and feature columns named by exact names or
// glob patterns, resolved against the file's schema before anything else is read, so only those columns are
// decoded. Plain functions without state: safe from any thread.
//
// Which columns of a file make an image dataset, and the shape of its images: what `feedline train` and the
// Python DataLoader are told about a file, parsed before anything is read. No LibTorch here: the command-line tool
// parses its flags into these before it knows whether it will load LibTorch. Plain data and a function without
// state: safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "feedline/io/table.h"

namespace feedline {

namespace parquet {
class FileReader;
}

// The names of the columns of `schema` that match any of `patterns`, in file order, each once. A pattern is an
// exact name or a glob where `*` matches any run of characters and `?` any one character (nothing else is
// special). Throws InvalidArgument naming the pattern and a few of the columns when a pattern matches none.
std::vector<std::string> match_columns(const std::vector<ColumnSchema>& schema, const std::vector<std::string>& patterns);

// A data file's format, told by its extension (any case): `.parquet` or `.csv`.
enum class FileFormat { kParquet, kCsv };
// Throws InvalidArgument naming the path for any other extension.
FileFormat file_format(const std::string& path);
// The format's name, as its extension and the command line spell it: "parquet" or "csv".
const char* file_format_name(FileFormat format);
// An input file's format: by its extension as file_format(), else Parquet when the file begins with Parquet's magic
// ("PAR1", or "PARE" for an encrypted footer), as Parquet files named otherwise do (Hive's `000000_0`, `x.pq`,
// `x.parquet.encrypted`). Throws IoError when such a file cannot be opened, InvalidArgument naming the path when
// it is neither.
FileFormat input_format(const std::string& path);

// The columns of a .parquet or .csv file, from its footer or its header line alone (of a CSV file's columns only
// the names are known before reading). Throws as file_format(), read_table() and read_csv_header() do.
// Here and below, `path` may also name a dataset of Parquet files (a folder, a pattern or a comma-separated list,
// see parquet::is_dataset_spec()), read as one table with its Hive columns, as parquet::DatasetReader reads it.
std::vector<ColumnSchema> file_schema(const std::string& path);

// Reads the columns called `names` (every column when empty), in that order, of a .parquet or .csv file: of a
// Parquet file only `row_groups` (every one when empty), for which a CSV file is refused (InvalidArgument naming
// the path); a CSV file's columns that are not all numbers as STRING when `csv_text_columns`
// (CsvReadOptions::text_columns), else refused. Throws otherwise as read_table() and read_csv() do.
Table read_file_columns(const std::string& path, const std::vector<std::string>& names, int num_threads,
                        const std::vector<int64_t>& row_groups = {}, bool csv_text_columns = false);

// Which columns of a file to read as a labelled dataset.
struct DatasetColumns {
  std::string label_column = "label";
  std::vector<std::string> feature_columns{"pixel*"};  // patterns, see match_columns(); the label never counts
  // Read this one column of byte strings (one row-major image or PNG file a row) or lists instead of
  // feature_columns when the file has it, or has `<image_column>.bytes` (a Hugging Face image struct's PNG
  // field); empty: always feature_columns.
  std::string image_column = "image";
  std::vector<std::string> columns;  // non-empty: nothing outside these exact names is read or matched
  std::vector<int64_t> row_groups;   // Parquet only; non-empty: only these row groups, in this order
  // > 0: the features must be this many columns, or one byte-string column (fixed length: of this many bytes).
  int64_t feature_count = 0;
};

// The names of the columns read_dataset_table() reads of a file (called `path` in messages) with this schema: the
// label and feature columns, in file order. Throws InvalidArgument as read_dataset_table() does for a missing
// column, a pattern that matches nothing or a wrong number of features. For a caller that reads one file many
// times: the names resolved once are read with parquet::FileReader::read().
std::vector<std::string> dataset_column_names(const std::string& path, const std::vector<ColumnSchema>& schema,
                                              const DatasetColumns& columns);

// Reads the label and feature columns of a `.parquet` or `.csv` file (chosen by the extension), and nothing
// else: the patterns are resolved against the Parquet footer or the CSV header first. The table holds the
// chosen columns in file order. Throws InvalidArgument naming the file for an unknown extension, a missing
// column, a pattern that matches nothing, a wrong number of features or row groups asked of a CSV file;
// otherwise as the readers do.
Table read_dataset_table(const std::string& path, const DatasetColumns& columns, int num_threads = 0);
// The same of a Parquet file already opened, whose footer is not parsed again: for a caller that reads one file
// many times (a row group at a time).
Table read_dataset_table(const parquet::FileReader& file, const DatasetColumns& columns, int num_threads = 0);

// What `train` reads from a file: its label column, its feature columns (patterns, or the image column when
// `features_given` is false and the file has one) and nothing outside `only` (when not empty).
struct ColumnChoice {
  std::string label = "label";
  std::vector<std::string> features{"pixel*"};
  bool features_given = false;
  std::vector<std::string> only;
  std::vector<int64_t> row_groups;  // Parquet files: only these row groups
};

// The images of a file: channels x height x width values a row (the experiment's 1x28x28 by default).
struct ImageShape {
  int64_t channels = 1, height = 28, width = 28;
};

// Parses "CxHxW" (e.g. 3x32x32); OptionError (image_shape) for anything else or a dimension below 1.
ImageShape parse_image_shape(const std::string& text);

}  // namespace feedline
