// What `feedline inspect --json` prints, as a library call: a file's schema and, for Parquet, its row groups,
// column chunks (codec, encodings, sizes, null counts, min and max) and key-value metadata. Reads the footer
// alone for Parquet, the whole file for CSV (to type its columns). Safe from any thread.
#pragma once

#include <string>

namespace feedline {

// The JSON document (indented by 2) describing `path` (.parquet or .csv). Throws as the readers do: IoError for
// a file that cannot be read, InvalidFile naming the file and the problem for a malformed one.
std::string inspect_json(const std::string& path);

}  // namespace feedline
