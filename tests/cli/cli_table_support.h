// Tables that the tests of the `feedline` executable write as their data: the tiny dataset of make_idx_dir in
// another shape, and small colour images of four classes.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <variant>

#include "feedline/dataset/dataset.h"
#include "feedline/io/idx.h"
#include "feedline/io/table.h"

namespace feedline::testing {

// The tiny dataset of make_idx_dir as a table of another shape: `id`, a text column `note` (which the CSV
// reader cannot parse: reading it would fail), the label as `digit`, then `px0..px783`.
inline Table renamed_table(const std::string& idx, const std::string& prefix) {
  const Table pixels = image_split_to_table(read_idx_split(idx + "/" + prefix + "-images-idx3-ubyte",
                                                           idx + "/" + prefix + "-labels-idx1-ubyte"));
  Table t;
  t.num_rows = pixels.num_rows;
  Column id = make_column(ColumnSchema{"id"});
  ColumnSchema note_schema{"note", PhysicalType::kByteArray};
  note_schema.is_string = true;
  Column note = make_column(note_schema);
  for (int64_t r = 0; r < t.num_rows; ++r) {
    id.as<int64_t>().push_back(r);
    std::get<ByteArrays>(note.values).push_back("sample " + std::to_string(r));
  }
  t.columns = {id, note};
  for (size_t c = 0; c < pixels.columns.size(); ++c) {
    Column col = pixels.columns[c];
    col.schema.name = c == 0 ? "digit" : "px" + std::to_string(c - 1);
    t.columns.push_back(std::move(col));
  }
  return t;
}

// `count` 3x8x8 images of 4 classes, `y` then `v0..v191` (channel-major): class c < 3 brightens channel c, class 3
// the first pixel of every row in all channels.
inline Table colour_table(int64_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  Table t;
  t.num_rows = count;
  t.columns.push_back(make_column(ColumnSchema{"y"}));
  for (int i = 0; i < 192; ++i) t.columns.push_back(make_column(ColumnSchema{"v" + std::to_string(i)}));
  for (int64_t r = 0; r < count; ++r) {
    const int64_t y = r % 4;
    t.columns[0].as<int64_t>().push_back(y);
    for (int i = 0; i < 192; ++i) {
      int64_t v = static_cast<int64_t>(gen() % 60);
      if (y < 3 && i / 64 == y) v += 150;
      if (y == 3 && i % 8 == 0) v = 250;
      t.columns[static_cast<size_t>(1 + i)].as<int64_t>().push_back(v);
    }
  }
  return t;
}

}  // namespace feedline::testing
