// Hand-made Parquet files for the hostile-input tests (parquet_hostile_*_test.cpp): our own metadata and pages
// around chosen bytes, INT32 leaves under lists of any depth, and checks that a read throws feedline::Error.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "io/parquet/metadata.h"
#include "io/parquet/rle.h"
#include "io/parquet/thrift_compact.h"

namespace feedline::testing {

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Reads `bytes` as a file: returns true when it read, false when it threw feedline::Error; anything else fails.
inline bool reads(const std::string& path, const std::string& bytes) {
  write_bytes(path, bytes);
  try {
    parquet::read_table(path);
    return true;
  } catch (const Error&) {
    return false;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-feedline exception: " << e.what();
    return false;
  }
}

// A file of our own metadata around `body` (what sits between the magic and the footer).
inline std::string make_file(const parquet::format::FileMetaData& md, const std::string& body = "") {
  parquet::thrift::CompactWriter w;
  parquet::format::write_file_metadata(w, md);
  const std::string& footer = w.buffer();
  const uint32_t len = static_cast<uint32_t>(footer.size());
  return "PAR1" + body + footer + std::string(reinterpret_cast<const char*>(&len), 4) + "PAR1";
}

inline parquet::format::FileMetaData one_column_metadata(int64_t rows) {
  parquet::format::FileMetaData md;
  md.version = 1;
  md.num_rows = rows;
  parquet::format::SchemaElement root;
  root.name = "schema";
  root.num_children = 1;
  parquet::format::SchemaElement leaf;
  leaf.name = "x";
  leaf.type = parquet::format::type::kInt32;
  leaf.repetition_type = parquet::format::repetition::kRequired;
  md.schema = {root, leaf};
  parquet::format::RowGroup rg;
  rg.num_rows = rows;
  parquet::format::ColumnChunk cc;
  parquet::format::ColumnMetaData cm;
  cm.type = parquet::format::type::kInt32;
  cm.encodings = {parquet::format::encoding::kPlain};
  cm.path_in_schema = {"x"};
  cm.codec = parquet::format::codec::kUncompressed;
  cm.num_values = rows;
  cm.data_page_offset = 4;
  cc.meta_data = cm;
  rg.columns = {cc};
  md.row_groups = {rg};
  return md;
}

inline std::string page(const parquet::format::PageHeader& h, const std::string& body) {
  parquet::thrift::CompactWriter w;
  parquet::format::write_page_header(w, h);
  return w.buffer() + body;
}

inline parquet::format::PageHeader data_page_header(int32_t num_values, int32_t size,
                                                    int32_t encoding = parquet::format::encoding::kPlain) {
  parquet::format::PageHeader h;
  h.type = parquet::format::page_type::kDataPage;
  h.uncompressed_page_size = size;
  h.compressed_page_size = size;
  parquet::format::DataPageHeader d;
  d.num_values = num_values;
  d.encoding = encoding;
  d.definition_level_encoding = parquet::format::encoding::kRle;
  d.repetition_level_encoding = parquet::format::encoding::kRle;
  h.data_page_header = d;
  return h;
}

template <class E>
inline void expect_throw_with(const std::string& path, const std::string& bytes, const std::string& needle) {
  write_bytes(path, bytes);
  try {
    parquet::read_table(path);
    ADD_FAILURE() << "read without complaint; expected " << needle;
  } catch (const E& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    EXPECT_NE(what.find(path), std::string::npos) << what;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception: " << e.what();
  }
}

// One data page v1 of an INT32 leaf: its repetition and definition levels (RLE, length-prefixed) and PLAIN
// values; declared_size, when set, is the stored size its header gives instead of the true one.
struct Int32Page {
  std::vector<uint8_t> rep, def;
  std::vector<int32_t> values;
  int32_t declared_size = -1;
};

// A one-column file of `schema` (its root first) whose INT32 leaf at `path` has these data pages, uncompressed.
// page_offsets, if given, receives each page's offset in the file.
inline std::string int32_leaf_file(int64_t rows, std::vector<parquet::format::SchemaElement> schema,
                                   std::vector<std::string> path, const std::vector<Int32Page>& pages, int max_rep,
                                   int max_def, std::vector<int64_t>* page_offsets = nullptr) {
  auto levels = [](const std::vector<uint8_t>& v, int max_level) {
    std::string encoded;
    parquet::rle_encode(v.data(), v.size(), parquet::bit_width_for(static_cast<uint64_t>(max_level)), &encoded);
    const auto len = static_cast<uint32_t>(encoded.size());
    return std::string(reinterpret_cast<const char*>(&len), 4) + encoded;
  };
  std::string body;
  int64_t entries = 0;
  for (const Int32Page& p : pages) {
    if (page_offsets != nullptr) page_offsets->push_back(4 + static_cast<int64_t>(body.size()));
    const std::string data = (max_rep > 0 ? levels(p.rep, max_rep) : "") + levels(p.def, max_def) +
                             std::string(reinterpret_cast<const char*>(p.values.data()), p.values.size() * 4);
    const auto n = static_cast<int32_t>(p.def.size());
    const auto size = static_cast<int32_t>(data.size());
    parquet::format::PageHeader h = data_page_header(n, size);
    if (p.declared_size >= 0) h.compressed_page_size = h.uncompressed_page_size = p.declared_size;
    body += page(h, data);
    entries += n;
  }
  parquet::format::FileMetaData md;
  md.version = 1;
  md.num_rows = rows;
  md.schema = std::move(schema);
  parquet::format::ColumnMetaData cm;
  cm.type = parquet::format::type::kInt32;
  cm.encodings = {parquet::format::encoding::kPlain, parquet::format::encoding::kRle};
  cm.path_in_schema = std::move(path);
  cm.codec = parquet::format::codec::kUncompressed;
  cm.num_values = entries;
  cm.data_page_offset = 4;
  cm.total_compressed_size = static_cast<int64_t>(body.size());
  parquet::format::ColumnChunk cc;
  cc.meta_data = cm;
  parquet::format::RowGroup rg;
  rg.num_rows = rows;
  rg.columns = {cc};
  md.row_groups = {rg};
  return make_file(md, body);
}

// The same with one data page.
inline std::string int32_leaf_file(int64_t rows, std::vector<parquet::format::SchemaElement> schema,
                                   std::vector<std::string> path, const std::vector<uint8_t>& rep, int max_rep,
                                   const std::vector<uint8_t>& def, int max_def, const std::vector<int32_t>& values) {
  return int32_leaf_file(rows, std::move(schema), std::move(path), {Int32Page{rep, def, values}}, max_rep, max_def);
}

// A one-column file whose column is `optional group l (LIST) { repeated group list { <rep> int32 element } }`
// with one data page v1 of the given levels and PLAIN values.
// Appends `optional group <name> (LIST) { repeated group list { ...` to a schema: the two elements of one level.
inline void push_list_level(std::vector<parquet::format::SchemaElement>& schema, const char* name) {
  parquet::format::SchemaElement group, list;
  group.name = name;
  group.repetition_type = parquet::format::repetition::kOptional;
  group.num_children = 1;
  group.converted_type = parquet::format::converted::kList;
  list.name = "list";
  list.repetition_type = parquet::format::repetition::kRepeated;
  list.num_children = 1;
  schema.push_back(group);
  schema.push_back(list);
}

// The root and `levels` nested list levels (`l`, then `element`), above an INT32 `element` leaf.
inline std::vector<parquet::format::SchemaElement> int32_list_schema(int levels, bool element_optional) {
  parquet::format::SchemaElement root;
  root.name = "schema";
  root.num_children = 1;
  std::vector<parquet::format::SchemaElement> schema{root};
  for (int k = 0; k < levels; ++k) push_list_level(schema, k == 0 ? "l" : "element");
  parquet::format::SchemaElement element;
  element.name = "element";
  element.type = parquet::format::type::kInt32;
  element.repetition_type =
      element_optional ? parquet::format::repetition::kOptional : parquet::format::repetition::kRequired;
  schema.push_back(element);
  return schema;
}

inline std::string list_file(int64_t rows, const std::vector<uint8_t>& rep, const std::vector<uint8_t>& def,
                             const std::vector<int32_t>& values, bool element_optional) {
  return int32_leaf_file(rows, int32_list_schema(1, element_optional), {"l", "list", "element"}, rep, 1, def,
                         element_optional ? 3 : 2, values);
}

// The same column of list_file with these pages.
inline std::string list_file_of_pages(int64_t rows, const std::vector<Int32Page>& pages,
                                      std::vector<int64_t>* offsets) {
  return int32_leaf_file(rows, int32_list_schema(1, true), {"l", "list", "element"}, pages, 1, 3, offsets);
}

}  // namespace feedline::testing
