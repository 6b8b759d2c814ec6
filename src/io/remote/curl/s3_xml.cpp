// S3's XML documents (error documents, ListObjectsV2 pages), read with pugixml.
#include <pugixml.hpp>

#include "io/remote/fetch.h"

namespace feedline::remote::detail {

S3Error parse_s3_error(const std::string& body) {
  S3Error e;
  if (body.empty()) return e;
  pugi::xml_document doc;
  if (!doc.load_buffer(body.data(), body.size(), pugi::parse_default, pugi::encoding_utf8)) return e;
  const pugi::xml_node error = doc.child("Error");
  if (!error) return e;
  e.code = error.child_value("Code");
  e.message = error.child_value("Message");
  e.region = error.child_value("Region");
  if (e.message.size() > 512) e.message.resize(512);
  return e;
}

ListingPage parse_listing_page(const std::string& body) {
  ListingPage page;
  pugi::xml_document doc;
  if (!doc.load_buffer(body.data(), body.size(), pugi::parse_default, pugi::encoding_utf8)) {
    page.error = "the server's answer is not a listing (not XML)";
    return page;
  }
  const pugi::xml_node result = doc.child("ListBucketResult");
  if (!result) {
    page.error = "the server's answer is not a listing (no ListBucketResult)";
    return page;
  }
  for (const pugi::xml_node c : result.children("Contents")) {
    ListingPage::Entry e;
    e.key = c.child_value("Key");
    e.has_size = static_cast<bool>(c.child("Size"));
    e.size = c.child_value("Size");
    e.etag = c.child_value("ETag");
    page.entries.push_back(std::move(e));
  }
  page.truncated = std::string(result.child_value("IsTruncated")) == "true";
  page.token = result.child_value("NextContinuationToken");
  page.ok = true;
  return page;
}

}  // namespace feedline::remote::detail
