// Times DuckDB reading whole Parquet files into memory (SELECT * materialised), one warm-up then N timed runs.
// usage: node bench/duckdb_read.mjs THREADS REPEAT FILE...   (prints the same CSV as feedline_parquet_read)
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = process.env.FEEDLINE_CACHE ? path.join(process.env.FEEDLINE_CACHE, 'npm') : path.join(root, '.cache', 'npm');
const require = createRequire(path.join(cache, 'package.json'));
const duckdb = require('@duckdb/node-api');

const [threads, repeat, ...files] = process.argv.slice(2);
if (!threads || !repeat || files.length === 0) {
  console.error('usage: node bench/duckdb_read.mjs THREADS REPEAT FILE...');
  process.exit(2);
}
const instance = await duckdb.DuckDBInstance.create(':memory:');
const connection = await instance.connect();
await connection.run(`SET threads = ${Number(threads)}`);
console.log('file,threads,rows,columns,median_s,min_s');
for (const file of files) {
  const sql = `SELECT * FROM read_parquet('${file.replaceAll("'", "''")}')`;
  const warm = await connection.run(sql);
  const rows = warm.rowCount, columns = warm.columnCount;
  const times = [];
  for (let r = 0; r < Number(repeat); ++r) {
    const t0 = performance.now();
    const result = await connection.run(sql);
    if (result.rowCount !== rows) throw new Error(`${file}: row count changed`);
    times.push((performance.now() - t0) / 1000);
  }
  times.sort((a, b) => a - b);
  console.log(`${file},${threads},${rows},${columns},${times[Math.floor(times.length / 2)].toFixed(6)},${times[0].toFixed(6)}`);
}
