// VARIANT columns: the variant binary encoding as JSON (values made byte by byte here, malformed ones among them),
// and files of shredded and unshredded variants from DuckDB's test folder (the folder-wide comparison with
// DuckDB is in parquet_duckdb_test.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "io/inspect.h"
#include "io/parquet/variant.h"
#include "io/parquet_duckdb_support.h"
#include "io/parquet_test_support.h"
#include "io/value_text.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b) s += static_cast<char>(v);
  return s;
}

// Metadata of version 1, 1-byte offsets, with these keys.
std::string metadata(const std::vector<std::string>& keys) {
  std::string m = bytes({0x01, static_cast<int>(keys.size())});
  int offset = 0;
  m += static_cast<char>(offset);
  for (const std::string& k : keys) m += static_cast<char>(offset += static_cast<int>(k.size()));
  for (const std::string& k : keys) m += k;
  return m;
}

std::string json(const std::string& md, const std::string& value) {
  std::string out;
  append_variant_json(md, value, out);
  return out;
}

TEST(VariantJson, PrimitivesAsJsonValues) {
  const std::string md = metadata({});
  EXPECT_EQ(json(md, bytes({0x00})), "null");
  EXPECT_EQ(json(md, bytes({0x04})), "true");
  EXPECT_EQ(json(md, bytes({0x08})), "false");
  EXPECT_EQ(json(md, bytes({3 << 2, 0xFE})), "-2");                                   // int8
  EXPECT_EQ(json(md, bytes({4 << 2, 0xD2, 0x04})), "1234");                           // int16
  EXPECT_EQ(json(md, bytes({8 << 2, 3, 0x15, 0xCD, 0x5B, 0x07})), "123456.789");     // decimal4, scale 3
  EXPECT_EQ(json(md, bytes({8 << 2, 2, 0xFF, 0xFF, 0xFF, 0xFF})), "-0.01");         // negative
  EXPECT_EQ(json(md, bytes({11 << 2, 0x00, 0x00, 0x00, 0x00})), "\"1970-01-01\""); // date
  EXPECT_EQ(json(md, bytes({14 << 2, 0x00, 0x00, 0xC0, 0x7F})), "\"NaN\"");         // float NaN
  EXPECT_EQ(json(md, bytes({(5 << 2) | 1, 'h', 'e', '"', 'l', '\n'})), "\"he\\\"l\\n\"");  // short string
  EXPECT_EQ(json(md, bytes({15 << 2, 3, 0, 0, 0, 'a', 'b', 'c'})), "\"YWJj\"");     // binary as base64
  EXPECT_EQ(json(md, bytes({20 << 2, 0xf2, 0x4f, 0x9b, 0x64, 0x81, 0xfa, 0x49, 0xd1, 0xb7, 0x4e, 0x8c, 0x09, 0xa6,
                            0xe3, 0x1c, 0x56})),
            "\"f24f9b64-81fa-49d1-b74e-8c09a6e31c56\"");
}

TEST(VariantJson, ObjectsAndArraysNest) {
  const std::string md = metadata({"a", "b"});
  // {"a": [1, "x"], "b": {}}: object of 2 fields (ids 0, 1; 1-byte ids and offsets), the array, then the object.
  const std::string array = bytes({0x03, 2, 0, 2, 4, 3 << 2, 1, (1 << 2) | 1, 'x'});
  const std::string empty_object = bytes({0x02, 0, 0});
  std::string object = bytes({0x02, 2, 0, 1, 0, static_cast<int>(array.size()),
                              static_cast<int>(array.size() + empty_object.size())});
  object += array + empty_object;
  EXPECT_EQ(json(md, object), R"({"a":[1,"x"],"b":{}})");
}

TEST(VariantJson, MalformedValuesAreRefusedNotTrusted) {
  const std::string md = metadata({"a"});
  const std::vector<std::pair<std::string, std::string>> bad = {
      {md, ""},                                       // no header
      {md, bytes({6 << 2, 1, 2})},                    // int64 of 2 bytes
      {md, bytes({(9 << 2) | 1, 'a'})},               // short string past the end
      {md, bytes({16 << 2, 0xFF, 0xFF, 0xFF, 0x7F})}, // string longer than the value
      {md, bytes({0x02, 1, 5, 0, 1, 0x00})},          // key id 5 of 1
      {md, bytes({0x03, 200, 0})},                    // 200 elements in 3 bytes
      {md, bytes({0x03, 1, 9, 9, 0x00})},             // offsets past the values
      {md, bytes({63 << 2})},                         // unknown primitive
      {bytes({0x02, 0}), bytes({0x00})},              // metadata version 2
      {bytes({0x01, 9, 0}), bytes({0x00})},           // 9 keys in 3 bytes
  };
  for (const auto& [m, v] : bad) {
    EXPECT_THROW(json(m, v), InvalidFile) << ::testing::PrintToString(v);
  }
  // Nesting without end: each array holds the next.
  std::string deep = bytes({0x00});
  for (int i = 0; i < 300; ++i) {  // 2-byte offsets
    const int size = static_cast<int>(deep.size());
    deep = bytes({0x07, 1, 0, 0, size & 0xFF, size >> 8}) + deep;
  }
  EXPECT_EQ(json(md, deep.substr(deep.size() - 13)), "[[null]]");  // the innermost two levels are fine
  EXPECT_THROW(json(md, deep), InvalidFile);
}

std::string folder_file(const std::string& name) {
  return feedline::testing::test_data_dir() + "/duckdb-parquet-testing/" + name;
}

// A shredded object missing a field, with a null field, and a field left in `value`: JSON text in a STRING
// column named by the group; `inspect` names the type; `cat` embeds the JSON value.
TEST(VariantFiles, ShreddedAndUnshreddedReadAsJsonText) {
  Table t = read_table(folder_file("variant_shredded_object2.parquet"));
  const Column& var = t.column("var");
  EXPECT_EQ(var.schema.logical.kind, LogicalKind::kVariant);
  EXPECT_TRUE(var.schema.is_string);
  EXPECT_EQ(value_text(var, 0), R"({"a":null,"d":"iceberg"})");
  EXPECT_EQ(json_cell(var, 0).dump(), R"({"a":null,"d":"iceberg"})");

  t = read_table(folder_file("variant_array_object_string_and_integer.parquet"), {{"var"}, {}, 1});
  ASSERT_EQ(t.columns.size(), 1u);
  EXPECT_EQ(value_text(t.columns[0], 0), R"([{"a":123456789,"c":"string"},{"a":123456789,"c":"string"},"iceberg",34])");

  t = read_table(folder_file("variant_shredded_array1.parquet"));
  EXPECT_EQ(value_text(t.column("var"), 0), R"([["string","iceberg"],["apple","banana"]])");

  const std::string info = inspect_json(folder_file("variant_shredded_object2.parquet"));
  EXPECT_NE(info.find("\"logical_type\": \"VARIANT\""), std::string::npos) << info;
}

// A null VARIANT (the group absent) is a null; a variant null value is JSON null.
TEST(VariantFiles, NullGroupsAreNullsAndVariantNullsAreJsonNull) {
  const Table t = read_table(folder_file("snowflake_variant.parquet"));
  const Column& payload = t.column("PAYLOAD");
  ASSERT_EQ(t.num_rows, 7);
  EXPECT_EQ(value_text(payload, 0), R"({"age":30,"name":"alice"})");
  EXPECT_TRUE(payload.is_null(6));
  const Table n = read_table(folder_file("variant_null.parquet"));
  EXPECT_FALSE(n.column("var").is_null(0));
  EXPECT_EQ(value_text(n.column("var"), 0), "null");
}

// A table read with a VARIANT column writes it as JSON text (a STRING annotated JSON), which reads back as JSON text.
TEST(VariantFiles, WrittenBackAsJsonStrings) {
  const Table t = read_table(folder_file("variant_object_string_and_array.parquet"));
  const std::string path = feedline::testing::scratch_dir("variant-write") + "/back.parquet";
  write_table(path, t);
  const Table back = read_table(path);
  const Column& var = back.column("var");
  EXPECT_EQ(var.schema.logical.kind, LogicalKind::kJson);
  EXPECT_TRUE(var.schema.is_string);
  EXPECT_EQ(var.byte_arrays(), t.column("var").byte_arrays());
}

// A value that is not a valid variant (DuckDB refuses the file too): an error naming the file, column and row.
TEST(VariantFiles, AMaliciousValueIsAnErrorNamingTheRow) {
  const std::string path = folder_file("variant_malicious.parquet");
  try {
    read_table(path);
    FAIL() << "read";
  } catch (const InvalidFile& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("row 0"), std::string::npos) << what;
    EXPECT_NE(what.find("VARIANT"), std::string::npos) << what;
  }
}

// A list column of binary `depth` levels deep, every level nullable.
ColumnSchema binary_lists(int depth) {
  ColumnSchema schema;
  schema.type = PhysicalType::kByteArray;
  schema.is_list = true;
  schema.nullable = true;
  schema.inner_list_nullable.assign(static_cast<size_t>(depth - 1), true);
  schema.element_nullable = true;
  return schema;
}

// Rewrites `plain`, whose two columns `metadata` and `value` are lists of binary `depth` levels deep, as our writer
// writes them, into `path`, whose one column `v` holds the same lists of unshredded VARIANTs: the innermost element
// becomes `optional group element (VARIANT) { required binary metadata; required binary value }`. The levels are
// the same, so the pages stay valid.
void rewrite_as_variant_lists(const std::string& plain, const std::string& path, int depth) {
  feedline::testing::rewrite_footer(plain, path, [depth](format::FileMetaData& md) {
    const auto per_column = static_cast<size_t>(2 * depth + 1);  // the LIST group, then list and element a level
    ASSERT_EQ(md.schema.size(), 1 + 2 * per_column);
    std::vector<format::SchemaElement> schema(md.schema.begin(), md.schema.begin() + per_column);  // root, groups
    schema[0].num_children = 1;
    schema[1].name = "v";
    format::SchemaElement element = md.schema[per_column], metadata = element, value = md.schema[2 * per_column];
    element.type.reset();
    element.num_children = 2;
    element.converted_type.reset();
    element.logical_type = format::LogicalType();
    element.logical_type->kind = format::logical::kVariant;
    metadata.name = "metadata";
    value.name = "value";
    metadata.repetition_type = value.repetition_type = format::repetition::kRequired;
    schema.insert(schema.end(), {element, metadata, value});
    md.schema = std::move(schema);
    std::vector<std::string> at = {"v"};
    for (int k = 0; k < depth; ++k) at.insert(at.end(), {"list", "element"});
    for (auto& rg : md.row_groups) {
      rg.columns[0].meta_data->path_in_schema = at;
      rg.columns[0].meta_data->path_in_schema.push_back("metadata");
      rg.columns[1].meta_data->path_in_schema = at;
      rg.columns[1].meta_data->path_in_schema.push_back("value");
    }
  });
}

using Element = std::optional<std::pair<std::string, std::string>>;

// Appends the elements of `list` (none for a null list) to `c`, the leaf `name` ("metadata" or "value") of each,
// with their validity.
void append_elements(Column* c, const std::string& name, const std::optional<std::vector<Element>>& list) {
  for (const Element& e : list.value_or(std::vector<Element>{})) {
    std::get<ByteArrays>(c->values).push_back(!e ? "" : name == "metadata" ? e->first : e->second);
    c->element_validity.push_back(e ? 1 : 0);
  }
}

// A file of one column `v`, a list of unshredded VARIANTs (optional list, optional elements), as a producer such as
// Spark writes an ARRAY<VARIANT>: `optional group v (LIST) { repeated group list { optional group element
// (VARIANT) { required binary metadata; required binary value } } }`. Made from two list<binary> columns of the
// same lists (whose levels are those of the variant's two leaves), their footer rewritten into that schema.
// `rows`: each row's elements as (metadata, value), nullopt for a null element; a null row is a null list.
void write_variant_list(const std::string& path, const std::vector<std::optional<std::vector<Element>>>& rows,
                        const WriteOptions& options = {}) {
  ColumnSchema schema = binary_lists(1);
  Table t;
  t.num_rows = static_cast<int64_t>(rows.size());
  for (const char* name : {"metadata", "value"}) {
    schema.name = name;
    Column c = make_column(schema);
    c.list_offsets = {0};
    for (const auto& row : rows) {
      c.validity.push_back(row ? 1 : 0);
      append_elements(&c, name, row);
      c.list_offsets.push_back(std::get<ByteArrays>(c.values).size());
    }
    t.columns.push_back(std::move(c));
  }
  const std::string plain = path + ".lists";
  write_table(plain, t, options);
  rewrite_as_variant_lists(plain, path, 1);
}

// DuckDB reads `path`'s one column as `v` holds it, row by row (a VARIANT list dumped as JSON texts), a variant
// null as SQL NULL where feedline has JSON null.
void expect_duckdb_reads(const std::string& path, const Column& v) {
  std::string dump;
  ASSERT_TRUE(feedline::testing::run_duckdb({"dump", path}, &dump));
  const auto duck = feedline::testing::parse_dump(dump);
  ASSERT_EQ(static_cast<int64_t>(duck.rows.size()), v.size());
  for (int64_t r = 0; r < v.size(); ++r) {
    std::string mine = feedline::testing::cell(v, r);
    for (size_t at; (at = mine.find("s:6e756c6c")) != std::string::npos;) mine.replace(at, 10, "N");  // "null"
    EXPECT_EQ(duck.rows[static_cast<size_t>(r)][0], mine) << "row " << r;
  }
}

// A list of VARIANTs (a list's elements, or a map's values) reads as a list of JSON texts: null lists, empty
// lists and null elements (the group absent) as in any list; a variant null as JSON null; `cat` embeds the values.
TEST(VariantFiles, AListOfVariantsReadsAsAListOfJsonTexts) {
  const std::string none = metadata({}), keys = metadata({"a", "b"});
  const std::string one = bytes({0x02, 1, 0, 0, 2, 3 << 2, 1});  // {"a": 1}: one field, id 0, an int8
  const std::string array = bytes({0x03, 2, 0, 2, 4, 3 << 2, 1, (1 << 2) | 1, 'x'});
  const std::string nested = bytes({0x02, 2, 0, 1, 0, static_cast<int>(array.size()),
                                    static_cast<int>(array.size() + 3)}) + array + bytes({0x02, 0, 0});
  const std::string dir = feedline::testing::scratch_dir("variant-list");
  const std::string path = dir + "/list.parquet";
  const std::vector<std::optional<std::vector<Element>>> rows = {
      std::vector<Element>{Element{{keys, one}}, std::nullopt, Element{{none, bytes({3 << 2, 7})}},
                           Element{{none, bytes({0x00})}}},
      std::nullopt,
      std::vector<Element>{},
      std::vector<Element>{Element{{keys, nested}}, Element{{none, bytes({(1 << 2) | 1, 'x'})}}}};
  write_variant_list(path, rows);
  const Table t = read_table(path);
  ASSERT_EQ(t.num_rows, 4);
  ASSERT_EQ(t.columns.size(), 1u);
  const Column& v = t.column("v");
  EXPECT_EQ(v.schema.logical.kind, LogicalKind::kVariant);
  EXPECT_TRUE(v.schema.is_list);
  EXPECT_TRUE(v.schema.is_string);
  EXPECT_EQ(v.list_offsets, (std::vector<int64_t>{0, 4, 4, 4, 6}));
  EXPECT_FALSE(v.is_null(0));
  EXPECT_TRUE(v.is_null(1));
  EXPECT_FALSE(v.is_null(2));
  EXPECT_TRUE(v.element_is_null(1));
  EXPECT_FALSE(v.element_is_null(3));
  EXPECT_EQ(value_text(v, 0), R"({"a":1})");
  EXPECT_EQ(value_text(v, 2), "7");
  EXPECT_EQ(value_text(v, 3), "null");
  EXPECT_EQ(json_cell(v, 0).dump(), R"([{"a":1},null,7,null])");
  EXPECT_EQ(json_cell(v, 1).dump(), "null");
  EXPECT_EQ(json_cell(v, 2).dump(), "[]");
  EXPECT_EQ(json_cell(v, 3).dump(), R"([{"a":[1,"x"],"b":{}},"x"])");
  const std::string info = inspect_json(path);
  EXPECT_NE(info.find("\"logical_type\": \"VARIANT\""), std::string::npos) << info;
  // DuckDB reads the file as a list of the same values (its VARIANT[] dumped as JSON texts), a variant null as
  // SQL NULL where feedline has JSON null.
  expect_duckdb_reads(path, v);

  // In row groups of one row, on two threads, the row groups' lists join into the same column.
  WriteOptions small;
  small.row_group_rows = 1;
  write_variant_list(dir + "/groups.parquet", rows, small);
  EXPECT_EQ(read_file_info(dir + "/groups.parquet").row_groups.size(), 4u);
  ReadOptions two;
  two.num_threads = 2;
  feedline::testing::expect_tables_equal(t, read_table(dir + "/groups.parquet", two));
}

// A file of one column `v`, a list of lists of unshredded VARIANTs (every level optional), as Spark writes an
// ARRAY<ARRAY<VARIANT>>: made as write_variant_list makes its file, from two list<list<binary>> columns.
// `rows`: each row's inner lists, nullopt for a null list, and their elements as write_variant_list's.
using InnerList = std::optional<std::vector<Element>>;
void write_variant_list_of_lists(const std::string& path,
                                 const std::vector<std::optional<std::vector<InnerList>>>& rows,
                                 const WriteOptions& options = {}) {
  ColumnSchema schema = binary_lists(2);
  Table t;
  t.num_rows = static_cast<int64_t>(rows.size());
  for (const char* name : {"metadata", "value"}) {
    schema.name = name;
    Column c = make_column(schema);
    ByteArrays& values = std::get<ByteArrays>(c.values);
    ListLevel& inner = c.inner_lists.at(0);
    for (const auto& row : rows) {
      c.validity.push_back(row ? 1 : 0);
      for (const InnerList& list : row.value_or(std::vector<InnerList>{})) {
        inner.validity.push_back(list ? 1 : 0);
        append_elements(&c, name, list);
        inner.offsets.push_back(values.size());
      }
      c.list_offsets.push_back(static_cast<int64_t>(inner.offsets.size()) - 1);
    }
    t.columns.push_back(std::move(c));
  }
  const std::string plain = path + ".lists";
  write_table(plain, t, options);
  rewrite_as_variant_lists(plain, path, 2);
}

// A list of lists of VARIANTs reads as a list of lists of JSON texts, null and empty lists at both levels and null
// elements as in any list of lists, the same as DuckDB reads it (VARIANT[][]).
TEST(VariantFiles, AListOfListsOfVariantsReadsAsListsOfJsonTexts) {
  const std::string none = metadata({}), keys = metadata({"a"});
  const std::string one = bytes({0x02, 1, 0, 0, 2, 3 << 2, 1});  // {"a": 1}
  const Element a{{keys, one}}, seven{{none, bytes({3 << 2, 7})}}, x{{none, bytes({(1 << 2) | 1, 'x'})}};
  const Element variant_null{{none, bytes({0x00})}};
  const std::string dir = feedline::testing::scratch_dir("variant-list-of-lists");
  const std::string path = dir + "/lists.parquet";
  const std::vector<std::optional<std::vector<InnerList>>> rows = {
      std::vector<InnerList>{std::vector<Element>{a, std::nullopt}, std::nullopt, std::vector<Element>{},
                             std::vector<Element>{seven}},
      std::nullopt,
      std::vector<InnerList>{},
      std::vector<InnerList>{std::vector<Element>{x, variant_null, a}},
      std::vector<InnerList>{std::nullopt}};
  write_variant_list_of_lists(path, rows);
  const Table t = read_table(path);
  ASSERT_EQ(t.num_rows, 5);
  const Column& v = t.column("v");
  EXPECT_EQ(v.schema.logical.kind, LogicalKind::kVariant);
  EXPECT_EQ(v.schema.list_depth(), 2);
  EXPECT_EQ(v.list_offsets, (std::vector<int64_t>{0, 4, 4, 4, 5, 6}));
  EXPECT_EQ(v.validity, (std::vector<uint8_t>{1, 0, 1, 1, 1}));
  ASSERT_EQ(v.inner_lists.size(), 1u);
  EXPECT_EQ(v.inner_lists[0].offsets, (std::vector<int64_t>{0, 2, 2, 2, 3, 6, 6}));
  EXPECT_EQ(v.inner_lists[0].validity, (std::vector<uint8_t>{1, 0, 1, 1, 1, 0}));
  EXPECT_EQ(v.element_validity, (std::vector<uint8_t>{1, 0, 1, 1, 1, 1}));
  EXPECT_EQ(json_cell(v, 0).dump(), R"([[{"a":1},null],null,[],[7]])");
  EXPECT_EQ(json_cell(v, 1).dump(), "null");
  EXPECT_EQ(json_cell(v, 2).dump(), "[]");
  EXPECT_EQ(json_cell(v, 3).dump(), R"([["x",null,{"a":1}]])");
  EXPECT_EQ(json_cell(v, 4).dump(), "[null]");
  // DuckDB reads the same lists, a variant null as SQL NULL where feedline has JSON null.
  expect_duckdb_reads(path, v);

  // In row groups of one row, on two threads, the row groups' lists join into the same column.
  WriteOptions small;
  small.row_group_rows = 1;
  write_variant_list_of_lists(dir + "/groups.parquet", rows, small);
  ReadOptions two;
  two.num_threads = 2;
  feedline::testing::expect_tables_equal(t, read_table(dir + "/groups.parquet", two));
}

// DuckDB writes `select`'s one column, a list of structs of metadata, value and typed_value, into `path`, the
// structs marked VARIANT in the footer: a list of shredded VARIANTs, as a producer such as Spark writes one.
void write_shredded_variant_list(const std::string& path, const std::string& select) {
  std::string out;
  ASSERT_TRUE(feedline::testing::run_duckdb({"copy", path + ".structs", select}, &out));
  feedline::testing::rewrite_footer(path + ".structs", path, [](format::FileMetaData& md) {
    ASSERT_GE(md.schema.size(), 4u);
    format::SchemaElement& element = md.schema[3];  // root, v, list, element
    ASSERT_EQ(element.name, "element");
    ASSERT_EQ(element.num_children, 3);
    element.logical_type = format::LogicalType();
    element.logical_type->kind = format::logical::kVariant;
  });
}

// A list of shredded VARIANTs: each element's typed_value (a number, an object with a field shredded or left in
// value) or its value, a variant null, a null element, null and empty lists; as DuckDB reads the same file.
TEST(VariantFiles, AListOfShreddedVariantsReadsAsJsonTexts) {
  const std::string dir = feedline::testing::scratch_dir("variant-shredded-list");
  const std::string md = R"('\x01\x00\x00'::BLOB)", keys = R"('\x01\x02\x00\x01\x02ab'::BLOB)";  // {}, {a, b}
  // As DuckDB's SQL: an element of metadata, value and typed_value (a number).
  const auto number = [&](const std::string& value, const std::string& typed) {
    return "{'metadata': " + md + ", 'value': " + value + "::BLOB, 'typed_value': " + typed + "::BIGINT}";
  };
  write_shredded_variant_list(
      dir + "/numbers.parquet",
      "SELECT v FROM (VALUES (1, [" + number("NULL", "5") + ", NULL, " + number(R"('\x0C\x07')", "NULL") + ", " +
          number(R"('\x00')", "NULL") + "]), (2, NULL), (3, []), (4, [" + number("NULL", "-2") +
          "])) t(id, v) ORDER BY id");
  Table t = read_table(dir + "/numbers.parquet");
  ASSERT_EQ(t.num_rows, 4);
  const Column& numbers = t.column("v");
  EXPECT_EQ(numbers.schema.logical.kind, LogicalKind::kVariant);
  EXPECT_EQ(numbers.list_offsets, (std::vector<int64_t>{0, 4, 4, 4, 5}));
  EXPECT_EQ(json_cell(numbers, 0).dump(), "[5,null,7,null]");
  EXPECT_TRUE(numbers.element_is_null(1));
  EXPECT_FALSE(numbers.element_is_null(3));  // a variant null
  EXPECT_TRUE(numbers.is_null(1));
  EXPECT_EQ(json_cell(numbers, 2).dump(), "[]");
  EXPECT_EQ(json_cell(numbers, 3).dump(), "[-2]");
  expect_duckdb_reads(dir + "/numbers.parquet", numbers);

  // Objects: field a shredded (a number), b left in value; an element whose a is missing; one that is no object.
  const auto object = [&](const std::string& value, const std::string& a_value, const std::string& a_typed) {
    return "{'metadata': " + keys + ", 'value': " + value + "::BLOB, 'typed_value': {'a': {'value': " + a_value +
           "::BLOB, 'typed_value': " + a_typed + "::BIGINT}}}";
  };
  const std::string b_is_1 = R"('\x02\x01\x01\x00\x02\x0C\x01')";  // {"b": 1}: field id 1, an int8
  const std::string not_object = "{'metadata': " + keys + R"(, 'value': '\x0C\x09'::BLOB, 'typed_value': NULL})";
  write_shredded_variant_list(dir + "/objects.parquet",
                              "SELECT v FROM (VALUES (1, [" + object("NULL", "NULL", "3") + ", " +
                                  object(b_is_1, "NULL", "4") + ", " + object(b_is_1, "NULL", "NULL") + ", " +
                                  not_object + "]), (2, [" + object("NULL", R"('\x00')", "NULL") +
                                  "])) t(id, v) ORDER BY id");
  t = read_table(dir + "/objects.parquet");
  ASSERT_EQ(t.num_rows, 2);
  const Column& objects = t.column("v");
  EXPECT_EQ(json_cell(objects, 0).dump(), R"([{"a":3},{"a":4,"b":1},{"b":1},9])");
  EXPECT_EQ(json_cell(objects, 1).dump(), R"([{"a":null}])");
  expect_duckdb_reads(dir + "/objects.parquet", objects);
}

// Levels that contradict themselves, a list going on after its row's entry said the row is null: refused, naming the
// row (as any list column's are), rather than read as a null row that holds elements. The file is a list of VARIANTs
// written uncompressed, the repetition levels of its pages patched (below).
TEST(VariantFiles, ListLevelsThatContradictThemselvesAreRefused) {
  const std::string dir = feedline::testing::scratch_dir("variant-list-bad-levels");
  const Element e{{metadata({}), bytes({0x00})}};
  WriteOptions plain;
  plain.codec = Codec::kUncompressed;
  plain.dictionary = false;
  plain.page_checksums = false;
  write_variant_list(dir + "/list.parquet", {std::vector<Element>{e}, std::nullopt, std::vector<Element>{e, e}}, plain);
  ASSERT_EQ(read_table(dir + "/list.parquet").column("v").list_offsets, (std::vector<int64_t>{0, 1, 1, 3}));
  std::string file = feedline::testing::file_bytes(dir + "/list.parquet");
  // Each page's repetition levels: their length (2, little-endian), then one bit-packed group of eight (header
  // 1 << 1 | 1) whose byte holds the four levels from its low bit up: 0, 0, 0, 1 made 0, 0, 1, 0. The rows still
  // start three times, but the third entry now goes on with the null row's list.
  const std::string levels("\x02\x00\x00\x00\x03\x08", 6), patched("\x02\x00\x00\x00\x03\x04", 6);
  int found = 0;
  for (size_t at = 0; (at = file.find(levels, at)) != std::string::npos; at += levels.size(), ++found) {
    file.replace(at, levels.size(), patched);
  }
  ASSERT_EQ(found, 2) << "the writer's level encoding changed: the test needs a new patch";
  {
    std::ofstream out(dir + "/bad.parquet", std::ios::binary);
    out << file;
  }
  try {
    read_table(dir + "/bad.parquet");
    FAIL() << "read";
  } catch (const InvalidFile& err) {
    const std::string what = err.what();
    EXPECT_NE(what.find("row 1 of the row group"), std::string::npos) << what;
    EXPECT_NE(what.find("repetition level 1 on a null or empty list"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace feedline::parquet
