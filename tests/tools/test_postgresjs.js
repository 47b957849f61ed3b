// postgres.js 3 (npm `postgres`, pinned in tests/node/package-lock.json; its own wire
// protocol, not node-pg), run by tests/tools/test_postgresjs.py against hatiproxy and
// PostgreSQL 15: the array-type fetch on connect, named prepared statements (Parse /
// Describe / Bind / Execute pipelined, reused) whose parameters are sent with the types
// Describe inferred, `prepare: false`, the `types` option, dynamic helpers (insert,
// update, IN lists, identifiers), arrays, json and bigint, sql.begin with savepoints,
// sql.unsafe, sql.file, cursors, forEach, COPY streams and LISTEN / NOTIFY.
// Prints one JSON line of results; the test compares the two servers' lines.
const fs = require("fs");
const os = require("os");
const path = require("path");
const { pipeline } = require("stream/promises");
const { Readable } = require("stream");
const postgres = require(path.join(__dirname, "..", "node", "node_modules", "postgres"));

const port = Number(process.argv[2]);
const conn = { host: "127.0.0.1", port, user: "postgres", database: "postgres", onnotice: () => {} };

// JSON.stringify cannot print a BigInt; Dates print as ISO text
const plain = (x) => JSON.parse(JSON.stringify(x, (_, v) => (typeof v === "bigint" ? `${v}n` : v)));
const rows = (r) => plain([...r]);

async function attempt(fn) {
  try { return { ok: plain(await fn()) }; } catch (e) { return { error: e.code || e.message }; }
}

const out = {};

async function main() {
  const sql = postgres({ ...conn, max: 2 });
  await sql`drop table if exists pj_items`;
  await sql`drop table if exists pj_copy`;
  await sql`create table pj_items (
    id serial primary key, name text not null unique, qty integer default 0, tags text[],
    meta jsonb, big bigint, price numeric(10, 2), seen timestamptz default '2024-01-02 03:04:05+00')`;
  await sql`create table pj_copy (id integer, label text, amount numeric(8, 2))`;

  // dynamic insert of several objects, named columns, arrays / json / bigint parameters
  const items = [
    { name: "apple", qty: 3, tags: ["fruit", "red"], meta: sql.json({ k: 1, n: [1, 2] }), big: "9007199254740993", price: 1.25 },
    { name: "bread", qty: 0, tags: ["bakery"], meta: sql.json({ k: 2 }), big: "-5", price: 2.5 },
    { name: "cheese", qty: 7, tags: [], meta: null, big: null, price: null },
  ];
  const inserted = await sql`insert into pj_items ${sql(items, "name", "qty", "tags", "meta", "big", "price")}
    returning id, name, tags, meta, big, price`;
  out.inserted = rows(inserted);
  out.insertCommand = [inserted.command, inserted.count];
  // a single object, every key
  out.single = rows(await sql`insert into pj_items ${sql({ name: "dates", qty: 12 })} returning id, qty`);

  // parameters whose types the server infers (postgres.js sends numbers as unknown)
  out.inferred = rows(await sql`select name, qty from pj_items where qty > ${2} and id <= ${10} order by id`);
  out.arith = rows(await sql`select ${5}::int + ${2} as s, ${"x"} || 'y' as t, ${true} as b`);
  out.describe = await sql`select id, name, tags from pj_items where qty > ${1} and name <> ${"z"}`
    .describe().then((d) => ({ types: d.types, columns: d.columns.map((c) => [c.name, c.type]) }));
  // the same statement again: postgres.js reuses the named statement it prepared
  for (const q of [1, 5]) out[`reuse${q}`] = rows(await sql`select count(*) as n from pj_items where qty > ${q}`);

  // IN lists, identifiers, dynamic update, array parameters, ANY
  out.inList = rows(await sql`select name from pj_items where name in ${sql(["apple", "cheese", "nope"])} order by name`);
  out.ident = rows(await sql`select ${sql("name")}, ${sql(["qty", "id"])} from ${sql("pj_items")} where id = ${1}`);
  out.update = rows(await sql`update pj_items set ${sql({ qty: 9, price: 3.5 }, "qty", "price")} where name = ${"bread"} returning qty, price`);
  out.anyArray = rows(await sql`select name from pj_items where name = any(${sql.array(["apple", "bread"])}) order by name`);
  out.intArray = rows(await sql`select ${sql.array([1, 2, 3])}::int[] as a, array_length(${sql.array([1, 2])}::int[], 1) as n`);
  out.overlap = rows(await sql`select name from pj_items where tags && ${sql.array(["red", "bakery"])}::text[] order by name`);
  out.arrays = rows(await sql`select tags, array[1, 2]::int[] as ints, array['a b', null, 'c"d']::text[] as odd from pj_items where name = ${"apple"}`);
  out.json = rows(await sql`select meta, meta->'n' as n, meta->>'k' as k, ${sql.json({ z: [true, null] })}::jsonb as p from pj_items where id = ${1}`);
  out.jsonFilter = rows(await sql`select name from pj_items where meta @> ${sql.json({ k: 2 })} order by name`);
  out.bigint = rows(await sql`select big, big + 1 as next, count(*) over () as total from pj_items where big is not null order by id`);
  out.intResults = rows(await sql`select length(name) as l, strpos(name, 'p') as p, array_length(tags, 1) as n from pj_items where id = ${1}`);
  out.values = plain(await sql`select id, name from pj_items order by id limit 2`.values());
  out.columns = (await sql`select id, name, qty, price, seen, tags, meta, big from pj_items limit 1`).columns.map((c) => [c.name, c.type]);
  out.timestamp = (await sql`select seen from pj_items where id = ${1}`).map((r) => [r.seen instanceof Date, r.seen.toISOString()]);
  out.dateParam = rows(await sql`select ${new Date("2024-02-03T04:05:06Z")}::timestamptz as t`);

  // transactions and savepoints
  out.begin = plain(await sql.begin(async (tx) => {
    await tx`insert into pj_items (name, qty) values (${"eggs"}, ${6})`;
    const inner = await tx.savepoint(async (sp) => {
      await sp`update pj_items set qty = qty + 1 where name = ${"eggs"}`;
      return (await sp`select qty from pj_items where name = ${"eggs"}`)[0].qty;
    });
    try {
      await tx.savepoint("sp_fail", async (sp) => {
        await sp`insert into pj_items (name) values (${"ghost"})`;
        await sp`insert into pj_items (name) values (${"apple"})`;  // unique violation
      });
    } catch (e) { out.savepointError = e.code; }
    return [inner, (await tx`select count(*) as n from pj_items where name = ${"ghost"}`)[0].n];
  }));
  out.rolledBack = await attempt(() => sql.begin(async (tx) => {
    await tx`insert into pj_items (name) values (${"phantom"})`;
    throw new Error("rollback please");
  }));
  out.phantoms = rows(await sql`select count(*) as n from pj_items where name = ${"phantom"}`);
  out.pipelined = plain(await sql.begin((tx) => [
    tx`update pj_items set qty = 0 where name = ${"eggs"}`,
    tx`select qty from pj_items where name = ${"eggs"}`,
  ]).then((r) => r.map((x) => [...x])));
  out.beginOptions = plain(await sql.begin("isolation level serializable", async (tx) =>
    [...await tx`select name from pj_items where id = ${1}`]));

  // unsafe (simple and extended), file
  out.unsafe = rows(await sql.unsafe("select name from pj_items where qty >= 7 order by name"));
  out.unsafeArgs = rows(await sql.unsafe("select $1::text || $2 as s, $3::int * 2 as d", ["a", "b", 21]));
  out.unsafePrepared = rows(await sql.unsafe("select name from pj_items where id = $1", [2], { prepare: true }));
  out.simple = plain((await sql`select 1 as a; select 'two' as b`.simple()).map((r) => [...r]));
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pgjs-")), "query.sql");
  fs.writeFileSync(file, "select name, qty * $2 as scaled from pj_items where name = $1\n");
  out.file = rows(await sql.file(file, ["apple", 10]));

  // cursors and forEach
  const batches = [];
  await sql`select id from pj_items where id <= ${7} order by id`.cursor(3, (b) => { batches.push(b.map((r) => r.id)); });
  out.cursor = batches;
  const early = [];
  for await (const [r] of sql`select id as x from pj_items order by id`.cursor()) {
    early.push(r.x);
    if (early.length === 4) break;
  }
  out.cursorBreak = early;
  // postgres.js's README cursor example: the alias names the series' integer column
  const series = [];
  await sql`select * from generate_series(1, 4) as x`.cursor(async ([row]) => { series.push(row); });
  out.series = plain(series);
  const each = [];
  await sql`select name from pj_items order by id`.forEach((r) => each.push(r.name));
  out.forEach = each;

  // COPY FROM STDIN / TO STDOUT as streams
  const writable = await sql`copy pj_copy (id, label, amount) from stdin`.writable();
  await pipeline(Readable.from(["1\tone\t1.50\n2\t", "two\t\\N\n3\tthr\\tee\t3\n"]), writable);
  out.copiedIn = rows(await sql`select id, label, amount from pj_copy order by id`);
  const csv = await sql`copy pj_copy (id, label, amount) from stdin with (format csv, header true)`.writable();
  await pipeline(Readable.from(["id,label,amount\n4,\"fo,ur\",4.25\n"]), csv);
  let text = "";
  for await (const chunk of await sql`copy (select id, label, amount from pj_copy order by id) to stdout`.readable()) text += chunk;
  out.copiedOut = text;
  text = "";
  for await (const chunk of await sql`copy pj_copy to stdout with (format csv)`.readable()) text += chunk;
  out.copiedCsv = text.split("\n").sort();

  // errors keep their SQLSTATE; the connection stays usable
  out.errors = [
    await attempt(() => sql`insert into pj_items (name) values (${"apple"})`),
    await attempt(() => sql`select * from pj_missing`),
    await attempt(() => sql`select ${"abc"}::int`),
  ];
  out.afterErrors = rows(await sql`select count(*) as n from pj_items`);

  // bytea both ways, raw buffers, a reserved connection, a nested savepoint, a cancel
  out.bytea = rows(await sql`select ${Buffer.from([0, 1, 254, 255])}::bytea as b, octet_length(${Buffer.from("abc")}) as n`)
    .map((r) => [r.b.data, r.n]);
  out.raw = (await sql`select 7 as a, 'x' as b`.raw()).map((r) => r.map((b) => b.toString()));
  const reserved = await sql.reserve();
  await reserved`set application_name = 'pgjs_reserved'`;
  out.reserved = rows(await reserved`select current_setting('application_name') as app`);
  reserved.release();
  out.nested = plain(await sql.begin(async (tx) => {
    await tx`update pj_items set qty = 1 where name = ${"cheese"}`;
    await tx.savepoint(async (a) => {
      await a`update pj_items set qty = 2 where name = ${"cheese"}`;
      await a.savepoint(async (b) => {
        await b`update pj_items set qty = 3 where name = ${"cheese"}`;
      }).catch(() => {});
      try {
        await a.savepoint(async (c) => {
          await c`update pj_items set qty = 4 where name = ${"cheese"}`;
          throw new Error("undo 4");
        });
      } catch (e) { /* rolled back to before 4 */ }
    });
    return (await tx`select qty from pj_items where name = ${"cheese"}`)[0].qty;
  }));
  out.cancel = await attempt(async () => {
    const q = sql`select pg_sleep(5)`.execute();
    setTimeout(() => q.cancel(), 300);
    await q;
  });
  out.afterCancel = rows(await sql`select 1 as one`);

  // LISTEN / NOTIFY on a dedicated connection
  out.listen = await attempt(async () => {
    const got = [];
    const { unlisten } = await sql.listen("pj_news", (payload) => got.push(payload));
    await sql.notify("pj_news", "hello");
    await sql`select pg_notify(${"pj_news"}, ${"world"})`;
    for (let i = 0; i < 50 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 100));
    await unlisten();
    return got;
  });
  await sql.end();

  // prepare: false (unnamed statements) and the `types` option (bigint as BigInt, numeric parsed)
  const typed = postgres({
    ...conn, max: 1, prepare: false,
    types: {
      bigint: postgres.BigInt,
      numeric: { to: 1700, from: [1700], serialize: (x) => String(x), parse: (x) => Number(x) },
    },
  });
  out.unprepared = rows(await typed`select name, big, price from pj_items where id = ${1} or qty = ${9} order by id`);
  out.typedParam = rows(await typed`select ${123456789012345678n} + 1 as b, ${typed.typed.numeric(2.5)} * 2 as n`);
  out.typedCount = rows(await typed`select count(*) as n from pj_items`);
  await typed.end();
  console.log(JSON.stringify(out));
}

// on a failure, what was found so far, for the test's message
main().catch((e) => { console.error(e); console.log(JSON.stringify({ ...out, fatal: String(e) })); process.exit(1); });
