// Kysely 0.28 (npm `kysely`, its PostgresDialect over node-postgres; pinned in
// tests/node/package-lock.json), run by tests/tools/test_kysely.py against hatiproxy and
// PostgreSQL 15: the Migrator (createTable with serial / varchar / timestamptz
// defaultTo(now()) / references().onDelete('cascade'), createIndex, addColumn,
// createSchema, createType asEnum, withSchema, createView; migrateToLatest twice,
// migrateDown, migrateTo; its kysely_migration and kysely_migration_lock tables and its
// advisory lock), db.introspection.getTables() (its pg_catalog query), the query builder
// (selectFrom / where / innerJoin / groupBy / count, insertInto ... returning, onConflict
// doNothing / doUpdateSet, updateTable, deleteFrom) and transactions with savepoints.
// Prints one JSON line; the test compares the two servers'.
const path = require("path");
const modules = path.join(__dirname, "..", "node", "node_modules");
const { Kysely, PostgresDialect, Migrator, sql } = require(path.join(modules, "kysely"));
const { Pool } = require(path.join(modules, "pg"));

const migrations = {
  "2024_01_init": {
    async up(db) {
      await db.schema.createTable("ky_person")
        .addColumn("id", "serial", (c) => c.primaryKey())
        .addColumn("first_name", "varchar(100)", (c) => c.notNull())
        .addColumn("nick", "text")
        .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
        .execute();
      await db.schema.createTable("ky_pet")
        .addColumn("id", "serial", (c) => c.primaryKey())
        .addColumn("name", "varchar(50)", (c) => c.notNull().unique())
        .addColumn("owner_id", "integer", (c) => c.notNull().references("ky_person.id").onDelete("cascade"))
        .addColumn("species", "varchar(20)")
        .addColumn("weight", "numeric(6, 2)")
        .execute();
      await db.schema.createIndex("ky_pet_owner_idx").on("ky_pet").column("owner_id").execute();
    },
    async down(db) {
      await db.schema.dropTable("ky_pet").execute();
      await db.schema.dropTable("ky_person").execute();
    },
  },
  "2024_02_more": {
    async up(db) {
      await db.schema.alterTable("ky_person").addColumn("last_name", "varchar(100)").execute();
      await db.schema.alterTable("ky_pet").addColumn("age", "integer", (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable("ky_pet").addColumn("tags", sql`text[]`).execute();
    },
    async down(db) {
      await db.schema.alterTable("ky_pet").dropColumn("tags").execute();
      await db.schema.alterTable("ky_pet").dropColumn("age").execute();
      await db.schema.alterTable("ky_person").dropColumn("last_name").execute();
    },
  },
  "2024_03_schema": {
    async up(db) {
      await db.schema.createSchema("ky_archive").ifNotExists().execute();
      await db.schema.createType("ky_mood").asEnum(["calm", "wild"]).execute();
      await db.schema.withSchema("ky_archive").createTable("ky_old_pet")
        .addColumn("id", "bigserial", (c) => c.primaryKey())
        .addColumn("mood", sql`ky_mood`, (c) => c.defaultTo("calm"))
        .addColumn("meta", "jsonb")
        .addColumn("born", "date")
        .addColumn("uid", "uuid", (c) => c.defaultTo(sql`gen_random_uuid()`))
        .addUniqueConstraint("ky_old_pet_born_mood", ["born", "mood"])
        .execute();
      await db.schema.createView("ky_pet_names").as(db.selectFrom("ky_pet").select(["id", "name"])).execute();
    },
    async down(db) {
      await db.schema.dropView("ky_pet_names").execute();
      await db.schema.withSchema("ky_archive").dropTable("ky_old_pet").execute();
      await db.schema.dropType("ky_mood").execute();
      await db.schema.dropSchema("ky_archive").execute();
    },
  },
};

const results = (r) => ({ error: r.error ? String(r.error.message || r.error) : null,
  results: (r.results || []).map((x) => [x.migrationName, x.direction, x.status]) });
const tables = async (db, internal) => (await db.introspection.getTables({ withInternalKyselyTables: internal }))
  .filter((t) => t.name.startsWith("ky") && t.schema !== "information_schema")
  .map((t) => ({ ...t, columns: t.columns.map((c) => ({ ...c })) }));

const out = {};

async function main() {
  const port = Number(process.argv[2]);
  const db = new Kysely({
    dialect: new PostgresDialect({
      pool: new Pool({ host: "127.0.0.1", port, user: "postgres", database: "postgres", max: 3 }),
    }),
  });
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  out.first = results(await migrator.migrateToLatest());
  out.second = results(await migrator.migrateToLatest());  // nothing left to do
  out.tables = await tables(db, true);
  out.migrations = (await db.selectFrom("kysely_migration").select("name").orderBy("name").execute()).map((r) => r.name);
  out.lock = await db.selectFrom("kysely_migration_lock").selectAll().execute();
  out.down = results(await migrator.migrateDown());
  out.downTo = results(await migrator.migrateTo("2024_01_init"));
  out.tablesAfterDown = await tables(db, false);
  out.again = results(await migrator.migrateToLatest());

  // query builder
  const people = await db.insertInto("ky_person")
    .values([{ first_name: "Ann", last_name: "Lee" }, { first_name: "Bob", nick: "bobby" }])
    .returning(["id", "first_name", "created_at"]).execute();
  out.people = people.map((p) => [p.id, p.first_name, p.created_at instanceof Date]);
  const [ann, bob] = people;
  out.pets = await db.insertInto("ky_pet")
    .values([
      { name: "Rex", owner_id: ann.id, species: "dog", weight: "12.5", tags: ["good", "loud"] },
      { name: "Tom", owner_id: ann.id, species: "cat", age: 3 },
      { name: "Nemo", owner_id: bob.id, species: "fish" },
    ]).returning(["id", "name", "age", "weight", "tags"]).execute();
  out.doNothing = await db.insertInto("ky_pet").values({ name: "Rex", owner_id: bob.id, species: "wolf" })
    .onConflict((oc) => oc.column("name").doNothing()).returning("id").execute();
  out.doUpdate = await db.insertInto("ky_pet").values({ name: "Tom", owner_id: bob.id, species: "tiger" })
    .onConflict((oc) => oc.column("name").doUpdateSet((eb) => ({ species: eb.ref("excluded.species"), age: eb("ky_pet.age", "+", 1) })))
    .returning(["name", "species", "age", "owner_id"]).execute();
  out.counts = await db.selectFrom("ky_pet").innerJoin("ky_person", "ky_person.id", "ky_pet.owner_id")
    .select(["ky_person.first_name", (eb) => eb.fn.count("ky_pet.id").as("pets")])
    .groupBy("ky_person.first_name").orderBy("ky_person.first_name").execute();
  out.filtered = await db.selectFrom("ky_pet").select(["name", "species"])
    .where("species", "in", ["dog", "fish"]).where((eb) => eb.or([eb("age", ">=", 0), eb("weight", "is", null)]))
    .orderBy("name", "desc").limit(5).execute();
  out.like = await db.selectFrom("ky_person").select("first_name").where("first_name", "like", "A%").execute();
  out.maxAge = await db.selectFrom("ky_pet").select((eb) => [eb.fn.max("age").as("oldest"), eb.fn.avg("age").as("mean")]).executeTakeFirst();
  out.updated = await db.updateTable("ky_pet").set({ weight: "3.25" }).where("name", "=", "Nemo")
    .returning(["name", "weight"]).execute();
  out.updateCount = Number((await db.updateTable("ky_pet").set((eb) => ({ age: eb("age", "+", 1) })).executeTakeFirst()).numUpdatedRows);
  out.exists = await db.selectFrom("ky_person").select("first_name")
    .where((eb) => eb.exists(eb.selectFrom("ky_pet").select("ky_pet.id").whereRef("ky_pet.owner_id", "=", "ky_person.id").where("species", "=", "fish")))
    .execute();

  // transactions: a thrown error rolls back; a controlled one with a savepoint
  try {
    await db.transaction().execute(async (trx) => {
      await trx.insertInto("ky_person").values({ first_name: "Ghost" }).execute();
      throw new Error("roll back");
    });
  } catch (e) { out.rollback = e.message; }
  out.ghosts = Number((await db.selectFrom("ky_person").select((eb) => eb.fn.countAll().as("n")).where("first_name", "=", "Ghost").executeTakeFirst()).n);
  const trx = await db.startTransaction().execute();
  await trx.updateTable("ky_pet").set({ species: "hound" }).where("name", "=", "Rex").execute();
  const sp = await trx.savepoint("before_cat").execute();
  try {
    await sp.insertInto("ky_pet").values({ name: "Kit", owner_id: bob.id }).execute();
    await sp.insertInto("ky_pet").values({ name: "Kit", owner_id: ann.id }).execute();  // unique
  } catch (e) {
    out.savepointError = e.code;
    await sp.rollbackToSavepoint("before_cat").execute();
  }
  await sp.releaseSavepoint("before_cat").execute();
  await trx.commit().execute();
  out.afterSavepoint = await db.selectFrom("ky_pet").select(["name", "species"]).orderBy("name").execute();

  // Kysely's own savepoint example: a row of a table with DEFAULT now() written before
  // the savepoint (hatiproxy cannot replay it exactly: 0A000, the block must roll back)
  const trx2 = await db.startTransaction().execute();
  try {
    await trx2.insertInto("ky_person").values({ first_name: "Jen" }).execute();
    const sp2 = await trx2.savepoint("after_jen").execute();
    await sp2.insertInto("ky_pet").values({ name: "Rex", owner_id: bob.id }).execute().catch(() => {});
    await sp2.rollbackToSavepoint("after_jen").execute();
    await trx2.commit().execute();
    out.nowSavepoint = "committed";
  } catch (e) {
    out.nowSavepoint = e.code;
    await trx2.rollback().execute();
  }
  out.jens = Number((await db.selectFrom("ky_person").select((eb) => eb.fn.countAll().as("n")).where("first_name", "=", "Jen").executeTakeFirst()).n);

  out.deleted = await db.deleteFrom("ky_person").where("first_name", "=", "Ann").returning("first_name").execute();
  out.petsLeft = (await db.selectFrom("ky_pet").select("name").orderBy("name").execute()).map((r) => r.name);
  out.raw = (await sql`select count(*)::int as n, ${"x"}::text as p from ky_pet`.execute(db)).rows;
  out.archived = await db.withSchema("ky_archive").insertInto("ky_old_pet")
    .values([{ meta: JSON.stringify({ a: [1] }), born: "2020-02-29" }, { mood: "wild", born: "2020-02-29" }])
    .returning(["id", "mood", "meta", "born"]).execute();
  out.archivedDup = await db.withSchema("ky_archive").insertInto("ky_old_pet").values({ born: "2020-02-29" })
    .execute().then(() => "no error", (e) => e.code);
  out.view = await db.selectFrom("ky_pet_names").selectAll().orderBy("id").execute();
  await db.destroy();
  console.log(JSON.stringify(out));
}

// on a failure, what was found so far, for the test's message
main().catch((e) => { console.error(e); console.log(JSON.stringify({ ...out, fatal: String(e) })); process.exit(1); });
