// Struct columns through our own writer (WriteOptions::dotted_names_as_structs): Hugging Face's image layout,
// `image` as struct<bytes: binary, path: string> beside an INT64 `label` and the `huggingface` footer key, read
// back by feedline's reader under the dotted names and by DuckDB as one STRUCT column; the schema, definition
// levels, path_in_schema, statistics and dictionary pages written; FileWriter's pieces giving write_table's bytes;
// a list and a required column as struct fields; and the names the option refuses.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "io/parquet/codec.h"
#include "io/parquet/metadata.h"
#include "io/parquet/rle.h"
#include "io/parquet/thrift_compact.h"
#include "io/parquet_duckdb_support.h"
#include "io/parquet_test_support.h"
#include "test_paths.h"

namespace feedline::parquet {
namespace {

namespace fmt = format;
using feedline::testing::expect_same_values;
using feedline::testing::expect_tables_equal;
using feedline::testing::file_bytes;
using feedline::testing::parse_dump;
using feedline::testing::run_duckdb;
using feedline::testing::scratch_dir;

fmt::FileMetaData footer(const std::string& file) {
  uint32_t len = 0;
  std::memcpy(&len, file.data() + file.size() - 8, 4);
  const size_t at = file.size() - 8 - len;
  thrift::CompactReader in(reinterpret_cast<const uint8_t*>(file.data()) + at, len, static_cast<int64_t>(at));
  return fmt::read_file_metadata(in);
}

struct LevelSink {
  std::vector<uint8_t>* out;
  void run(uint32_t v, int64_t n) { out->insert(out->end(), static_cast<size_t>(n), static_cast<uint8_t>(v)); }
  void literal(const uint32_t* v, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out->push_back(static_cast<uint8_t>(v[i]));
  }
};

// The definition levels of every data page of column `c` in row group `g`, back to back (a column without
// repetition levels; RLE with a 4-byte length, as data page v1 stores them).
std::vector<uint8_t> definition_levels(const std::string& file, const fmt::FileMetaData& md, size_t g, size_t c,
                                       int max_def) {
  const fmt::ColumnMetaData& cm = *md.row_groups.at(g).columns.at(c).meta_data;
  int64_t at = cm.dictionary_page_offset.value_or(cm.data_page_offset);
  const int64_t end = at + cm.total_compressed_size;
  std::vector<uint8_t> def;
  while (at < end) {
    const auto* base = reinterpret_cast<const uint8_t*>(file.data()) + at;
    thrift::CompactReader in(base, static_cast<size_t>(end - at), at);
    const fmt::PageHeader h = fmt::read_page_header(in);
    const uint8_t* body = base + in.position();
    at += static_cast<int64_t>(in.position()) + h.compressed_page_size;
    if (h.type != fmt::page_type::kDataPage) continue;
    std::vector<uint8_t> plain(static_cast<size_t>(h.uncompressed_page_size));
    decompress(codec_from_thrift(cm.codec), body, static_cast<size_t>(h.compressed_page_size), plain.data(),
               plain.size());
    uint32_t len = 0;
    std::memcpy(&len, plain.data(), 4);
    RleBitPackedDecoder decoder(plain.data() + 4, len, bit_width_for(static_cast<uint64_t>(max_def)));
    LevelSink sink{&def};
    decoder.decode(h.data_page_header->num_values, sink);
  }
  return def;
}

ColumnSchema bytes_schema(const std::string& name, bool is_string) {
  ColumnSchema s{name};
  s.type = PhysicalType::kByteArray;
  s.nullable = true;
  s.is_string = is_string;
  return s;
}

// Hugging Face's image layout as feedline names it: `image.bytes` (binary, with zero bytes; null in every 7th
// row), `image.path` (a string of 13 values, null in every 5th row) and a required INT64 `label`.
Table hf_table(int64_t rows) {
  ColumnSchema label{"label"};
  Table t;
  t.columns = {make_column(bytes_schema("image.bytes", false)), make_column(bytes_schema("image.path", true)),
               make_column(label)};
  for (int64_t i = 0; i < rows; ++i) {
    const bool has_bytes = i % 7 != 3, has_path = i % 5 != 1;
    std::string png = "\x89PNG\r\n";
    png.push_back('\0');
    png += std::string(static_cast<size_t>(i % 11), static_cast<char>('a' + i % 17));
    std::get<ByteArrays>(t.columns[0].values).push_back(has_bytes ? png : std::string());
    t.columns[0].validity.push_back(has_bytes ? 1 : 0);
    std::get<ByteArrays>(t.columns[1].values)
        .push_back(has_path ? "train/" + std::to_string(i % 13) + ".png" : std::string());
    t.columns[1].validity.push_back(has_path ? 1 : 0);
    t.columns[2].as<int64_t>().push_back(i % 10);
  }
  t.num_rows = rows;
  return t;
}

const char kHuggingFace[] =
    R"({"info": {"features": {"image": {"_type": "Image"}, "label": {"names": ["T-shirt/top", "Trouser", )"
    R"("Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"], "_type": "ClassLabel"}}}})";

WriteOptions struct_options() {
  WriteOptions o;
  o.dotted_names_as_structs = true;
  o.row_group_rows = 300;
  o.page_bytes = 256;  // several pages a chunk
  o.key_value_metadata = {{"huggingface", kHuggingFace}};
  return o;
}

std::vector<ColumnSchema> schema_of(const Table& t) {
  std::vector<ColumnSchema> s;
  for (const Column& c : t.columns) s.push_back(c.schema);
  return s;
}

// feedline reads the struct's fields back by their dotted names, values and nulls as written, with every codec,
// dictionary or PLAIN; and the `huggingface` key is in the footer.
TEST(StructWrite, HuggingFaceImagesReadBackByDottedNames) {
  const Table t = hf_table(1000);
  for (Codec codec : {Codec::kUncompressed, Codec::kZstd, Codec::kSnappy}) {
    for (bool dictionary : {true, false}) {
      SCOPED_TRACE(std::string(to_string(codec)) + (dictionary ? " dictionary" : " plain"));
      const std::string path = scratch_dir("struct_write_roundtrip") + "/hf.parquet";
      WriteOptions o = struct_options();
      o.codec = codec;
      o.dictionary = dictionary;
      write_table(path, t, o);
      for (int threads : {1, 3}) {
        ReadOptions r;
        r.num_threads = threads;
        expect_tables_equal(t, read_table(path, r));
      }
      ReadOptions one;
      one.columns = {"image.path"};
      expect_tables_equal(Table{{t.columns[1]}, t.num_rows}, read_table(path, one));
      const FileInfo info = read_file_info(path);
      ASSERT_EQ(info.key_value_metadata.size(), 1u);
      EXPECT_EQ(info.key_value_metadata[0].first, "huggingface");
      EXPECT_EQ(info.key_value_metadata[0].second, kHuggingFace);
      EXPECT_EQ(nlohmann::json::parse(info.key_value_metadata[0].second)["info"]["features"]["image"]["_type"],
                "Image");
      EXPECT_TRUE(info.unsupported_columns.empty());
    }
  }
}

// The footer: an optional group `image` of two fields beside `label`, each leaf's path_in_schema through the
// group, the group counted in every definition level (2 for a present value, 1 for a null one), and statistics
// and dictionary pages as for a top-level column.
TEST(StructWrite, SchemaLevelsStatisticsAndDictionary) {
  const Table t = hf_table(1000);
  const std::string path = scratch_dir("struct_write_footer") + "/hf.parquet";
  WriteOptions o = struct_options();
  o.codec = Codec::kUncompressed;
  write_table(path, t, o);
  const std::string file = file_bytes(path);
  const fmt::FileMetaData md = footer(file);

  ASSERT_EQ(md.schema.size(), 5u);
  EXPECT_EQ(md.schema[0].num_children, 2);
  EXPECT_EQ(md.schema[1].name, "image");
  EXPECT_FALSE(md.schema[1].type.has_value());
  EXPECT_EQ(md.schema[1].num_children, 2);
  EXPECT_EQ(md.schema[1].repetition_type, fmt::repetition::kOptional);
  EXPECT_EQ(md.schema[2].name, "bytes");
  EXPECT_EQ(md.schema[2].type, fmt::type::kByteArray);
  EXPECT_FALSE(md.schema[2].converted_type.has_value());
  EXPECT_EQ(md.schema[2].repetition_type, fmt::repetition::kOptional);
  EXPECT_EQ(md.schema[3].name, "path");
  EXPECT_EQ(md.schema[3].converted_type, fmt::converted::kUtf8);
  EXPECT_EQ(md.schema[4].name, "label");
  EXPECT_EQ(md.schema[4].repetition_type, fmt::repetition::kRequired);
  EXPECT_EQ(md.column_orders.size(), 3u);

  ASSERT_EQ(md.row_groups.size(), 4u);
  for (size_t g = 0; g < md.row_groups.size(); ++g) {
    SCOPED_TRACE("row group " + std::to_string(g));
    const int64_t r0 = static_cast<int64_t>(g) * 300, r1 = std::min<int64_t>(r0 + 300, t.num_rows);
    const auto& cols = md.row_groups[g].columns;
    ASSERT_EQ(cols.size(), 3u);
    EXPECT_EQ(cols[0].meta_data->path_in_schema, (std::vector<std::string>{"image", "bytes"}));
    EXPECT_EQ(cols[1].meta_data->path_in_schema, (std::vector<std::string>{"image", "path"}));
    EXPECT_EQ(cols[2].meta_data->path_in_schema, (std::vector<std::string>{"label"}));
    for (size_t c = 0; c < 2; ++c) {
      SCOPED_TRACE("column " + t.columns[c].schema.name);
      const Column& col = t.columns[c];
      std::vector<uint8_t> want_def;
      int64_t nulls = 0;
      std::string lo, hi;
      bool any = false;
      for (int64_t r = r0; r < r1; ++r) {
        want_def.push_back(static_cast<uint8_t>(col.is_null(r) ? 1 : 2));
        if (col.is_null(r)) {
          ++nulls;
          continue;
        }
        const std::string v(col.byte_arrays().at(r));
        if (!any || v < lo) lo = v;
        if (!any || hi < v) hi = v;
        any = true;
      }
      EXPECT_EQ(cols[c].meta_data->num_values, r1 - r0);
      EXPECT_EQ(definition_levels(file, md, g, c, 2), want_def);
      const fmt::Statistics& s = *cols[c].meta_data->statistics;
      EXPECT_EQ(s.null_count, nulls);
      EXPECT_EQ(s.min_value, lo);
      EXPECT_EQ(s.max_value, hi);
    }
    // 13 paths: a dictionary; the label has no definition levels (required under no group).
    EXPECT_TRUE(cols[1].meta_data->dictionary_page_offset.has_value());
    const auto& enc = cols[1].meta_data->encodings;
    EXPECT_NE(std::find(enc.begin(), enc.end(), fmt::encoding::kRleDictionary), enc.end());
    EXPECT_EQ(cols[2].meta_data->statistics->null_count, 0);
  }
}

// Without the option a dotted name stays one top-level column, as before.
TEST(StructWrite, OffByDefault) {
  const std::string path = scratch_dir("struct_write_off") + "/flat.parquet";
  const Table t = hf_table(20);
  write_table(path, t);
  const fmt::FileMetaData md = footer(file_bytes(path));
  ASSERT_EQ(md.schema.size(), 4u);
  EXPECT_EQ(md.schema[0].num_children, 3);
  EXPECT_EQ(md.schema[1].name, "image.bytes");
  EXPECT_EQ(md.row_groups[0].columns[0].meta_data->path_in_schema, (std::vector<std::string>{"image.bytes"}));
  expect_tables_equal(t, read_table(path));
}

// FileWriter in pieces, cut across row groups: the bytes write_table writes.
TEST(StructWrite, FileWriterPiecesGiveTheBytesOfWriteTable) {
  const Table t = hf_table(1000);
  const std::string dir = scratch_dir("struct_write_pieces");
  write_table(dir + "/whole.parquet", t, struct_options());
  FileWriter writer(dir + "/pieces.parquet", schema_of(t), struct_options());
  const std::vector<int64_t> cuts{0, 1, 299, 301, 950, 1000};
  for (size_t k = 1; k < cuts.size(); ++k) writer.write(slice(t, cuts[k - 1], cuts[k]));
  writer.close();
  EXPECT_EQ(file_bytes(dir + "/pieces.parquet"), file_bytes(dir + "/whole.parquet"));
  expect_tables_equal(t, read_table(dir + "/pieces.parquet"));
}

// DuckDB reads `image` as one STRUCT("bytes" BLOB, "path" VARCHAR) column beside `label`, present in every row, its
// fields' values and nulls as written.
TEST(StructWrite, DuckDbReadsImageAsAStruct) {
  const Table t = hf_table(1000);
  const std::string path = scratch_dir("struct_write_duckdb") + "/hf.parquet";
  write_table(path, t, struct_options());

  std::string out;
  ASSERT_TRUE(run_duckdb({"dump", path}, &out));
  const feedline::testing::Dump whole = parse_dump(out);
  EXPECT_EQ(whole.names, (std::vector<std::string>{"image", "label"}));
  EXPECT_EQ(whole.types, (std::vector<std::string>{R"(STRUCT("bytes" BLOB, "path" VARCHAR))", "BIGINT"}));
  EXPECT_EQ(whole.rows.size(), 1000u);

  ASSERT_TRUE(run_duckdb({"dump", path, R"(["image.bytes", "image.path", "label"])"}, &out));
  expect_same_values(t, parse_dump(out));

  int64_t null_bytes = 0, null_paths = 0;
  for (int64_t r = 0; r < t.num_rows; ++r) {
    null_bytes += t.columns[0].is_null(r);
    null_paths += t.columns[1].is_null(r);
  }
  const std::vector<std::string> conditions{"image IS NULL", "image.bytes IS NULL", "image.path IS NULL",
                                            "image.path = 'train/4.png'"};
  ASSERT_TRUE(run_duckdb({"count", path, nlohmann::json(conditions).dump()}, &out));
  int64_t path4 = 0;
  for (int64_t r = 0; r < t.num_rows; ++r) path4 += !t.columns[1].is_null(r) && r % 13 == 4;
  EXPECT_EQ(out, "0\n" + std::to_string(null_bytes) + "\n" + std::to_string(null_paths) + "\n" +
                     std::to_string(path4) + "\n");
}

// A struct's fields may be lists and required columns, and structs may stand between top-level columns: the
// struct's definition level is added to the list's own. A required field reads back nullable (its struct is
// optional), with no nulls.
TEST(StructWrite, ListAndRequiredFieldsBetweenTopLevelColumns) {
  ColumnSchema id{"id"};
  ColumnSchema size{"meta.size"};
  size.type = PhysicalType::kInt32;
  ColumnSchema tags = bytes_schema("meta.tags", true);
  tags.is_list = true;
  tags.element_nullable = true;
  ColumnSchema box{"box.x"};
  box.type = PhysicalType::kDouble;
  box.nullable = true;
  ColumnSchema after = bytes_schema("after", true);
  Table t;
  t.columns = {make_column(id), make_column(size), make_column(tags), make_column(box), make_column(after)};
  const int64_t rows = 500;
  for (int64_t i = 0; i < rows; ++i) {
    t.columns[0].as<int64_t>().push_back(i);
    t.columns[1].as<int32_t>().push_back(static_cast<int32_t>(i * 3 - 700));
    Column& l = t.columns[2];
    const bool null_list = i % 6 == 2;
    l.validity.push_back(null_list ? 0 : 1);
    const int64_t n = null_list ? 0 : i % 4;  // 0..3 elements; every 5th element null
    for (int64_t e = 0; e < n; ++e) {
      const bool null = (l.list_offsets.back() + e) % 5 == 0;
      std::get<ByteArrays>(l.values).push_back(null ? "" : "t" + std::to_string((i + e) % 7));
      l.element_validity.push_back(null ? 0 : 1);
    }
    l.list_offsets.push_back(l.list_offsets.back() + n);
    t.columns[3].as<double>().push_back(i % 9 == 0 ? 0.0 : 0.5 * static_cast<double>(i));
    t.columns[3].validity.push_back(i % 9 == 0 ? 0 : 1);
    std::get<ByteArrays>(t.columns[4].values).push_back("a" + std::to_string(i));
  }
  t.num_rows = rows;

  const std::string path = scratch_dir("struct_write_list") + "/t.parquet";
  WriteOptions o = struct_options();
  o.row_group_rows = 128;
  write_table(path, t, o);

  const fmt::FileMetaData md = footer(file_bytes(path));
  EXPECT_EQ(md.schema[0].num_children, 4);  // id, meta, box, after
  EXPECT_EQ(md.row_groups[0].columns[2].meta_data->path_in_schema,
            (std::vector<std::string>{"meta", "tags", "list", "element"}));
  EXPECT_EQ(md.row_groups[0].columns[3].meta_data->path_in_schema, (std::vector<std::string>{"box", "x"}));

  Table want = t;
  want.columns[1].schema.nullable = true;
  expect_tables_equal(want, read_table(path));

  std::string out;
  ASSERT_TRUE(run_duckdb({"dump", path}, &out));
  const feedline::testing::Dump whole = parse_dump(out);
  EXPECT_EQ(whole.names, (std::vector<std::string>{"id", "meta", "box", "after"}));
  EXPECT_EQ(whole.types, (std::vector<std::string>{"BIGINT", R"(STRUCT("size" INTEGER, "tags" VARCHAR[]))",
                                                   R"(STRUCT("x" DOUBLE))", "VARCHAR"}));
  ASSERT_TRUE(run_duckdb({"dump", path, R"(["id", "meta.size", "meta.tags", "box.x", "after"])"}, &out));
  expect_same_values(want, parse_dump(out));
}

// write_table and FileWriter refuse, naming the file and the column, before anything is written.
void expect_refused(const Table& t, const std::string& message) {
  const std::string dir = scratch_dir("struct_write_refused");
  for (bool file_writer : {false, true}) {
    SCOPED_TRACE(file_writer ? "FileWriter" : "write_table");
    const std::string path = dir + "/t.parquet";
    try {
      if (file_writer) {
        FileWriter w(path, schema_of(t), struct_options());
      } else {
        write_table(path, t, struct_options());
      }
      ADD_FAILURE() << "written: " << message;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": " + message), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(path));
  }
}

Table table_of(const std::vector<std::string>& names) {
  Table t;
  for (const std::string& n : names) t.columns.push_back(make_column(ColumnSchema{n}));
  return t;
}

TEST(StructWrite, RefusesAColumnNamedAsAStruct) {
  expect_refused(table_of({"image", "image.bytes", "label"}),
                 "column 'image' is also the name of the struct that column 'image.bytes' makes");
  expect_refused(table_of({"image.bytes", "image.path", "image"}),
                 "column 'image' is also the name of the struct that column 'image.bytes' makes");
  // Off, the same names are three top-level columns.
  const std::string path = scratch_dir("struct_write_refused") + "/off.parquet";
  write_table(path, table_of({"image", "image.bytes", "label"}));
  EXPECT_EQ(read_file_info(path).schema.size(), 3u);
}

TEST(StructWrite, RefusesAStructsColumnsApart) {
  expect_refused(table_of({"image.bytes", "label", "image.path"}),
                 "column 'image.path' is a field of struct 'image' but does not follow that struct's other columns");
  expect_refused(table_of({"a.x", "b.x", "a.y"}),
                 "column 'a.y' is a field of struct 'a' but does not follow");
}

TEST(StructWrite, RefusesAnEmptyStructOrFieldName) {
  expect_refused(table_of({".x"}), "column '.x': with dotted_names_as_structs a dotted name must be <struct>.<field>");
  expect_refused(table_of({"x."}), "column 'x.': with dotted_names_as_structs a dotted name must be <struct>.<field>");
}

}  // namespace
}  // namespace feedline::parquet
