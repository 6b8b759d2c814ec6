#include "feedline/table.h"

#include <algorithm>
#include <string>

#include "feedline/error.h"

namespace feedline {

const char* to_string(PhysicalType type) {
  switch (type) {
    case PhysicalType::kBoolean: return "BOOLEAN";
    case PhysicalType::kInt32: return "INT32";
    case PhysicalType::kInt64: return "INT64";
    case PhysicalType::kFloat: return "FLOAT";
    case PhysicalType::kDouble: return "DOUBLE";
    case PhysicalType::kByteArray: return "BYTE_ARRAY";
    case PhysicalType::kFixedLenByteArray: return "FIXED_LEN_BYTE_ARRAY";
  }
  return "?";
}

int64_t Column::size() const {
  return std::visit([](const auto& v) { return static_cast<int64_t>(v.size()); }, values);
}

double Column::value_as_double(int64_t row) const {
  switch (schema.type) {
    case PhysicalType::kBoolean: return std::get<0>(values)[row];
    case PhysicalType::kInt32: return std::get<1>(values)[row];
    case PhysicalType::kInt64: return static_cast<double>(std::get<2>(values)[row]);
    case PhysicalType::kFloat: return std::get<3>(values)[row];
    case PhysicalType::kDouble: return std::get<4>(values)[row];
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: break;
  }
  throw InvalidArgument("column '" + schema.name + "' holds byte arrays, not numbers");
}

Column make_column(ColumnSchema schema) {
  Column c;
  switch (schema.type) {
    case PhysicalType::kBoolean: c.values.emplace<0>(); break;
    case PhysicalType::kInt32: c.values.emplace<1>(); break;
    case PhysicalType::kInt64: c.values.emplace<2>(); break;
    case PhysicalType::kFloat: c.values.emplace<3>(); break;
    case PhysicalType::kDouble: c.values.emplace<4>(); break;
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: c.values.emplace<5>(); break;
  }
  c.schema = std::move(schema);
  return c;
}

size_t Table::column_index(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].schema.name == name) return i;
  }
  throw InvalidArgument("no column named '" + std::string(name) + "'");
}

Table head(const Table& table, int64_t n) {
  if (n < 0) throw InvalidArgument("head: negative row count");
  Table out;
  out.num_rows = std::min(n, table.num_rows);
  const auto rows = static_cast<size_t>(out.num_rows);
  for (const Column& c : table.columns) {
    Column copy = make_column(c.schema);
    std::visit(
        [&](auto& dst) {
          using V = std::decay_t<decltype(dst)>;
          const V& src = std::get<V>(c.values);
          if constexpr (std::is_same_v<V, ByteArrays>) {
            for (size_t r = 0; r < rows; ++r) dst.push_back(src.at(static_cast<int64_t>(r)));
          } else {
            dst.assign(src.begin(), src.begin() + static_cast<std::ptrdiff_t>(rows));
          }
        },
        copy.values);
    if (!c.validity.empty()) copy.validity.assign(c.validity.begin(), c.validity.begin() + static_cast<std::ptrdiff_t>(rows));
    out.columns.push_back(std::move(copy));
  }
  return out;
}

}  // namespace feedline
