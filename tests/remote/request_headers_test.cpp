// What the client asks a web server for, as sent: the ranges it asks for, and the ETag it makes a condition of them
// (If-Match), except a weak one, which never matches under If-Match and is checked on the answers instead.
#include <gtest/gtest.h>

#include <string>

#include "capture_server.h"
#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "remote_test_support.h"

namespace feedline {
namespace {

using testing::answer;
using testing::CaptureServer;
using testing::header;

class RequestHeaders : public testing::RemoteTest {};

TEST_F(RequestHeaders, AStrongETagIsAConditionOfEveryRange) {
  CaptureServer server({answer("200 OK", {"ETag: \"strong\""}, "", 10),
                        answer("206 Partial Content", {"ETag: \"strong\"", "Content-Range: bytes 2-5/10"}, "2345")});
  RandomAccessFile f(server.url() + "/file.bin");
  std::string got(4, '\0');
  f.read_at(2, 4, got.data());
  EXPECT_EQ(got, "2345");
  const auto captured = server.requests();
  ASSERT_EQ(captured.size(), 2u);
  EXPECT_EQ(captured[0].method, "HEAD");
  EXPECT_EQ(header(captured[1], "range"), "bytes=2-5");
  EXPECT_EQ(header(captured[1], "if-match"), "\"strong\"");
}

TEST_F(RequestHeaders, AWeakETagIsCheckedOnTheAnswerNotSentAsACondition) {
  CaptureServer server({answer("200 OK", {"ETag: W/\"weak\""}, "", 10),
                        answer("206 Partial Content", {"ETag: W/\"weak\"", "Content-Range: bytes 2-5/10"}, "2345"),
                        answer("206 Partial Content", {"ETag: W/\"other\"", "Content-Range: bytes 6-7/10"}, "67")});
  RandomAccessFile f(server.url() + "/file.bin");
  std::string got(4, '\0');
  f.read_at(2, 4, got.data());
  EXPECT_EQ(got, "2345");
  const std::string error = testing::error_of([&] { f.read_at(6, 2, got.data()); });
  EXPECT_NE(error.find("changed while it was read"), std::string::npos) << error;
  EXPECT_NE(error.find("W/\"other\""), std::string::npos) << error;
  const auto captured = server.requests();
  ASSERT_EQ(captured.size(), 3u);
  EXPECT_EQ(header(captured[1], "range"), "bytes=2-5");
  EXPECT_EQ(header(captured[1], "if-match"), "");
  EXPECT_EQ(header(captured[2], "if-match"), "");
}

TEST_F(RequestHeaders, AWholeFileIsAskedForAsARangeFromItsFirstByte) {
  CaptureServer server({answer("206 Partial Content", {"ETag: \"e\"", "Content-Range: bytes 0-9/10"}, "0123456789")});
  EXPECT_EQ(read_file(server.url() + "/whole.bin"), "0123456789");
  const auto captured = server.requests();
  ASSERT_EQ(captured.size(), 1u);
  EXPECT_EQ(header(captured[0], "range"), "bytes=0-");
  EXPECT_EQ(header(captured[0], "if-match"), "");
}

}  // namespace
}  // namespace feedline
