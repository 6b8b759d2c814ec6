// The remote layer of a build without libcurl and pugixml: paths are read, URLs are refused with a message saying
// why. CMake compiles this file in place of curl/ when it does not find them.
#include "feedline/io/error.h"
#include "io/remote/fetch.h"

namespace feedline::remote::detail {
namespace {

[[noreturn]] void refuse(const Url& url) {
  throw Unsupported(url.text + ": this build of feedline reads no remote files (it was built without libcurl and "
                    "pugixml); install libcurl4-openssl-dev and libpugixml-dev and build it again");
}

}  // namespace

bool remote_built() { return false; }

std::shared_future<Response> submit(Request request) { refuse(request.url); }

Response fetch(Request request) { refuse(request.url); }

std::vector<Response> fetch_all(std::vector<Request> requests) {
  if (!requests.empty()) refuse(requests.front().url);
  return {};
}

NetworkMetrics network_metrics() { return {}; }

S3Error parse_s3_error(const std::string&) { return {}; }

ListingPage parse_listing_page(const std::string&) {
  ListingPage page;
  page.error = "this build reads no listings";
  return page;
}

}  // namespace feedline::remote::detail
