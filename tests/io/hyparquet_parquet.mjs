// Parquet files from hyparquet-writer, a writer in plain JavaScript with its own Thrift, encoders and Dremel
// shredding: another producer than DuckDB, arrow-rs and Polars. It writes data pages v2 only, and VARIANT columns
// shredded or not. Driven by the C++ tests, which read each file with feedline and with DuckDB
// (duckdb_parquet.mjs) and compare every cell.
//
//   node hyparquet_parquet.mjs <npm_cache_dir> <out_dir> [rows (default 3000)]
//       writes one table (integers of each width and sign, floats with NaN and infinities, booleans, strings,
//       bytes, JSON, dates, timestamps of each unit, decimals, UUIDs, FLOAT16, GEOMETRY, lists, lists of lists, a
//       struct, a map, VARIANT unshredded and shredded; nulls in each optional column) to <out_dir>/<name>.parquet
//       once for each writer setup below (codecs, PLAIN, DELTA_* and BYTE_STREAM_SPLIT encodings, small pages and row
//       groups, page indexes and Bloom filters, statistics or not), and prints each file's path, a line each.
//       Every file holds the same table.
// Exit status 2 with a message on stderr when hyparquet-writer cannot be loaded.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import zlib from 'node:zlib';

import { tableValues, words } from './table_values.mjs';

const [cacheDir, outDir, rowsArg] = process.argv.slice(2);
const rows = Number(rowsArg ?? 3000);
if (!cacheDir || !outDir || !(rows > 0)) {
  console.error('usage: hyparquet_parquet.mjs <npm_cache_dir> <out_dir> [rows]');
  process.exit(64);
}
let hw;
try {
  const entry = path.join(path.resolve(cacheDir), 'node_modules', 'hyparquet-writer', 'src', 'index.js');
  hw = await import(pathToFileURL(entry).href);
} catch (e) {
  console.error(`hyparquet-writer is missing from ${cacheDir} (scripts/install-deps.sh installs it): ${e.message}`);
  process.exit(2);
}

const { next, pick, maybe, column, float } = tableValues(rows, 97531);
const day = 86400000;
const hex = (n) => Array.from({ length: n }, () => pick(16).toString(16)).join('');
const list = (f, most = 4) => maybe(() => Array.from({ length: pick(most + 1) }, f));

// A flat column: its name, its schema element (OPTIONAL unless it says otherwise) and its values.
const leaf = (name, element, values) => ({ name, element: { name, repetition_type: 'OPTIONAL', ...element }, values });
const flat = [
  leaf('id', { type: 'INT32', repetition_type: 'REQUIRED' }, column((i) => i)),
  leaf('i8', { type: 'INT32', converted_type: 'INT_8' }, column(() => maybe(() => pick(256) - 128))),
  leaf('u16', { type: 'INT32', converted_type: 'UINT_16' }, column(() => maybe(() => pick(65536)))),
  leaf('i32', { type: 'INT32' }, column(() => maybe(() => next() - 1073741824))),
  leaf('u32', { type: 'INT32', converted_type: 'UINT_32' }, column(() => maybe(() => next() * 2 + pick(2)))),
  leaf('i64', { type: 'INT64' }, column(() => maybe(() => BigInt(next()) * BigInt(next()) - (1n << 60n)))),
  leaf('small64', { type: 'INT64' }, column((i) => maybe(() => BigInt(i * 3 + pick(3))))),
  leaf('f32', { type: 'FLOAT' }, column((i) => maybe(() => Math.fround(float(i))))),
  leaf('f64', { type: 'DOUBLE' }, column((i) => maybe(() => float(i) / 3))),
  leaf('flag', { type: 'BOOLEAN' }, column(() => maybe(() => pick(2) === 1))),
  leaf('text', { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
    column(() => maybe(() => words[pick(words.length)] + pick(1000)))),
  leaf('category', { type: 'BYTE_ARRAY', converted_type: 'UTF8' }, column(() => maybe(() => words[pick(4)]))),
  leaf('blob', { type: 'BYTE_ARRAY' },
    column(() => maybe(() => Uint8Array.from({ length: pick(9) }, () => pick(256))))),
  leaf('doc', { type: 'BYTE_ARRAY', converted_type: 'JSON' },
    column(() => maybe(() => ({ k: pick(100), s: words[pick(words.length)], a: [pick(3), null] })))),
  leaf('day', { type: 'INT32', converted_type: 'DATE' },
    column(() => maybe(() => new Date((pick(80000) - 40000) * day)))),
  leaf('ts_ms', { type: 'INT64', converted_type: 'TIMESTAMP_MILLIS' },
    column(() => maybe(() => new Date(next() * 1000 + pick(1000))))),
  leaf('ts_us', { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } },
    column(() => maybe(() => BigInt(next()) * 1000000n + BigInt(pick(1000000))))),
  leaf('ts_ns', { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'NANOS' } },
    column(() => maybe(() => BigInt(next()) * 1000000000n + BigInt(pick(1000000000))))),
  leaf('dec', { type: 'FIXED_LEN_BYTE_ARRAY', type_length: 5, converted_type: 'DECIMAL', precision: 11, scale: 2 },
    column(() => maybe(() => BigInt(next()) * BigInt(pick(40) + 1) - (1n << 35n)))),
  leaf('dec32', { type: 'INT32', converted_type: 'DECIMAL', precision: 9, scale: 3 },
    column(() => maybe(() => BigInt(pick(1000000000) - 500000000)))),
  leaf('uuid', { type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'UUID' } },
    column(() => maybe(() => `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`))),
  leaf('shape', { type: 'BYTE_ARRAY', logical_type: { type: 'GEOMETRY' } },
    column(() => maybe(() => (pick(2) ? { type: 'Point', coordinates: [pick(360) - 180, pick(180) - 90] }
      : { type: 'LineString', coordinates: [[0, 0], [pick(10), pick(10) / 4]] })))),
  leaf('half', { type: 'FIXED_LEN_BYTE_ARRAY', type_length: 2, logical_type: { type: 'FLOAT16' } },
    column(() => maybe(() => [0.5, -2, 65504, 1 / 1024, 0, Infinity, 3.140625][pick(7)]))),
];
const listOf = (name, element) => [
  { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  { name: 'element', repetition_type: 'OPTIONAL', ...element },
];
const nested = [
  { name: 'ints', elements: listOf('ints', { type: 'INT32' }),
    values: column(() => list(() => maybe(() => pick(1000)))) },
  { name: 'tags', elements: listOf('tags', { type: 'BYTE_ARRAY', converted_type: 'UTF8' }),
    values: column(() => list(() => maybe(() => words[pick(words.length)]))) },
  { name: 'grid',
    elements: [
      { name: 'grid', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      ...listOf('element', { type: 'DOUBLE' }),
    ],
    values: column(() => list(() => list(() => maybe(() => pick(100) / 8), 3), 3)) },
  { name: 'point',
    elements: [
      { name: 'point', repetition_type: 'OPTIONAL', num_children: 2 },
      { name: 'x', repetition_type: 'OPTIONAL', type: 'INT64' },
      { name: 'label', repetition_type: 'OPTIONAL', type: 'BYTE_ARRAY', converted_type: 'UTF8' },
    ],
    values: column(() => maybe(() => ({ x: maybe(() => BigInt(pick(1 << 20))),
                                        label: maybe(() => words[pick(8)]) }))) },
  { name: 'attrs',
    elements: [
      { name: 'attrs', repetition_type: 'OPTIONAL', converted_type: 'MAP', num_children: 1 },
      { name: 'key_value', repetition_type: 'REPEATED', num_children: 2 },
      { name: 'key', repetition_type: 'REQUIRED', type: 'BYTE_ARRAY', converted_type: 'UTF8' },
      { name: 'value', repetition_type: 'OPTIONAL', type: 'INT32' },
    ],
    values: column(() => list(() => ({ key: words[pick(words.length)] + pick(1000), value: maybe(() => pick(50)) }),
                              3)) },
];
// VARIANT values: objects of a few shapes, arrays, scalars of each kind, a null variant now and then.
const variantValue = () => {
  switch (pick(6)) {
    case 0: return { kind: 'click', x: pick(1000), y: pick(1000) - 500 };
    case 1: return { kind: 'login', user: words[pick(words.length)], ok: pick(2) === 1 };
    case 2: return [pick(10), words[pick(4)], null, { nested: pick(5) }];
    case 3: return pick(100000) / 16;
    case 4: return words[pick(words.length)];
    default: return { kind: 'deep', at: { depth: pick(3), tags: ['a', 'b'] } };
  }
};
const variants = column(() => maybe(variantValue));
const events = column(() => maybe(() => ({ kind: words[pick(3)], count: pick(100), when: pick(1000) })));
const variantColumns = [
  { name: 'var', data: variants, type: 'VARIANT' },
  { name: 'event', data: events, type: 'VARIANT', shredding: { kind: 'STRING', count: 'INT32' } },
];

// The schema: the flat leaves, the nested columns, and the VARIANT groups as hyparquet-writer builds them.
const variantSchema = hw.schemaFromColumnData({ columnData: variantColumns }).slice(1);
const schema = [
  { name: 'root', num_children: flat.length + nested.length + variantColumns.length },
  ...flat.map((c) => c.element),
  ...nested.flatMap((c) => c.elements),
  ...variantSchema,
];

const compressors = {
  GZIP: (bytes) => new Uint8Array(zlib.gzipSync(bytes)),
  BROTLI: (bytes) => new Uint8Array(zlib.brotliCompressSync(bytes)),
};
const floats = new Set(['f32', 'f64']);
const ints = new Set(['i32', 'u32', 'i64', 'small64', 'dec32', 'day', 'ts_ms', 'ts_us', 'ts_ns', 'u16', 'i8']);
const strings = new Set(['text', 'category', 'blob', 'doc']);
// Writer setups: [file name, options, encoding for a flat column's name (undefined: the writer's choice)].
const setups = [
  ['default_snappy', {}, () => undefined],
  ['uncompressed_small_pages', { codec: 'UNCOMPRESSED', pageSize: 1500, rowGroupSize: 700 }, () => undefined],
  ['gzip_plain', { codec: 'GZIP' }, (name) => (name === 'flag' ? 'RLE' : 'PLAIN')],
  ['brotli_delta', { codec: 'BROTLI', pageSize: 4000 },
    (name) => (ints.has(name) ? 'DELTA_BINARY_PACKED' : name === 'text' ? 'DELTA_BYTE_ARRAY'
      : strings.has(name) ? 'DELTA_LENGTH_BYTE_ARRAY' : undefined)],
  ['byte_stream_split', { rowGroupSize: [1000, 1500] }, (name) => (floats.has(name) ? 'BYTE_STREAM_SPLIT' : undefined)],
  ['indexes_no_statistics', { statistics: false, pageSize: 2000, rowGroupSize: 2000, dictionarySize: 512 },
    () => undefined],
];

fs.mkdirSync(outDir, { recursive: true });
for (const [name, options, encodingOf] of setups) {
  const pageIndexes = name.startsWith('indexes');
  const columnData = [
    ...flat.map((c) => ({ name: c.name, data: c.values, encoding: encodingOf(c.name),
      columnIndex: pageIndexes, bloomFilter: pageIndexes })),
    ...nested.map((c) => ({ name: c.name, data: c.values, columnIndex: pageIndexes })),
    ...variantColumns.map(({ type, ...c }) => c),
  ];
  const file = path.join(outDir, `${name}.parquet`);
  const buffer = hw.parquetWriteBuffer({ columnData, schema, compressors, rowGroupSize: 1000, ...options });
  fs.writeFileSync(file, new Uint8Array(buffer));
  console.log(file);
}
