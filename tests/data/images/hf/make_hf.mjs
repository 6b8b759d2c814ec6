// Makes the Parquet image files of this folder with DuckDB (the npm package @duckdb/node-api), from the images
// one folder up:
//   node tests/data/images/hf/make_hf.mjs <npm_cache_dir>      (from the checkout's root; .cache/npm by default)
// train/train-0000{0,1}-of-00002.parquet: Hugging Face's image layout, `image STRUCT(bytes BLOB, path VARCHAR)`
//   and `label BIGINT`, 5 and 3 rows in row groups of 2, with the `huggingface` footer key naming the label's
//   classes (ClassLabel names cat, dog, bird);
// plain.parquet: `label TINYINT` before a plain `image BLOB`, 5 rows in row groups of 3, no footer key.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const cacheDir = process.argv[2] ?? '.cache/npm';
const require = createRequire(path.join(path.resolve(cacheDir), 'package.json'));
const duckdb = require('@duckdb/node-api');

const here = path.dirname(new URL(import.meta.url).pathname);
const images = path.dirname(here);
const quote = (s) => `'${s.replaceAll("'", "''")}'`;
const blob = (name) => `(SELECT content FROM read_blob(${quote(path.join(images, name))}))`;

// Each row: [image file, label]; the rows of a file in order.
const train = [
  [['png_named.jpg', 0], ['chelsea_lossy.webp', 1], ['foo3x5x4indexed.png', 2], ['green_palette.png', 0],
   ['chelsea_alpha.webp', 1]],
  [['gray16.png', 2], ['chelsea_gray.jpg', 0], ['chelsea_1bit.png', 1]],
];
const plain = [['foo3x5x4indexed.png', 3], ['gray16.png', 0], ['green_palette.png', 7], ['png_named.jpg', 1],
               ['chelsea_lossy.webp', 2]];

const features = {
  image: { _type: 'Image' },
  label: { names: ['cat', 'dog', 'bird'], _type: 'ClassLabel' },
};
const huggingface = JSON.stringify({ info: { features } });

const instance = await duckdb.DuckDBInstance.create(':memory:', { threads: '1' });
const connection = await instance.connect();
// The rows in row groups of `size`: each group is one sorted query, which DuckDB hands the writer as one chunk of
// rows, and the writer ends a row group at the end of a chunk once it holds ROW_GROUP_SIZE rows.
const rowsSql = (rows, size, row) => {
  const groups = [];
  for (let g = 0; g < rows.length; g += size) {
    const part = rows.slice(g, g + size).map(([name, label], i) => `SELECT ${g + i} AS i, ${row(name, label)}`);
    groups.push(`(SELECT * FROM (${part.join(' UNION ALL ')}) ORDER BY i)`);
  }
  return groups.join(' UNION ALL ');
};

fs.mkdirSync(path.join(here, 'train'), { recursive: true });
for (const [k, rows] of train.entries()) {
  const file = path.join(here, 'train', `train-0000${k}-of-00002.parquet`);
  const select = rowsSql(rows, 2, (name, label) =>
    `{'bytes': ${blob(name)}, 'path': ${quote(name)}} AS image, ${label}::BIGINT AS label`);
  await connection.run(
    `COPY (SELECT image, label FROM (${select})) TO ${quote(file)} ` +
    `(FORMAT parquet, ROW_GROUP_SIZE 2, KV_METADATA {huggingface: ${quote(huggingface)}})`);
}
{
  const file = path.join(here, 'plain.parquet');
  const select = rowsSql(plain, 3, (name, label) => `${label}::TINYINT AS label, ${blob(name)} AS image`);
  await connection.run(`COPY (SELECT label, image FROM (${select})) TO ${quote(file)} ` +
                       `(FORMAT parquet, ROW_GROUP_SIZE 3)`);
}
