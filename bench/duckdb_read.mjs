// Times DuckDB reading whole Parquet files into memory (SELECT * materialised), one warm-up then N timed runs.
// usage: node [--expose-gc] bench/duckdb_read.mjs [--free-results | --first-read WARM] THREADS REPEAT FILE...
// (prints the same CSV as feedline_parquet_read). A result's memory goes back to DuckDB only when JavaScript's
// garbage collector finalises the result, which it does when it sees fit: without --free-results the timed reads
// leave theirs to it, so each read takes new memory, as feedline_parquet_read does by default. --free-results
// (which needs node's --expose-gc) runs the collector after each read, outside the time, so that the next read
// reuses that memory, as feedline_parquet_read --keep-memory does. --first-read WARM times the process's first
// read of each file instead, once, after one read of the file WARM, as feedline_parquet_read --first-read does:
// run it once per file per process.
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
const freeResults = args[0] === '--free-results';
if (freeResults) args.shift();
const [threads, repeat, ...files] = args;
if (!threads || !repeat || files.length === 0) {
  console.error('usage: node [--expose-gc] bench/duckdb_read.mjs [--free-results | --first-read WARM] ' +
                'THREADS REPEAT FILE...');
  process.exit(2);
}
if (freeResults && typeof globalThis.gc !== 'function') {
  console.error('bench/duckdb_read.mjs: --free-results needs node --expose-gc');
  process.exit(2);
}
// Lets the collector finalise the results no longer referenced, so that DuckDB gets their memory back.
const collect = () => { if (freeResults) globalThis.gc(); };
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
  let result = await connection.run(sql);
  if (firstRead) times.push((performance.now() - t0) / 1000);
  const rows = result.rowCount, columns = result.columnCount;
  result = undefined;
  collect();
  for (let r = 0; !firstRead && r < Number(repeat); ++r) {
    const t0 = performance.now();
    result = await connection.run(sql);
    times.push((performance.now() - t0) / 1000);
    if (result.rowCount !== rows) throw new Error(`${file}: row count changed`);
    result = undefined;
    collect();
  }
  times.sort((a, b) => a - b);
  console.log(`${file},${threads},${rows},${columns},${times[Math.floor(times.length / 2)].toFixed(6)},${times[0].toFixed(6)}`);
}
