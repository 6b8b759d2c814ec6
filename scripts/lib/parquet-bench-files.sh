# Sourced by bench-parquet-read.sh and bench-parquet-compare.sh: the larger files of DuckDB's test folder that both
# readers read (those over 100 KB, from pyarrow, Spark, parquet-mr, Hive and DuckDB, beside the small Spark and
# Hive ones the large-file benchmarks name), the set their `duckdb-folder` argument names.
# shellcheck shell=bash

# Prints the files' paths, one a line, under the checkout `here`.
duckdb_folder_files() {
  local here=$1 name
  for name in lineitem-top10000.gzip userdata1 spark-ontime aws1.snappy candidate bug687_nulls issue_6013 \
              dictionary_multipage uuid_v2 sorted.zstd_18_131072_small malloy-smaller/tbl_; do
    echo "$here/tests/data/duckdb-parquet-testing/$name.parquet"
  done
}
