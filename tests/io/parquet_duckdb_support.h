// Helpers for comparing our reading of Parquet files with DuckDB's (tests/io/duckdb_parquet.mjs).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <fmt/core.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "feedline/io/table.h"
#include "io/value_text.h"
#include "test_paths.h"

namespace feedline::testing {

struct Dump {
  std::vector<std::string> names, types;
  std::vector<std::vector<std::string>> rows;
};

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs one of the node helper scripts of tests/io (duckdb_parquet.mjs, arrow_rs_parquet.mjs) with the npm cache
// and `args`, its standard output into *out; fails the test (with what to do) when node or a package it loads is
// missing (the script's exit status 2).
inline ::testing::AssertionResult run_node_script(const std::string& script, const std::vector<std::string>& args,
                                                  std::string* out) {
  if (std::system("command -v node >/dev/null 2>&1") != 0) {
    return ::testing::AssertionFailure() << "node is not installed: run scripts/install-deps.sh";
  }
  const std::string err_path = scratch_dir("node-stderr") + "/stderr.txt";
  std::string cmd = "node " + shell_quote(source_dir() + "/tests/io/" + script) + " " + shell_quote(npm_cache_dir());
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  cmd += " 2>" + shell_quote(err_path);
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return ::testing::AssertionFailure() << "cannot run " << cmd;
  out->clear();
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  const int status = ::pclose(p);
  const std::string err = file_bytes(err_path);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 2) {
    return ::testing::AssertionFailure() << script << ": a package is missing from " << npm_cache_dir()
                                         << ": run scripts/install-deps.sh\n" << err;
  }
  if (code != 0) return ::testing::AssertionFailure() << cmd << " failed (" << code << "):\n" << err;
  return ::testing::AssertionSuccess();
}

// Runs the DuckDB helper script (duckdb_parquet.mjs).
inline ::testing::AssertionResult run_duckdb(const std::vector<std::string>& args, std::string* out) {
  return run_node_script("duckdb_parquet.mjs", args, out);
}

inline Dump parse_dump(const std::string& text) {
  Dump d;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("columns\t", 0), 0u) << line;
  const size_t n = std::stoul(line.substr(8));
  auto split = [](const std::string& s) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
      const size_t tab = s.find('\t', start);
      parts.push_back(s.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    return parts;
  };
  for (size_t i = 0; i < n && std::getline(in, line); ++i) {
    const auto parts = split(line);
    d.names.push_back(parts.at(0));
    d.types.push_back(parts.at(1));
  }
  while (std::getline(in, line)) {
    std::vector<std::string> row = n == 0 ? std::vector<std::string>{} : split(line);
    d.rows.push_back(std::move(row));
  }
  return d;
}

inline std::string hex(const void* data, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) {
    s.push_back(digits[p[i] >> 4]);
    s.push_back(digits[p[i] & 15]);
  }
  return s;
}

// The same canonical text the script prints, for value `row` of `c` (for a list column, element `row`).
inline std::string value_cell(const Column& c, int64_t row) {
  const LogicalAnnotation& a = c.schema.logical;
  switch (a.kind) {
    case LogicalKind::kNone: break;
    case LogicalKind::kDate: return "D:" + std::to_string(c.as<int32_t>()[row]);
    case LogicalKind::kTime: {
      const int64_t v = c.schema.type == PhysicalType::kInt32 ? c.as<int32_t>()[row] : c.as<int64_t>()[row];
      // DuckDB, as feedline prints them, takes times modulo a day; nanoseconds are its TIME_NS.
      const auto within_day = [](int64_t t, int64_t day) { return t >= 0 && t <= day ? t : (t % day + day) % day; };
      if (a.unit == TimeUnit::kNanos) return "TN:" + std::to_string(within_day(v, 86'400'000'000'000));
      return "T:" + std::to_string(within_day(a.unit == TimeUnit::kMillis ? v * 1000 : v, 86'400'000'000));
    }
    case LogicalKind::kTimestamp: {
      const int64_t v = c.as<int64_t>()[row];
      if (a.unit == TimeUnit::kNanos) return "TSN:" + std::to_string(v);
      return "TS:" + std::to_string(a.unit == TimeUnit::kMillis ? v * 1000 : v);
    }
    case LogicalKind::kDecimal: {
      // DuckDB prints decimals this way.
      if (c.schema.type == PhysicalType::kInt32) return "N:" + decimal_to_string(c.as<int32_t>()[row], a.scale);
      if (c.schema.type == PhysicalType::kInt64) return "N:" + decimal_to_string(c.as<int64_t>()[row], a.scale);
      return "N:" + decimal_bytes_to_string(c.byte_arrays().at(row), a.scale);
    }
    case LogicalKind::kUuid: {  // DuckDB prints the canonical form: 8-4-4-4-12 lowercase hex digits
      const std::string_view b = c.byte_arrays().at(row);
      std::string text;
      for (size_t i = 0; i < b.size(); ++i) {
        char digits[3];
        std::snprintf(digits, sizeof digits, "%02x", static_cast<unsigned>(static_cast<uint8_t>(b[i])));
        text += std::string(i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "") + digits;
      }
      return text;
    }
    case LogicalKind::kVariant:  // its JSON text, a string
    case LogicalKind::kJson:
    case LogicalKind::kEnum:
    case LogicalKind::kBson: break;  // the text or bytes
    case LogicalKind::kInterval: {  // the three counts read here from the bytes, then the reader's text
      const std::string_view b = c.byte_arrays().at(row);
      if (b.size() != 12) return "I:?";
      int32_t months, days;
      uint32_t millis;
      std::memcpy(&months, b.data(), 4);
      std::memcpy(&days, b.data() + 4, 4);
      std::memcpy(&millis, b.data() + 8, 4);
      return "I:" + std::to_string(months) + "," + std::to_string(days) + "," + std::to_string(int64_t{millis} * 1000) +
             "=" + value_text(c, row).value_or("?");
    }
    case LogicalKind::kFloat16: {
      const float f = static_cast<float>(c.value_as_double(row));
      if (std::isnan(f)) return "f:nan";
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      char buf[16];
      std::snprintf(buf, sizeof buf, "f:%08" PRIx32, bits);
      return buf;
    }
  }
  const bool is_unsigned = c.schema.int_annotation && !c.schema.int_annotation->is_signed;
  switch (c.schema.type) {
    case PhysicalType::kBoolean: return c.as<uint8_t>()[row] ? "1" : "0";
    case PhysicalType::kInt32: {
      const int32_t v = c.as<int32_t>()[row];
      return is_unsigned ? std::to_string(static_cast<uint32_t>(v)) : std::to_string(v);
    }
    case PhysicalType::kInt64: {
      const int64_t v = c.as<int64_t>()[row];
      return is_unsigned ? std::to_string(static_cast<uint64_t>(v)) : std::to_string(v);
    }
    case PhysicalType::kFloat: {
      if (std::isnan(c.as<float>()[row])) return "f:nan";  // payloads are not values: readers may quiet them
      uint32_t bits;
      std::memcpy(&bits, &c.as<float>()[row], 4);
      char buf[16];
      std::snprintf(buf, sizeof buf, "f:%08" PRIx32, bits);
      return buf;
    }
    case PhysicalType::kDouble: {
      if (std::isnan(c.as<double>()[row])) return "d:nan";
      uint64_t bits;
      std::memcpy(&bits, &c.as<double>()[row], 8);
      char buf[24];
      std::snprintf(buf, sizeof buf, "d:%016" PRIx64, bits);
      return buf;
    }
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: {
      const std::string_view v = c.byte_arrays().at(row);
      return (c.schema.is_string ? "s:" : "b:") + hex(v.data(), v.size());
    }
  }
  return "?";
}

// The canonical text of entry `i` at list level `level` of `c` (0: the rows; list_depth(): the values).
inline std::string nested_cell(const Column& c, int level, int64_t i) {
  if (level == c.schema.list_depth()) return c.element_is_null(i) ? "N" : value_cell(c, i);
  const std::vector<int64_t>& offsets = level == 0 ? c.list_offsets : c.inner_lists[level - 1].offsets;
  if (level == 0 ? c.is_null(i) : c.inner_lists[level - 1].is_null(i)) return "N";
  std::string out = "L[";
  for (int64_t e = offsets[i]; e < offsets[i + 1]; ++e) {
    if (e > offsets[i]) out += ",";
    out += nested_cell(c, level + 1, e);
  }
  return out + "]";
}

// The canonical text of row `row`: a list as L[cell,cell,...], a list of lists as L[L[...],...].
inline std::string cell(const Column& c, int64_t row) {
  if (c.is_null(row)) return "N";
  if (!c.schema.is_list) return value_cell(c, row);
  return nested_cell(c, 0, row);
}

inline std::string duckdb_type_for(const ColumnSchema& s) {
  if (s.is_list) {
    ColumnSchema element = s;
    element.is_list = false;
    element.inner_list_nullable.clear();
    std::string brackets;
    for (int k = 0; k < s.list_depth(); ++k) brackets += "[]";
    return duckdb_type_for(element) + brackets;
  }
  switch (s.type) {
    case PhysicalType::kBoolean: return "BOOLEAN";
    case PhysicalType::kFloat: return "FLOAT";
    case PhysicalType::kDouble: return "DOUBLE";
    case PhysicalType::kByteArray:
      if (s.logical.kind == LogicalKind::kJson) return "JSON";
      return s.is_string ? "VARCHAR" : "BLOB";
    case PhysicalType::kFixedLenByteArray:
      if (s.logical.kind == LogicalKind::kUuid) return "UUID";
      return s.logical.kind == LogicalKind::kInterval ? "INTERVAL" : "BLOB";
    case PhysicalType::kInt32:
    case PhysicalType::kInt64: {
      const IntAnnotation a = s.int_annotation.value_or(IntAnnotation{s.type == PhysicalType::kInt32 ? 32 : 64, true});
      const char* names[] = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT"};
      const int k = a.bit_width == 8 ? 0 : a.bit_width == 16 ? 1 : a.bit_width == 32 ? 2 : 3;
      return (a.is_signed ? "" : "U") + std::string(names[k]);
    }
  }
  return "?";
}

inline void expect_same_values(const Table& ours, const Dump& duck, bool check_types = true) {
  ASSERT_EQ(ours.columns.size(), duck.names.size());
  ASSERT_EQ(static_cast<size_t>(ours.num_rows), duck.rows.size());
  for (size_t c = 0; c < ours.columns.size(); ++c) {
    EXPECT_EQ(ours.columns[c].schema.name, duck.names[c]);
    if (check_types) EXPECT_EQ(duckdb_type_for(ours.columns[c].schema), duck.types[c]) << "column " << duck.names[c];
  }
  size_t mismatches = 0;
  for (int64_t r = 0; r < ours.num_rows; ++r) {
    const auto& row = duck.rows[static_cast<size_t>(r)];
    ASSERT_EQ(row.size(), ours.columns.size()) << "row " << r;
    for (size_t c = 0; c < ours.columns.size(); ++c) {
      const std::string mine = cell(ours.columns[c], r);
      if (mine != row[c] && ++mismatches <= 10) {
        ADD_FAILURE() << "column " << duck.names[c] << " row " << r << ": feedline " << mine << ", DuckDB " << row[c];
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

// DuckDB's JSON for a VARIANT value and feedline's, compared as values: objects and arrays element by element,
// numbers as doubles, and the strings of types JSON lacks as each tool writes them: timestamps ("2024-11-07
// 12:33:54.123456+00" in DuckDB, ISO 8601 "2024-11-07T12:33:54.123456Z" in feedline, which keeps nanoseconds
// where DuckDB rounds them to microseconds) and binary (DuckDB's "\x0A\x0B" escapes, feedline's base64).
inline bool same_json(const nlohmann::json& ours, const nlohmann::json& theirs);

inline std::string base64(const std::string& bytes) {
  static const char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 | static_cast<uint8_t>(bytes[i + 1]) << 8 |
                       static_cast<uint8_t>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kDigits[(v >> s) & 63];
  }
  if (i < bytes.size()) {
    const bool two = i + 1 < bytes.size();
    const uint32_t v = static_cast<uint8_t>(bytes[i]) << 16 | (two ? static_cast<uint8_t>(bytes[i + 1]) << 8 : 0);
    out += kDigits[v >> 18];
    out += kDigits[(v >> 12) & 63];
    out += two ? kDigits[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

inline bool same_string(const std::string& ours, const std::string& theirs) {
  if (ours == theirs) return true;
  // Binary: DuckDB escapes each byte outside printable ASCII as \xHH and keeps the others.
  if (theirs.rfind("\\x", 0) == 0) {
    std::string bytes;
    for (size_t i = 0; i < theirs.size();) {
      if (i + 4 <= theirs.size() && theirs.compare(i, 2, "\\x") == 0) {
        bytes += static_cast<char>(std::stoi(theirs.substr(i + 2, 2), nullptr, 16));
        i += 4;
      } else {
        bytes += theirs[i++];
      }
    }
    return base64(bytes) == ours;
  }
  // Timestamps: "YYYY-MM-DDTHH:MM:SS[.fraction][Z]" against "YYYY-MM-DD HH:MM:SS[.micros][+00]".
  if (ours.size() >= 19 && ours[10] == 'T') {
    std::string mine = ours;
    mine[10] = ' ';
    const bool utc = mine.back() == 'Z';
    if (utc) mine.pop_back();
    std::string fraction;
    if (mine.size() > 20 && mine[19] == '.') {
      fraction = mine.substr(20);
      mine.resize(19);
    }
    // Nanoseconds: DuckDB keeps them, or (timestamps with a time zone) cuts them to microseconds toward the
    // epoch, which after it is down and before it up.
    std::vector<std::string> fractions{fraction};
    if (fraction.size() == 9) {
      const int64_t micros = std::stoll(fraction) / 1000;
      fractions.push_back(fmt::format("{:06}", micros));
      if (micros + 1 < 1000000) fractions.push_back(fmt::format("{:06}", micros + 1));
    }
    for (std::string f : fractions) {
      while (!f.empty() && f.back() == '0') f.pop_back();
      if (mine + (f.empty() ? "" : "." + f) + (utc ? "+00" : "") == theirs) return true;
    }
    return false;
  }
  return false;
}

inline bool same_json(const nlohmann::json& ours, const nlohmann::json& theirs) {
  if (ours.is_number() && theirs.is_number()) {
    const double a = ours.get<double>(), b = theirs.get<double>();
    return a == b || std::abs(a - b) <= 1e-15 * std::abs(b);
  }
  if (ours.is_string() && theirs.is_string()) return same_string(ours.get<std::string>(), theirs.get<std::string>());
  if (ours.type() != theirs.type()) return false;
  if (ours.is_array()) {
    if (ours.size() != theirs.size()) return false;
    for (size_t i = 0; i < ours.size(); ++i) {
      if (!same_json(ours[i], theirs[i])) return false;
    }
    return true;
  }
  if (ours.is_object()) {
    if (ours.size() != theirs.size()) return false;
    for (auto it = ours.begin(); it != ours.end(); ++it) {
      if (!theirs.contains(it.key()) || !same_json(it.value(), theirs[it.key()])) return false;
    }
    return true;
  }
  return ours == theirs;
}

inline std::string unhex(const std::string& digits) {
  std::string bytes;
  for (size_t i = 0; i + 2 <= digits.size(); i += 2) bytes += static_cast<char>(std::stoi(digits.substr(i, 2), nullptr, 16));
  return bytes;
}

// How feedline's table and DuckDB's dump of the same file differ: "" when every row and cell agrees. Decimals
// wider than DuckDB's 38 digits, which DuckDB reads as DOUBLE, are compared as the nearest double.
inline std::string folder_mismatch(const Table& ours, const Dump& duck) {
  if (ours.columns.size() != duck.names.size()) {
    return fmt::format("{} columns, DuckDB {}", ours.columns.size(), duck.names.size());
  }
  if (static_cast<size_t>(ours.num_rows) != duck.rows.size()) {
    return fmt::format("{} rows, DuckDB {}", ours.num_rows, duck.rows.size());
  }
  for (int64_t r = 0; r < ours.num_rows; ++r) {
    const auto& row = duck.rows[static_cast<size_t>(r)];
    if (row.size() != ours.columns.size()) return fmt::format("row {}: DuckDB gives {} cells", r, row.size());
    for (size_t c = 0; c < ours.columns.size(); ++c) {
      const Column& col = ours.columns[c];
      const std::string mine = cell(col, r), theirs = row[c];
      if (mine == theirs) continue;
      bool same = false;
      if (col.schema.logical.kind == LogicalKind::kVariant && mine == "s:6e756c6c" && theirs == "N") {
        same = true;  // a variant null: JSON null in feedline, SQL NULL in DuckDB
      } else if (col.schema.logical.kind == LogicalKind::kVariant && mine.rfind("s:", 0) == 0 && theirs.rfind("s:", 0) == 0) {
        const auto a = nlohmann::json::parse(unhex(mine.substr(2)), nullptr, false);
        const auto b = nlohmann::json::parse(unhex(theirs.substr(2)), nullptr, false);
        same = !a.is_discarded() && !b.is_discarded() && same_json(a, b);
      } else if ((mine.rfind("TSN:", 0) == 0 && theirs.rfind("TS:", 0) == 0) ||
                 (mine.rfind("TN:", 0) == 0 && theirs.rfind("T:", 0) == 0)) {
        // A nanosecond time or timestamp adjusted to UTC: DuckDB's TIME / TIMESTAMP WITH TIME ZONE holds
        // microseconds, the nanoseconds cut.
        const int64_t nanos = std::stoll(mine.substr(mine.find(':') + 1));
        const int64_t micros = std::stoll(theirs.substr(theirs.find(':') + 1));
        same = col.schema.logical.utc &&
               (nanos / 1000 == micros || (nanos - micros * 1000 >= 0 && nanos - micros * 1000 < 1000));
      } else if (col.schema.logical.kind == LogicalKind::kDecimal && !col.schema.is_list && theirs.rfind("d:", 0) == 0) {
        const uint64_t bits = std::stoull(theirs.substr(2), nullptr, 16);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        const double v = col.value_as_double(r);
        same = v == d || std::abs(v - d) <= 1e-15 * std::abs(d);
      }
      if (!same) return fmt::format("column '{}' row {}: feedline {}, DuckDB {}", col.schema.name, r, mine, theirs);
    }
  }
  return "";
}

// duckdb_parquet.mjs's `folder` output, file by file: each file's dump (or its "error<TAB>message" line).
inline std::map<std::string, std::string> dumps_by_file(const std::string& out) {
  std::map<std::string, std::string> dumps;
  std::string current;
  for (size_t pos = 0, end; pos < out.size(); pos = end + 1) {
    end = std::min(out.find('\n', pos), out.size());
    const std::string line = out.substr(pos, end - pos);
    if (line.rfind("file\t", 0) == 0) {
      current = line.substr(5);
      dumps[current];
    } else {
      dumps[current] += line + "\n";
    }
  }
  return dumps;
}

}  // namespace feedline::testing
