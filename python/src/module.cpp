// feedline._feedline: the C++ core for Python. The Python package (feedline/__init__.py) wraps these in the
// public API; nothing here is meant to be called directly. Image datasets' core is in images.cpp.
//
// Tensors cross with torch's own conversion (THPVariable): a torch::Tensor made here is the torch.Tensor Python
// sees, the same storage. Columns read from a file become tensors without a copy where the stored type is the
// tensor's (the reader's vector is moved into the tensor's storage). Every call that reads, decodes or waits
// releases the GIL; a Python transform called from a loader worker takes it for the call alone.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "feedline/dataset/dataset.h"
#include "feedline/dataset/encoded.h"
#include "feedline/dataset/image_file.h"
#include "feedline/io/columns.h"
#include "feedline/io/convert.h"
#include "feedline/io/csv.h"
#include "feedline/io/error.h"
#include "feedline/io/parquet.h"
#include "feedline/io/parquet_dataset.h"
#include "feedline/io/table.h"
#include "feedline/loader/loader.h"
#include "batch_mix.h"
#include "images.h"
#include "mixture.h"
#include "io/inspect.h"
#include "io/value_text.h"
#include "remote.h"

namespace py = pybind11;

namespace feedline::python {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// Columns to Python values

// A vector moved into a tensor's storage: the tensor frees it.
template <class V>
torch::Tensor adopt(V&& values, int64_t n, torch::ScalarType dtype) {
  auto* owner = new V(std::move(values));
  void* data = const_cast<void*>(static_cast<const void*>(owner->data()));
  return torch::from_blob(data, {n}, [owner](void*) { delete owner; }, torch::TensorOptions().dtype(dtype));
}

// How many of a column's rows are null, and the first of them (-1: none).
int64_t null_count(const Column& c) {
  int64_t n = 0;
  for (const uint8_t v : c.validity) n += v == 0;
  return n;
}

int64_t first_null(const Column& c) {
  for (size_t r = 0; r < c.validity.size(); ++r) {
    if (c.validity[r] == 0) return static_cast<int64_t>(r);
  }
  return -1;
}

// A flat column of numbers as a tensor (null rows hold 0). Stored types map to their dtype and are moved, not
// copied: BOOLEAN bool, INT32 int32, INT64 int64, FLOAT float32, DOUBLE float64, FLOAT16 float16. Narrower
// integer annotations take their own dtype (INT(8) int8 / uint8, INT(16) int16), UINT16 stays int32, UINT32
// widens to int64 and UINT64 keeps its bits in int64 (torch has no unsigned 16-, 32- or 64-bit dtype before 2.3).
// DECIMAL becomes float64 (its value, scaled); DATE, TIME and TIMESTAMP keep their stored integers.
torch::Tensor flat_tensor(Column& c) {
  const ColumnSchema& s = c.schema;
  const int64_t n = c.size();
  if (s.logical.kind == LogicalKind::kDecimal) {
    auto t = torch::empty({n}, torch::kFloat64);
    auto* out = t.data_ptr<double>();
    for (int64_t r = 0; r < n; ++r) out[r] = c.is_null(r) ? 0.0 : c.value_as_double(r);
    return t;
  }
  if (s.logical.kind == LogicalKind::kFloat16 && s.type == PhysicalType::kFixedLenByteArray) {
    ByteArrays& b = std::get<ByteArrays>(c.values);
    if (b.bytes.size() == static_cast<size_t>(2 * n)) return adopt(std::move(b.bytes), n, torch::kFloat16);
    return float16_tensor(b);  // a null row's two bytes are missing: copied value by value, 0 for a null
  }
  const std::optional<IntAnnotation> a = s.int_annotation;
  switch (s.type) {
    case PhysicalType::kBoolean: return adopt(std::move(c.as<uint8_t>()), n, torch::kBool);
    case PhysicalType::kInt32: {
      torch::Tensor t = adopt(std::move(c.as<int32_t>()), n, torch::kInt32);
      if (a && a->bit_width == 8) return t.to(a->is_signed ? torch::kInt8 : torch::kUInt8);
      if (a && a->bit_width == 16 && a->is_signed) return t.to(torch::kInt16);
      if (a && a->bit_width == 32 && !a->is_signed) return t.to(torch::kInt64).bitwise_and_(int64_t{0xffffffff});
      return t;
    }
    case PhysicalType::kInt64: return adopt(std::move(c.as<int64_t>()), n, torch::kInt64);
    case PhysicalType::kFloat: return adopt(std::move(c.as<float>()), n, torch::kFloat32);
    case PhysicalType::kDouble: return adopt(std::move(c.as<double>()), n, torch::kFloat64);
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: break;
  }
  throw InvalidArgument("column '" + s.name + "' holds byte strings, not numbers");
}

bool is_byte_column(const ColumnSchema& s) {
  return (s.type == PhysicalType::kByteArray || s.type == PhysicalType::kFixedLenByteArray) &&
         s.logical.kind != LogicalKind::kDecimal && s.logical.kind != LogicalKind::kFloat16;
}

// A list entry of a list of lists of numbers that has no one tensor: a tensor of its elements when its lists are
// regular below it (as list_column_tensor shapes them), else its children, each the same way.
struct Nested {
  std::optional<torch::Tensor> tensor;
  std::vector<Nested> children;
};

// Entry i of list level `level` of `c` (0: row i), its elements in `elements` (list_column_elements).
Nested nested_entry(const Column& c, const torch::Tensor& elements, int level, int64_t i) {
  const int depth = c.schema.list_depth();
  const auto offsets = [&](int k) -> const std::vector<int64_t>& {
    return k == 0 ? c.list_offsets : c.inner_lists[static_cast<size_t>(k - 1)].offsets;
  };
  // Walk down: the entries [a, b) below entry i at each level, regular while each holds as many as the first.
  const auto at = [](const std::vector<int64_t>& o, int64_t j) { return o[static_cast<size_t>(j)]; };
  int64_t a = at(offsets(level), i), b = at(offsets(level), i + 1);
  std::vector<int64_t> shape{b - a};
  bool regular = true;
  for (int k = level + 1; k < depth && regular; ++k) {
    const std::vector<int64_t>& o = offsets(k);
    const int64_t m = a < b ? at(o, a + 1) - at(o, a) : 0;
    for (int64_t j = a; j < b && regular; ++j) regular = at(o, j + 1) - at(o, j) == m;
    shape.push_back(m);
    const int64_t next_a = a < b ? at(o, a) : 0, next_b = a < b ? at(o, b) : 0;
    a = next_a;
    b = next_b;
  }
  Nested out;
  if (regular) {
    out.tensor = elements.narrow(0, a, b - a).view(shape);
    return out;
  }
  for (int64_t j = at(offsets(level), i); j < at(offsets(level), i + 1); ++j) {
    out.children.push_back(nested_entry(c, elements, level + 1, j));
  }
  return out;
}

// Each row of a list of lists of numbers as nested_entry makes it.
std::vector<Nested> nested_rows(const Column& c, ListNulls nulls) {
  const torch::Tensor elements = list_column_elements(c, nulls);
  std::vector<Nested> rows;
  rows.reserve(static_cast<size_t>(c.size()));
  for (int64_t r = 0; r < c.size(); ++r) rows.push_back(nested_entry(c, elements, 0, r));
  return rows;
}

py::object nested_to_python(const Nested& n) {
  if (n.tensor) return py::cast(*n.tensor);
  py::list out(n.children.size());
  for (size_t k = 0; k < n.children.size(); ++k) out[k] = nested_to_python(n.children[k]);
  return std::move(out);
}

// A column read, converted as far as it can be without the GIL: tensors made, lists of byte strings left for
// to_python().
struct Converted {
  std::string name;
  std::optional<torch::Tensor> tensor;          // numbers, or lists of numbers of one length
  std::vector<torch::Tensor> tensors;           // lists of numbers of varying length, one tensor a row
  bool is_list_of_tensors = false;
  std::optional<torch::Tensor> valid;           // nulls="mask": bool, true where present
  std::vector<torch::Tensor> valids;            // nulls="mask" for lists of varying length: one a row
  std::vector<Nested> nested, nested_valid;     // lists of lists of varying shape: a row each, and their masks
  bool is_nested = false;
  std::shared_ptr<Column> bytes;                // byte strings: made into str / bytes with the GIL
};

// What read_parquet / read_csv do with a null in a column of numbers.
enum class Nulls { kRaise, kZero, kMask };

Nulls parse_nulls(const std::string& nulls) {
  if (nulls == "raise") return Nulls::kRaise;
  if (nulls == "zero") return Nulls::kZero;
  if (nulls == "mask") return Nulls::kMask;
  throw InvalidArgument("nulls='" + nulls + "': use 'raise', 'zero' or 'mask'");
}

// Whether a list column holds a null row, inner list or element.
bool list_has_nulls(const Column& c) {
  const auto any_zero = [](const std::vector<uint8_t>& v) { return std::find(v.begin(), v.end(), 0) != v.end(); };
  if (any_zero(c.validity) || any_zero(c.element_validity)) return true;
  return std::any_of(c.inner_lists.begin(), c.inner_lists.end(),
                     [&](const ListLevel& level) { return any_zero(level.validity); });
}

// A list column's lists holding, in place of its elements, whether each is present: a BOOLEAN list column of the
// same shape, whose tensors are the values' masks.
Column element_presence(const Column& c) {
  ColumnSchema s = c.schema;
  s.type = PhysicalType::kBoolean;
  s.logical = LogicalAnnotation{};
  s.int_annotation.reset();
  s.type_length = 0;
  Column out = make_column(s);
  const int64_t n = c.schema.list_depth() == 1 ? c.list_offsets.back() : c.inner_lists.back().offsets.back();
  out.as<uint8_t>() = c.element_validity.empty() ? std::vector<uint8_t>(static_cast<size_t>(n), 1) : c.element_validity;
  out.validity = c.validity;
  out.list_offsets = c.list_offsets;
  out.inner_lists = c.inner_lists;
  return out;
}

Converted convert(Column&& column, Nulls nulls, const std::string& path) {
  Converted out;
  out.name = column.schema.name;
  const ColumnSchema& s = column.schema;
  const std::string where = path + ": column '" + s.name + "'";
  if (is_byte_column(s)) {
    out.bytes = std::make_shared<Column>(std::move(column));
    return out;
  }
  if (s.is_list) {
    const bool has_nulls = list_has_nulls(column);
    const ListNulls list_nulls = nulls == Nulls::kRaise ? ListNulls::kRefuse : ListNulls::kZero;
    try {
      // One tensor when every row holds as many elements (null rows aside, which are zeros then).
      bool uniform = true;
      if (s.list_depth() == 1) {
        int64_t n = -1;
        for (int64_t r = 0; r < column.size() && uniform; ++r) {
          if (column.is_null(r) && list_nulls == ListNulls::kZero) continue;
          if (n < 0) n = column.list_size(r);
          uniform = column.list_size(r) == n;
        }
      }
      // A list of lists is one tensor when regular at every level, else a row each: a tensor when the row's lists
      // are regular, else lists of them (nested_entry).
      if (s.list_depth() > 1) {
        try {
          out.tensor = list_column_tensor(column, list_nulls);
        } catch (const InvalidArgument&) {
          if (list_nulls == ListNulls::kRefuse && has_nulls) throw;  // the null refused, not the shape
          out.is_nested = true;
          out.nested = nested_rows(column, list_nulls);
        }
      } else if (uniform) {
        out.tensor = list_column_tensor(column, list_nulls);
      } else {
        out.tensors = list_column_tensors(column, list_nulls);
        out.is_list_of_tensors = true;
      }
      if (has_nulls && nulls == Nulls::kMask) {
        const Column present = element_presence(column);
        if (out.is_nested) {
          out.nested_valid = nested_rows(present, ListNulls::kZero);
        } else if (uniform || s.list_depth() > 1) {
          out.valid = list_column_tensor(present, ListNulls::kZero);
        } else {
          out.valids = list_column_tensors(present, ListNulls::kZero);
        }
      }
    } catch (const InvalidArgument& e) {
      const std::string hint =
          has_nulls && nulls == Nulls::kRaise
              ? "; read it with nulls='zero' (nulls as 0, a null list as zeros or empty) or nulls='mask' (and a mask "
                "of the elements present)"
              : "";
      throw InvalidArgument(path + ": " + e.what() + hint);
    }
    return out;
  }
  const int64_t missing = null_count(column);
  if (missing > 0 && nulls == Nulls::kRaise) {
    throw InvalidArgument(where + " holds " + std::to_string(missing) + " null value" + (missing == 1 ? "" : "s") +
                          " (the first in row " + std::to_string(first_null(column)) +
                          "); read it with nulls='zero' (nulls as 0) or nulls='mask' (and a mask of the values present)");
  }
  if (missing > 0 && nulls == Nulls::kMask) {
    out.valid = adopt(std::vector<uint8_t>(column.validity), column.size(), torch::kBool);
  }
  out.tensor = flat_tensor(column);
  return out;
}

// Value `i` of a byte-string column (for a list column, element `i`) as Python: str for STRING columns (bytes that
// are not UTF-8 replaced by U+FFFD), for UUID columns (the canonical 8-4-4-4-12 form) and INTERVAL columns (as
// `cat` prints them: "1 year 2 months 3 days 04:05:06.789"), bytes for others.
py::object byte_value(const Column& c, int64_t i) {
  const LogicalKind kind = c.schema.logical.kind;
  if (kind == LogicalKind::kUuid || kind == LogicalKind::kInterval) return py::str(*value_text(c, i));
  const std::string_view v = c.byte_arrays().at(i);
  PyObject* item = c.schema.is_string ? PyUnicode_DecodeUTF8(v.data(), static_cast<Py_ssize_t>(v.size()), "replace")
                                      : PyBytes_FromStringAndSize(v.data(), static_cast<Py_ssize_t>(v.size()));
  if (item == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(item);
}

// The children [begin, end) of a byte-string list column's lists at `level` (1: the rows' lists' children) as a
// Python list: the elements, None for a null one, at the column's list depth; above it the inner lists, each as a
// list of its own children, None for a null one.
py::list byte_items(const Column& c, int level, int64_t begin, int64_t end) {
  py::list out(static_cast<size_t>(end - begin));
  if (level == c.schema.list_depth()) {
    for (int64_t e = begin; e < end; ++e) {
      out[static_cast<size_t>(e - begin)] = c.element_is_null(e) ? py::none() : byte_value(c, e);
    }
    return out;
  }
  const ListLevel& lists = c.inner_lists[static_cast<size_t>(level - 1)];
  for (int64_t j = begin; j < end; ++j) {
    const bool null = !lists.validity.empty() && lists.validity[static_cast<size_t>(j)] == 0;
    out[static_cast<size_t>(j - begin)] =
        null ? py::object(py::none())
             : py::object(byte_items(c, level + 1, lists.offsets[static_cast<size_t>(j)],
                                     lists.offsets[static_cast<size_t>(j) + 1]));
  }
  return out;
}

// A byte-string column as a Python list of its values, None for a null; a list column of byte strings as a list
// of lists of them (a list of lists: lists nested as deep), None for a null list or element.
py::list byte_list(const Column& c) {
  py::list out(static_cast<size_t>(c.size()));
  for (int64_t r = 0; r < c.size(); ++r) {
    if (c.is_null(r)) {
      out[static_cast<size_t>(r)] = py::none();
    } else if (!c.schema.is_list) {
      out[static_cast<size_t>(r)] = byte_value(c, r);
    } else {
      out[static_cast<size_t>(r)] =
          byte_items(c, 1, c.list_offsets[static_cast<size_t>(r)], c.list_offsets[static_cast<size_t>(r) + 1]);
    }
  }
  return out;
}

// The columns as {name: value} (and, for nulls="mask", {name: mask} of the columns with nulls).
py::object to_python(std::vector<Converted>& columns, Nulls nulls) {
  py::dict values, masks;
  for (auto& c : columns) {
    const auto rows_of = [](const std::vector<Nested>& rows) {
      py::list out(rows.size());
      for (size_t r = 0; r < rows.size(); ++r) out[r] = nested_to_python(rows[r]);
      return out;
    };
    if (c.bytes) {
      values[py::str(c.name)] = byte_list(*c.bytes);
    } else if (c.is_nested) {
      values[py::str(c.name)] = rows_of(c.nested);
      if (!c.nested_valid.empty()) masks[py::str(c.name)] = rows_of(c.nested_valid);
    } else if (c.is_list_of_tensors) {
      values[py::str(c.name)] = py::cast(c.tensors);
    } else {
      values[py::str(c.name)] = py::cast(*c.tensor);
    }
    if (c.valid) masks[py::str(c.name)] = py::cast(*c.valid);
    if (!c.valids.empty()) masks[py::str(c.name)] = py::cast(c.valids);
  }
  if (nulls == Nulls::kMask) return py::make_tuple(values, masks);
  return std::move(values);
}

std::vector<Converted> convert_table(Table&& table, Nulls nulls, const std::string& path) {
  std::vector<Converted> out;
  out.reserve(table.columns.size());
  for (auto& column : table.columns) out.push_back(convert(std::move(column), nulls, path));
  return out;
}

int thread_count(std::optional<int> threads) {
  if (threads && *threads < 0) throw InvalidArgument("threads=" + std::to_string(*threads) + ": use 1 or more, or None for every core");
  return threads.value_or(0);
}

py::object read_parquet(const std::string& path, std::optional<std::vector<std::string>> columns,
                        std::optional<std::vector<int64_t>> row_groups, std::optional<int> threads,
                        const std::string& nulls_text) {
  const Nulls nulls = parse_nulls(nulls_text);
  parquet::ReadOptions options;
  if (columns) options.columns = *columns;
  if (row_groups) options.row_groups = *row_groups;
  options.num_threads = thread_count(threads);
  std::vector<Converted> converted;
  {
    py::gil_scoped_release release;
    // A folder, a glob or a list of files reads as one table (parquet_dataset.h).
    Table table = parquet::is_dataset_spec(path) ? parquet::read_dataset(path, options) : parquet::read_table(path, options);
    converted = convert_table(std::move(table), nulls, path);
  }
  return to_python(converted, nulls);
}

py::object read_csv(const std::string& path, std::optional<std::vector<std::string>> columns,
                    std::optional<int> threads, const std::string& nulls_text) {
  const Nulls nulls = parse_nulls(nulls_text);
  CsvReadOptions options;
  if (columns) options.columns = *columns;
  options.num_threads = thread_count(threads);
  options.text_columns = true;
  std::vector<Converted> converted;
  {
    py::gil_scoped_release release;
    converted = convert_table(feedline::read_csv(path, options), nulls, path);
  }
  return to_python(converted, nulls);
}

std::string inspect_json_released(const std::string& path) {
  py::gil_scoped_release release;
  if (parquet::is_dataset_spec(path)) return parquet::dataset_json(parquet::DatasetReader(path));
  return inspect_json(path);
}

// ---------------------------------------------------------------------------------------------------------------
// Converting files

// convert_file() with the GIL released; its result as {"rows", "columns", "input_bytes", "output_bytes",
// "packed": {name: [source columns]}, "narrowed": [columns]}.
py::dict convert_released(const std::string& input, const std::string& output, std::vector<std::string> columns,
                          int64_t limit, std::vector<std::pair<std::string, std::vector<std::string>>> packs,
                          const std::string& pack_as, bool narrow_ints, const std::string& codec,
                          std::optional<int> level, int64_t row_group_rows, bool dictionary,
                          std::optional<int> threads) {
  ConvertOptions options;
  options.columns = std::move(columns);
  options.limit = limit;
  for (auto& [name, patterns] : packs) options.packs.push_back({std::move(name), std::move(patterns)});
  if (pack_as != "bytes" && pack_as != "list") {
    throw InvalidArgument("pack_as='" + pack_as + "': use 'bytes' or 'list'");
  }
  options.pack_as = pack_as == "list" ? PackAs::kList : PackAs::kBytes;
  options.narrow_ints = narrow_ints;
  options.codec = parquet::parse_codec(codec);
  options.level = level;
  options.row_group_rows = row_group_rows;
  options.dictionary = dictionary;
  options.num_threads = thread_count(threads);
  ConvertResult result;
  {
    py::gil_scoped_release release;
    result = convert_file(input, output, options);
  }
  py::list names;
  for (const ColumnSchema& s : result.schema) names.append(s.name);
  py::dict packed;
  for (const auto& [name, sources] : result.packed) packed[py::str(name)] = py::cast(sources);
  py::dict out;
  out["rows"] = result.rows;
  out["columns"] = names;
  out["input_bytes"] = result.input_bytes;
  out["output_bytes"] = result.output_bytes;
  out["packed"] = packed;
  out["narrowed"] = py::cast(result.narrowed);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// The loader

// A Python callable that may be called, copied and dropped from any thread: the GIL is taken for each.
class PythonCallable {
 public:
  // with_info: f takes a third argument, the batch's (epoch, batch, seed).
  PythonCallable(py::function f, bool with_info)
      : f_(new py::function(std::move(f)),
           [](py::function* p) {
             py::gil_scoped_acquire gil;
             delete p;
           }),
        with_info_(with_info) {}

  Example operator()(Example batch, const BatchInfo& info) const {
    py::gil_scoped_acquire gil;
    py::object result = with_info_ ? (*f_)(batch.data, batch.target, py::make_tuple(info.epoch, info.batch, info.seed))
                                   : (*f_)(batch.data, batch.target);
    py::tuple pair;
    if (py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) pair = py::tuple(result);
    if (pair.size() != 2) {
      throw py::type_error("transform must return a (features, labels) pair of tensors, not " +
                           std::string(py::str(py::type::of(result).attr("__name__"))));
    }
    return {pair[0].cast<torch::Tensor>(), pair[1].cast<torch::Tensor>()};
  }

 private:
  std::shared_ptr<py::function> f_;
  bool with_info_ = false;
};

LoaderOptions loader_options(py::dict o) {
  LoaderOptions options;
  options.batch_size(o["batch_size"].cast<int64_t>())
      .shuffle(o["shuffle"].cast<bool>())
      .drop_last(o["drop_last"].cast<bool>())
      .num_workers(o["num_workers"].cast<int64_t>())
      .persistent_workers(o["persistent_workers"].cast<bool>())
      .pin_memory(o["pin_memory"].cast<bool>())
      .prefetch_factor(o["prefetch_factor"].cast<int64_t>())
      .prefetch_blocks(o["prefetch_blocks"].cast<int64_t>())
      .seed(o["seed"].cast<uint64_t>())
      .rank(o["rank"].cast<int64_t>())
      .world_size(o["world_size"].cast<int64_t>())
      .even_shards(o["even_shards"].cast<bool>());
  if (!o["transform"].is_none()) {
    options.transform(PythonCallable(o["transform"].cast<py::function>(), o["transform_info"].cast<bool>()));
  }
  if (o.contains("mix") && !o["mix"].is_none()) options.mix(batch_mix_from(o["mix"]));
  return options;
}

// The warning an epoch of an on_error="skip" image dataset ends with when it left samples out; nothing when it
// left none. Raises when warnings are errors.
void warn_skipped(const EncodedDataset& dataset) {
  const SkippedSamples skipped = dataset.skipped();
  if (skipped.count == 0) return;
  const bool all = skipped.first.size() == static_cast<size_t>(skipped.count);
  std::string text = "feedline.DataLoader skipped " + std::to_string(skipped.count) + " sample" +
                     (skipped.count == 1 ? "" : "s") + " this epoch (on_error='skip'), which could not be made" +
                     (all ? ": " : "; the first " + std::to_string(skipped.first.size()) + ": ");
  for (size_t i = 0; i < skipped.first.size(); ++i) text += (i ? "; " : "") + skipped.first[i];
  if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) < 0) throw py::error_already_set();
}

// One pass, as a Python iterator. Dropped early (a `break`), it stops its workers without waiting for the GIL
// they may need. For an image dataset (`encoded`), the end of the pass warns of the samples it skipped.
class PyEpoch {
 public:
  explicit PyEpoch(Epoch epoch, std::shared_ptr<const EncodedDataset> encoded = nullptr)
      : epoch_(std::make_unique<Epoch>(std::move(epoch))), encoded_(std::move(encoded)) {}
  ~PyEpoch() { close(); }

  py::tuple next() {
    if (!epoch_) throw py::stop_iteration();
    std::optional<Example> batch;
    {
      py::gil_scoped_release release;
      batch = epoch_->next();
    }
    if (!batch) {
      close();
      if (encoded_) warn_skipped(*encoded_);
      throw py::stop_iteration();
    }
    return py::make_tuple(std::move(batch->data), std::move(batch->target));
  }

  void close() {
    if (!epoch_) return;
    source_samples_ = epoch_->stats().source_samples;  // kept for DataLoader.source_samples once the epoch ends
    if (PyGILState_Check()) {
      py::gil_scoped_release release;
      epoch_.reset();
    } else {
      epoch_.reset();
    }
  }

  py::dict stats() const {
    py::dict d;
    if (!epoch_) return d;
    const EpochStats& s = epoch_->stats();
    d["batches"] = s.batches;
    d["samples"] = s.samples;
    d["wait_seconds"] = s.wait_seconds;
    d["step_seconds"] = s.step_seconds;
    return d;
  }
  // A mixture's samples from each source so far this epoch, or over the whole epoch once it ended.
  std::vector<int64_t> source_samples() const { return epoch_ ? epoch_->stats().source_samples : source_samples_; }

 private:
  std::unique_ptr<Epoch> epoch_;
  std::shared_ptr<const EncodedDataset> encoded_;
  std::vector<int64_t> source_samples_;
};

class PyLoader {
 public:
  // `encoded`: the dataset when it is an image dataset, whose skipped samples each epoch counts and reports.
  PyLoader(std::shared_ptr<const Dataset> dataset, const LoaderOptions& options,
           std::shared_ptr<const EncodedDataset> encoded = nullptr)
      : loader_(std::make_unique<Loader>(std::move(dataset), options)), encoded_(std::move(encoded)) {}
  ~PyLoader() {
    if (PyGILState_Check()) {
      py::gil_scoped_release release;
      loader_.reset();
    } else {
      loader_.reset();
    }
  }

  std::unique_ptr<PyEpoch> epoch() {
    if (encoded_) encoded_->take_skipped();  // the count starts again with every epoch
    return std::make_unique<PyEpoch>(loader_->epoch(), encoded_);
  }
  // Samples left out of the epoch in progress so far, or of the last one once it ended.
  int64_t skipped() const { return encoded_ ? encoded_->skipped().count : 0; }
  int64_t len() const { return loader_->batches_per_epoch(); }
  void set_epoch(int64_t e) { loader_->set_epoch(e); }
  int64_t samples() const { return loader_->dataset().size(); }
  bool pin_memory_active() const { return loader_->pin_memory_active(); }
  std::vector<int64_t> epoch_indices(int64_t e) const { return loader_->epoch_indices(e); }

  py::dict state_dict() const {
    const LoaderState s = loader_->state_dict();
    py::dict d;
    d["version"] = s.version;
    d["epoch"] = s.epoch;
    d["batch"] = s.batch;
    d["seed"] = s.seed;
    d["world_size"] = s.world_size;
    d["batch_size"] = s.batch_size;
    d["samples"] = s.samples;
    return d;
  }

  void load_state_dict(py::dict d) {
    LoaderState s;
    const auto get = [&d](const char* key) -> py::object {
      if (!d.contains(key)) throw InvalidArgument(std::string("load_state_dict: the state has no '") + key + "'");
      return d[key];
    };
    s.version = get("version").cast<int64_t>();
    if (s.version != LoaderState::kVersion) {
      throw InvalidArgument("load_state_dict: state version " + std::to_string(s.version) + ", this feedline reads " +
                            std::to_string(LoaderState::kVersion));
    }
    s.epoch = get("epoch").cast<int64_t>();
    s.batch = get("batch").cast<int64_t>();
    s.seed = get("seed").cast<uint64_t>();
    s.world_size = get("world_size").cast<int64_t>();
    s.batch_size = get("batch_size").cast<int64_t>();
    s.samples = get("samples").cast<int64_t>();
    loader_->load_state_dict(s);
  }

 private:
  std::unique_ptr<Loader> loader_;
  std::shared_ptr<const EncodedDataset> encoded_;
};

std::unique_ptr<PyLoader> loader_from_tensors(torch::Tensor features, torch::Tensor labels, py::dict options) {
  if (!features.device().is_cpu() || !labels.device().is_cpu()) {
    throw InvalidArgument("DataLoader: tensors must be in host memory (features on " + features.device().str() +
                          ", labels on " + labels.device().str() + ")");
  }
  if (features.dim() < 1 || labels.dim() < 1 || features.size(0) != labels.size(0)) {
    throw InvalidArgument("DataLoader: features and labels must hold as many samples (first dimension: " +
                          std::to_string(features.dim() ? features.size(0) : 0) + " and " +
                          std::to_string(labels.dim() ? labels.size(0) : 0) + ")");
  }
  auto dataset = std::make_shared<TensorDataset>(features, labels, /*class_labels=*/false);
  return std::make_unique<PyLoader>(std::move(dataset), loader_options(options));
}

std::unique_ptr<PyLoader> loader_from_file(const std::string& path, const std::string& label_column,
                                           std::optional<std::vector<std::string>> feature_columns,
                                           std::vector<int64_t> shape, const std::string& mode, int64_t limit,
                                           std::optional<std::vector<int64_t>> row_groups, std::optional<int> threads,
                                           py::dict options) {
  ColumnChoice choice;
  choice.label = label_column;
  if (feature_columns) {
    choice.features = *feature_columns;
    choice.features_given = true;
  }
  if (row_groups) choice.row_groups = *row_groups;
  if (shape.size() != 3) throw InvalidArgument("DataLoader: shape must be (channels, height, width)");
  ImageShape image{shape[0], shape[1], shape[2]};
  if (image.channels < 1 || image.height < 1 || image.width < 1) {
    throw InvalidArgument("DataLoader: shape dimensions must be 1 or more");
  }
  ImageFileOptions file_options;
  file_options.columns = choice;
  file_options.shape = image;
  file_options.mode = parse_dataset_mode(mode);
  file_options.limit = limit;
  file_options.threads = thread_count(threads);
  const LoaderOptions o = loader_options(options);
  ImageFile file;
  {
    py::gil_scoped_release release;
    file = load_image_file(path, file_options);
  }
  return std::make_unique<PyLoader>(file.dataset, o);
}

// An _ImageDataset (images.cpp) served as the C++ EncodedDataset its source and steps make: decoded and
// transformed on the workers without the GIL; its shuffle blocks (row groups, shards) come with it.
std::unique_ptr<PyLoader> loader_from_images(py::object dataset, py::dict options) {
  const LoaderOptions o = loader_options(options);
  std::shared_ptr<EncodedDataset> encoded = image_loader_dataset(dataset);
  return std::make_unique<PyLoader>(encoded, o, encoded);
}

// A _Mixture (mixture.cpp): an EncodedDataset over a MixtureSource, or a MixtureDataset of tensors.
std::unique_ptr<PyLoader> loader_from_mixture(py::object mixture, py::dict options) {
  const LoaderOptions o = loader_options(options);
  auto [dataset, encoded] = mixture_loader_dataset(mixture);
  return std::make_unique<PyLoader>(std::move(dataset), o, std::move(encoded));
}

// ---------------------------------------------------------------------------------------------------------------
// Errors

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const IoError& e) {
    if (e.code() != 0) {
      // OSError(errno, text) is made into its subclass by errno: FileNotFoundError, PermissionError, ...
      py::object error = py::reinterpret_steal<py::object>(
          PyObject_CallFunction(PyExc_OSError, "is", e.code(), e.what()));
      if (!error) throw py::error_already_set();
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    } else {
      PyErr_SetString(PyExc_OSError, e.what());
    }
  }
}

}  // namespace
}  // namespace feedline::python

PYBIND11_MODULE(_feedline, m) {
  using namespace feedline;
  using namespace feedline::python;
  m.doc() = "feedline's C++ core (use the feedline package, not this module)";
  m.attr("__version__") = FEEDLINE_VERSION;

  // The exception kinds, each a subclass of the Python exception its C++ kind corresponds to.
  static py::exception<InvalidFile> invalid_file(m, "InvalidFileError", PyExc_ValueError);
  static py::exception<Unsupported> unsupported(m, "UnsupportedError", PyExc_ValueError);
  py::register_exception_translator(translate);
  py::register_exception<InvalidArgument>(m, "InvalidArgumentError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InvalidFile& e) {
      invalid_file(e.what());
    } catch (const Unsupported& e) {
      unsupported(e.what());
    }
  });

  m.def("read_parquet", &feedline::python::read_parquet, py::arg("path"), py::arg("columns") = py::none(),
        py::arg("row_groups") = py::none(), py::arg("threads") = py::none(), py::arg("nulls") = "raise");
  m.def("read_csv", &feedline::python::read_csv, py::arg("path"), py::arg("columns") = py::none(), py::arg("threads") = py::none(),
        py::arg("nulls") = "raise");
  m.def("inspect_json", &inspect_json_released, py::arg("path"));
  m.def("convert", &convert_released, py::arg("input"), py::arg("output"), py::arg("columns"),
        py::arg("limit"), py::arg("pack"), py::arg("pack_as"), py::arg("narrow_ints"), py::arg("codec"),
        py::arg("level"), py::arg("row_group_rows"), py::arg("dictionary"), py::arg("threads"));

  py::class_<PyEpoch>(m, "_Epoch")
      .def("__iter__", [](PyEpoch& e) -> PyEpoch& { return e; })
      .def("__next__", &PyEpoch::next)
      .def("close", &PyEpoch::close)
      .def("stats", &PyEpoch::stats)
      .def("source_samples", &PyEpoch::source_samples);

  py::class_<PyLoader>(m, "_Loader")
      .def("epoch", &PyLoader::epoch)
      .def("__len__", &PyLoader::len)
      .def("set_epoch", &PyLoader::set_epoch)
      .def("samples", &PyLoader::samples)
      .def("pin_memory_active", &PyLoader::pin_memory_active)
      .def("epoch_indices", &PyLoader::epoch_indices)
      .def("state_dict", &PyLoader::state_dict)
      .def("load_state_dict", &PyLoader::load_state_dict)
      .def("skipped", &PyLoader::skipped);

  bind_images(m);
  bind_remote(m);
  bind_batch_mix(m);
  bind_mixture(m);
  m.def("loader_from_images", &loader_from_images, py::arg("dataset"), py::arg("options"));
  m.def("loader_from_mixture", &loader_from_mixture, py::arg("mixture"), py::arg("options"));

  m.def("loader_from_tensors", &loader_from_tensors, py::arg("features"), py::arg("labels"), py::arg("options"));
  m.def("loader_from_file", &loader_from_file, py::arg("path"), py::arg("label_column"), py::arg("feature_columns"),
        py::arg("shape"), py::arg("mode"), py::arg("limit"), py::arg("row_groups"), py::arg("threads"),
        py::arg("options"));
}
