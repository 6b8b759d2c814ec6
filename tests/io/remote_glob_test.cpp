// Patterns over object storage match keys as glob() matches paths (the listings themselves are tested against the
// test servers, tests/remote/dataset/): segment by segment, hidden names only by a pattern that names the dot, `**`
// over any number of folders but those a dataset's walk leaves out.
#include "io/remote_glob.h"

#include <gtest/gtest.h>

#include "feedline/io/error.h"

namespace feedline {
namespace {

TEST(RemoteGlob, MatchesSegmentBySegmentAsGlobDoes) {
  EXPECT_TRUE(remote::glob_match("data/*.parquet", "data/a.parquet"));
  EXPECT_FALSE(remote::glob_match("data/*.parquet", "data/sub/a.parquet"));  // '*' stays within a segment
  EXPECT_FALSE(remote::glob_match("data/*.parquet", "data/.a.parquet"));     // a hidden name needs the dot
  EXPECT_TRUE(remote::glob_match("data/.*.parquet", "data/.a.parquet"));
  EXPECT_TRUE(remote::glob_match("year=*/part-?.parquet", "year=2024/part-3.parquet"));
  EXPECT_FALSE(remote::glob_match("year=*/part-?.parquet", "year=2024/part-13.parquet"));
  EXPECT_TRUE(remote::glob_match("shard-[0-2].tar", "shard-1.tar"));
  EXPECT_FALSE(remote::glob_match("shard-[0-2].tar", "shard-3.tar"));
  EXPECT_TRUE(remote::glob_match("_tmp/*", "_tmp/x"));  // `*` takes a name starting with '_', as glob() does
  EXPECT_FALSE(remote::glob_match("data", "data/a.parquet"));
}

TEST(RemoteGlob, DoubleStarSpansFoldersButHiddenOnes) {
  EXPECT_TRUE(remote::glob_match("data/**/*.parquet", "data/a.parquet"));  // none
  EXPECT_TRUE(remote::glob_match("data/**/*.parquet", "data/x/y/a.parquet"));
  EXPECT_FALSE(remote::glob_match("data/**/*.parquet", "data/_temporary/a.parquet"));
  EXPECT_FALSE(remote::glob_match("data/**/*.parquet", "data/x/.cache/a.parquet"));
  EXPECT_TRUE(remote::glob_match("data/**", "data"));
  EXPECT_TRUE(remote::glob_match("**/part-0.parquet", "a/b/part-0.parquet"));
  EXPECT_FALSE(remote::glob_match("data/a**/x", "data/ab/c/x"));  // `**` inside a segment is `*` twice
}

TEST(RemoteGlob, TellsUrlsApart) {
  EXPECT_TRUE(remote::has_wildcard("s3://b/data/*.parquet"));
  EXPECT_TRUE(remote::has_wildcard("gs://b/data/part-?.parquet"));
  EXPECT_TRUE(remote::has_wildcard("s3://b/data/part-[01].parquet"));
  EXPECT_FALSE(remote::has_wildcard("s3://b/data/part-0.parquet"));
  // In an http(s) URL, '?' begins the query: only '*' is a wildcard there.
  EXPECT_FALSE(remote::has_wildcard("https://host/data/a.parquet?download=1"));
  EXPECT_TRUE(remote::has_wildcard("https://host/data/*.parquet"));
  EXPECT_TRUE(remote::is_object_store_url("S3://b/k"));
  EXPECT_TRUE(remote::is_object_store_url("gs://b/k"));
  EXPECT_FALSE(remote::is_object_store_url("https://b/k"));
  EXPECT_FALSE(remote::is_object_store_url("data/s3://x"));
  EXPECT_TRUE(remote::is_folder_url("s3://bucket"));
  EXPECT_TRUE(remote::is_folder_url("s3://bucket/data/"));
  EXPECT_TRUE(remote::is_folder_url("https://host/data/"));
  EXPECT_FALSE(remote::is_folder_url("s3://bucket/data"));
  EXPECT_FALSE(remote::is_folder_url("https://host"));
}

TEST(RemoteGlob, RefusesWhatCannotBeListed) {
  EXPECT_THROW(remote::glob_objects("https://host/data/*.parquet"), InvalidArgument);
  EXPECT_THROW(remote::folder_objects("http://host/data/"), InvalidArgument);
  try {
    remote::glob_objects("https://host/data/*.parquet");
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("no listing"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("https://host/data/*.parquet"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace feedline
