// Writes the large-file Parquet benchmark set: one table of seeded data (BIGINT ids and values, doubles with 5 %
// nulls, dates, timestamps, DECIMAL(18,2), short strings of 2 to 4 bytes from 300 values, long strings of 40 to
// 200 bytes of words (all but unique), list<int32> of 1 to 5 elements) written by three producers, each with
// SNAPPY, ZSTD and no compression:
//   duckdb-<codec>-<N>rg.parquet  DuckDB's writer, ROWS rows, in one row group (1rg) and in 10 (ROWS / 10 rows each)
//   polars-<codec>-<N>rg.parquet  Polars' writer (nodejs-polars), ROWS rows, in row groups of ROWS / 10 rows
//   arrowrs-<codec>-<N>rg.parquet arrow-rs's writer (parquet-wasm), ARROW_ROWS rows (WebAssembly's 4 GiB of memory
//                                 holds the Arrow table, the file read and the file written: not 10 M rows of
//                                 it), in row groups of ROWS / 10 rows
// The table is made once by DuckDB (its hash() of the row number and a column number seeds every value, so each
// run writes the same values); Polars and arrow-rs read DuckDB's uncompressed file and write it again.
//
//   node bench/make_large_parquet.mjs OUT_DIR [ROWS (default 10000000)] [ARROW_ROWS (default 2000000)]
// Files already in OUT_DIR are kept. Prints each file's path, rows and size.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = process.env.FEEDLINE_CACHE ? path.join(process.env.FEEDLINE_CACHE, 'npm')
                                          : path.join(root, '.cache', 'npm');
const require = createRequire(path.join(cache, 'package.json'));

const [outDir, rowsArg, arrowRowsArg] = process.argv.slice(2);
const rows = Number(rowsArg ?? 10_000_000);
const arrowRows = Math.min(rows, Number(arrowRowsArg ?? 2_000_000));
if (!outDir || !(rows > 0) || !(arrowRows > 0)) {
  console.error('usage: node bench/make_large_parquet.mjs OUT_DIR [ROWS] [ARROW_ROWS]');
  process.exit(64);
}
fs.mkdirSync(outDir, { recursive: true });
const groupRows = Math.ceil(rows / 10);  // 1 M rows of 10 M
const codecs = ['snappy', 'zstd', 'uncompressed'];
const quote = (s) => `'${s.replaceAll("'", "''")}'`;
const done = (file) => fs.existsSync(file) && fs.statSync(file).size > 0;
const report = (file, n) => console.log(`${file}\t${n} rows\t${fs.statSync(file).size} bytes`);
// Written under a temporary name and renamed, so that an interrupted run leaves no partial file behind.
const writeOnce = async (file, n, write) => {
  if (!done(file)) {
    const tmp = `${file}.tmp`;
    await write(tmp);
    fs.renameSync(tmp, file);
  }
  report(file, n);
};
const groups = (n) => Math.ceil(n / groupRows);

const words = ('time year people way day man thing woman life child world school state family student group ' +
  'country problem hand part place case week company system program question work government number night point ' +
  'home water room mother area money story fact month lot right study book eye job word business issue side kind ' +
  'head house service friend father power hour game line end member law car city community name president team ' +
  'minute idea kid body information back parent face others level office door health person art war history party ' +
  'result change morning reason research girl guy moment air teacher force education foot boy age policy process ' +
  'music market sense nation plan college interest death experience effect use class control care field ' +
  'development role effort rate heart drug show leader light voice wife police mind price report decision son view ' +
  'relationship town road arm difference value building action model season society tax director position player ' +
  'record paper space ground form event official matter center couple site project activity star table need court ' +
  'oil situation cost industry figure street image phone data picture practice piece land product doctor wall ' +
  'patient worker news test movie north love support technology step baby computer type attention film tree source ' +
  'organization hair window evidence population site truth').split(' ');

const table = (n) => `
  SELECT i AS id,
         CAST(hash(i, 1) % 2000000000 AS BIGINT) - 1000000000 AS value,
         CASE WHEN hash(i, 2) % 20 = 0 THEN NULL ELSE CAST(hash(i, 3) % 1000000007 AS DOUBLE) / 7919.0 - 60000.0 END
           AS score,
         DATE '1990-01-01' + CAST(hash(i, 4) % 14000 AS INTEGER) AS day,
         make_timestamp(CAST(946684800000000 + hash(i, 5) % 800000000000000 AS BIGINT)) AS at,
         CAST(CAST(CAST(hash(i, 6) % 2000000000000 AS BIGINT) - 1000000000000 AS DECIMAL(18, 0)) / 100
              AS DECIMAL(18, 2)) AS amount,
         'k' || CAST(hash(i, 7) % 300 AS VARCHAR) AS code,
         array_to_string(list_transform(range(CAST(7 + hash(i, 8) % 25 AS BIGINT)),
                                        j -> words[CAST(hash(i, j, 9) % ${words.length} AS INTEGER) + 1]), ' ')
           AS note,
         list_transform(range(CAST(1 + hash(i, 10) % 5 AS BIGINT)),
                        j -> CAST(hash(i, j, 11) % 100000 AS INTEGER)) AS tags
  FROM range(${n}) r(i), (SELECT ${'[' + words.map(quote).join(', ') + ']'} AS words) w`;

const duckdb = require('@duckdb/node-api');
const instance = await duckdb.DuckDBInstance.create(':memory:');
const connection = await instance.connect();
await connection.run(`SET preserve_insertion_order = true`);
const duckFiles = [];
for (const codec of codecs) {
  for (const groupSize of [rows, groupRows]) {
    const file = path.join(outDir, `duckdb-${codec}-${Math.ceil(rows / groupSize)}rg.parquet`);
    duckFiles.push([file, codec, groupSize]);
  }
}
let made = false;
for (const [file, codec, groupSize] of duckFiles) {
  await writeOnce(file, rows, async (tmp) => {
    if (!made) {
      await connection.run(`CREATE TABLE t AS ${table(rows)}`);
      made = true;
    }
    await connection.run(`COPY t TO ${quote(tmp)} (FORMAT parquet, COMPRESSION ${codec}, ROW_GROUP_SIZE ${groupSize})`);
  });
}
const source = path.join(outDir, `duckdb-uncompressed-${groups(rows)}rg.parquet`);

// Polars: DuckDB's file read back, written with each codec.
const pl = require('nodejs-polars');
for (const codec of codecs) {
  const file = path.join(outDir, `polars-${codec}-${groups(rows)}rg.parquet`);
  await writeOnce(file, rows, async (tmp) => {
    // Its streaming writer, which (unlike DataFrame.writeParquet) takes a row group size.
    pl.scanParquet(source).sinkParquet(tmp, { compression: codec, rowGroupSize: groupRows }).collectSync();
  });
}

// arrow-rs: the first ARROW_ROWS rows of DuckDB's file, written with each codec.
const pw = require('parquet-wasm');
const arrowSource = path.join(outDir, `arrowrs-source-${arrowRows}.parquet`);
for (const codec of codecs) {
  const file = path.join(outDir, `arrowrs-${codec}-${groups(arrowRows)}rg.parquet`);
  await writeOnce(file, arrowRows, async (tmp) => {
    if (!done(arrowSource)) {
      await connection.run(`COPY (SELECT * FROM read_parquet(${quote(source)}) LIMIT ${arrowRows}) TO ` +
                           `${quote(arrowSource)} (FORMAT parquet, COMPRESSION uncompressed)`);
    }
    // Read again for each file: writeParquet takes the table.
    const arrowTable = pw.readParquet(fs.readFileSync(arrowSource));
    const props = new pw.WriterPropertiesBuilder().setCompression(pw.Compression[codec.toUpperCase()])
      .setMaxRowGroupSize(groupRows).build();
    fs.writeFileSync(tmp, pw.writeParquet(arrowTable, props));
  });
}
if (fs.existsSync(arrowSource)) fs.rmSync(arrowSource);
