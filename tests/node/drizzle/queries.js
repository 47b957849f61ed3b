// drizzle-orm over node-postgres against a server whose schema drizzle-kit push made from
// schema.js: insert ... returning, select with where / join, update, delete, transactions.
// Run by tests/tools/test_drizzle.py: `node queries.js PORT`; prints one JSON line.
const { Pool } = require("pg");
const { drizzle } = require("drizzle-orm/node-postgres");
const { eq, gt, asc, sql } = require("drizzle-orm");
const { authors, books } = require("./schema.js");

async function main() {
  const pool = new Pool({ host: "127.0.0.1", port: Number(process.argv[2]), user: "x", database: "hatidata", max: 2 });
  const db = drizzle(pool);
  const out = {};
  const [ursula] = await db.insert(authors).values({ name: "Ursula" }).returning();
  out.inserted = { id: ursula.id, name: ursula.name, active: ursula.active, createdIsDate: ursula.createdAt instanceof Date };
  const many = await db.insert(authors).values([{ name: "Iain", active: false }, { name: "Octavia" }]).returning({ id: authors.id, name: authors.name });
  out.insertedMany = many;
  await db.insert(books).values([
    { authorId: ursula.id, title: "Earthsea", pages: 250 },
    { authorId: ursula.id, title: "Lathe", pages: 180 },
    { authorId: many[1].id, title: "Kindred", pages: 290 },
  ]);
  out.long = await db.select({ title: books.title }).from(books).where(gt(books.pages, 200)).orderBy(asc(books.title));
  out.joined = await db.select({ author: authors.name, title: books.title }).from(books).innerJoin(authors, eq(books.authorId, authors.id)).orderBy(asc(books.id));
  out.counted = await db.select({ n: sql`count(*)`.mapWith(Number) }).from(books);
  out.updated = await db.update(authors).set({ active: true }).where(eq(authors.name, "Iain")).returning({ id: authors.id, active: authors.active });
  out.deleted = (await db.delete(books).where(eq(books.title, "Lathe")).returning({ id: books.id })).length;
  try {
    await db.transaction(async (tx) => {
      await tx.insert(authors).values({ name: "Ghost" });
      throw new Error("roll back");
    });
  } catch (e) {
    out.rollbackError = e.message;
  }
  await db.transaction(async (tx) => {
    await tx.insert(authors).values({ name: "Kept" });
  });
  out.names = (await db.select({ name: authors.name }).from(authors).orderBy(asc(authors.id))).map((r) => r.name);
  try {
    await db.insert(books).values({ authorId: 999, title: "Orphan" });
  } catch (e) {
    out.orphanError = e.code || (e.cause && e.cause.code);
  }
  await pool.end();
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
