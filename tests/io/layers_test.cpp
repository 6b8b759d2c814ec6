// The layers stay one-way: io -> catalog -> dataset -> loader -> train -> dist -> lab -> cli, and the Python
// binding (python/) beside cli. A file of a layer, under src/<layer>/, include/feedline/<layer>/ or
// app/include/feedline/<layer>/ (python/ for the binding), includes only headers of its own layer or the ones before
// it, and io and catalog include no LibTorch; the front ends (cli, python) include headers by their feedline/...
// names (the installed ones and the feedline program's, under app/include), and of the library's internal headers
// only those named below, each with why. Benchmarks (bench/) and fuzz targets (fuzz/) stand outside the layers, as
// a user's program does: public headers and their own folder's, save the internal headers named below. Read from
// the sources themselves, so a wrong include fails here before it tangles the build.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "test_paths.h"

namespace feedline {
namespace {

const std::vector<std::string> kLayers{"io",   "catalog", "dataset", "loader", "train",
                                       "dist", "lab",     "cli",     "python"};
// io and catalog build without LibTorch: the `feedline` program links them alone.
const int kCatalog = 1, kCli = 7, kPython = 8;

int layer_index(const std::string& name) {
  for (size_t i = 0; i < kLayers.size(); ++i) {
    if (kLayers[i] == name) return static_cast<int>(i);
  }
  return -1;
}

// The layer a quoted include names: "feedline/<layer>/x.h" (public) or "<layer>/x.h" (internal); -1 for others.
int included_layer(const std::string& path) {
  std::string rest = path;
  if (rest.rfind("feedline/", 0) == 0) rest = rest.substr(9);
  const auto slash = rest.find('/');
  return slash == std::string::npos ? -1 : layer_index(rest.substr(0, slash));
}

struct Include {
  std::string file;
  int line;
  std::string target;
  bool angled;
};

// Every #include of every source and header under `dir`.
std::vector<Include> includes_under(const std::filesystem::path& dir) {
  std::vector<Include> out;
  const std::regex include_re(R"(^\s*#\s*include\s*([<"])([^">]+)[">])");
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
    std::ifstream f(entry.path());
    std::string text;
    int number = 0;
    while (std::getline(f, text)) {
      ++number;
      std::smatch m;
      if (std::regex_search(text, m, include_re)) {
        out.push_back({entry.path().string(), number, m[2].str(), m[1].str() == "<"});
      }
    }
  }
  return out;
}

// Every #include of every source and header under `root`, keyed by the layer of its folder.
std::map<int, std::vector<Include>> includes_by_layer(const std::filesystem::path& root) {
  std::map<int, std::vector<Include>> out;
  for (const auto& layer : kLayers) {
    const std::filesystem::path dir = root / layer;
    if (std::filesystem::is_directory(dir)) out[layer_index(layer)] = includes_under(dir);
  }
  return out;
}

// The internal headers a benchmark or fuzz target includes, by its path under the source folder: what each times
// or drives is no public function.
const std::set<std::pair<std::string, std::string>> kInternalUses{
    // The Parquet decoders timed alone: no file, no codec, no page headers.
    {"bench/decode_bench.cpp", "io/parquet/delta.h"},
    {"bench/decode_bench.cpp", "io/parquet/dictionary.h"},
    {"bench/decode_bench.cpp", "io/parquet/plain.h"},
    {"bench/decode_bench.cpp", "io/parquet/rle.h"},
    // The codec floor: a file's pages found from its footer and decompressed by the reader's own codec functions.
    {"bench/codec_floor.h", "io/parquet/codec.h"},
    {"bench/codec_floor.h", "io/parquet/metadata.h"},
    // The reader's memory budget for a file's size, which the fuzzer reads under within libFuzzer's limit.
    {"fuzz/fuzz_targets.cpp", "io/parquet/reader_internal.h"},
    // The codec floor decompresses a file's pages on the library's own thread pool, as the reader does.
    {"bench/codec_floor.h", "io/parallel.h"},
    // The transforms are timed on images the benchmark writes itself.
    {"bench/image_transform_bench.cpp", "io/image_encode.h"},
};

// The library's internal headers that the front ends include, by the front end's file: what the feedline program
// and the Python package do with them is theirs, not an installed API.
const std::set<std::pair<std::string, std::string>> kFrontEndInternalUses{
    // `inspect` and `cat` print what the library's value text and cell writers make.
    {"src/cli/inspect.cpp", "io/cell_writer.h"},
    {"src/cli/inspect.cpp", "io/inspect.h"},
    {"src/cli/inspect.cpp", "io/value_text.h"},
    {"python/src/module.cpp", "io/inspect.h"},
    {"python/src/module.cpp", "io/value_text.h"},
    // `prepare` writes PNG and JPEG files, and its work and the image checks run on the library's thread pool.
    {"src/cli/prepare_images.h", "io/image_encode.h"},
    {"src/cli/prepare_photos.cpp", "io/image_encode.h"},
    {"src/cli/prepare_photos.cpp", "io/parallel.h"},
    {"src/cli/prepare_images.cpp", "io/parallel.h"},
    {"src/cli/inspect_images.cpp", "io/parallel.h"},
    {"src/cli/commands.cpp", "io/parallel.h"},
    // The flags' checks find a pattern's or a folder's files as the datasets will.
    {"src/cli/commands.cpp", "io/remote_glob.h"},
    // The package's tests run one pixel step, or one op of the automatic augmentations at a given magnitude, on a
    // tensor, to compare it with torchvision's functional forms with the same parameters.
    {"python/src/images.cpp", "dataset/picture_ops.h"},
    {"python/src/images.cpp", "dataset/image_geometry.h"},
};

TEST(Layers, EachLayerIncludesOnlyItselfAndTheLayersBefore) {
  const std::filesystem::path source = testing::source_dir();
  size_t checked = 0;
  std::set<std::pair<std::string, std::string>> front_end_internal;
  // The repository's root holds python/ and no other layer's folder.
  for (const auto& root : {source / "src", source / "include" / "feedline", source / "app" / "include" / "feedline",
                           source}) {
    const auto by_layer = includes_by_layer(root);
    ASSERT_FALSE(by_layer.empty()) << root << " has none of the layers' folders";
    for (const auto& [layer, includes] : by_layer) {
      for (const Include& inc : includes) {
        ++checked;
        const std::string where = inc.file + ":" + std::to_string(inc.line) + " includes " + inc.target;
        if (!inc.angled) {
          // The binding's own headers sit beside its sources (python/src/images.h): its layer.
          const bool own_binding_header =
              layer == kPython && std::filesystem::exists(std::filesystem::path(inc.file).parent_path() / inc.target);
          const int to = own_binding_header ? kPython : included_layer(inc.target);
          EXPECT_GE(to, 0) << where << ": not a layer's header";
          EXPECT_LE(to, layer) << where << ": " << kLayers[static_cast<size_t>(layer)]
                               << " may not depend on a later layer";
          if (layer == kPython) EXPECT_NE(to, kCli) << where << ": the binding sits beside cli, not on it";
          // The front ends use the library through its feedline/... headers, and the internal ones named above.
          if ((layer == kCli || layer == kPython) && to >= 0 && to != kCli && !own_binding_header &&
              inc.target.rfind("feedline/", 0) != 0) {
            const std::string file = std::filesystem::relative(inc.file, source).generic_string();
            if (kFrontEndInternalUses.count({file, inc.target}) > 0) {
              front_end_internal.insert({file, inc.target});
            } else {
              ADD_FAILURE() << where << ": a front end includes feedline/... headers, and internal ones only as "
                            << "kFrontEndInternalUses names them with the reason";
            }
          }
        } else if (layer <= kCatalog) {
          for (const char* torch : {"torch/", "ATen/", "c10/"}) {
            EXPECT_NE(inc.target.rfind(torch, 0), 0u) << where << ": " << kLayers[static_cast<size_t>(layer)]
                                                     << " builds without LibTorch";
          }
        }
      }
    }
  }
  for (const auto& [file, header] : kFrontEndInternalUses) {
    EXPECT_EQ(front_end_internal.count({file, header}), 1u)
        << file << " no longer includes " << header << ": drop it from the list";
  }
  EXPECT_GT(checked, 100u);
}

TEST(Layers, BenchmarksAndFuzzTargetsIncludePublicHeadersSaveTheirNamedInternals) {
  const std::filesystem::path source = testing::source_dir();
  std::set<std::pair<std::string, std::string>> used;
  size_t checked = 0;
  for (const char* folder : {"bench", "fuzz"}) {
    ASSERT_TRUE(std::filesystem::is_directory(source / folder)) << source / folder;
    for (const Include& inc : includes_under(source / folder)) {
      const std::string file = std::filesystem::relative(inc.file, source).generic_string();
      const std::string where = file + ":" + std::to_string(inc.line) + " includes " + inc.target;
      ++checked;
      const int to = included_layer(inc.target);
      // The fuzz targets link feedline_io alone, as the `feedline` program does: io and catalog, no LibTorch.
      const bool fuzz = file.rfind("fuzz/", 0) == 0;
      if (inc.angled) {
        for (const char* torch : {"torch/", "ATen/", "c10/"}) {
          if (fuzz) EXPECT_NE(inc.target.rfind(torch, 0), 0u) << where << ": the fuzz targets build without LibTorch";
        }
        continue;
      }
      if (fuzz) EXPECT_LE(to, kCatalog) << where << ": the fuzz targets link feedline_io alone";
      if (inc.target.rfind("feedline/", 0) == 0) {
        EXPECT_GE(to, 0) << where << ": not a layer's header";
        EXPECT_TRUE(std::filesystem::exists(source / "include" / inc.target) ||
                    std::filesystem::exists(source / "app" / "include" / inc.target))
            << where << ": no such header";
        continue;
      }
      const bool own = std::filesystem::exists(std::filesystem::path(inc.file).parent_path() / inc.target) ||
                       inc.target.rfind(std::string(folder) + "/", 0) == 0;
      if (own) continue;
      if (kInternalUses.count({file, inc.target}) > 0) {
        used.insert({file, inc.target});
        continue;
      }
      ADD_FAILURE() << where << ": benchmarks and fuzz targets include public headers (feedline/...); an internal "
                    << "one that must be reached is named in kInternalUses with the reason";
    }
  }
  for (const auto& [file, header] : kInternalUses) {
    EXPECT_EQ(used.count({file, header}), 1u) << file << " no longer includes " << header << ": drop it from the list";
  }
  EXPECT_GT(checked, 20u);
}

// The library's text names no command-line flag: its messages name the option (an OptionError's field) and the
// front ends their own flags. Every string literal of the library's sources and of the job driver's, save the
// texts named here, each with why.
const std::set<std::pair<std::string, std::string>> kFlagTexts{
    // The launcher that started a rank, as a job reports it: the command itself.
    {"src/dist/environment.cpp", "feedline --nproc"},
};

TEST(Layers, TheLibrarysTextNamesNoFlag) {
  const std::filesystem::path source = testing::source_dir();
  const std::regex literal_re(R"re("((?:[^"\\]|\\.)*)")re");
  const std::regex flag_re(R"((^|[^-\w])--[a-z][a-z-]*)");
  size_t checked = 0;
  for (const char* layer : {"io", "dataset", "loader", "train", "dist"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(source / "src" / layer)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      const std::string file = std::filesystem::relative(entry.path(), source).generic_string();
      std::ifstream f(entry.path());
      std::string text;
      for (int number = 1; std::getline(f, text); ++number) {
        const auto comment = text.find("//");
        const std::string code = text.substr(0, comment == std::string::npos || text.find('"') < comment
                                                    ? std::string::npos
                                                    : comment);
        for (std::sregex_iterator it(code.begin(), code.end(), literal_re), end; it != end; ++it) {
          ++checked;
          const std::string value = (*it)[1].str();
          if (std::regex_search(value, flag_re) && kFlagTexts.count({file, value}) == 0) {
            ADD_FAILURE() << file << ":" << number << ": \"" << value << "\" names a flag; say the option's name "
                          << "(OptionError) and let the front end name its flag";
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000u);
}

TEST(Layers, TheRuleItselfTellsLayersApart) {
  EXPECT_EQ(included_layer("feedline/io/parquet.h"), 0);
  EXPECT_EQ(included_layer("feedline/catalog/catalog.h"), kCatalog);
  EXPECT_EQ(included_layer("feedline/dataset/dataset.h"), 2);
  EXPECT_EQ(included_layer("loader/worker_pool.h"), 3);
  EXPECT_EQ(included_layer("feedline/dist/dist.h"), 5);
  EXPECT_EQ(included_layer("feedline/lab/lab.h"), 6);
  EXPECT_EQ(included_layer("cli/commands.h"), kCli);
  EXPECT_EQ(included_layer("parquet.h"), -1);
  EXPECT_EQ(included_layer("test_paths.h"), -1);
}

}  // namespace
}  // namespace feedline
