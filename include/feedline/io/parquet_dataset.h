// A table kept as many Parquet files: a folder of shards (train-00000-of-00008.parquet, ...), Hive partitions
// (year=2024/month=01/part-0.parquet), a glob or a list of files, read as one table in the order of the sorted
// paths. Each `key=value` folder in a file's path adds a column after the files' own: INT64 when every value of
// the key is a whole number, else STRING; __HIVE_DEFAULT_PARTITION__ is null (DuckDB's and Spark's reading).
// The files must agree on their columns (by name, in any order, and type; a column may be optional in one file
// and required in another); errors name both files and the column.
// Remote files (feedline/io/remote.h) are named as local ones: an s3:// or gs:// folder (a URL ending in '/', or one
// at whose key no object is but objects are under key + '/') or pattern is found in one listing of its prefix,
// and lists may mix URLs and paths. An http(s) server has no listing: its files are named one by one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "feedline/io/parquet.h"
#include "feedline/io/table.h"

namespace feedline::parquet {

// Whether `spec` names a dataset of files rather than one file: a folder, a pattern with `*`, `?` or `[`, or a
// comma-separated list (each entry a file, a folder or a pattern). A path to an existing file is that one file,
// whatever its name holds. Touches the file system only to tell which; for an s3:// or gs:// URL that neither ends
// in '/' nor holds a wildcard or comma, one HEAD request tells (no object at the key: a folder).
bool is_dataset_spec(const std::string& spec);

// The files of a dataset and the Hive keys of their paths.
struct DatasetFiles {
  std::vector<std::string> paths;  // sorted, each once
  // One column per Hive key, in the order of the path's folders: INT64 or STRING, nullable when a value is null.
  std::vector<ColumnSchema> partition_columns;
  // partition_values[file][key]: the key's value (percent-decoded), nullopt for __HIVE_DEFAULT_PARTITION__.
  std::vector<std::vector<std::optional<std::string>>> partition_values;
};

// The files that `spec` names (see is_dataset_spec; a single file is a dataset of one file, without Hive
// columns). A folder holds every *.parquet file under it, at any depth, and every file whose name has no
// extension and that begins with Parquet's magic (Hive's 000000_0), leaving out files and folders whose names
// start with `.` or `_` (_SUCCESS, _metadata, .crc files, _temporary); a pattern's matches are taken as they are
// (a folder matched as a folder). Throws InvalidArgument naming the entry for a folder without Parquet files or a
// pattern that matches nothing, IoError for a listed file that is not there, InvalidArgument naming two files
// whose paths have different Hive keys. A remote folder's objects are taken by their names: an object without an
// extension is left out (telling Parquet's magic would cost a request an object). A pattern over http(s) is
// InvalidArgument (no listing).
DatasetFiles list_dataset_files(const std::string& spec);

// Files a DatasetReader keeps open at once, by default: far below the usual limit of 1024 descriptors a process.
constexpr size_t kDefaultMaxOpenFiles = 128;

// The files of a dataset, their footers parsed and their schemas checked against each other once: what reads the
// dataset whole, a file at a time or a row group at a time (a streamed dataset). It keeps up to `max_open_files`
// files open, those used last, each with its parsed footer (see FileReader); a dataset of more files opens the
// others again when they are read, parsing their footers again. Thread-safe: reads may run on several threads at
// once.
class DatasetReader {
 public:
  // One row group of one file, in the dataset's order.
  struct RowGroup {
    size_t file = 0;
    int64_t row_group = 0;  // in its file
    int64_t num_rows = 0;
  };

  // Lists the files (list_dataset_files), reads their footers on `num_threads` threads (0: every core) and checks
  // their schemas: InvalidArgument naming both files and the column when they disagree, or a Hive key that is also
  // a column of the files. Throws as FileReader does for a file that cannot be opened or read, InvalidArgument for
  // max_open_files of 0.
  explicit DatasetReader(std::string spec, int num_threads = 0, size_t max_open_files = kDefaultMaxOpenFiles);
  ~DatasetReader();
  DatasetReader(DatasetReader&&) noexcept;
  DatasetReader& operator=(DatasetReader&&) noexcept;

  const std::string& spec() const { return spec_; }
  const DatasetFiles& files() const { return files_; }
  size_t num_files() const { return files_.paths.size(); }
  // File `i`, opened (or kept open from an earlier call). Throws as FileReader does.
  std::shared_ptr<const FileReader> open_file(size_t i) const;
  int64_t file_rows(size_t i) const { return file_rows_[i]; }
  size_t file_row_groups(size_t i) const { return first_group_[i + 1] - first_group_[i]; }
  // The files' columns (in the first file's order; nullable where any file's is) and then the Hive columns.
  const std::vector<ColumnSchema>& schema() const { return schema_; }
  int64_t num_rows() const { return num_rows_; }
  // Every file's row groups, file after file.
  const std::vector<RowGroup>& row_groups() const { return row_groups_; }
  // Files opened so far, each opening counted (the first, to read the footers, too).
  int64_t file_opens() const;

  // What read_table() reads of file `i` (options.columns may name Hive columns too: empty means every column of
  // the dataset's schema), with the dataset's column order and nullability. Throws as read_table() does.
  Table read_file(size_t i, const ReadOptions& options = {}) const;
  // For a remote file: starts fetching, in the background, the column chunks read_file(i, options) would read (the
  // Hive columns need none); nothing for a local file. Throws as FileReader::prefetch() does.
  void prefetch_file(size_t i, const ReadOptions& options = {}) const;
  // Every file's read_file(), in order, as one table (options.row_groups: of each file); as many files at once as
  // options.num_threads resolves to.
  Table read(const ReadOptions& options = {}) const;

 private:
  struct OpenFiles;  // the files kept open, the most recently used first

  std::string spec_;
  DatasetFiles files_;
  std::vector<ColumnSchema> schema_;
  size_t file_columns_ = 0;  // schema_'s first columns, those of the files
  int64_t num_rows_ = 0;
  std::vector<int64_t> file_rows_;
  std::vector<RowGroup> row_groups_;
  std::vector<size_t> first_group_;  // file i's row groups are row_groups_[first_group_[i], first_group_[i + 1])
  std::unique_ptr<OpenFiles> open_;
};

// DatasetReader(spec).read(options): a folder, pattern, list or single file as one table.
Table read_dataset(const std::string& spec, const ReadOptions& options = {});

// What `feedline inspect --json` prints for a dataset of files: its files (path, bytes, rows, row groups, Hive
// values), their rows and bytes in all, and the dataset's schema (Hive columns marked "partition": true).
std::string dataset_json(const DatasetReader& dataset);

}  // namespace feedline::parquet
