// Times DuckDB reading whole Parquet files into memory (SELECT * materialised), one warm-up then N timed runs.
// usage: node bench/duckdb_read.mjs [--first-read WARM] THREADS REPEAT FILE...   (prints the same CSV as
// feedline_parquet_read). --first-read WARM times the process's first read of each file instead, once, after one
// read of the file WARM, as feedline_parquet_read --first-read does: run it once per file per process.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = process.env.FEEDLINE_CACHE ? path.join(process.env.FEEDLINE_CACHE, 'npm') : path.join(root, '.cache', 'npm');
const require = createRequire(path.join(cache, 'package.json'));
const duckdb = require('@duckdb/node-api');

const args = process.argv.slice(2);
const firstRead = args[0] === '--first-read' ? args.splice(0, 2)[1] : undefined;
const [threads, repeat, ...files] = args;
if (!threads || !repeat || files.length === 0) {
  console.error('usage: node bench/duckdb_read.mjs [--first-read WARM] THREADS REPEAT FILE...');
  process.exit(2);
}
const instance = await duckdb.DuckDBInstance.create(':memory:');
const connection = await instance.connect();
await connection.run(`SET threads = ${Number(threads)}`);
const query = (file) => `SELECT * FROM read_parquet('${file.replaceAll("'", "''")}')`;
if (firstRead) await connection.run(query(firstRead));
console.log('file,threads,rows,columns,median_s,min_s');
for (const file of files) {
  const sql = query(file);
  // With --first-read, the first read is the one timed; else it warms up for the timed ones.
  const times = [];
  const t0 = performance.now();
  const first = await connection.run(sql);
  if (firstRead) times.push((performance.now() - t0) / 1000);
  const rows = first.rowCount, columns = first.columnCount;
  for (let r = 0; !firstRead && r < Number(repeat); ++r) {
    const t0 = performance.now();
    const result = await connection.run(sql);
    if (result.rowCount !== rows) throw new Error(`${file}: row count changed`);
    times.push((performance.now() - t0) / 1000);
  }
  times.sort((a, b) => a - b);
  console.log(`${file},${threads},${rows},${columns},${times[Math.floor(times.length / 2)].toFixed(6)},${times[0].toFixed(6)}`);
}
