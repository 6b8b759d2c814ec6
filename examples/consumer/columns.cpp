// feedline_columns FILE [COLUMN...]: a Parquet or CSV file read with feedline's io library alone (no LibTorch).
// Reads the columns named (every column when none is), prints the rows and columns read, and for each column
// named (a flat one of numbers) its nulls and the mean of its other values.
#include <feedline/io/csv.h>
#include <feedline/io/error.h>
#include <feedline/io/parquet.h>
#include <feedline/io/table.h>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.parquet|FILE.csv [COLUMN...]\n", argv[0]);
    return 2;
  }
  try {
    const std::string path = argv[1];
    const std::vector<std::string> names(argv + 2, argv + argc);
    // Only the columns named are read; a name the file lacks is an error naming the file and the column.
    feedline::Table table;
    if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0) {
      feedline::CsvReadOptions options;
      options.columns = names;
      table = feedline::read_csv(path, options);
    } else {
      feedline::parquet::ReadOptions options;
      options.columns = names;
      table = feedline::parquet::read_table(path, options);
    }
    std::printf("%s: %lld rows, %zu columns\n", path.c_str(), static_cast<long long>(table.num_rows),
                table.columns.size());
    for (const std::string& name : names) {
      const feedline::Column& column = table.column(name);
      if (column.schema.is_list) throw feedline::InvalidArgument(path + ": " + name + " is a list column");
      int64_t nulls = 0;
      double sum = 0;
      for (int64_t row = 0; row < table.num_rows; ++row) {
        if (column.is_null(row)) {
          ++nulls;
        } else {
          sum += column.value_as_double(row);  // DECIMAL scaled, FLOAT16 widened; throws for text
        }
      }
      const int64_t present = table.num_rows - nulls;
      std::printf("%s: %lld nulls, mean %g\n", name.c_str(), static_cast<long long>(nulls),
                  present > 0 ? sum / static_cast<double>(present) : 0.0);
    }
    return 0;
  } catch (const std::exception& e) {  // feedline::Error names the file and the problem
    std::fprintf(stderr, "feedline_columns: %s\n", e.what());
    return 1;
  }
}
