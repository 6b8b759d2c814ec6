// DuckDB's side of feedline's Parquet interop tests and read benchmark, driven by the C++ tests.
//
//   node duckdb_parquet.mjs <npm_cache_dir> dump <file.parquet> [<json array of column names>]
//       reads the file (or those columns) with DuckDB and prints every value in the canonical text form below
//       (a VARIANT, or a list of them, as JSON text);
//       a dotted name that is no top-level column is a nested field, as feedline names them: a struct's field, a
//       list of structs' field (a list of it), a map's `key` or `value` (a list of them).
//   node duckdb_parquet.mjs <npm_cache_dir> folder <manifest.json>
//       the same for many files: the manifest is a JSON array of [path, columns or null]; each file's dump
//       follows a line "file<TAB>path", or is the line "error<TAB>message" when DuckDB refuses the file. A
//       VARIANT column is dumped as its JSON text (VARCHAR).
//   node duckdb_parquet.mjs <npm_cache_dir> write <file.parquet> <codec> <rows> <row_group_size>
//       makes a table of every type feedline reads (with nulls), COPYs it to the file with the codec, and
//       prints the table's values in the same form.
//   node duckdb_parquet.mjs <npm_cache_dir> pandas <file.parquet> <rows>
//       writes what pandas writes through pyarrow (INT64 `label` and `pixelN`, SNAPPY, dictionary pages, a
//       `pandas` footer key) and prints the table's values in the same form.
//   node duckdb_parquet.mjs <npm_cache_dir> lists <file.parquet> <codec> <rows> <row_group_size>
//       writes list columns (fixed-length embeddings and pixels, ragged lists with null lists and null elements,
//       lists of strings, empty lists) beside a plain column, and prints the table's values in the same form.
//   node duckdb_parquet.mjs <npm_cache_dir> nested <file.parquet> <codec> <rows> <row_group_size>
//       writes lists of lists (regular [3, 4] boxes; ragged lists of lists with nulls and empty lists at every
//       level; three levels of strings) beside a plain column, and prints the table's values in the same form.
//   node duckdb_parquet.mjs <npm_cache_dir> structs <file.parquet> <rows>
//       writes nullable structs (one inside another, one holding a list and a list of lists) and prints the
//       values of their fields, flattened and named by dotted path as feedline reads them.
//   node duckdb_parquet.mjs <npm_cache_dir> liststructs <file.parquet> <rows> <row_group_size>
//       writes lists of nullable structs (a list and a struct among their fields), maps (null, empty, with null
//       values, of lists) and lists of lists of structs; `dump` then reads them by feedline's names.
//   node duckdb_parquet.mjs <npm_cache_dir> hf <flat.parquet> <out.parquet>
//       rewrites the flat columns `image.bytes` and `image.path` as one struct column `image`, the layout of
//       Hugging Face image datasets.
//   node duckdb_parquet.mjs <npm_cache_dir> copy <file.parquet> <SELECT statement>
//       writes the statement's result to the file with DuckDB's defaults (COPY ... TO ... (FORMAT parquet)) and
//       prints how many of the file's schema elements are a shredded VARIANT's `typed_value`.
//   node duckdb_parquet.mjs <npm_cache_dir> count <file.parquet> <json array of SQL conditions>
//       for each condition, prints the count of the file's rows that meet it (SELECT count(*) ... WHERE), a
//       filter DuckDB checks against each row group's statistics before it reads the rows.
//   node duckdb_parquet.mjs <npm_cache_dir> time <file.parquet> <threads> <runs>
//       reads the whole file into a DuckDB table, once to warm up and then <runs> times; prints seconds.
//
// Canonical form: a line "columns<TAB>n", n lines "name<TAB>DUCKDB_TYPE", then one line per row with one cell
// per column separated by tabs: N for null; booleans 0/1; integers in decimal; FLOAT and DOUBLE as the hex of
// their IEEE bits (f:xxxxxxxx, d:xxxxxxxxxxxxxxxx); VARCHAR, BLOB and GEOMETRY as hex of their bytes (s:...,
// b:...); lists as L[cell,cell,...]; intervals as I:months,days,micros=text.
// Exit status 2 with a message on stderr when @duckdb/node-api cannot be loaded.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import path from 'node:path';

const [cacheDir, mode, file, ...rest] = process.argv.slice(2);
if (!cacheDir || !mode || !file) {
  console.error('usage: duckdb_parquet.mjs <npm_cache_dir> dump|folder|copy|count|write|lists|nested|structs|liststructs|hf|pandas|time <file> ...');
  process.exit(64);
}

let duckdb;
try {
  // ESM ignores NODE_PATH: resolve the package from the cache folder explicitly.
  const require = createRequire(path.join(path.resolve(cacheDir), 'package.json'));
  duckdb = require('@duckdb/node-api');
} catch (e) {
  console.error(`cannot load @duckdb/node-api from ${cacheDir}: ${e.message}\nrun scripts/install-deps.sh`);
  process.exit(2);
}

const quote = (s) => `'${s.replaceAll("'", "''")}'`;

function hexOfBytes(bytes) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

function cell(value, type) {
  if (value === null || value === undefined) return 'N';
  if (type.endsWith('[]')) {
    const element = type.slice(0, -2);
    return 'L[' + value.items.map((v) => cell(v, element)).join(',') + ']';
  }
  switch (type) {
    case 'BOOLEAN':
      return value ? '1' : '0';
    case 'FLOAT': {
      if (Number.isNaN(value)) return 'f:nan';
      const view = new DataView(new ArrayBuffer(4));
      view.setFloat32(0, value, true);
      return 'f:' + view.getUint32(0, true).toString(16).padStart(8, '0');
    }
    case 'DOUBLE': {
      if (Number.isNaN(value)) return 'd:nan';
      const view = new DataView(new ArrayBuffer(8));
      view.setFloat64(0, value, true);
      return 'd:' + view.getBigUint64(0, true).toString(16).padStart(16, '0');
    }
    case 'VARCHAR':
    case 'JSON':
      return 's:' + Buffer.from(String(value), 'utf8').toString('hex');
    case 'BLOB':
    case 'GEOMETRY':  // its well-known binary bytes, as feedline reads GEOMETRY and GEOGRAPHY
      return 'b:' + hexOfBytes(value.bytes);
    // Dates and times as integers since the epoch or midnight, in DuckDB's units; decimals as DuckDB's text.
    case 'DATE':
      return 'D:' + value.days;
    case 'TIME':
    case 'TIME WITH TIME ZONE':  // feedline reads TIME(isAdjustedToUTC) as its micros since midnight, in UTC
      return 'T:' + value.micros;
    case 'TIME_NS':
      return 'TN:' + value.nanos;
    case 'TIMESTAMP':
    case 'TIMESTAMP WITH TIME ZONE':
      return 'TS:' + value.micros;
    case 'TIMESTAMP_MS':
      return 'TS:' + BigInt(value.millis) * 1000n;
    case 'TIMESTAMP_S':
      return 'TS:' + BigInt(value.seconds) * 1000000n;
    case 'TIMESTAMP_NS':
      return 'TSN:' + value.nanos;
    // Its three counts, then the text DuckDB prints.
    case 'INTERVAL':
      return `I:${value.months},${value.days},${value.micros}=${String(value)}`;
    default:
      if (type.startsWith('DECIMAL')) return 'N:' + value.toString();
      if (type.startsWith('ENUM(')) return 's:' + Buffer.from(String(value), 'utf8').toString('hex');
      return String(value);  // integers: number or bigint
  }
}

async function dumpText(connection, sql) {
  const reader = await connection.runAndReadAll(sql);
  const names = reader.columnNames();
  const types = reader.columnTypes().map((t) => t.toString());
  const out = [`columns\t${names.length}`];
  for (let i = 0; i < names.length; ++i) out.push(`${names[i]}\t${types[i]}`);
  for (const row of reader.getRows()) out.push(row.map((v, i) => cell(v, types[i])).join('\t'));
  return out.join('\n') + '\n';
}

async function dump(connection, sql) {
  process.stdout.write(await dumpText(connection, sql));
}

// Every type feedline reads, required and optional, with edge values.
function makeTableSql(rows) {
  const nul = (expr, k) => `CASE WHEN i % ${k} = 0 THEN NULL ELSE ${expr} END`;
  const cols = [
    ['b', `(i % 3 = 0)::BOOLEAN`],
    ['i8', `((i * 37) % 256 - 128)::TINYINT`],
    ['u8', `((i * 91) % 256)::UTINYINT`],
    ['i16', `((i * 7919) % 65536 - 32768)::SMALLINT`],
    ['u16', `((i * 7919) % 65536)::USMALLINT`],
    ['i32', `((hash(i) % 4294967296)::BIGINT - 2147483648)::INTEGER`],
    ['u32', `(hash(i) % 4294967296)::UINTEGER`],
    ['i64', `(hash(i)::HUGEINT - 9223372036854775808)::BIGINT`],
    ['u64', `hash(i * 3)::UBIGINT`],
    ['f32', `CASE WHEN i % 17 = 1 THEN '-0.0'::FLOAT WHEN i % 19 = 2 THEN 'inf'::FLOAT ELSE ((hash(i) % 100000)::FLOAT / 7.0 - 5000)::FLOAT END`],
    ['f64', `CASE WHEN i % 23 = 4 THEN '-inf'::DOUBLE ELSE (hash(i)::DOUBLE / 3.0 - 1e19) END`],
    ['s', `repeat(chr((65 + i % 26)::INTEGER), (i % 13)::INTEGER) || 'é' || (i % 50)::VARCHAR`],
    ['blob', `('\\x00\\xFF'::BLOB || encode((i % 1000)::VARCHAR))`],
    ['iv', `to_months((i % 30)::INTEGER) + to_days((i % 45)::INTEGER) + to_milliseconds(((i * 7919) % 100000000)::BIGINT)`],
  ];
  const exprs = [];
  for (const [name, expr] of cols) {
    exprs.push(`${expr} AS ${name}_req`);
    exprs.push(`${nul(expr, 5)} AS ${name}_opt`);
  }
  exprs.push(`NULL::INTEGER AS all_null`);
  return `CREATE TABLE t AS SELECT ${exprs.join(', ')} FROM range(${rows}) r(i) ORDER BY i`;
}

const ident = (c) => `"${c.replaceAll('"', '""')}"`;

// The SQL for a field inside a column of DuckDB type `type` (the SQL `expr`), named as feedline names it: the
// dotted path of struct fields, lists and maps taken element by element (a map's `key` and `value` as the
// fields of its entries). A list of structs' field is the list of that field of each struct.
function extraction(expr, type, fields, depth) {
  if (fields.length === 0) return expr;
  const x = `x${depth}`;
  if (type instanceof duckdb.DuckDBListType) {
    return `list_transform(${expr}, ${x} -> ${extraction(x, type.valueType, fields, depth + 1)})`;
  }
  const [field, ...more] = fields;
  if (type instanceof duckdb.DuckDBMapType) {
    const which = field === 'key' ? 'key' : 'value';
    const inner = extraction(`struct_extract(${x}, '${which}')`, which === 'key' ? type.keyType : type.valueType,
                             more, depth + 1);
    return `list_transform(map_entries(${expr}), ${x} -> ${inner})`;
  }
  if (!(type instanceof duckdb.DuckDBStructType) || !(field in type.entryIndexes)) {
    throw new Error(`no field '${field}' in ${expr} of type ${type}`);
  }
  return extraction(`struct_extract(${expr}, ${quote(field)})`, type.entryTypes[type.entryIndexes[field]], more, depth);
}

// The SELECT that reads `file`'s columns by feedline's names (every column when `columns` is null): a dotted name
// that is no top-level column is a nested field (feedline's flattening) of the top-level column named by the
// longest prefix of its parts; a VARIANT as its JSON text. When the names are as many as the top-level columns
// and none is nested, they are those columns in order (DuckDB renames columns whose names differ only in case).
async function dumpSql(connection, file, columns) {
  const described = await connection.runAndReadAll(`SELECT * FROM read_parquet(${quote(file)}) LIMIT 0`);
  const duckNames = described.columnNames();
  const types = new Map(duckNames.map((n, i) => [n, described.columnTypes()[i]]));
  // A VARIANT as its JSON text; in a list (VARIANT[], VARIANT[][]...), each element so.
  const json = (e, depth) => depth === 0
    ? `CASE WHEN ${e} IS NULL THEN NULL ELSE CAST(${e} AS JSON)::VARCHAR END`
    : `list_transform(${e}, x${depth} -> ${json(`x${depth}`, depth - 1)})`;
  const topLevel = (name) => {
    const variant = /^VARIANT((?:\[\])*)$/.exec(String(types.get(name)));
    if (variant) return `${json(ident(name), variant[1].length / 2)} AS ${ident(name)}`;
    return ident(name);
  };
  let names = columns ?? duckNames;
  if (names.length === duckNames.length && names.every((c) => types.has(c) || !c.includes('.'))) names = duckNames;
  const select = names.map((c) => {
    if (types.has(c) || !c.includes('.')) return topLevel(c);
    const parts = c.split('.');
    for (let k = parts.length - 1; k >= 1; --k) {
      const head = parts.slice(0, k).join('.');
      if (types.has(head)) return `${extraction(ident(head), types.get(head), parts.slice(k), 0)} AS ${ident(c)}`;
    }
    throw new Error(`no column for '${c}'`);
  }).join(', ');
  return `SELECT ${select} FROM read_parquet(${quote(file)})`;
}

const instance = await duckdb.DuckDBInstance.create(':memory:');
const connection = await instance.connect();
try {
  if (mode === 'dump') {
    await dump(connection, await dumpSql(connection, file, rest.length > 0 ? JSON.parse(rest[0]) : null));
  } else if (mode === 'folder') {
    // `file` is a JSON array of [path, columns] (columns: feedline's names, or null for every column). For each:
    // "file<TAB>path", then its dump, or "error<TAB>message" when DuckDB refuses it.
    // A fatal error invalidates DuckDB's database: every file after one gets a fresh one.
    let db = null;
    let con = null;
    for (const [path, columns] of JSON.parse(fs.readFileSync(file, 'utf8'))) {
      if (con === null) {
        db = await duckdb.DuckDBInstance.create(':memory:');
        con = await db.connect();
      }
      let text;
      try {
        text = await dumpText(con, await dumpSql(con, path, columns));
      } catch (e) {
        text = 'error\t' + String(e.message).replaceAll('\n', ' ') + '\n';
        con.closeSync();
        db.closeSync();
        con = db = null;
      }
      process.stdout.write(`file\t${path}\n` + text);
    }
    if (con !== null) {
      con.closeSync();
      db.closeSync();
    }
  } else if (mode === 'copy') {
    await connection.run(`COPY (${rest[0]}) TO ${quote(file)} (FORMAT parquet)`);
    const reader = await connection.runAndReadAll(
      `SELECT count(*) FROM parquet_schema(${quote(file)}) WHERE name = 'typed_value'`);
    console.log(String(reader.getRows()[0][0]));
  } else if (mode === 'count') {
    for (const where of JSON.parse(rest[0])) {
      const reader = await connection.runAndReadAll(`SELECT count(*) FROM read_parquet(${quote(file)}) WHERE ${where}`);
      console.log(String(reader.getRows()[0][0]));
    }
  } else if (mode === 'write') {
    const [codec, rows, rowGroupSize] = rest;
    await connection.run(makeTableSql(Number(rows)));
    await connection.run(
      `COPY t TO ${quote(file)} (FORMAT parquet, COMPRESSION ${codec}, ROW_GROUP_SIZE ${Number(rowGroupSize)})`);
    await dump(connection, 'SELECT * FROM t');
  } else if (mode === 'lists') {
    const [codec, rows, rowGroupSize] = rest;
    await connection.run(`CREATE TABLE t AS SELECT
        i::INTEGER AS id,
        list_transform(range(8), k -> (i * 0.5 - k * 1.25)::FLOAT) AS embedding,
        list_transform(range(6), k -> ((i * 7 + k * 31) % 256)::UTINYINT) AS pixels,
        CASE WHEN i % 7 = 0 THEN NULL
             ELSE list_transform(range((i % 5)::BIGINT), k -> CASE WHEN (i + k) % 3 = 0 THEN NULL
                                                                ELSE (i * 1000 + k)::BIGINT END) END AS ragged,
        list_transform(range((i % 3)::BIGINT), k -> repeat('x', (k + i % 4)::INTEGER) || i::VARCHAR) AS words,
        list_transform(range((i % 2)::BIGINT), k -> (i % 3 = 0)::BOOLEAN) AS flags
      FROM range(${Number(rows)}) r(i) ORDER BY i`);
    await connection.run(
      `COPY t TO ${quote(file)} (FORMAT parquet, COMPRESSION ${codec}, ROW_GROUP_SIZE ${Number(rowGroupSize)})`);
    await dump(connection, 'SELECT * FROM t');
  } else if (mode === 'nested') {
    const [codec, rows, rowGroupSize] = rest;
    await connection.run(`CREATE TABLE t AS SELECT
        i::INTEGER AS id,
        list_transform(range(3), k -> list_transform(range(4), j -> (i * 0.25 + k * 4 + j)::FLOAT)) AS boxes,
        CASE WHEN i % 11 = 0 THEN NULL
             ELSE list_transform(range((i % 4)::BIGINT), k -> CASE WHEN (i + k) % 5 = 0 THEN NULL
                    ELSE list_transform(range(((i + k) % 3)::BIGINT), j -> CASE WHEN (i + j) % 7 = 0 THEN NULL
                                                                           ELSE (i * 100 + k * 10 + j)::BIGINT END) END)
             END AS ragged,
        list_transform(range((i % 3)::BIGINT), k -> list_transform(range((k % 2 + 1)::BIGINT),
          j -> list_transform(range(((i + j) % 3)::BIGINT), m -> 'w' || (i + k + j + m)::VARCHAR))) AS deep
      FROM range(${Number(rows)}) r(i) ORDER BY i`);
    await connection.run(
      `COPY t TO ${quote(file)} (FORMAT parquet, COMPRESSION ${codec}, ROW_GROUP_SIZE ${Number(rowGroupSize)})`);
    await dump(connection, 'SELECT * FROM t');
  } else if (mode === 'structs') {
    // Nullable structs, a struct inside a struct, a list inside a struct; nulls at every level.
    const [rows] = rest;
    await connection.run(`CREATE TABLE t AS SELECT
        i::INTEGER AS id,
        CASE WHEN i % 5 = 0 THEN NULL ELSE {
          'x': CASE WHEN i % 3 = 0 THEN NULL ELSE (i * 2)::INTEGER END,
          'y': 'v' || i::VARCHAR,
          'inner': CASE WHEN i % 7 = 0 THEN NULL ELSE {'z': (i * 0.5)::DOUBLE} END} END AS s,
        CASE WHEN i % 4 = 0 THEN NULL ELSE {
          'a': i::BIGINT,
          'l': CASE WHEN i % 6 = 1 THEN NULL WHEN i % 6 = 2 THEN []::BIGINT[]
                    ELSE [i, CASE WHEN i % 9 = 0 THEN NULL ELSE i + 1 END]::BIGINT[] END,
          'boxes': [[i * 0.5, 1.0], CASE WHEN i % 10 = 3 THEN NULL ELSE [] END]::DOUBLE[][]} END AS with_list
      FROM range(${Number(rows)}) r(i) ORDER BY i`);
    await connection.run(`COPY t TO ${quote(file)} (FORMAT parquet)`);
    await dump(connection, `SELECT id, s.x AS "s.x", s.y AS "s.y", s.inner.z AS "s.inner.z",
                                   with_list.a AS "with_list.a", with_list.l AS "with_list.l",
                                   with_list.boxes AS "with_list.boxes" FROM t`);
  } else if (mode === 'liststructs') {
    // Lists of structs (nullable at every level, a list and a struct among the fields), maps (null, empty, with
    // null values, of lists) and lists of lists of structs; written only (`dump` reads them back by name).
    const [rows, rowGroupSize] = rest;
    await connection.run(`CREATE TABLE t AS SELECT
        i::INTEGER AS id,
        CASE WHEN i % 7 = 0 THEN NULL ELSE list_transform(range((i % 4)::BIGINT), k -> CASE WHEN (i + k) % 5 = 0 THEN NULL
          ELSE {'label': CASE WHEN (i + k) % 3 = 0 THEN NULL ELSE (i * 10 + k)::INTEGER END,
                'name': 'o' || (i + k)::VARCHAR,
                'bbox': CASE WHEN (i + k) % 11 = 1 THEN NULL ELSE list_transform(range(4), j -> (i + k * 0.5 + j)::FLOAT) END,
                'inner': CASE WHEN (i + k) % 6 = 2 THEN NULL ELSE {'z': (i - k)::BIGINT} END} END) END AS objects,
        CASE WHEN i % 9 = 0 THEN NULL ELSE map_from_entries(list_transform(range((i % 3)::BIGINT),
          k -> {'key': 'k' || k::VARCHAR, 'value': CASE WHEN (i + k) % 4 = 0 THEN NULL ELSE (i + k)::DOUBLE END})) END AS attrs,
        map_from_entries(list_transform(range((i % 2 + 1)::BIGINT), k -> {'key': k::INTEGER,
          'value': CASE WHEN i % 5 = 3 THEN NULL ELSE list_transform(range(((i + k) % 3)::BIGINT), j -> j::SMALLINT) END}))
          AS tags,
        list_transform(range((i % 3)::BIGINT), k -> list_transform(range(((i + k) % 2 + 1)::BIGINT),
          j -> {'v': (i + k + j)::INTEGER})) AS grid
      FROM range(${Number(rows)}) r(i) ORDER BY i`);
    await connection.run(`COPY t TO ${quote(file)} (FORMAT parquet, ROW_GROUP_SIZE ${Number(rowGroupSize)})`);
  } else if (mode === 'hf') {
    // A flat table's `image.bytes` and `image.path` columns as Hugging Face stores images: one struct column.
    const [out] = rest;
    await connection.run(`COPY (SELECT * EXCLUDE ("image.bytes", "image.path"),
                                       {'bytes': "image.bytes", 'path': "image.path"} AS image
                                FROM read_parquet(${quote(file)})) TO ${quote(out)} (FORMAT parquet)`);
  } else if (mode === 'pandas') {
    // The layout pandas writes through pyarrow: INT64 columns, SNAPPY, dictionary pages, and the `pandas`
    // schema in the footer's key-value metadata.
    const [rows] = rest;
    const pixels = Array.from({ length: 30 }, (_, i) => `((i * ${7 + i}) % 256)::BIGINT AS pixel${i + 1}`);
    await connection.run(`CREATE TABLE t AS SELECT (i % 10)::BIGINT AS label, ${pixels.join(', ')}
                          FROM range(${Number(rows)}) r(i)`);
    const meta = JSON.stringify({ index_columns: [], columns: [{ name: 'label', pandas_type: 'int64' }],
                                  creator: { library: 'pyarrow' }, pandas_version: '2.1.0' });
    await connection.run(`COPY t TO ${quote(file)} (FORMAT parquet, COMPRESSION snappy,
                          KV_METADATA {pandas: ${quote(meta)}})`);
    await dump(connection, 'SELECT * FROM t');
  } else if (mode === 'time') {
    const [threads, runs] = rest;
    await connection.run(`SET threads = ${Number(threads)}`);
    const sql = `CREATE OR REPLACE TEMP TABLE x AS SELECT * FROM read_parquet(${quote(file)})`;
    await connection.run(sql);  // warm-up
    const times = [];
    for (let r = 0; r < Number(runs); ++r) {
      await connection.run('DROP TABLE IF EXISTS x');
      const t0 = performance.now();
      await connection.run(sql);
      times.push((performance.now() - t0) / 1000);
    }
    process.stdout.write(times.map((t) => t.toFixed(4)).join(' ') + '\n');
  } else {
    console.error(`unknown mode ${mode}`);
    process.exit(64);
  }
} finally {
  connection.closeSync();
  instance.closeSync();
}
