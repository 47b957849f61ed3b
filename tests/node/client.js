// node-postgres against a running hatiproxy. Usage: node client.js PORT
// Prints "ok <n>" on success; any failed check throws and exits non-zero.
"use strict";

const assert = require("node:assert/strict");
const { Client, Pool } = require("pg");

const port = Number(process.argv[2]);
const config = { host: "127.0.0.1", port, user: "tester", database: "hatidata" };
const table = "node_client_" + process.pid;
let checks = 0;

function check(cond, message) {
  assert.ok(cond, message);
  checks += 1;
}

async function expectError(client, sql, params, code) {
  try {
    await client.query(sql, params);
  } catch (err) {
    assert.equal(err.code, code, `${sql}: ${err.message}`);
    checks += 1;
    return err;
  }
  throw new Error(`expected ${code} from: ${sql}`);
}

async function main() {
  const client = new Client(config);
  await client.connect();
  try {
    // Parameterised queries: pg uses the extended protocol for them.
    let r = await client.query("SELECT $1::int + $2::int AS sum, $3::text AS t", [2, 3, "x"]);
    check(r.rows[0].sum === 5 && r.rows[0].t === "x", "params");
    check(r.fields[0].dataTypeID === 23, "int4 oid");

    r = await client.query(
      `SELECT 42::int8 AS big, 1.5::float8 AS f, 12.50::numeric(6,2) AS n, true AS b,
              DATE '2024-02-29' AS d, TIMESTAMPTZ '2024-01-02 03:04:05+00' AS tz,
              '{"k": [1, 2]}'::json AS j, ARRAY[1, 2, 3] AS arr, NULL::text AS nothing,
              '\\x0102'::bytea AS raw, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS u`
    );
    const row = r.rows[0];
    check(row.big === "42", "int8 arrives as string");
    check(row.f === 1.5 && row.n === "12.50" && row.b === true, "float/numeric/bool");
    check(row.tz instanceof Date && row.tz.toISOString() === "2024-01-02T03:04:05.000Z", "tz");
    check(row.d instanceof Date, "date");
    check(JSON.stringify(row.j) === '{"k":[1,2]}', "json parsed");
    check(JSON.stringify(row.arr) === "[1,2,3]", "int array");
    check(row.nothing === null, "null");
    check(row.u === "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "uuid");

    // DML with row counts, named prepared statements reused.
    await client.query(`CREATE TABLE ${table} (id int PRIMARY KEY, name text, score double)`);
    for (let i = 0; i < 5; i++) {
      r = await client.query({
        name: "ins",
        text: `INSERT INTO ${table} VALUES ($1, $2, $3)`,
        values: [i, `n${i}`, i / 2],
      });
      check(r.rowCount === 1 && r.command === "INSERT", "insert rowCount");
    }
    r = await client.query({ name: "sel", text: `SELECT * FROM ${table} WHERE id >= $1 ORDER BY id`, values: [3] });
    check(r.rows.length === 2 && r.rows[0].name === "n3" && r.rows[1].score === 2, "select");
    r = await client.query(`UPDATE ${table} SET score = score + 1 WHERE id < $1`, [2]);
    check(r.rowCount === 2 && r.command === "UPDATE", "update rowCount");
    r = await client.query({ text: `SELECT id, name FROM ${table} ORDER BY id`, rowMode: "array" });
    check(r.rows.length === 5 && r.rows[4][1] === "n4", "rowMode array");

    // Transactions.
    await client.query("BEGIN");
    await client.query(`INSERT INTO ${table} VALUES (100, 'temp', 0)`);
    await client.query("ROLLBACK");
    r = await client.query(`SELECT count(*)::int AS c FROM ${table}`);
    check(r.rows[0].c === 5, "rollback undid insert");
    await client.query("BEGIN");
    await expectError(client, `INSERT INTO ${table} VALUES ($1, 'dup', 0)`, [1], "23505");
    await expectError(client, "SELECT 1", [], "25P02");
    await client.query("ROLLBACK");

    // Errors with codes; the connection stays usable.
    await expectError(client, "SELECT * FROM no_such_table_node", [], "42P01");
    await expectError(client, "SELEC 1", [], "42601");
    await expectError(client, "SELECT $1::int", ["abc"], "22P02");
    r = await client.query("SELECT 'alive' AS s");
    check(r.rows[0].s === "alive", "usable after errors");

    // Multiple statements in one simple query.
    const multi = await client.query("SELECT 1 AS a; SELECT 2 AS b");
    check(Array.isArray(multi) && multi[1].rows[0].b === 2, "multi statement");

    await client.query(`DROP TABLE ${table}`);
  } finally {
    await client.end();
  }

  // A pool across several checkouts.
  const pool = new Pool({ ...config, max: 3 });
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => pool.query("SELECT $1::int * 10 AS v", [i]))
  );
  check(results.every((res, i) => res.rows[0].v === i * 10), "pool queries");
  await pool.end();

  console.log(`ok ${checks}`);
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exit(1);
});
