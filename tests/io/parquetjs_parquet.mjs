// Parquet files from parquet.js (the @dsnp/parquetjs package, the maintained fork of ironSource's parquetjs), a
// writer in plain JavaScript with the older layouts: lists as bare repeated fields (no LIST group), repeated groups
// of structs, converted types alone (no logical types), INT96 as a plain 96-bit integer, INTERVAL, data pages v1 or
// v2. (Not BSON, which it writes too: DuckDB refuses a file with a BSON column.) Driven by the C++ tests, which read
// each file with feedline and with DuckDB (duckdb_parquet.mjs) and compare every cell.
//
//   node parquetjs_parquet.mjs <npm_cache_dir> <out_dir> [rows (default 3000)] [rle]
//       writes one table (integers of each width and sign, floats with NaN and infinities, booleans, strings,
//       bytes, ENUM, JSON, dates, times, timestamps, INTERVAL, decimals, repeated fields, repeated groups,
//       an optional group; nulls in each optional column) to <out_dir>/<name>.parquet once for each writer setup
//       below (data pages v1 and v2, each codec parquet.js writes, small pages and row groups, page indexes and
//       Bloom filters), and prints each file's path, a line each. Every file holds the same table.
// Exit status 2 with a message on stderr when @dsnp/parquetjs cannot be loaded.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { tableValues, words } from './table_values.mjs';

const [cacheDir, outDir, rowsArg] = process.argv.slice(2);
const rows = Number(rowsArg ?? 3000);
if (!cacheDir || !outDir || !(rows > 0)) {
  console.error('usage: parquetjs_parquet.mjs <npm_cache_dir> <out_dir> [rows]');
  process.exit(64);
}
let parquet;
try {
  parquet = createRequire(path.join(path.resolve(cacheDir), 'package.json'))('@dsnp/parquetjs');
} catch (e) {
  console.error(`@dsnp/parquetjs is missing from ${cacheDir} (scripts/install-deps.sh installs it): ${e.message}`);
  process.exit(2);
}

const { next, pick, maybe, float } = tableValues(rows, 24680);
const day = 86400000;
// A decimal's unscaled value as the 6 bytes of its big-endian two's complement, as FIXED_LEN_BYTE_ARRAY(6) holds it.
const decimalBytes = (v) => {
  const b = Buffer.alloc(6);
  let u = BigInt.asUintN(48, v);
  for (let i = 5; i >= 0; --i, u >>= 8n) b[i] = Number(u & 0xffn);
  return b;
};

// The rows, made once: a field left out (undefined) is null; a repeated field left out is an empty list.
const table = Array.from({ length: rows }, (_, i) => {
  const row = {
    id: i,
    i8: maybe(() => pick(256) - 128),
    u8: maybe(() => pick(256)),
    i16: maybe(() => pick(65536) - 32768),
    u32: maybe(() => next()),  // (parquet.js writes UINT_32 as a signed int32: values from 2^31 fail)
    i64: maybe(() => BigInt(next()) * BigInt(next()) - (1n << 60n)),
    u64: maybe(() => BigInt(next()) * BigInt(next()) + BigInt(pick(4))),  // (and UINT_64 as a signed int64)
    i96: maybe(() => next() * 1024 + pick(1024)),  // (parquet.js takes numbers, writes 8 bytes and a zero high word)
    f32: maybe(() => Math.fround(float(i))),
    f64: maybe(() => float(i) / 3),
    flag: maybe(() => pick(2) === 1),
    text: maybe(() => words[pick(words.length)] + pick(1000)),
    category: maybe(() => ['red', 'green', 'blue'][pick(3)]),
    blob: maybe(() => Buffer.from(Array.from({ length: pick(9) }, () => pick(256)))),
    doc: maybe(() => ({ k: pick(100), s: words[pick(words.length)] })),
    day: maybe(() => new Date((pick(80000) - 40000) * day)),
    time_ms: maybe(() => pick(day)),
    time_us: maybe(() => BigInt(pick(day)) * 1000n + BigInt(pick(1000))),
    ts_ms: maybe(() => new Date(next() * 1000 + pick(1000))),
    ts_us: maybe(() => BigInt(next()) * 1000000n + BigInt(pick(1000000))),
    // (no part 0: parquet.js refuses an INTERVAL with one)
    span: maybe(() => ({ months: pick(100) + 1, days: pick(30) + 1, milliseconds: pick(day) + 1 })),
    price: maybe(() => (next() - 1073741824) / 16),  // (a number, scaled by parquet.js: sixteenths stay exact)
    amount: maybe(() => decimalBytes(BigInt(next()) * BigInt(pick(50000)) - (1n << 44n))),
    colours: Array.from({ length: pick(4) }, () => ['red', 'green', 'blue', 'é'][pick(4)]),
    scores: Array.from({ length: pick(3) }, () => pick(1000)),
    stock: Array.from({ length: pick(3) },
                      () => ({ price: pick(10000) / 8, quantity: maybe(() => BigInt(pick(500))) })),
    place: maybe(() => ({ x: pick(1000) - 500, name: maybe(() => words[pick(words.length)]) })),
  };
  for (const key of Object.keys(row)) if (row[key] === null) delete row[key];
  if (row.place && row.place.name === null) delete row.place.name;
  for (const s of row.stock) if (s.quantity === null) delete s.quantity;
  return row;
});

// The schema, with `fields` of every column given the options of a setup.
const schemaFor = ({ compression, intEncoding }) => {
  const opt = (type, more = {}) => ({ type, optional: true, compression, ...more });
  const int = (type, bits) => opt(type, intEncoding ? { encoding: 'RLE', typeLength: bits } : {});
  return new parquet.ParquetSchema({
    id: { type: 'INT32', compression, ...(intEncoding ? { encoding: 'RLE', typeLength: 12 } : {}) },
    i8: opt('INT_8'),
    u8: int('UINT_8', 8),
    i16: opt('INT_16'),
    u32: int('UINT_32', 32),
    i64: opt('INT64'),
    u64: opt('UINT_64'),
    i96: opt('INT96'),
    f32: opt('FLOAT'),
    f64: opt('DOUBLE'),
    flag: opt('BOOLEAN'),
    text: opt('UTF8'),
    category: opt('ENUM'),
    blob: opt('BYTE_ARRAY'),
    doc: opt('JSON'),
    day: opt('DATE'),
    time_ms: opt('TIME_MILLIS'),
    time_us: opt('TIME_MICROS'),
    ts_ms: opt('TIMESTAMP_MILLIS'),
    ts_us: opt('TIMESTAMP_MICROS'),
    span: opt('INTERVAL'),
    price: opt('DECIMAL', { precision: 18, scale: 4 }),
    amount: opt('DECIMAL', { precision: 14, scale: 3, typeLength: 6 }),
    colours: { type: 'UTF8', repeated: true, compression },
    scores: { type: 'INT32', repeated: true, compression },
    stock: { repeated: true, fields: { price: { type: 'DOUBLE', compression }, quantity: opt('INT64') } },
    place: { optional: true, fields: { x: { type: 'INT32', compression }, name: opt('UTF8') } },
  });
};

// Writer setups: [file name, column options, writer options].
const setups = [
  ['v2_uncompressed', {}, {}],
  ['v1_snappy', { compression: 'SNAPPY' }, { useDataPageV2: false }],
  ['v2_gzip_small_pages', { compression: 'GZIP' }, { pageSize: 100, rowGroupSize: 700 }],
  ['v1_brotli', { compression: 'BROTLI' }, { useDataPageV2: false, rowGroupSize: 1000 }],
  ['v2_indexes_bloom_filters', {}, { pageSize: 300, pageIndex: true,
    bloomFilters: [{ column: 'text', numFilterBytes: 1024 }, { column: 'i64', numFilterBytes: 1024 }] }],
];
// With `rle` after the row count, the files that no reader should read instead: integers RLE-encoded (the format
// defines RLE values for booleans alone; the bit width parquet.js packs them with is nowhere in the file).
const refused = [
  ['v1_rle_ints', { intEncoding: true }, { useDataPageV2: false }],
  ['v2_rle_ints', { intEncoding: true }, {}],
];

fs.mkdirSync(outDir, { recursive: true });
for (const [name, columnOptions, writerOptions] of process.argv[5] === 'rle' ? refused : setups) {
  const file = path.join(outDir, `${name}.parquet`);
  const writer = await parquet.ParquetWriter.openFile(schemaFor(columnOptions), file, writerOptions);
  for (const row of table) await writer.appendRow(row);
  await writer.close();
  console.log(file);
}
