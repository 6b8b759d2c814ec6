// The test servers of the remote-source tests: an S3 gateway, nginx over HTTP and HTTPS, and a fault proxy before
// each (tests/remote/servers.py starts them). For test code only; test_servers() may be called from any thread, the
// other helpers from one test at a time.
//
// Where FEEDLINE_TEST_SERVERS names a servers.json (CTest's fixture `remote_servers` started the servers), that is
// read. Otherwise the first call starts servers.py in the foreground as a child of this process, waits for its
// servers.json, and stops it when the process exits; the child also stops by itself when this process dies, since
// it watches the pipe that is its stdin.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace feedline::testing {

struct TestServers {
  nlohmann::json info;      // servers.json, whole
  std::string servers_json; // its path

  // The S3 gateway, addressed path-style: http://127.0.0.1:PORT/BUCKET/KEY.
  std::string s3_endpoint() const;
  std::string s3_region() const;
  std::string s3_access_key() const;
  std::string s3_secret_key() const;
  bool s3_verifies_signatures() const;
  // nginx: files written under http_root() are served at http_url() + "/" + their relative path, and at
  // https_url() (https://localhost:PORT) with a certificate that ca_file() verifies.
  std::string http_url() const;
  std::string https_url() const;
  std::string ca_file() const;
  std::string http_root() const;
  // The fault proxy before "s3" or "http": its URL, and its control URL (ending in /__proxy).
  std::string proxy_url(const std::string& which) const;
  std::string proxy_control(const std::string& which) const;
};

// The servers, started once per process. Throws std::runtime_error (with servers.py's output) when they cannot be
// started, and again on every later call.
const TestServers& test_servers();

// Points the process's AWS environment at the test S3 gateway with its keys, the test CA for HTTPS, and nothing from
// the user's AWS files or other AWS variables; and clears both proxies' faults and logs.
void use_test_servers();

struct CommandResult {
  int exit_code = -1;  // the exit status, or 128 + the signal that ended it
  std::string output;  // stdout and stderr together
};

// Runs a program (argv[0] a path) and waits for it; stdin is /dev/null.
CommandResult run_command(const std::vector<std::string>& argv);

// tests/remote/s3tool.py with the servers' servers.json: `mkbucket B`, `put B KEY FILE`, `putdir B PREFIX DIR`,
// `ls B [PREFIX]` ("KEY SIZE" lines), `rm B KEY`, `etag B KEY`; `--endpoint URL` first to go through a proxy.
CommandResult run_s3tool(const std::vector<std::string>& args);

struct HttpResponse {
  int status = 0;
  std::string body;
};

// A blocking HTTP/1.1 request to a loopback http:// URL (Connection: close). Throws std::runtime_error when the
// server cannot be reached or answers nothing an HTTP client could read.
HttpResponse http_request(const std::string& method, const std::string& url, const std::string& body = "");

// The fault proxy before `which` ("s3" or "http"), through its control API. Rules are a JSON list (a json array,
// or its text) appended to the pending ones; see tests/remote/fault_proxy.py for their fields and actions. The log
// lists the requests seen since the last reset, in the order they came: method, path, query, range, status, bytes,
// fault, done. The proxy can still be at a request after its client has what it wanted (a cut, a stall the client
// gave up on): proxy_log waits, up to 10 s, until the log holds at least `at_least` entries and every one is done.
// A reset clears the rules, the log and the delay. Each throws std::runtime_error when the proxy refuses.
void proxy_faults(const std::string& which, const nlohmann::json& rules);
nlohmann::json proxy_log(const std::string& which, size_t at_least = 0);
nlohmann::json proxy_pending(const std::string& which);
void proxy_reset(const std::string& which);
void proxy_delay(const std::string& which, int milliseconds);

}  // namespace feedline::testing
