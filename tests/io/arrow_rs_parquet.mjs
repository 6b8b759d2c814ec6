// Parquet files from another producer than DuckDB: arrow-rs's writer (the Rust `parquet` crate, as parquet-wasm
// builds it for WebAssembly), fed Arrow tables made with the apache-arrow package. Driven by the C++ tests, which
// read each file with feedline and with DuckDB (duckdb_parquet.mjs) and compare every cell.
//
//   node arrow_rs_parquet.mjs <npm_cache_dir> <out_dir> [rows (default 3000)]
//       writes one table of most Arrow types (integers of every width and sign, FLOAT16, floats with NaN and
//       infinities, booleans, strings, binary, fixed-size binary, decimals, dates, times, timestamps, durations,
//       lists, lists of lists, fixed-size lists, structs, maps, dictionary-encoded strings; nulls in every
//       nullable column) to <out_dir>/<name>.parquet once for each writer setup below (codecs, data page v1 and
//       v2, dictionary or not, PLAIN, DELTA_* and BYTE_STREAM_SPLIT encodings, small pages and row groups,
//       page statistics), and prints each file's path, a line each. Every file holds the same table.
// Exit status 2 with a message on stderr when parquet-wasm or apache-arrow cannot be loaded.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { tableValues, words } from './table_values.mjs';

const [cacheDir, outDir, rowsArg] = process.argv.slice(2);
const rows = Number(rowsArg ?? 3000);
if (!cacheDir || !outDir || !(rows > 0)) {
  console.error('usage: arrow_rs_parquet.mjs <npm_cache_dir> <out_dir> [rows]');
  process.exit(64);
}
let arrow, pw;
try {
  const require = createRequire(path.join(path.resolve(cacheDir), 'package.json'));
  arrow = require('apache-arrow');
  pw = require('parquet-wasm');
} catch (e) {
  console.error(`parquet-wasm and apache-arrow are missing from ${cacheDir} (scripts/install-deps.sh installs them): ${e.message}`);
  process.exit(2);
}

const { next, pick, maybe, column, float } = tableValues(rows, 12345);

const {
  Bool, Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Float16, Float32, Float64, Utf8, LargeUtf8, Binary,
  LargeBinary, FixedSizeBinary, Decimal, DateDay, DateMillisecond, TimestampSecond, TimestampMillisecond,
  TimestampMicrosecond, TimestampNanosecond, TimeMillisecond, TimeMicrosecond, TimeNanosecond, DurationMicrosecond,
  List, LargeList, FixedSizeList, Struct, Map_, Dictionary, Field, vectorFromArray, makeTable,
} = arrow;
const field = (name, type, nullable = true) => new Field(name, type, nullable);
const bytes = (n) => Uint8Array.from({ length: n }, () => pick(256));
// A decimal of up to `digits` digits as Arrow stores it: four 32-bit words of a 128-bit two's complement integer.
const decimal = (digits) => {
  let v = 0n;
  for (let d = 0; d < digits; ++d) v = v * 10n + BigInt(pick(10));
  if (pick(2)) v = -v;
  const u = BigInt.asUintN(128, v);
  return Uint32Array.from([0, 1, 2, 3], (k) => Number((u >> BigInt(32 * k)) & 0xffffffffn));
};

// A vector of a fixed-width type from its stored values (days, units since the epoch or midnight, BigInt for
// 64-bit types), null where a value is null: Arrow's builders take dates and times as milliseconds instead.
const stored = (type, values) => {
  const data = new type.ArrayType(values.length);
  const valid = new Uint8Array(Math.ceil(values.length / 8));
  let nulls = 0;
  values.forEach((v, i) => {
    if (v === null) ++nulls;
    else {
      data[i] = v;
      valid[i >> 3] |= 1 << (i & 7);
    }
  });
  return arrow.makeVector(arrow.makeData({ type, length: values.length, nullCount: nulls, nullBitmap: valid, data }));
};
const big = (n) => BigInt(n);

const columns = {
  id: [new Int32(), column((i) => i), false],
  i8: [new Int8(), column(() => maybe(() => pick(256) - 128))],
  i16: [new Int16(), column(() => maybe(() => pick(65536) - 32768))],
  i32: [new Int32(), column(() => maybe(() => next() - 1073741824))],
  i64: [new Int64(), column(() => maybe(() => BigInt(next()) * BigInt(next()) - (1n << 60n)))],
  u8: [new Uint8(), column(() => maybe(() => pick(256)))],
  u16: [new Uint16(), column(() => maybe(() => pick(65536)))],
  u32: [new Uint32(), column(() => maybe(() => next() * 2 + pick(2)))],
  u64: [new Uint64(), column(() => maybe(() => BigInt(next()) * BigInt(next()) * 8n + BigInt(pick(8))))],
  f16: [new Float16(), column(() => maybe(() => (pick(4000) - 2000) / 8))],
  f32: [new Float32(), column((i) => maybe(() => Math.fround(float(i))))],
  f64: [new Float64(), column((i) => maybe(() => float(i) / 3))],
  flag: [new Bool(), column(() => maybe(() => pick(2) === 1))],
  text: [new Utf8(), column(() => maybe(() => words[pick(words.length)] + pick(1000)))],
  category: [new Utf8(), column(() => maybe(() => words[pick(4)], 5))],
  large_text: [new LargeUtf8(), column(() => maybe(() => words[pick(words.length)]))],
  blob: [new Binary(), column(() => maybe(() => bytes(pick(20))))],
  large_blob: [new LargeBinary(), column(() => maybe(() => bytes(pick(5))))],
  fixed: [new FixedSizeBinary(5), column(() => maybe(() => bytes(5)))],
  dec9: [new Decimal(2, 9, 128), column(() => maybe(() => decimal(9)))],
  dec18: [new Decimal(4, 18, 128), column(() => maybe(() => decimal(18)))],
  dec38: [new Decimal(10, 38, 128), column(() => maybe(() => decimal(38)))],
  day: [new DateDay(), column(() => maybe(() => pick(80000) - 40000)), true, stored],
  day_ms: [new DateMillisecond(), column(() => maybe(() => big(pick(40000) - 20000) * 86400000n)), true, stored],
  ts_s: [new TimestampSecond(), column(() => maybe(() => big(pick(2000000000)))), true, stored],
  ts_ms_utc: [new TimestampMillisecond('UTC'), column(() => maybe(() => big(next()) * 1000n + big(pick(1000)))), true,
              stored],
  ts_us: [new TimestampMicrosecond(), column(() => maybe(() => big(next()) * 1000000n + big(pick(1000000)))), true,
          stored],
  ts_ns_utc: [new TimestampNanosecond('UTC'), column(() => maybe(() => big(next()) * 1000000000n + big(next()))),
              true, stored],
  time_ms: [new TimeMillisecond(), column(() => maybe(() => pick(86400000))), true, stored],
  time_us: [new TimeMicrosecond(), column(() => maybe(() => big(pick(86400)) * 1000000n + big(pick(1000000)))), true,
            stored],
  time_ns: [new TimeNanosecond(),
            column(() => maybe(() => big(pick(86400)) * 1000000000n + big(next() % 1000000000))), true, stored],
  span: [new DurationMicrosecond(), column(() => maybe(() => big(next()) - 1000000000n)), true, stored],
  ints: [new List(field('item', new Int32())),
         column(() => maybe(() => Array.from({ length: pick(6) }, () => maybe(() => pick(1000) - 500, 5))))],
  names: [new List(field('item', new Utf8())),
          column(() => maybe(() => Array.from({ length: pick(4) }, () => maybe(() => words[pick(words.length)], 6))))],
  doubles: [new LargeList(field('item', new Float64(), false)),
            column(() => maybe(() => Array.from({ length: pick(5) }, () => pick(10000) / 16)))],
  embedding: [new FixedSizeList(3, field('item', new Float32(), false)),
              column(() => maybe(() => [0, 1, 2].map(() => Math.fround(pick(1000) / 7))))],
  boxes: [new List(field('item', new List(field('item', new Int16())))),
          column(() => maybe(() => Array.from({ length: pick(3) },
                                               () => maybe(() => Array.from({ length: pick(4) }, () => pick(100)), 4))))],
  point: [new Struct([field('x', new Int32()), field('label', new Utf8()), field('tags', new List(field('item', new Utf8())))]),
          column(() => maybe(() => ({ x: maybe(() => pick(100)), label: maybe(() => words[pick(words.length)]),
                                      tags: maybe(() => Array.from({ length: pick(3) }, () => words[pick(4)])) })))],
  attrs: [new Map_(field('entries', new Struct([field('key', new Utf8(), false), field('value', new Int64())]), false)),
          column(() => maybe(() => {
            const m = new Map();
            for (let k = pick(4); k > 0; --k) m.set('k' + pick(10), maybe(() => BigInt(pick(1000)), 3));
            return m;
          }))],
  dict: [new Dictionary(new Utf8(), new Int32()), column(() => maybe(() => words[pick(words.length)]))],
};

const vectors = {};
for (const [name, [type, values, , make]] of Object.entries(columns)) {
  vectors[name] = make ? make(type, values) : vectorFromArray(values, type);
}
const table = makeTable(vectors);
// Non-nullable where asked: id.
const schema = new arrow.Schema(table.schema.fields.map((f) =>
  new Field(f.name, f.type, columns[f.name][2] !== false)));
const ipc = arrow.tableToIPC(new arrow.Table(schema, table.batches.map((b) => new arrow.RecordBatch(schema, b.data))),
                             'stream');

const { Compression: C, Encoding: E, WriterVersion: V, EnabledStatistics: S } = pw;
const ints = ['id', 'i8', 'i16', 'i32', 'i64', 'u8', 'u16', 'u32', 'u64', 'day', 'day_ms', 'ts_s', 'ts_ms_utc', 'ts_us',
              'ts_ns_utc', 'time_ms', 'time_us', 'time_ns', 'span', 'ints.list.item'];
const strings = ['text', 'category', 'large_text', 'blob', 'large_blob', 'names.list.item', 'point.label'];
const floats = ['f32', 'f64', 'doubles.list.item', 'embedding.list.item'];
const setups = {
  v1_snappy_dictionary: (b) => b.setCompression(C.SNAPPY),
  v2_zstd_dictionary: (b) => b.setCompression(C.ZSTD).setWriterVersion(V.V2),
  v1_gzip_plain: (b) => b.setCompression(C.GZIP).setDictionaryEnabled(false),
  v2_uncompressed: (b) => b.setWriterVersion(V.V2).setDictionaryEnabled(false),  // DELTA_* by default
  v2_lz4raw_delta: (b) => {
    b = b.setCompression(C.LZ4_RAW).setWriterVersion(V.V2).setDictionaryEnabled(false);
    for (const c of ints) b = b.setColumnEncoding(c, E.DELTA_BINARY_PACKED);
    for (const c of strings) b = b.setColumnEncoding(c, c === 'text' ? E.DELTA_BYTE_ARRAY : E.DELTA_LENGTH_BYTE_ARRAY);
    return b.setColumnEncoding('fixed', E.DELTA_BYTE_ARRAY);
  },
  v1_brotli_byte_stream_split: (b) => {
    b = b.setCompression(C.BROTLI).setDictionaryEnabled(false);
    for (const c of floats) b = b.setColumnEncoding(c, E.BYTE_STREAM_SPLIT);
    return b;
  },
  // BYTE_STREAM_SPLIT on the other types it applies to (parquet-format 2.11): integers, FIXED_LEN_BYTE_ARRAY.
  v2_byte_stream_split_ints: (b) => {
    b = b.setCompression(C.ZSTD).setWriterVersion(V.V2).setDictionaryEnabled(false);
    for (const c of ['i32', 'i64', 'u64', 'ts_us', 'dec18', 'f16', 'fixed', 'dec38', 'ints.list.item']) {
      b = b.setColumnEncoding(c, E.BYTE_STREAM_SPLIT);
    }
    return b;
  },
  // Pages of about 512 bytes, rows in batches of 64, row groups of 700 rows, a dictionary page limit that makes
  // large dictionaries fall back to PLAIN mid-chunk, and page-level statistics (column and offset indexes).
  v2_small_pages: (b) => b.setCompression(C.ZSTD).setWriterVersion(V.V2).setDataPageSizeLimit(512)
    .setWriteBatchSize(64).setMaxRowGroupSize(700).setDictionaryPageSizeLimit(2048).setStatisticsEnabled(S.Page),
  v1_small_pages: (b) => b.setCompression(C.SNAPPY).setDataPageSizeLimit(512).setWriteBatchSize(64)
    .setMaxRowGroupSize(1000).setDictionaryPageSizeLimit(1024),
};

fs.mkdirSync(outDir, { recursive: true });
for (const [name, setup] of Object.entries(setups)) {
  const props = setup(new pw.WriterPropertiesBuilder()).build();
  const file = path.join(outDir, `${name}.parquet`);
  fs.writeFileSync(file, pw.writeParquet(pw.Table.fromIPCStream(ipc), props));
  process.stdout.write(file + '\n');
}
