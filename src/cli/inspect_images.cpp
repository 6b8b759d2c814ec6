#include "cli/inspect_images.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "feedline/dataset/dataset.h"
#include "feedline/dataset/image_dataset.h"
#include "feedline/io/columns.h"
#include "feedline/io/error.h"
#include "feedline/io/image_decode.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"
#include "io/parallel.h"

namespace feedline::cli {
namespace {

constexpr size_t kShownBadFiles = 10;

// What probing some of the images found.
struct ProbeSummary {
  int64_t probed = 0;
  std::map<std::string, int64_t> formats;  // "JPEG", "PNG", "WebP"
  int min_width = 0, max_width = 0, min_height = 0, max_height = 0;
  std::map<int, int64_t> channels;
  int64_t bad = 0;
  std::vector<std::pair<int64_t, std::string>> bad_files;  // (sample, "<name>: <message>"), in sample order
};

// The samples to probe: every one, or `limit` spread evenly over the set.
std::vector<int64_t> probe_indices(int64_t size, int64_t limit) {
  std::vector<int64_t> out;
  if (limit <= 0 || size <= limit) {
    for (int64_t i = 0; i < size; ++i) out.push_back(i);
    return out;
  }
  for (int64_t k = 0; k < limit; ++k) out.push_back(k * size / limit);
  return out;
}

ProbeSummary probe(const SampleSource& source, const std::vector<int64_t>& indices, int threads) {
  ProbeSummary s;
  std::mutex mutex;
  bool first = true;
  parallel_for(indices.size(), threads, [&](size_t k) {
    const int64_t index = indices[k];
    std::string name = "sample " + std::to_string(index);
    ImageInfo info;
    try {
      EncodedSample sample = source.get(index);
      if (!sample.name.empty()) name = sample.name;
      info = probe_image(sample.bytes, name);
    } catch (const Error& e) {
      const std::string what = e.what();
      // The source's and the decoder's messages begin with the name already.
      const std::string line = what.rfind(name, 0) == 0 ? what : name + ": " + what;
      std::lock_guard<std::mutex> lock(mutex);
      ++s.bad;
      s.bad_files.emplace_back(index, line);
      return;
    }
    std::lock_guard<std::mutex> lock(mutex);
    ++s.probed;
    ++s.formats[image_format_name(info.format)];
    ++s.channels[info.channels];
    if (first) {
      s.min_width = s.max_width = info.width;
      s.min_height = s.max_height = info.height;
      first = false;
    }
    s.min_width = std::min(s.min_width, info.width), s.max_width = std::max(s.max_width, info.width);
    s.min_height = std::min(s.min_height, info.height), s.max_height = std::max(s.max_height, info.height);
  });
  std::sort(s.bad_files.begin(), s.bad_files.end());
  return s;
}

std::string channels_text(int channels) {
  switch (channels) {
    case 1: return "gray";
    case 2: return "gray+alpha";
    case 3: return "colour";
    case 4: return "colour+alpha or CMYK";
  }
  return std::to_string(channels) + " channels";
}

void print_classes(const std::vector<int64_t>& labels, const std::vector<std::string>& names) {
  std::map<int64_t, int64_t> counts;
  for (const int64_t label : labels) ++counts[label];
  for (size_t c = 0; c < names.size(); ++c) counts.emplace(static_cast<int64_t>(c), 0);  // named, no sample
  fmt::print("\nClasses ({}{}):\n  {:>7} {:<24} {:>10}\n", counts.size(), names.empty() ? ", numbers only" : "",
             "label", "name", "samples");
  for (const auto& [label, count] : counts) {
    const bool named = label >= 0 && static_cast<size_t>(label) < names.size();
    fmt::print("  {:>7} {:<24} {:>10}\n", label, named ? names[static_cast<size_t>(label)] : "-", count);
  }
}

// The samples of one set of a mixture: an image set's, or a table's rows.
int64_t set_size(const std::string& path) {
  if (names_images(path)) return open_image_source(path)->size();
  if (parquet::is_dataset_spec(path)) return parquet::DatasetReader(path).num_rows();
  const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  if (csv) return read_file_columns(path, {}, 1).num_rows;
  return parquet::read_file_info(path).num_rows;
}

MixturePart mix_part(const InspectArgs& args, size_t set) {
  if (args.mix.empty()) return MixturePart::repeat(1.0);
  const double v = args.mix[set];
  switch (args.mix_by) {
    case dist::MixBy::kProportion: return MixturePart::proportion(v);
    case dist::MixBy::kRepeat: return MixturePart::repeat(v);
    case dist::MixBy::kCount: break;
  }
  if (v != std::floor(v) || v > 1e15) {
    throw InvalidArgument("inspect --mix: " + args.paths[set] + ": --mix-by count takes whole numbers of samples, "
                          "not " + fmt::format("{}", v));
  }
  return MixturePart::count(static_cast<int64_t>(v));
}

std::string weight_text(const MixturePart& part) {
  const char* kind = part.kind == MixturePart::Kind::kProportion ? "proportion"
                     : part.kind == MixturePart::Kind::kRepeat   ? "repeat"
                                                                 : "count";
  return fmt::format("{} {}", kind, part.value);
}

}  // namespace

int run_inspect_mixture(const InspectArgs& args) {
  if (args.json) throw InvalidArgument("inspect --json is for one Parquet or CSV file, not a mixture");
  std::vector<int64_t> sizes;
  std::vector<MixturePart> parts;
  for (size_t s = 0; s < args.paths.size(); ++s) {
    sizes.push_back(set_size(args.paths[s]));
    parts.push_back(mix_part(args, s));
    parts.back().name = args.paths[s];
  }
  const MixturePlan plan(sizes, parts, args.epoch_size);
  fmt::print("Mixture of {} sets: {} samples an epoch (of {} in all)\n", plan.sources(), plan.epoch_length(),
             plan.total_size());
  size_t width = 8;
  for (const std::string& p : args.paths) width = std::max(width, std::min<size_t>(p.size(), 60));
  fmt::print("  {:<{}} {:>10} {:<20} {:>10} {:>8}\n", "set", width, "samples", "weight", "an epoch", "share");
  for (size_t s = 0; s < plan.sources(); ++s) {
    const int64_t n = plan.counts()[s];
    fmt::print("  {:<{}} {:>10} {:<20} {:>10} {:>7.1f}%\n", plan.part(s).name, width, plan.size(s),
               weight_text(plan.part(s)), n,
               100.0 * static_cast<double>(n) / static_cast<double>(std::max<int64_t>(1, plan.epoch_length())));
  }
  std::fflush(stdout);
  return 0;
}

int run_inspect_images(const InspectArgs& args) {
  if (args.json) throw InvalidArgument("inspect --json is for Parquet and CSV files, not image sets: " + args.path);
  const ImageSourceKind kind = image_source_kind(args.path);
  const std::shared_ptr<const SampleSource> source = open_image_source(args.path);
  const int64_t size = source->size();
  fmt::print("Images: {}\nLayout: {}\nSamples: {}\n", args.path, image_source_kind_name(kind), size);
  if (const auto blocks = source->shuffle_blocks(); !blocks.empty()) {
    fmt::print("Read in {} block{} ({}){}\n", blocks.size(), blocks.size() == 1 ? "" : "s",
               kind == ImageSourceKind::kTarShards ? "shards" : "row groups",
               kind == ImageSourceKind::kTarShards ? ", each read whole" : "");
  }
  print_classes(source->labels(), source->class_names());

  const std::vector<int64_t> indices = probe_indices(size, args.sample);
  const ProbeSummary s = probe(*source, indices, args.threads);
  const auto checked = static_cast<int64_t>(indices.size());
  if (checked == size) {
    fmt::print("\nFiles (every one of {} read and its header probed):\n", size);
  } else {
    fmt::print("\nFiles ({} of {} read and probed, spread evenly over the set; --sample 0 probes every one):\n",
               checked, size);
  }
  for (const auto& [format, count] : s.formats) fmt::print("  {:<6} {:>10}\n", format, count);
  if (s.probed > 0) {
    fmt::print("  Sizes: {}..{} wide, {}..{} high\n", s.min_width, s.max_width, s.min_height, s.max_height);
    std::string channels;
    for (const auto& [c, count] : s.channels) channels += fmt::format("{}{} {}", channels.empty() ? "" : ", ", count,
                                                                      channels_text(c));
    fmt::print("  Stored as: {}\n", channels);
  }
  if (s.bad > 0) {
    fmt::print("  Unreadable: {} (training stops at the first unless --on-error skip)\n", s.bad);
    for (size_t k = 0; k < std::min(kShownBadFiles, s.bad_files.size()); ++k) {
      fmt::print("    {}\n", s.bad_files[k].second);
    }
    if (s.bad_files.size() > kShownBadFiles) fmt::print("    ... and {} more\n", s.bad_files.size() - kShownBadFiles);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace feedline::cli
