// Patterns and folders over object storage (s3://, gs://): what a local reader finds with glob() and a walk of its
// folders, found in one listing (remote::list_objects) of the pattern's literal prefix or of the folder, so that a
// pattern or a folder names the same files whether it is a path or a URL. Object storage has no folders: a "folder"
// is a key prefix ending in '/', and it exists when some object's key begins with it. http(s) has no listing: a
// pattern or a folder of an http(s) URL is refused (InvalidArgument), its files are named one by one.
// Thread-safe: every function may be called from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "feedline/io/remote.h"

namespace feedline::remote {

// Whether `url` is an s3:// or gs:// URL (in any case): one that has listings.
bool is_object_store_url(std::string_view url);

// Whether `path` holds a glob wildcard (`*`, `?`, `[`). In an http(s) URL only `*` counts: a `?` there begins the
// query and a `[` an IPv6 address.
bool has_wildcard(std::string_view path);

// Whether `name` matches `pattern` as glob() matches a path: segment by segment ('/' only by '/'); `*`, `?` and
// `[...]` within a segment (fnmatch), where a segment beginning with '.' is matched only by a pattern segment that
// begins with '.'; and a pattern segment that is `**` matches any number of segments (none too), none of them
// beginning with '.' or '_', as the local datasets' walk of `**` leaves those folders out.
bool glob_match(std::string_view pattern, std::string_view name);

// An object a pattern matched: the object itself (folder == 0), or a "folder" above it, its URL up to one of its
// '/', the shortest that matched (folder is that length), as a local glob matches a folder that a walk then reads.
struct GlobMatch {
  ObjectInfo object;
  size_t folder = 0;
};

// The objects `pattern` (an s3:// or gs:// URL with wildcards after its bucket) matches or lies above, in key order,
// from one listing of the pattern up to its first wildcard. A pattern ending in '/' matches folders alone.
// InvalidArgument naming the pattern for a wildcard in the bucket, for an http(s) URL (no listing); IoError as
// list_objects() throws it.
std::vector<GlobMatch> glob_objects(const std::string& pattern);

// Whether `url` can only name a folder: it ends in '/', or it is an s3:// or gs:// URL of a bucket alone.
bool is_folder_url(std::string_view url);

// Every object under the folder `url` names (its key and '/', or the whole bucket), at any depth, in key order:
// list_objects() of it. InvalidArgument for an http(s) URL.
//
// The listings of glob_objects() and folder_objects() answer the calls for the same prefix in the half minute after
// them, so that a layout told from a listing and then opened from it costs one listing; an object uploaded
// meanwhile shows in the listings made after that.
std::vector<ObjectInfo> folder_objects(const std::string& url);

}  // namespace feedline::remote
