// The values the other producers' scripts (arrow_rs_parquet.mjs, polars_parquet.mjs, hyparquet_parquet.mjs,
// parquetjs_parquet.mjs) fill their tables with: the same every run, from a seeded generator.

// Value makers for a table of `rows` rows drawn from `seed`:
//   next()            31 random bits (mulberry32's 32, shifted);
//   pick(n)           a whole number in [0, n);
//   maybe(f, every)   null one time in `every` (7), else f();
//   column(f)         f(i) for each row i;
//   float(i)          a float, one row in 50 a special one (NaN, infinities, -0, ...).
export function tableValues(rows, seed) {
  const next = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) >>> 1;
  };
  const pick = (n) => next() % n;
  const specials = [NaN, Infinity, -Infinity, -0, 0, 1.5, -2.25, 3.4e38];
  return {
    next,
    pick,
    maybe: (f, every = 7) => (pick(every) === 0 ? null : f()),
    column: (f) => Array.from({ length: rows }, (_, i) => f(i)),
    float: (i) => (i % 50 === 3 ? specials[pick(specials.length)] : (pick(2000000) - 1000000) / 64),
  };
}

// Strings that test a reader: empty, a comma, quotes, UTF-8 of two and three bytes, a line end, a long one.
export const words = ['', 'a', 'b,c', 'say "hi"', 'é', '日本語', 'two\nlines', 'x'.repeat(40)];
