// docs/api.md is the installed C++ surface: every header under include/feedline (what `cmake --install` puts under
// <prefix>/include/feedline) is named there as <feedline/...h>, every header named so is installed, and each opens
// with the comment that says what it holds. Read from the tree itself, so that a header added, moved or removed
// fails here until the page says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_paths.h"

namespace feedline {
namespace {

namespace fs = std::filesystem;

// The installed surface is kept small on purpose: every header in it is a promise of stable names, signatures and
// behaviour within a minor version (docs/api.md, "What stable means"). Adding a header means documenting it in
// docs/api.md and raising this number with it; what only the library or the feedline program needs stays in src/.
constexpr size_t kMaxInstalledHeaders = 26;

fs::path include_dir() { return fs::path(testing::source_dir()) / "include"; }

// Every .h file under include/feedline, as it is included ("feedline/io/csv.h"), sorted.
std::vector<std::string> installed_headers() {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(include_dir() / "feedline")) {
    if (entry.is_regular_file() && entry.path().extension() == ".h") {
      out.push_back(entry.path().lexically_relative(include_dir()).generic_string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The headers docs/api.md names, written as <feedline/...h>: the one form the page uses for an installed header.
std::set<std::string> documented_headers() {
  const std::string doc = testing::file_bytes(testing::source_dir() + "/docs/api.md");
  const std::regex header_re(R"(<(feedline/[A-Za-z0-9_./]+\.h)>)");
  std::set<std::string> out;
  for (std::sregex_iterator it(doc.begin(), doc.end(), header_re), end; it != end; ++it) out.insert((*it)[1]);
  return out;
}

TEST(ApiDoc, NamesEveryInstalledHeader) {
  const std::vector<std::string> installed = installed_headers();
  ASSERT_FALSE(installed.empty()) << include_dir() << " holds no header";
  const std::set<std::string> documented = documented_headers();
  for (const std::string& header : installed) {
    EXPECT_TRUE(documented.count(header) > 0)
        << "include/" << header << " is installed but docs/api.md does not name it as <" << header
        << ">: document it there, or move it under src/ if users are not meant to include it";
  }
}

TEST(ApiDoc, NamesOnlyInstalledHeaders) {
  const std::set<std::string> documented = documented_headers();
  ASSERT_FALSE(documented.empty()) << "docs/api.md names no header as <feedline/...h>";
  for (const std::string& header : documented) {
    EXPECT_TRUE(fs::is_regular_file(include_dir() / header))
        << "docs/api.md names <" << header << ">, which is not under include/ (so not installed)";
  }
}

TEST(ApiDoc, InstalledSurfaceStaysSmall) {
  const std::vector<std::string> installed = installed_headers();
  std::string listing;
  for (const std::string& header : installed) listing += "\n  " + header;
  EXPECT_LE(installed.size(), kMaxInstalledHeaders)
      << "include/feedline holds " << installed.size() << " headers, more than the " << kMaxInstalledHeaders
      << " of the installed surface (see kMaxInstalledHeaders):" << listing;
}

// Each installed header starts with `//` lines that say what it holds (and from which threads it may be called),
// then `#pragma once`: the comment a user reads first.
TEST(ApiDoc, EveryInstalledHeaderOpensWithAComment) {
  for (const std::string& header : installed_headers()) {
    std::istringstream text(testing::file_bytes((include_dir() / header).string()));
    std::string line, comment, after;
    while (std::getline(text, line)) {
      if (line.rfind("//", 0) != 0) {
        after = line;
        break;
      }
      comment += line.substr(2);
    }
    EXPECT_NE(comment.find_first_not_of(" \t/"), std::string::npos)
        << "include/" << header << " does not open with a comment saying what it holds";
    EXPECT_EQ(after, "#pragma once") << "include/" << header << ": the opening comment should lead to #pragma once";
  }
}

}  // namespace
}  // namespace feedline
