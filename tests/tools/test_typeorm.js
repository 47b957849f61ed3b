// TypeORM 0.3 over node-postgres (npm, pinned in tests/node/package-lock.json), run by
// tests/tools/test_typeorm.py: schema synchronisation (and that a second look finds the
// database in sync: what `typeorm migration:generate` relies on), repositories, relations,
// the query builder and transactions. Prints one JSON line of results.
const path = require("path");
const { DataSource, EntitySchema } = require(path.join(__dirname, "..", "node", "node_modules", "typeorm"));

const Author = new EntitySchema({
  name: "Author",
  tableName: "to_author",
  columns: {
    id: { type: Number, primary: true, generated: "increment" },
    name: { type: "varchar", length: 100, unique: true },
    bio: { type: "text", nullable: true },
    active: { type: "boolean", default: true },
    meta: { type: "jsonb", nullable: true },
    created: { type: "timestamptz", createDate: true },
  },
  relations: { books: { type: "one-to-many", target: "Book", inverseSide: "author" } },
});

const Book = new EntitySchema({
  name: "Book",
  tableName: "to_book",
  columns: {
    id: { type: Number, primary: true, generated: "increment" },
    title: { type: "varchar", length: 200 },
    price: { type: "numeric", precision: 10, scale: 2, nullable: true },
    pages: { type: "int", default: 0 },
    uid: { type: "uuid", generated: "uuid" },
  },
  indices: [{ name: "to_book_title", columns: ["title"] }],
  relations: {
    author: { type: "many-to-one", target: "Author", inverseSide: "books", onDelete: "CASCADE",
              joinColumn: { name: "author_id" }, nullable: false },
  },
});

async function main() {
  const port = Number(process.argv[2]);
  const ds = new DataSource({
    type: "postgres", host: "127.0.0.1", port, username: "tester", password: "x",
    database: "hatidata", entities: [Author, Book], synchronize: false, logging: false,
  });
  const out = {};
  await ds.initialize();
  await ds.synchronize();
  // what is left to do after synchronising: nothing, if the catalog reads back as written
  const pending = await ds.driver.createSchemaBuilder().log();
  out.pendingUp = pending.upQueries.map((q) => q.query);
  await ds.synchronize();  // a second sync changes nothing and does not fail

  const authors = ds.getRepository("Author");
  const books = ds.getRepository("Book");
  const ursula = await authors.save({ name: "Ursula", meta: { tags: ["sf"] } });
  out.savedAuthor = { id: ursula.id, active: ursula.active, createdIsDate: ursula.created instanceof Date };
  const iain = await authors.save({ name: "Iain", active: false });
  await books.save([
    { title: "Earthsea", price: "9.99", author: ursula },
    { title: "Lathe", pages: 184, author: ursula },
    { title: "Excession", price: "12.50", author: iain },
  ]);
  const found = await authors.findOne({ where: { name: "Ursula" }, relations: { books: true } });
  out.found = { name: found.name, meta: found.meta, books: found.books.map((b) => b.title).sort(),
                uidLength: found.books[0].uid.length };
  out.byPrice = (await books.createQueryBuilder("b").where("b.price > :p", { p: 10 })
    .orderBy("b.title").getMany()).map((b) => [b.title, b.price]);
  out.counts = await books.createQueryBuilder("b").innerJoin("b.author", "a")
    .select("a.name", "name").addSelect("COUNT(*)", "n").groupBy("a.name").orderBy("a.name")
    .getRawMany();
  await books.update({ title: "Lathe" }, { price: "7.25" });
  out.updated = (await books.findOneBy({ title: "Lathe" })).price;
  try {
    await ds.transaction(async (m) => {
      await m.getRepository("Author").save({ name: "Ghost" });
      throw new Error("roll back");
    });
  } catch (e) { out.rollbackError = e.message; }
  out.ghosts = await authors.countBy({ name: "Ghost" });
  try { await authors.save({ name: "Ursula" }); } catch (e) { out.duplicate = e.code; }
  await authors.delete({ name: "Iain" });  // ON DELETE CASCADE takes Excession
  out.booksLeft = (await books.find({ order: { title: "ASC" } })).map((b) => b.title);
  await ds.destroy();
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
