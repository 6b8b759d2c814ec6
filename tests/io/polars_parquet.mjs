// Parquet files from Polars' own writer (polars-parquet, through the nodejs-polars package): another producer than
// DuckDB and arrow-rs. Driven by the C++ tests, which read each file with feedline and with DuckDB
// (duckdb_parquet.mjs) and compare every cell.
//
//   node polars_parquet.mjs <npm_cache_dir> <out_dir> [rows (default 3000)]
//       writes one DataFrame of Polars' types (integers of every width and sign, floats with NaN and infinities,
//       booleans, strings, categoricals, decimals, dates, datetimes of each unit with and without a time
//       zone, times, durations, lists, lists of lists, fixed-size arrays, structs; nulls in each) to
//       <out_dir>/<name>.parquet once for each writer setup below (each codec Polars writes, small row groups and
//       pages, statistics or not), and prints each file's path, a line each. Every file holds the same table.
// Exit status 2 with a message on stderr when nodejs-polars cannot be loaded.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { tableValues, words } from './table_values.mjs';

const [cacheDir, outDir, rowsArg] = process.argv.slice(2);
const rows = Number(rowsArg ?? 3000);
if (!cacheDir || !outDir || !(rows > 0)) {
  console.error('usage: polars_parquet.mjs <npm_cache_dir> <out_dir> [rows]');
  process.exit(64);
}
let pl;
try {
  pl = createRequire(path.join(path.resolve(cacheDir), 'package.json'))('nodejs-polars');
} catch (e) {
  console.error(`nodejs-polars is missing from ${cacheDir} (scripts/install-deps.sh installs it): ${e.message}`);
  process.exit(2);
}

const { next, pick, maybe, column, float } = tableValues(rows, 54321);
const D = pl;  // its data types: pl.Int32, pl.Datetime(...), ...

// A Series of `dtype` from `values` (null where null), cast from what JavaScript holds where Polars needs it.
const series = (name, values, dtype, from) => pl.Series(name, values, from ?? dtype).cast(dtype);
// 64-bit integers (BigInt) through their decimal text, cast to Int64 or UInt64 and then to `dtype`.
const big = (name, values, dtype, int = D.Int64) =>
  pl.Series(name, values.map((v) => (v === null ? null : String(v))), D.Utf8).cast(int).cast(dtype);
// Lists through JSON, which takes lists of lists and keeps a null list null.
const fromJson = (name, values, dtype) =>
  pl.readJSON(Buffer.from(JSON.stringify(values.map((v) => ({ [name]: v })))), { format: 'json' }).getColumn(name)
    .cast(dtype);
const columns = [
  series('id', column((i) => i), D.Int32),
  series('i8', column(() => maybe(() => pick(256) - 128)), D.Int8, D.Int32),
  series('i16', column(() => maybe(() => pick(65536) - 32768)), D.Int16, D.Int32),
  series('i32', column(() => maybe(() => next() - 1073741824)), D.Int32),
  big('i64', column(() => maybe(() => BigInt(next()) * BigInt(next()) - (1n << 60n))), D.Int64),
  series('u8', column(() => maybe(() => pick(256))), D.UInt8, D.Int32),
  series('u16', column(() => maybe(() => pick(65536))), D.UInt16, D.Int32),
  series('u32', column(() => maybe(() => next() * 2 + pick(2))), D.UInt32, D.Float64),
  big('u64', column(() => maybe(() => BigInt(next()) * BigInt(next()) * 4n + BigInt(pick(4)))), D.UInt64, D.UInt64),
  series('f32', column((i) => maybe(() => Math.fround(float(i)))), D.Float32, D.Float64),
  series('f64', column((i) => maybe(() => float(i) / 3)), D.Float64),
  series('flag', column(() => maybe(() => pick(2) === 1)), D.Bool),
  series('text', column(() => maybe(() => words[pick(words.length)] + pick(1000))), D.Utf8),
  series('category', column(() => maybe(() => words[pick(4)], 5)), D.Categorical, D.Utf8),
  series('day', column(() => maybe(() => pick(80000) - 40000)), D.Date, D.Int32),
  series('ts_ms', column(() => maybe(() => next() * 1000 + pick(1000))), D.Datetime('ms'), D.Float64),
  big('ts_us_utc', column(() => maybe(() => BigInt(next()) * 1000000n + BigInt(pick(1000000)))),
      D.Datetime('us', 'UTC')),
  big('ts_ns', column(() => maybe(() => BigInt(next()) * 1000000000n + BigInt(next()))), D.Datetime('ns')),
  big('time', column(() => maybe(() => BigInt(pick(86400)) * 1000000000n + BigInt(next() % 1000000000))), D.Time),
  big('span', column(() => maybe(() => BigInt(next()) - 1000000000n)), D.Duration('us')),
  fromJson('ints', column(() => maybe(() => Array.from({ length: pick(6) }, () => maybe(() => pick(1000) - 500, 5)))),
           D.List(D.Int32)),
  fromJson('names', column(() => maybe(() => Array.from({ length: pick(4) }, () => maybe(() => words[pick(8)], 6)))),
           D.List(D.Utf8)),
  fromJson('boxes', column(() => maybe(() => Array.from({ length: pick(3) },
                                                        () => maybe(() => Array.from({ length: pick(4) },
                                                                                     () => pick(100) / 4), 4)))),
           D.List(D.List(D.Float64))),
];
let df = pl.DataFrame(columns);
// Decimals, fixed-size arrays and structs from the columns above.
df = df.withColumns(
  pl.col('i32').cast(D.Decimal(12, 3)).alias('dec12'),
  pl.col('i64').cast(D.Decimal(38, 6)).alias('dec38'),
  pl.concatList([pl.col('f32'), pl.col('f32'), pl.col('f32')]).cast(D.FixedSizeList(D.Float32, 3)).alias('embedding'),
  pl.struct([pl.col('i16').alias('x'), pl.col('text').alias('label'), pl.col('names').alias('tags')]).alias('point'),
);

const setups = {
  zstd: { compression: 'zstd' },
  snappy: { compression: 'snappy' },
  gzip: { compression: 'gzip' },
  brotli: { compression: 'brotli' },
  lz4: { compression: 'lz4' },
  uncompressed_no_statistics: { compression: 'uncompressed', statistics: false },
  // Row groups of 700 rows and pages of about 1 KB.
  small_pages: { compression: 'zstd', rowGroupSize: 700, dataPagesizeLimit: 1024, statistics: 'full' },
};

fs.mkdirSync(outDir, { recursive: true });
for (const [name, options] of Object.entries(setups)) {
  const file = path.join(outDir, `${name}.parquet`);
  df.lazy().sinkParquet(file, { ...options, maintainOrder: true }).collectSync();
  process.stdout.write(file + '\n');
}
