// Reads Parquet files into a Table: the footer and schema (parse), then every (row group, column) chunk of a read
// decoded on a pool of threads straight into the Table's vectors (read_parsed), by the reader of its column's
// shape (see chunk_reader.h for how a chunk's reading is split by job).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include "feedline/io/error.h"
#include "feedline/io/file.h"
#include "feedline/io/parquet.h"
#include "io/memory.h"
#include "io/parallel.h"
#include "io/parquet/chunk_reader.h"
#include "io/parquet/levels.h"
#include "io/parquet/limits.h"
#include "io/parquet/metadata.h"
#include "io/parquet/parsed_file.h"
#include "io/parquet/reader_internal.h"
#include "io/parquet/schema.h"
#include "io/parquet/scratch.h"
#include "io/parquet/variant.h"

namespace feedline::parquet {

using namespace detail;

std::unique_ptr<ColumnChunkReader> detail::make_chunk_reader(ChunkShape shape, const ChunkSource& source) {
  switch (shape) {
    case ChunkShape::kFlat: return make_flat_reader(source);
    case ChunkShape::kList: return make_list_reader(source);
    case ChunkShape::kNestedList: return make_nested_list_reader(source);
    case ChunkShape::kRawLevels: return make_raw_levels_reader(source);
  }
  return nullptr;
}

[[noreturn]] void detail::rethrow_with(const std::string& prefix) {
  try {
    throw;
  } catch (const Unsupported& e) {
    throw Unsupported(prefix + e.what());
  } catch (const InvalidFile& e) {
    throw InvalidFile(prefix + e.what());
  }
}

int64_t detail::file_output_budget(int64_t file_size) {
  const int64_t expanded = file_size > INT64_MAX / kMaxExpansion ? INT64_MAX : file_size * kMaxExpansion;
  return std::max(kMinOutputBudget, expanded);
}

int64_t detail::default_output_budget(int64_t file_size) {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  const int64_t memory = pages > 0 && page_size > 0 ? int64_t{pages} * page_size : 0;
  return std::max(detail::file_output_budget(file_size), memory / kMemoryShare);
}

namespace {

// "parquet-mr version 1.2.8 (build ...)" or plain "parquet-mr": whether that version is below 1.2.9.
bool is_old_parquet_mr(const std::string& created_by) {
  const std::string prefix = "parquet-mr";
  if (created_by.compare(0, prefix.size(), prefix) != 0) return false;
  const size_t v = created_by.find("version ");
  if (v == std::string::npos) return true;
  int major = 0, minor = 0, patch = 0;
  if (std::sscanf(created_by.c_str() + v + 8, "%d.%d.%d", &major, &minor, &patch) < 1) return true;
  if (major != 1) return major < 1;
  if (minor != 2) return minor < 2;
  return patch < 9;
}

// Reads the footer (and only the footer: column data is read per chunk, for the columns asked for).
ParsedFile parse(const std::string& path) {
  ParsedFile f;
  f.path = path;
  // A remote file's opening request brings its end, where the footer is: a small footer then takes no request of
  // its own.
  const int64_t footer_guess = is_remote_path(path) ? remote::options().footer_bytes : 0;
  f.file = std::make_unique<RandomAccessFile>(path, footer_guess);
  const int64_t size = f.size = f.file->size();
  if (size < 12) throw InvalidFile(path + ": not a Parquet file (" + std::to_string(size) + " bytes)");
  uint8_t head[4], tail[8];
  f.file->read_at(size - 8, 8, tail);
  // The leading magic costs a remote file a request of its own unless its end read brought it: the trailing one,
  // and the footer it closes, are the test then.
  if (!f.file->is_remote() || size <= footer_guess) {
    f.file->read_at(0, 4, head);
    if (std::memcmp(head, "PAR1", 4) != 0 && std::memcmp(head, "PARE", 4) != 0) {
      throw InvalidFile(path + ": not a Parquet file (no PAR1 magic at offset 0)");
    }
  }
  if (std::memcmp(tail + 4, "PARE", 4) == 0) {
    throw Unsupported(path + ": encrypted footer (PARE) is not supported");
  }
  if (std::memcmp(tail + 4, "PAR1", 4) != 0) {
    throw InvalidFile(path + ": no PAR1 magic at the end (offset " + std::to_string(size - 4) + "): truncated?");
  }
  uint32_t footer_len;
  std::memcpy(&footer_len, tail, 4);
  if (footer_len > static_cast<uint64_t>(size - 12)) {
    throw InvalidFile(path + ": footer length " + std::to_string(footer_len) + " exceeds the file (" +
                      std::to_string(size) + " bytes)");
  }
  f.footer_start = size - 8 - footer_len;
  try {
    std::vector<uint8_t> footer(footer_len);
    f.file->read_at(f.footer_start, footer_len, footer.data());
    thrift::CompactReader in(footer.data(), footer_len, f.footer_start);
    f.md = format::read_file_metadata(in);
  } catch (const Error&) {
    rethrow_with(path + ": footer: ");
  }
  if (f.md.encrypted) throw Unsupported(path + ": encrypted files are not supported");
  f.old_parquet_mr = is_old_parquet_mr(f.md.created_by.value_or(""));
  try {
    f.leaves = schema_leaves(f.md);
  } catch (const Error&) {
    rethrow_with(path + ": ");
  }
  // Row groups must agree with the schema and with each other.
  int64_t rows = 0;
  for (size_t g = 0; g < f.md.row_groups.size(); ++g) {
    const format::RowGroup& rg = f.md.row_groups[g];
    const std::string where = path + ": row group " + std::to_string(g) + ": ";
    if (rg.num_rows < 0) throw InvalidFile(where + "negative row count " + std::to_string(rg.num_rows));
    if (rg.columns.size() != chunk_count(f.leaves)) {
      throw InvalidFile(where + std::to_string(rg.columns.size()) + " column chunks for " +
                        std::to_string(chunk_count(f.leaves)) + " schema columns");
    }
    if (rg.num_rows > INT64_MAX - rows) throw InvalidFile(where + "row count overflows");
    rows += rg.num_rows;
  }
  // Some writers leave the footer's row count at 0 (the corpus' repeated_no_annotation.parquet): the row
  // groups, which the column data must match, are then the count. Any other disagreement is an error.
  if (f.md.num_rows == 0) f.md.num_rows = rows;
  if (rows != f.md.num_rows) {
    throw InvalidFile(path + ": footer declares " + std::to_string(f.md.num_rows) + " rows, row groups hold " +
                      std::to_string(rows));
  }
  return f;
}
// ---------------------------------------------------------------------------------------------------------

int64_t value_width(PhysicalType t) {
  switch (t) {
    case PhysicalType::kBoolean: return 1;
    case PhysicalType::kInt32:
    case PhysicalType::kFloat: return 4;
    case PhysicalType::kInt64:
    case PhysicalType::kDouble: return 8;
    case PhysicalType::kByteArray:
    case PhysicalType::kFixedLenByteArray: return 8;  // the offset
  }
  return 8;
}

// INT96 timestamps (8 bytes of nanoseconds in the day, then the Julian day as a 4-byte signed integer, as Spark
// and Impala write it; little-endian) as INT64 microseconds since the epoch, rounded down. A value beyond INT64
// microseconds wraps modulo 2^64: Spark computes the Julian microseconds of a timestamp in a wrapping 64-bit
// integer before it splits them into day and nanoseconds, so that a timestamp near the end of its range (year
// 290000, say) is written as a day before 226000 BC, and the wrap is the exact inverse (Spark reads it back so).
// Every pair that was not wrapped is within range and read exactly.
Column int96_to_micros(Column col, const Leaf& leaf) {
  const ByteArrays& raw = col.byte_arrays();
  std::vector<int64_t> micros(static_cast<size_t>(raw.size()));
  for (int64_t r = 0; r < raw.size(); ++r) {
    const std::string_view v = raw.at(r);
    if (v.size() != 12) continue;  // a null
    int64_t nanos;
    int32_t julian;
    std::memcpy(&nanos, v.data(), 8);
    std::memcpy(&julian, v.data() + 8, 4);
    constexpr int64_t kUnixEpochJulianDay = 2440588, kMicrosPerDay = 86'400'000'000;
    const int64_t floor_micros = nanos >= 0 ? nanos / 1000 : -((-(nanos + 1)) / 1000) - 1;
    const uint64_t us = static_cast<uint64_t>(static_cast<int64_t>(julian) - kUnixEpochJulianDay) *
                            static_cast<uint64_t>(kMicrosPerDay) +
                        static_cast<uint64_t>(floor_micros);
    micros[static_cast<size_t>(r)] = static_cast<int64_t>(us);
  }
  Column out = make_column(output_schema(leaf));
  out.values = std::move(micros);
  out.validity = std::move(col.validity);
  return out;
}

void check_leaf_supported(const ParsedFile& f, const Leaf& leaf) {
  if (leaf.unsupported.empty()) return;
  const std::string leaf_path = leaf.field == leaf.name ? "" : " (its leaf '" + leaf.name + "')";
  throw Unsupported(f.path + ": column '" + leaf.field + "'" + leaf_path + ": " + leaf.unsupported);
}

// Appends the byte arrays of `src` to `dst`.
void append_byte_arrays(ByteArrays* dst, const ByteArrays& src) {
  const int64_t shift = static_cast<int64_t>(dst->bytes.size());
  dst->bytes.append(src.bytes);
  for (size_t i = 1; i < src.offsets.size(); ++i) dst->offsets.push_back(src.offsets[i] + shift);
}

// Appends `part`'s offsets (one more than its lists, from 0) to `dst`'s, shifted to follow dst's last list.
// A copy, then a shift in place, rather than a push_back per row, which the compiler does not inline here: every
// list column's row groups are joined through this, and one-level lists of strings and booleans would feel it.
void append_offsets(std::vector<int64_t>* dst, const std::vector<int64_t>& part) {
  const int64_t shift = dst->back();
  const size_t at = dst->size();
  dst->insert(dst->end(), part.begin() + 1, part.end());
  int64_t* out = dst->data();
  for (size_t i = at; i < dst->size(); ++i) out[i] += shift;
}

// Appends list column `part` (the next rows) to `dst`.
void append_list(Column* dst, Column&& part) {
  const int64_t rows = dst->size(), part_rows = part.size();
  if (rows == 0) {
    *dst = std::move(part);
    return;
  }
  // Validity vectors are empty while everything is present: fill in the side that had none.
  const auto merge = [](std::vector<uint8_t>* a, int64_t a_size, std::vector<uint8_t>&& b, int64_t b_size) {
    if (a->empty() && b.empty()) return;
    if (a->empty()) a->assign(static_cast<size_t>(a_size), 1);
    if (b.empty()) {
      a->insert(a->end(), static_cast<size_t>(b_size), 1);
    } else {
      a->insert(a->end(), b.begin(), b.end());
    }
  };
  merge(&dst->validity, rows, std::move(part.validity), part_rows);
  // Each level's offsets index the next level's lists (the values, at the innermost): those counts, taken
  // before appending, shift them.
  int64_t elements = dst->list_offsets.back(), part_elements = part.list_offsets.back();
  append_offsets(&dst->list_offsets, part.list_offsets);
  for (size_t k = 0; k < dst->inner_lists.size(); ++k) {
    ListLevel& level = dst->inner_lists[k];
    ListLevel& part_level = part.inner_lists[k];
    merge(&level.validity, elements, std::move(part_level.validity), part_elements);
    elements = level.offsets.back();
    part_elements = part_level.offsets.back();
    append_offsets(&level.offsets, part_level.offsets);
  }
  merge(&dst->element_validity, elements, std::move(part.element_validity), part_elements);
  std::visit(
      [&](auto& v) {
        using V = std::decay_t<decltype(v)>;
        V& src = std::get<V>(part.values);
        if constexpr (std::is_same_v<V, ByteArrays>) {
          append_byte_arrays(&v, src);
        } else {
          v.insert(v.end(), src.begin(), src.end());
        }
      },
      dst->values);
}

// The row groups to read, in the order asked for (every one when `asked` is empty).
std::vector<size_t> select_row_groups(const ParsedFile& f, const std::vector<int64_t>& asked) {
  std::vector<size_t> groups;
  const size_t count = f.md.row_groups.size();
  if (asked.empty()) {
    for (size_t g = 0; g < count; ++g) groups.push_back(g);
    return groups;
  }
  for (const int64_t g : asked) {
    if (g < 0 || static_cast<uint64_t>(g) >= count) {
      throw InvalidArgument(f.path + ": no row group " + std::to_string(g) + " (the file has " +
                            std::to_string(count) + ")");
    }
    if (std::find(groups.begin(), groups.end(), static_cast<size_t>(g)) != groups.end()) {
      throw InvalidArgument(f.path + ": row group " + std::to_string(g) + " asked for twice");
    }
    groups.push_back(static_cast<size_t>(g));
  }
  return groups;
}

// What a read takes of a file: its leaves and row groups, in the order asked for, where each row group's rows begin
// in the table, the memory budget and the threads.
struct ReadPlan {
  std::vector<size_t> leaves;
  std::vector<size_t> groups;
  std::vector<int64_t> first_row;  // of each row group's rows in the table, then the table's row count
  int64_t num_rows = 0;
  int64_t budget = 0;
  int threads = 1;
  int page_threads = 0;  // ReadOptions::page_threads
  size_t num_groups() const { return groups.size(); }
  size_t num_chunks() const { return leaves.size() * groups.size(); }
};

// The leaves to read, in the order asked for (every one when `names` is empty).
std::vector<size_t> select_leaves(const ParsedFile& f, const std::vector<std::string>& names) {
  std::vector<size_t> selected;
  if (names.empty()) {
    for (size_t i = 0; i < f.leaves.size(); ++i) selected.push_back(i);
    return selected;
  }
  std::unordered_map<std::string, size_t> by_name;
  for (size_t i = 0; i < f.leaves.size(); ++i) by_name.emplace(f.leaves[i].name, i);
  for (const std::string& name : names) {
    auto it = by_name.find(name);
    if (it == by_name.end()) throw InvalidArgument(f.path + ": no column named '" + name + "'");
    if (std::find(selected.begin(), selected.end(), it->second) != selected.end()) {
      throw InvalidArgument(f.path + ": column '" + name + "' asked for twice");
    }
    selected.push_back(it->second);
  }
  return selected;
}

// A small hostile file must not make us allocate without bound: what the footer declares counts against the
// budget before anything is allocated.
void check_output_budget(const ParsedFile& f, const ReadPlan& plan) {
  const int64_t budget = plan.budget;
  int64_t need = 0;
  const auto add = [&](int64_t count, int64_t width) {
    if (count > (budget - need) / width) {
      throw InvalidFile(f.path + ": " + std::to_string(plan.num_rows) + " rows of " +
                        std::to_string(plan.leaves.size()) + " columns would exceed the read's memory limit of " +
                        std::to_string(budget) + " bytes");
    }
    need += count * width;
  };
  for (size_t leaf_index : plan.leaves) {
    const Leaf& leaf = f.leaves[leaf_index];
    add(plan.num_rows, value_width(leaf.schema.type) + (leaf.max_def ? 1 : 0));
    if (leaf.variant) {  // its leaves' level entries, each with levels and a value
      for (const Leaf& part : leaf.variant->parts) {
        for (size_t g : plan.groups) {
          const auto& md = f.md.row_groups[g].columns[part.index].meta_data;
          if (md && md->num_values > 0) add(md->num_values, value_width(part.schema.type) + 3);
        }
      }
      continue;
    }
    if (leaf.max_rep == 0) continue;
    for (size_t g : plan.groups) {  // level entries: a value, scratch, a row start or inner lists (see list_column.cpp)
      const auto& md = f.md.row_groups[g].columns[leaf.index].meta_data;
      const int64_t per_entry = leaf.max_rep == 1 ? 8 : 4 + 9 * (leaf.max_rep - 1);
      if (md && md->num_values > 0) add(md->num_values, value_width(leaf.schema.type) + per_entry);
    }
  }
}

ReadPlan plan_read(const ParsedFile& f, const ReadOptions& options) {
  ReadPlan plan;
  plan.leaves = select_leaves(f, options.columns);
  for (size_t leaf : plan.leaves) check_leaf_supported(f, f.leaves[leaf]);
  plan.groups = select_row_groups(f, options.row_groups);
  plan.first_row.assign(plan.num_groups() + 1, 0);
  for (size_t k = 0; k < plan.num_groups(); ++k) {
    plan.first_row[k + 1] = plan.first_row[k] + f.md.row_groups[plan.groups[k]].num_rows;
  }
  plan.num_rows = plan.first_row.back();
  if (options.max_output_bytes < 0) throw InvalidArgument("max_output_bytes must not be negative");
  plan.budget = options.max_output_bytes > 0 ? options.max_output_bytes : default_output_budget(f.size);
  check_output_budget(f, plan);
  plan.threads = resolve_threads(options.num_threads);
  if (options.page_threads < 0) throw InvalidArgument("page_threads must not be negative");
  plan.page_threads = options.page_threads;
  return plan;
}

// Where a read's chunks go: the table's columns, or, for byte arrays and lists, parts (a column per chunk) joined
// afterwards (byte arrays straight into the column when there is one row group).
struct ReadOutput {
  Table table;
  std::vector<Column> parts;
  std::vector<size_t> part_of;  // each column's first part over the row groups' count; SIZE_MAX: no parts
  // Columns read row group after row group into the column itself, by one task (see in_order_column).
  std::vector<uint8_t> in_order;
  size_t num_groups = 0;
  // A flat column's validity is made (all valid) by the first chunk that has a null: most optional columns have none.
  std::unique_ptr<std::once_flag[]> validity_made;
  bool has_parts(size_t c) const { return part_of[c] != SIZE_MAX; }
  Column& part(size_t c, size_t k) { return parts[part_of[c] * num_groups + k]; }
};

// Whether a column of several row groups is read row group after row group into the column itself, by one task,
// rather than a part a row group joined afterwards: flat variable-length byte arrays, whose join would copy every
// value again (and take the column's memory twice).
bool in_order_column(const Leaf& leaf) {
  return leaf.max_rep == 0 && !leaf.variant && leaf.physical_type == format::type::kByteArray;
}

// Room for an in-order column's values made at once: an offset a row, and, where its chunks' metadata bounds
// their bytes (no dictionary or DELTA_BYTE_ARRAY encoding: no value longer than its page holds), the bytes their
// pages take uncompressed, reserved and not faulted in (each chunk populates what its page headers say it needs).
void reserve_in_order(const ParsedFile& f, const ReadPlan& plan, const Leaf& leaf, ByteArrays* out) {
  out->offsets.reserve(static_cast<size_t>(plan.num_rows) + 1);
  int64_t bound = 0;
  for (const size_t g : plan.groups) {
    const auto& md = f.md.row_groups[g].columns[leaf.index].meta_data;
    if (!md || md->total_uncompressed_size < 0) return;
    for (const int32_t e : md->encodings) {
      if (e != format::encoding::kPlain && e != format::encoding::kRle && e != format::encoding::kBitPacked &&
          e != format::encoding::kDeltaLengthByteArray) {
        return;
      }
    }
    if (md->total_uncompressed_size > plan.budget - bound) return;
    bound += md->total_uncompressed_size;
  }
  out->bytes.reserve(static_cast<size_t>(bound) + kPadding);
}

ReadOutput make_output(const ParsedFile& f, const ReadPlan& plan) {
  ReadOutput out;
  const size_t columns = plan.leaves.size();
  out.table.num_rows = plan.num_rows;
  out.table.columns.resize(columns);
  // Allocate (and so touch) the output in parallel: for wide tables this is a good share of the work.
  parallel_for(columns, plan.threads, [&](size_t c) {
    const Leaf& leaf = f.leaves[plan.leaves[c]];
    Column& col = out.table.columns[c];
    col = make_column(leaf.schema);
    if (leaf.max_rep > 0) return;  // lists are built per chunk
    std::visit(
        [&](auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (!std::is_same_v<V, ByteArrays>) resize_populated(v, static_cast<size_t>(plan.num_rows));
        },
        col.values);
  });
  out.num_groups = plan.num_groups();
  out.part_of.assign(columns, SIZE_MAX);
  out.in_order.assign(columns, 0);
  size_t count = 0;
  for (size_t c = 0; c < columns; ++c) {
    const Leaf& leaf = f.leaves[plan.leaves[c]];
    const bool bytes = value_index(leaf.schema.type) == value_index(PhysicalType::kByteArray);
    if (out.num_groups > 1 && in_order_column(leaf)) {
      out.in_order[c] = 1;
      reserve_in_order(f, plan, leaf, &std::get<ByteArrays>(out.table.columns[c].values));
    } else if (leaf.max_rep > 0 || (bytes && out.num_groups > 1)) {
      out.part_of[c] = count++;
    }
  }
  out.parts.resize(count * out.num_groups);
  for (size_t c = 0; c < columns; ++c) {
    if (!out.has_parts(c)) continue;
    for (size_t k = 0; k < out.num_groups; ++k) out.part(c, k) = make_column(f.leaves[plan.leaves[c]].schema);
  }
  out.validity_made.reset(new std::once_flag[columns]);
  return out;
}

// The compressed bytes of each chunk of the read, column-major (a column's row groups back to back).
std::vector<int64_t> chunk_bytes(const ParsedFile& f, const ReadPlan& plan) {
  const size_t num_groups = plan.num_groups();
  std::vector<int64_t> bytes(plan.num_chunks());
  for (size_t task = 0; task < bytes.size(); ++task) {
    const format::RowGroup& rg = f.md.row_groups[plan.groups[task % num_groups]];
    const auto& md = rg.columns[f.leaves[plan.leaves[task / num_groups]].index].meta_data;
    bytes[task] = md ? std::max<int64_t>(md->total_compressed_size, 0) : 0;
  }
  return bytes;
}

// How many threads decode each chunk's pages (chunks column-major, as read_parsed's tasks): as many as its share of
// the bytes to read makes of the threads (so that a file of one large column and small others, or of few row
// groups, uses them all), if it is large enough for threads to pay; or as many as ReadOptions::page_threads says.
std::vector<int> chunk_page_threads(const ParsedFile& f, const ReadPlan& plan, const std::vector<int64_t>& bytes) {
  const size_t num_groups = plan.num_groups();
  int64_t total_bytes = 0;
  for (const int64_t b : bytes) total_bytes += b;
  // A column of variable-length byte arrays is read by one task (in_order_column): where it holds more than a
  // thread's share of the bytes, its large chunks have every thread, which join it as they finish the others.
  std::vector<int64_t> column_bytes(plan.leaves.size(), 0);
  for (size_t task = 0; task < bytes.size(); ++task) column_bytes[task / num_groups] += bytes[task];
  const int forced = plan.page_threads;
  std::vector<int> threads(bytes.size(), 1);
  for (size_t task = 0; task < bytes.size(); ++task) {
    if (forced > 0) {
      threads[task] = forced;
    } else if (plan.threads > 1 && bytes[task] >= kMinParallelChunkBytes) {
      const double share = static_cast<double>(bytes[task]) / static_cast<double>(total_bytes);
      threads[task] = std::clamp(static_cast<int>(share * plan.threads + 0.5), 1, plan.threads);
      const auto column = static_cast<double>(column_bytes[task / num_groups]);
      if (in_order_column(f.leaves[plan.leaves[task / num_groups]]) && column * plan.threads >= total_bytes) {
        threads[task] = plan.threads;
      }
    }
  }
  return threads;
}

// A VARIANT column's chunk (c, k) into its place in `out`, its validity (when not null) into `validity`. Returns
// the number of nulls.
int64_t read_variant_into(const ParsedFile& f, const Leaf& leaf, const format::RowGroup& rg, int64_t budget,
                          size_t c, size_t k, ReadOutput* out, uint8_t* validity) {
  Column chunk = read_variant_chunk(f, leaf, rg, budget);
  if (leaf.max_rep > 0) {  // a list of variants, joined as the other lists' chunks are
    out->part(c, k) = std::move(chunk);
  } else if (out->has_parts(c)) {
    out->part(c, k).values = std::move(chunk.values);
  } else {
    out->table.columns[c].values = std::move(chunk.values);
  }
  if (validity == nullptr) return 0;
  std::copy(chunk.validity.begin(), chunk.validity.end(), validity);
  return rg.num_rows - count_present(validity, rg.num_rows);
}

// Reads chunk (c, k), column c's row group k, into `out` (an in-order column's after its row group k - 1), its pages
// on `page_threads` threads where they can decode apart.
void read_chunk(const ParsedFile& f, const ReadPlan& plan, size_t c, size_t k, int page_threads, ReadOutput* out) {
  const Leaf& leaf = f.leaves[plan.leaves[c]];
  Column& col = out->table.columns[c];
  const format::RowGroup& rg = f.md.row_groups[plan.groups[k]];
  const int64_t first = plan.first_row[k];
  // A flat column chunk's validity goes to the thread's scratch, and into the column (made all valid, once)
  // only when the chunk has nulls.
  uint8_t* validity = nullptr;
  if (leaf.max_def > 0 && leaf.max_rep == 0) {
    std::vector<uint8_t>& v = scratch().validity;
    if (v.size() < static_cast<size_t>(rg.num_rows)) v.resize(static_cast<size_t>(rg.num_rows));
    validity = v.data();
  }
  std::unique_ptr<ColumnChunkReader> reader;
  try {
    int64_t nulls = 0;
    if (leaf.variant) {
      nulls = read_variant_into(f, leaf, rg, plan.budget, c, k, out, validity);
    } else {
      const ChunkSource source{f, leaf, rg.columns[leaf.index], rg.num_rows, plan.budget, page_threads};
      const ChunkShape shape = column_shape(leaf);
      reader = make_chunk_reader(shape, source);
      ChunkTarget target;
      target.validity = validity;
      if (shape != ChunkShape::kFlat) {
        target.list = &out->part(c, k);
      } else {
        std::visit(
            [&](auto& v) {
              using V = std::decay_t<decltype(v)>;
              if constexpr (std::is_same_v<V, ByteArrays>) {
                target.bytes = &std::get<ByteArrays>(out->has_parts(c) ? out->part(c, k).values : col.values);
              } else {
                target.values = v.data() + first;
              }
            },
            col.values);
      }
      reader->read(&target);
      nulls = target.nulls;
    }
    if (nulls > 0 && validity != nullptr) {
      std::call_once(out->validity_made[c], [&] {
        reserve_populated(col.validity, static_cast<size_t>(plan.num_rows));
        col.validity.assign(static_cast<size_t>(plan.num_rows), 1);
      });
      std::memcpy(col.validity.data() + first, validity, static_cast<size_t>(rg.num_rows));
    }
  } catch (const Error&) {
    std::string where = f.path + ": column '" + leaf.name + "', row group " + std::to_string(plan.groups[k]);
    if (reader && reader->page_offset() >= 0) where += ", page at offset " + std::to_string(reader->page_offset());
    rethrow_with(where + ": ");
  }
}

// The read's tasks, by their first chunk (column-major, as chunk_page_threads): a chunk each, but one an in-order
// column, and those first, the largest first, so that the other threads are not left waiting on one at the end.
std::vector<size_t> task_order(const ReadPlan& plan, const ReadOutput& out, const std::vector<int64_t>& bytes) {
  const size_t groups = plan.num_groups();
  std::vector<std::pair<int64_t, size_t>> whole;  // (the column's bytes, task)
  std::vector<size_t> tasks;
  for (size_t c = 0; c < plan.leaves.size(); ++c) {
    if (!out.in_order[c]) {
      for (size_t k = 0; k < groups; ++k) tasks.push_back(c * groups + k);
      continue;
    }
    whole.emplace_back(std::accumulate(bytes.begin() + c * groups, bytes.begin() + (c + 1) * groups, int64_t{0}),
                       c * groups);
  }
  std::stable_sort(whole.begin(), whole.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<size_t> order;
  for (const auto& w : whole) order.push_back(w.second);
  order.insert(order.end(), tasks.begin(), tasks.end());
  return order;
}

// Joins column c's byte array parts, in row group order, into the column.
void join_byte_arrays(size_t c, int64_t num_rows, ReadOutput* out) {
  ByteArrays& dst = std::get<ByteArrays>(out->table.columns[c].values);
  size_t total = 0;
  for (size_t k = 0; k < out->num_groups; ++k) total += std::get<ByteArrays>(out->part(c, k).values).bytes.size();
  reserve_populated(dst.bytes, total);
  reserve_populated(dst.offsets, static_cast<size_t>(num_rows) + 1);
  for (size_t k = 0; k < out->num_groups; ++k) {
    ByteArrays& part = std::get<ByteArrays>(out->part(c, k).values);
    append_byte_arrays(&dst, part);
    release_memory(part);
  }
}

// The columns made whole: their parts joined, INT96 timestamps made microseconds.
void finish_columns(const ParsedFile& f, const ReadPlan& plan, ReadOutput* out) {
  for (size_t c = 0; c < plan.leaves.size(); ++c) {
    Column& col = out->table.columns[c];
    const Leaf& leaf = f.leaves[plan.leaves[c]];
    if (leaf.max_rep > 0) {
      for (size_t k = 0; k < out->num_groups; ++k) append_list(&col, std::move(out->part(c, k)));
      continue;
    }
    if (out->has_parts(c)) join_byte_arrays(c, plan.num_rows, out);
    if (leaf.int96) col = int96_to_micros(std::move(col), leaf);
  }
}

// Where a chunk's pages begin: its dictionary page where one comes first, else its first data page.
int64_t chunk_start(const format::ColumnMetaData& md) {
  int64_t start = md.data_page_offset;
  if (md.dictionary_page_offset && *md.dictionary_page_offset > 0 && *md.dictionary_page_offset < start) {
    start = *md.dictionary_page_offset;
  }
  return start;
}

// A remote file's chunks of the read, asked for at once (merged where near, in parallel) before the threads read
// them one by one. The byte ranges are the ones the page walk reads (PageWalk::load); a range the footer puts
// outside the file is left to that walk, which says so.
void prefetch_chunks(const ParsedFile& f, const ReadPlan& plan, bool ahead) {
  if (!f.file->is_remote()) return;
  std::vector<remote::ByteRange> ranges;
  const auto add = [&](const format::ColumnChunk& chunk) {
    if (!chunk.meta_data) return;
    const format::ColumnMetaData& md = *chunk.meta_data;
    const int64_t start = chunk_start(md);
    int64_t length = std::max<int64_t>(md.total_compressed_size, 0);
    if (f.old_parquet_mr) length += kMaxDictionaryHeaderBytes;
    if (start < 4 || start >= f.footer_start) return;
    ranges.push_back({start, std::min(length, f.footer_start - start)});
  };
  for (const size_t leaf_index : plan.leaves) {
    const Leaf& leaf = f.leaves[leaf_index];
    for (const size_t g : plan.groups) {
      const format::RowGroup& rg = f.md.row_groups[g];
      if (leaf.variant) {
        for (const Leaf& part : leaf.variant->parts) add(rg.columns[part.index]);
      } else {
        add(rg.columns[leaf.index]);
      }
    }
  }
  f.file->prefetch(ranges, ahead);
}

// What read_table reads, of a file parse() has read the footer of. Only reads `f` (its file through pread), so
// several threads may call it on one ParsedFile at once.
Table read_parsed(const ParsedFile& f, const ReadOptions& options) {
  const ReadPlan plan = plan_read(f, options);
  prefetch_chunks(f, plan, /*ahead=*/false);
  ReadOutput out = make_output(f, plan);
  const std::vector<int64_t> bytes = chunk_bytes(f, plan);
  const std::vector<int> page_threads = chunk_page_threads(f, plan, bytes);
  const std::vector<size_t> tasks = task_order(plan, out, bytes);
  const size_t groups = plan.num_groups();
  parallel_for(tasks.size(), plan.threads, [&](size_t i) {
    const size_t c = tasks[i] / groups;
    if (!out.in_order[c]) {
      read_chunk(f, plan, c, tasks[i] % groups, page_threads[tasks[i]], &out);
      return;
    }
    for (size_t k = 0; k < groups; ++k) read_chunk(f, plan, c, k, page_threads[c * groups + k], &out);
  });
  finish_columns(f, plan, &out);
  return std::move(out.table);
}

// A chunk's codec as ColumnChunkInfo gives it: its name in lowercase ("zstd").
std::string codec_label(int32_t codec) {
  std::string name = format::codec_name(codec);
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return name;
}

// A VARIANT column's chunks in a row group, as one: the codec of its metadata's, every encoding, the sizes summed;
// no statistics (its values are the JSON text made of them).
ColumnChunkInfo variant_chunk_info(const format::RowGroup& rg, const VariantShape& shape) {
  ColumnChunkInfo ci;
  for (const Leaf& part : shape.parts) {
    const format::ColumnChunk& chunk = rg.columns[part.index];
    if (!chunk.meta_data) continue;
    const format::ColumnMetaData& md = *chunk.meta_data;
    if (ci.codec.empty()) ci.codec = codec_label(md.codec);
    for (int32_t e : md.encodings) {
      const std::string name = format::encoding_name(e);
      if (std::find(ci.encodings.begin(), ci.encodings.end(), name) == ci.encodings.end()) ci.encodings.push_back(name);
    }
    ci.compressed_bytes += md.total_compressed_size;
    ci.uncompressed_bytes += md.total_uncompressed_size;
    ci.offset = ci.offset < 0 ? chunk_start(md) : std::min(ci.offset, chunk_start(md));
  }
  return ci;
}

FileInfo file_info(const ParsedFile& f) {
  FileInfo info;
  info.num_rows = f.md.num_rows;
  for (const Leaf& leaf : f.leaves) {
    if (leaf.unsupported.empty()) {
      info.schema.push_back(output_schema(leaf));
      if (!leaf.note.empty()) info.notes.emplace_back(leaf.name, leaf.note);
    } else {
      info.unsupported_columns.emplace_back(leaf.name, leaf.unsupported);
    }
  }
  for (const format::KeyValue& kv : f.md.key_value_metadata)
    info.key_value_metadata.emplace_back(kv.key, kv.value.value_or(""));
  info.created_by = f.md.created_by.value_or("");
  for (const format::RowGroup& rg : f.md.row_groups) {
    RowGroupInfo rgi;
    rgi.num_rows = rg.num_rows;
    for (const Leaf& leaf : f.leaves) {
      if (!leaf.unsupported.empty()) continue;
      if (leaf.variant) {
        rgi.columns.push_back(variant_chunk_info(rg, *leaf.variant));
        continue;
      }
      const format::ColumnChunk& chunk = rg.columns[leaf.index];
      ColumnChunkInfo ci;
      if (chunk.meta_data) {
        const format::ColumnMetaData& md = *chunk.meta_data;
        ci.codec = codec_label(md.codec);
        for (int32_t e : md.encodings) ci.encodings.emplace_back(format::encoding_name(e));
        ci.compressed_bytes = md.total_compressed_size;
        ci.uncompressed_bytes = md.total_uncompressed_size;
        ci.offset = chunk_start(md);
        if (md.statistics && !leaf.int96) {  // INT96 has no defined sort order
          const format::Statistics& s = *md.statistics;
          ci.null_count = s.null_count.value_or(-1);
          if (s.min_value && s.max_value) {
            ci.min = *s.min_value;
            ci.max = *s.max_value;
          } else if (s.min && s.max && legacy_statistics_usable(leaf)) {
            ci.min = *s.min;
            ci.max = *s.max;
          }
        }
      }
      rgi.columns.push_back(std::move(ci));
    }
    info.row_groups.push_back(std::move(rgi));
  }
  return info;
}

}  // namespace

struct FileReader::Impl {
  explicit Impl(const std::string& path) : file(parse(path)) {}
  const ParsedFile file;
  // info() is made on first use: read() does not need it, and for a wide file of many row groups it is a copy of
  // every chunk's statistics.
  std::once_flag info_once;
  FileInfo info;
};

FileReader::FileReader(const std::string& path) : impl_(std::make_unique<Impl>(path)) {}
FileReader::~FileReader() = default;
FileReader::FileReader(FileReader&&) noexcept = default;
FileReader& FileReader::operator=(FileReader&&) noexcept = default;

const std::string& FileReader::path() const { return impl_->file.path; }

const FileInfo& FileReader::info() const {
  std::call_once(impl_->info_once, [this] { impl_->info = file_info(impl_->file); });
  return impl_->info;
}

Table FileReader::read(const ReadOptions& options) const { return read_parsed(impl_->file, options); }

void FileReader::prefetch(const ReadOptions& options) const {
  if (impl_->file.file->is_remote()) prefetch_chunks(impl_->file, plan_read(impl_->file, options), /*ahead=*/true);
}

bool FileReader::is_remote() const { return impl_->file.file->is_remote(); }

Table read_table(const std::string& path, const ReadOptions& options) { return FileReader(path).read(options); }

FileInfo read_file_info(const std::string& path) { return FileReader(path).info(); }

}  // namespace feedline::parquet
