#include "cli/convert.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cli/progress.h"

#include "feedline/io/convert.h"
#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "feedline/io/table.h"

namespace feedline::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string type_name(const ColumnSchema& s) {
  std::string name = to_string(s.type);
  if (s.type == PhysicalType::kFixedLenByteArray) name += "(" + std::to_string(s.type_length) + ")";
  if (s.int_annotation) {
    name = fmt::format("INT({},{})", s.int_annotation->bit_width, s.int_annotation->is_signed ? "signed" : "unsigned");
  }
  for (int k = 0; k < s.list_depth(); ++k) name = "list<" + name + ">";
  return name;
}

// "1 row", "2 rows".
std::string counted(int64_t n, const std::string& noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

// "NAME=PATTERN[,PATTERN...]" as the name and its patterns.
PackSpec parse_pack(const std::string& spec) {
  const size_t eq = spec.find('=');
  std::vector<std::string> patterns;
  if (eq != std::string::npos) {
    size_t start = eq + 1;
    while (start <= spec.size()) {
      const size_t comma = std::min(spec.find(',', start), spec.size());
      if (comma > start) patterns.push_back(spec.substr(start, comma - start));
      start = comma + 1;
    }
  }
  if (eq == std::string::npos || eq == 0 || patterns.empty()) {
    throw InvalidArgument("--pack '" + spec + "': expected NAME=PATTERN[,PATTERN...], for example image=pixel*");
  }
  return {spec.substr(0, eq), patterns};
}

// The flag that sets a ConvertOptions field, for the library's refusals of its value.
std::string flag_of(const std::string& option) {
  if (option == "num_threads") return "--threads";
  if (option == "packs") return "--pack";
  std::string flag = "--" + option;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

ConvertOptions convert_options(const ConvertArgs& args) {
  ConvertOptions options;
  options.columns = args.columns;
  options.limit = args.limit;
  for (const std::string& spec : args.packs) options.packs.push_back(parse_pack(spec));
  options.pack_as = args.pack_as == "list" ? PackAs::kList : PackAs::kBytes;
  options.narrow_ints = args.narrow_ints;
  options.codec = parquet::parse_codec(args.codec);
  if (args.level_given) options.level = args.level;
  options.dictionary = args.dictionary;
  options.row_group_rows = args.row_group_rows;
  options.num_threads = args.threads;
  return options;
}

// "pixel1..pixel784 (784 columns)", or the one name.
std::string span_of(const std::vector<std::string>& names) {
  if (names.size() == 1) return names.front();
  return fmt::format("{}..{} ({} columns)", names.front(), names.back(), names.size());
}

// What changed and what was written.
void print_summary(const ConvertArgs& args, const ConvertResult& result, double seconds) {
  const std::vector<ColumnSchema>& schema = result.schema;
  auto column = [&](const std::string& name) {
    return *std::find_if(schema.begin(), schema.end(), [&](const ColumnSchema& s) { return s.name == name; });
  };
  for (const auto& [name, sources] : result.packed) {
    fmt::print("Packed {} into '{}' ({})\n", span_of(sources), name, type_name(column(name)));
  }
  if (args.narrow_ints) {
    std::map<std::string, int> changed;  // new type -> columns
    for (const std::string& name : result.narrowed) ++changed[type_name(column(name))];
    if (changed.empty()) fmt::print("Narrowed no column (no integer column's values fit a narrower type)\n");
    for (const auto& [type, count] : changed) fmt::print("Narrowed {} to {}\n", counted(count, "integer column"), type);
  }
  fmt::print("Wrote {}: {}, {}, {:.1f} MB ({:.2f}x the input's size) in {:.2f}s\n", args.output,
             counted(result.rows, "row"), counted(static_cast<int64_t>(schema.size()), "column"),
             static_cast<double>(result.output_bytes) / 1e6,
             static_cast<double>(result.output_bytes) / static_cast<double>(std::max<int64_t>(result.input_bytes, 1)),
             seconds);
}

}  // namespace

int run_convert(const ConvertArgs& args) {
  ConvertOptions options = convert_options(args);
  ProgressBar bar;
  ConvertStage last = ConvertStage::kOpening;
  Clock::time_point start = Clock::now();
  options.progress = [&](const ConvertProgress& p) {
    if (p.stage != last) bar.clear();
    last = p.stage;
    switch (p.stage) {
      case ConvertStage::kOpening:
        fmt::print("Reading {} ({:.1f} MB)\n", args.input, static_cast<double>(p.input_bytes) / 1e6);
        std::fflush(stdout);
        start = Clock::now();
        break;
      case ConvertStage::kRanges: bar.update("Integer ranges", p.rows_done, p.rows_total); break;
      case ConvertStage::kReady:
        if (args.limit > 0) fmt::print("Keeping the first {}\n", counted(p.rows_total, "row"));
        break;
      case ConvertStage::kWriting: bar.update("Converting", p.rows_done, p.rows_total); break;
      case ConvertStage::kRestarting:
        fmt::print("{}; the footer's statistics do not hold it, so the ranges come from a pass\n", p.note);
        break;
    }
  };
  const ConvertResult result = [&] {
    try {
      return convert_file(args.input, args.output, options);
    } catch (const OptionError& e) {
      throw InvalidArgument(flag_of(e.option()) + " " + e.detail());
    }
  }();
  bar.clear();
  print_summary(args, result, seconds_since(start));
  return 0;
}

}  // namespace feedline::cli
