// Writes MNIST-like tables in the list layout that Hugging Face datasets and embedding stores use: `label` and
// one `image` column of 784-value lists, as list<uint8> and as list<float>, with DuckDB (ZSTD), from the
// pixel-column files `feedline prepare` writes. For scripts/bench-parquet-read.sh and `train --data`.
//   node bench/duckdb_list_layout.mjs <npm_cache_dir> <input.parquet> <out_prefix>
//       writes <out_prefix>.list_uint8.parquet and <out_prefix>.list_float.parquet
import { createRequire } from 'node:module';
import path from 'node:path';

const [cacheDir, input, prefix] = process.argv.slice(2);
if (!cacheDir || !input || !prefix) {
  console.error('usage: duckdb_list_layout.mjs <npm_cache_dir> <input.parquet> <out_prefix>');
  process.exit(64);
}
let duckdb;
try {
  duckdb = createRequire(path.join(path.resolve(cacheDir), 'package.json'))('@duckdb/node-api');
} catch (e) {
  console.error(`cannot load @duckdb/node-api from ${cacheDir}: ${e.message}\nrun scripts/install-deps.sh`);
  process.exit(2);
}
const quote = (s) => `'${s.replaceAll("'", "''")}'`;
const instance = await duckdb.DuckDBInstance.create(':memory:');
const connection = await instance.connect();
try {
  const pixels = Array.from({ length: 784 }, (_, i) => `pixel${i + 1}`).join(', ');
  for (const [suffix, type] of [['list_uint8', 'UTINYINT'], ['list_float', 'FLOAT']]) {
    const out = `${prefix}.${suffix}.parquet`;
    await connection.run(`COPY (SELECT label, [${pixels}]::${type}[] AS image FROM read_parquet(${quote(input)}))
                          TO ${quote(out + '.tmp')} (FORMAT parquet, COMPRESSION zstd)`);
    await import('node:fs').then((fs) => fs.renameSync(out + '.tmp', out));
    console.log(out);
  }
} finally {
  connection.closeSync();
  instance.closeSync();
}
