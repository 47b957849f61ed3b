// MikroORM 7 (npm, pinned in tests/node/package-lock.json) over node-postgres, run by
// tests/tools/test_mikroorm.py: schema create, then the schema diff twice (nothing to
// do: its introspection reads the catalog back as written), persist / flush, find with
// populate, the QueryBuilder, a transaction rolled back by a throw, a unique violation,
// remove with cascade. Prints one JSON line of results.
// The test copies it beside a link to tests/node/node_modules (ESM resolves from the file).
import { MikroORM, EntitySchema, UniqueConstraintViolationException } from "@mikro-orm/postgresql";

const Author = new EntitySchema({ name: "MAuthor", tableName: "m_author", properties: {
  id: { type: "number", primary: true, autoincrement: true },
  email: { type: "string", length: 120, unique: true },
  name: { type: "string", length: 80 },
  active: { type: "boolean", default: true },
  createdAt: { type: "Date", onCreate: () => new Date() },
  books: { kind: "1:m", entity: () => Book, mappedBy: "author", cascade: ["persist", "remove"] },
} });
const Book = new EntitySchema({ name: "MBook", tableName: "m_book", properties: {
  id: { type: "number", primary: true, autoincrement: true },
  title: { type: "string", length: 200, index: true },
  price: { type: "decimal", precision: 10, scale: 2, nullable: true },
  meta: { type: "json", nullable: true },
  author: { kind: "m:1", entity: () => Author, deleteRule: "cascade" },
} });
const orm = await MikroORM.init({ clientUrl: process.argv[2], entities: [Author, Book], debug: false });
const out = {};
await orm.schema.create();
out.diff = await orm.schema.getUpdateSchemaSQL();
await orm.schema.update();
out.diff2 = await orm.schema.getUpdateSchemaSQL();
let em = orm.em.fork();
const u = em.create(Author, { email: "u@e.org", name: "Ursula" });
em.create(Book, { title: "Earthsea", price: "9.99", meta: { tags: ["sf"] }, author: u });
em.create(Book, { title: "Lathe", author: u });
const i = em.create(Author, { email: "i@c.org", name: "Iain", active: false });
em.create(Book, { title: "Excession", price: "12.50", author: i });
await em.flush();
out.ids = [u.id, i.id, u.active];
em = orm.em.fork();
const found = await em.find(Author, {}, { populate: ["books"], orderBy: { name: "asc" } });
out.found = found.map((a) => [a.name, a.books.getItems().map((b) => b.title).sort()]);
out.qb = await em.createQueryBuilder(Book, "b").select(["b.title", "b.price"]).where({ price: { $gt: 10 } }).execute();
try {
  await orm.em.fork().transactional(async (tem) => { tem.create(Author, { email: "g@x.org", name: "Ghost" }); await tem.flush(); throw new Error("roll back"); });
} catch (e) { out.rollback = e.message; }
out.ghosts = await orm.em.fork().count(Author, { email: "g@x.org" });
try { const f = orm.em.fork(); f.create(Author, { email: "u@e.org", name: "dup" }); await f.flush(); } catch (e) { out.unique = e instanceof UniqueConstraintViolationException; }
em = orm.em.fork();
em.remove(await em.findOneOrFail(Author, { email: "u@e.org" }));
await em.flush();
out.booksLeft = (await orm.em.fork().find(Book, {})).map((b) => b.title);
console.log(JSON.stringify(out));
await orm.close();
