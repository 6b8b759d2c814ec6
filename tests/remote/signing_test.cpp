// The SigV4 signatures libcurl makes for the client are the ones botocore makes for the same request: a loopback
// server records what the client sends (a HEAD and a range GET of a key that needs encoding, and listing pages with a
// prefix and a continuation token that need encoding), and botocore's S3SigV4Auth signs the same method, path, query,
// headers, time and keys. The path is also compared with the one botocore's serializer makes of the key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "capture_server.h"
#include "feedline/io/file.h"
#include "feedline/io/remote.h"
#include "remote_test_support.h"

namespace feedline {
namespace {

using nlohmann::json;
using testing::answer;
using testing::Captured;
using testing::CaptureServer;
using testing::header;

// What botocore makes of each captured request (its path, query, signed headers and time): the signature,
// SignedHeaders and canonical request; and the path botocore's serializer makes of the bucket and key.
constexpr const char* kBotocoreSigner = R"PY(
import json, sys
from urllib.parse import parse_qsl
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode

job = json.load(open(sys.argv[1]))
out = []
for r in job["requests"]:
    headers = dict(r["headers"])
    scheme, rest = headers["authorization"].split(" ", 1)
    fields = dict(part.strip().split("=", 1) for part in rest.split(","))
    signed = fields["SignedHeaders"].split(";")
    path, _, query = r["target"].partition("?")
    expected_path = "/" + job["bucket"] + ("/" + percent_encode(r["key"], safe="/~") if r["key"] else "")
    request = AWSRequest(method=r["method"], url="http://" + headers["host"] + path,
                         headers={name: headers[name] for name in signed if name != "host"},
                         params=parse_qsl(query, keep_blank_values=True))
    request.context["timestamp"] = headers["x-amz-date"]
    auth = S3SigV4Auth(Credentials(job["access_key"], job["secret_key"]), "s3", job["region"])
    canonical = auth.canonical_request(request)
    signature = auth.signature(auth.string_to_sign(request, canonical), request)
    out.append({"scheme": scheme, "credential": fields["Credential"], "signed_headers": fields["SignedHeaders"],
                "signature": fields["Signature"], "botocore_signature": signature,
                "botocore_signed_headers": auth.signed_headers(auth.headers_to_sign(request)),
                "path": path, "botocore_path": expected_path, "canonical": canonical})
print(json.dumps(out))
)PY";

class Signing : public testing::RemoteTest {
 protected:
  // Points the client at `server` with made-up keys, and checks every captured request against botocore: `keys`
  // holds the key each request was for ("" for a listing).
  void expect_botocore_agrees(CaptureServer& server, const std::vector<std::string>& keys) {
    const std::vector<Captured> captured = server.requests();
    ASSERT_EQ(captured.size(), keys.size());
    json job = {{"bucket", kSigningBucket}, {"access_key", kAccessKey}, {"secret_key", kSecret},
                {"region", kRegion}, {"requests", json::array()}};
    for (size_t i = 0; i < captured.size(); ++i) {
      json headers = json::array();
      for (const auto& [name, value] : captured[i].headers) headers.push_back({name, value});
      job["requests"].push_back(
          {{"method", captured[i].method}, {"target", captured[i].target}, {"headers", headers}, {"key", keys[i]}});
    }
    const std::string path = testing::scratch_dir("signing") + "/job.json";
    testing::write_bytes(path, job.dump());
    const testing::CommandResult r = testing::run_command({"/usr/bin/python3", "-c", kBotocoreSigner, path});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json results = json::parse(r.output);
    for (size_t i = 0; i < results.size(); ++i) {
      const json& s = results[i];
      SCOPED_TRACE(captured[i].method + " " + captured[i].target);
      EXPECT_EQ(s["scheme"], "AWS4-HMAC-SHA256");
      const std::string date = header(captured[i], "x-amz-date");
      EXPECT_EQ(s["credential"],
                std::string(kAccessKey) + "/" + date.substr(0, 8) + "/" + kRegion + "/s3/aws4_request");
      EXPECT_EQ(s["path"], s["botocore_path"]);
      EXPECT_EQ(s["signed_headers"], s["botocore_signed_headers"]);
      EXPECT_EQ(s["signature"], s["botocore_signature"]) << "botocore's canonical request:\n"
                                                         << s["canonical"].get<std::string>();
      // Every x-amz-* header sent is signed, and so is the host.
      const std::string signed_headers = s["signed_headers"];
      EXPECT_NE(signed_headers.find("host"), std::string::npos);
      for (const auto& [name, value] : captured[i].headers) {
        if (name.rfind("x-amz-", 0) == 0) EXPECT_NE(signed_headers.find(name), std::string::npos) << name;
      }
    }
  }

  void point_at(const CaptureServer& server) {
    ::setenv("AWS_ENDPOINT_URL", server.url().c_str(), 1);
    ::setenv("AWS_ACCESS_KEY_ID", kAccessKey, 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", kSecret, 1);
    ::setenv("AWS_REGION", kRegion, 1);
  }

  static constexpr const char* kSigningBucket = "signing-bucket";
  static constexpr const char* kAccessKey = "AKIDEXAMPLE0000SIGN1";
  static constexpr const char* kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  static constexpr const char* kRegion = "eu-west-3";
};

TEST_F(Signing, AHeadAndARangeGetOfAnEncodedKeyAreSignedAsBotocoreSignsThem) {
  const std::string key = "dir with space/plus+eq=amp&/unicod\xC3\xA9 \xE6\x97\xA5/tilde~star*.bin";
  CaptureServer server({answer("200 OK", {"ETag: \"abc123\""}, "", 1000),
                        answer("206 Partial Content", {"ETag: \"abc123\"", "Content-Range: bytes 100-149/1000"},
                               std::string(50, 'x'))});
  point_at(server);
  RandomAccessFile f("s3://" + std::string(kSigningBucket) + "/" + key);
  ASSERT_EQ(f.size(), 1000);
  std::string got(50, '\0');
  f.read_at(100, 50, got.data());
  EXPECT_EQ(got, std::string(50, 'x'));
  const auto captured = server.requests();
  ASSERT_EQ(captured.size(), 2u);
  EXPECT_EQ(captured[1].method, "GET");
  EXPECT_EQ(header(captured[1], "range"), "bytes=100-149");
  EXPECT_EQ(header(captured[1], "if-match"), "\"abc123\"");
  expect_botocore_agrees(server, {key, key});
}

TEST_F(Signing, ASessionTokenIsSentAndSigned) {
  CaptureServer server({answer("200 OK", {"ETag: \"t\""}, "", 10)});
  point_at(server);
  const std::string token = "FwoGZXIvYXdzEJr//////////wEaDH+token=with/slashes";
  ::setenv("AWS_SESSION_TOKEN", token.c_str(), 1);
  EXPECT_EQ(RandomAccessFile("s3://" + std::string(kSigningBucket) + "/k").size(), 10);
  ::unsetenv("AWS_SESSION_TOKEN");
  const auto captured = server.requests();
  ASSERT_EQ(captured.size(), 1u);
  EXPECT_EQ(header(captured[0], "x-amz-security-token"), token);
  expect_botocore_agrees(server, {"k"});
}

TEST_F(Signing, ListingPagesWithAnEncodedPrefixAndTokenAreSignedAsBotocoreSignsThem) {
  const std::string prefix = "pre fix/\xC3\xA9+=&/";
  // A token with every kind of character that needs encoding in a query.
  const std::string token = "1/tok+en=with spaces&amp;more==~*";
  const std::string page1 = "<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>true</IsTruncated>"
                            "<NextContinuationToken>" + token + "</NextContinuationToken>"
                            "<Contents><Key>" + prefix + "a</Key><Size>1</Size><ETag>&quot;e1&quot;</ETag></Contents>"
                            "</ListBucketResult>";
  const std::string page2 = "<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>false</IsTruncated>"
                            "<Contents><Key>" + prefix + "b</Key><Size>2</Size><ETag>&quot;e2&quot;</ETag></Contents>"
                            "</ListBucketResult>";
  CaptureServer server({answer("200 OK", {"Content-Type: application/xml"}, page1),
                        answer("200 OK", {"Content-Type: application/xml"}, page2)});
  point_at(server);
  const auto listed = remote::list_objects("s3://" + std::string(kSigningBucket) + "/" + prefix);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1].url, "s3://" + std::string(kSigningBucket) + "/" + prefix + "b");
  EXPECT_EQ(listed[1].etag, "\"e2\"");
  const auto captured = server.requests();
  ASSERT_EQ(captured.size(), 2u);
  EXPECT_EQ(captured[1].target.find("continuation-token="), captured[1].target.find('?') + 1) << captured[1].target;
  expect_botocore_agrees(server, {"", ""});
}

}  // namespace
}  // namespace feedline
