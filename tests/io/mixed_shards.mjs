// One table kept as shards written by five different writers, as a dataset grows when teams and tools change: each
// writer annotates the same columns its own way (DuckDB marks every integer INT(32|64, signed); parquet.js writes
// lists as bare repeated fields, the others as LIST groups; some make `id` required, DuckDB makes every column
// optional). Driven by the C++ tests, which read the folder as one table and compare it with the whole table.
//
//   node mixed_shards.mjs <npm_cache_dir> <out_dir> [rows (default 1000)]
//       writes <out_dir>/whole.parquet (hyparquet-writer, every row) and <out_dir>/shards/part-<k>.parquet, a fifth
//       of the rows each, in order, by DuckDB, arrow-rs (parquet-wasm), Polars, hyparquet-writer and parquet.js;
//       prints the whole file's path, then each shard's, a line each.
// Columns: id INT32, big INT64, x DOUBLE, s STRING, flag BOOLEAN, day DATE (nulls in all but id) and tags, a list
// of strings (never null, nor its elements, which parquet.js cannot write; empty at times).
// Exit status 2 with a message on stderr when a writer's package cannot be loaded.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { tableValues, words } from './table_values.mjs';

const [cacheDir, outDir, rowsArg] = process.argv.slice(2);
const rows = Number(rowsArg ?? 1000);
if (!cacheDir || !outDir || !(rows >= 5)) {
  console.error('usage: mixed_shards.mjs <npm_cache_dir> <out_dir> [rows, at least 5]');
  process.exit(64);
}
const require = createRequire(path.join(path.resolve(cacheDir), 'package.json'));
let arrow, pw, pl, parquet, duckdb, hw;
try {
  arrow = require('apache-arrow');
  pw = require('parquet-wasm');
  pl = require('nodejs-polars');
  parquet = require('@dsnp/parquetjs');
  duckdb = require('@duckdb/node-api');
  hw = await import(pathToFileURL(path.join(path.resolve(cacheDir), 'node_modules', 'hyparquet-writer', 'src',
                                              'index.js')).href);
} catch (e) {
  console.error(`a Parquet writer is missing from ${cacheDir} (scripts/install-deps.sh installs them): ${e.message}`);
  process.exit(2);
}

const { next, pick, maybe, column, float } = tableValues(rows, 13579);
const day = 86400000;
const all = {
  id: column((i) => i),
  big: column(() => maybe(() => BigInt(next()) * BigInt(next()) - (1n << 60n))),
  x: column((i) => maybe(() => float(i) / 3)),
  s: column(() => maybe(() => words[pick(words.length)] + pick(100))),
  flag: column(() => maybe(() => pick(2) === 1)),
  day: column(() => maybe(() => pick(80000) - 40000)),
  tags: column(() => Array.from({ length: pick(4) }, () => words[pick(words.length)])),
};
const names = Object.keys(all);
const part = (from, to) => Object.fromEntries(names.map((n) => [n, all[n].slice(from, to)]));

// hyparquet-writer, with an explicit schema (id required).
const hyparquetBytes = (t) => {
  const schema = [
    { name: 'root', num_children: names.length },
    { name: 'id', type: 'INT32', repetition_type: 'REQUIRED' },
    { name: 'big', type: 'INT64', repetition_type: 'OPTIONAL' },
    { name: 'x', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
    { name: 's', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
    { name: 'flag', type: 'BOOLEAN', repetition_type: 'OPTIONAL' },
    { name: 'day', type: 'INT32', converted_type: 'DATE', repetition_type: 'OPTIONAL' },
    { name: 'tags', repetition_type: 'REQUIRED', converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  ];
  const columnData = names.map((n) => ({ name: n, data: t[n] }));
  return new Uint8Array(hw.parquetWriteBuffer({ columnData, schema }));
};

// arrow-rs, from an Arrow table (id not nullable).
const arrowRsBytes = (t) => {
  const { Int32, Int64, Float64, Utf8, Bool, DateDay, List, Field, vectorFromArray, makeTable } = arrow;
  const table = makeTable({
    id: vectorFromArray(t.id, new Int32()),
    big: vectorFromArray(t.big, new Int64()),
    x: vectorFromArray(t.x, new Float64()),
    s: vectorFromArray(t.s, new Utf8()),
    flag: vectorFromArray(t.flag, new Bool()),
    day: vectorFromArray(t.day.map((d) => (d === null ? null : new Date(d * day))), new DateDay()),
    tags: vectorFromArray(t.tags, new List(new Field('item', new Utf8(), false))),
  });
  const schema = new arrow.Schema(table.schema.fields.map((f) => new Field(f.name, f.type, f.name !== 'id')));
  const ipc = arrow.tableToIPC(new arrow.Table(schema, table.batches.map((b) => new arrow.RecordBatch(schema, b.data))),
                               'stream');
  return pw.writeParquet(pw.Table.fromIPCStream(ipc), new pw.WriterPropertiesBuilder().build());
};

// Polars.
const polarsFile = (t, file) => {
  const D = pl;
  const df = pl.DataFrame([
    pl.Series('id', t.id, D.Int32),
    pl.Series('big', t.big.map((v) => (v === null ? null : String(v))), D.Utf8).cast(D.Int64),
    pl.Series('x', t.x, D.Float64),
    pl.Series('s', t.s, D.Utf8),
    pl.Series('flag', t.flag, D.Bool),
    pl.Series('day', t.day, D.Int32).cast(D.Date),
    pl.Series('tags', t.tags, D.List(D.Utf8)),
  ]);
  df.writeParquet(file);
};

// parquet.js, a row at a time (nulls left out; lists as a bare repeated field).
const parquetJsFile = async (t, file) => {
  const schema = new parquet.ParquetSchema({
    id: { type: 'INT32' },
    big: { type: 'INT64', optional: true },
    x: { type: 'DOUBLE', optional: true },
    s: { type: 'UTF8', optional: true },
    flag: { type: 'BOOLEAN', optional: true },
    day: { type: 'DATE', optional: true },
    tags: { type: 'UTF8', repeated: true },
  });
  const writer = await parquet.ParquetWriter.openFile(schema, file);
  for (let i = 0; i < t.id.length; ++i) {
    const row = {};
    for (const n of names) if (t[n][i] !== null) row[n] = t[n][i];
    if (row.day !== undefined) row.day = new Date(row.day * day);  // (it takes days as numbers only from 0)
    await writer.appendRow(row);
  }
  await writer.close();
};

fs.mkdirSync(path.join(outDir, 'shards'), { recursive: true });
const whole = path.join(outDir, 'whole.parquet');
fs.writeFileSync(whole, hyparquetBytes(all));
console.log(whole);
const cuts = [0, 1, 2, 3, 4, 5].map((k) => Math.round((k * rows) / 5));
const shard = (k) => path.join(outDir, 'shards', `part-${k}.parquet`);
// DuckDB: the rows through a file of another writer, rewritten by COPY.
const source = path.join(outDir, 'duckdb-source.parquet.tmp');
fs.writeFileSync(source, hyparquetBytes(part(cuts[0], cuts[1])));
const connection = await (await duckdb.DuckDBInstance.create(':memory:')).connect();
await connection.run(`COPY (SELECT * FROM read_parquet('${source}')) TO '${shard(0)}' (FORMAT parquet)`);
fs.rmSync(source);
fs.writeFileSync(shard(1), arrowRsBytes(part(cuts[1], cuts[2])));
polarsFile(part(cuts[2], cuts[3]), shard(2));
fs.writeFileSync(shard(3), hyparquetBytes(part(cuts[3], cuts[4])));
await parquetJsFile(part(cuts[4], cuts[5]), shard(4));
for (let k = 0; k < 5; ++k) console.log(shard(k));
