// Sequelize 6 over node-postgres (npm, pinned in tests/node/package-lock.json), run by
// tests/tools/test_sequelize.py against hatiproxy and against PostgreSQL 15: sync() twice,
// sync({ alter: true }) twice (the statements each pass sends are captured: the second
// alter must change nothing), queryInterface introspection, CRUD with includes, cascades,
// a rolled-back transaction, constraint errors and raw queries with replacements.
// Usage: node test_sequelize.js <port> <user> <database>. Prints one JSON line of results.
const path = require("path");
const { Sequelize, DataTypes, QueryTypes } = require(
  path.join(__dirname, "..", "node", "node_modules", "sequelize"),
);

const CHANGES = /^(CREATE|ALTER|DROP|DO|COMMENT)\b/i;

async function main() {
  const [port, user, database] = [Number(process.argv[2]), process.argv[3], process.argv[4]];
  let statements = [];
  const sequelize = new Sequelize(database, user, "x", {
    host: "127.0.0.1", port, dialect: "postgres",
    logging: (sql) => statements.push(sql.replace(/^Executing \([^)]*\): /, "")),
  });
  const Author = sequelize.define("Author", {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    name: { type: DataTypes.STRING(100), allowNull: false, unique: true },
    bio: DataTypes.TEXT,
    active: { type: DataTypes.BOOLEAN, defaultValue: true },
    rating: DataTypes.DECIMAL(5, 2),
    born: DataTypes.DATE,
    meta: DataTypes.JSONB,
    genre: { type: DataTypes.ENUM("sf", "fantasy", "crime"), defaultValue: "sf" },
  }, { tableName: "sq_authors" });
  const Book = sequelize.define("Book", {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    title: { type: DataTypes.STRING(200), allowNull: false },
    pages: { type: DataTypes.INTEGER, defaultValue: 0 },
  }, { tableName: "sq_books", indexes: [{ unique: true, fields: ["title", "AuthorId"] }] });
  const Tag = sequelize.define("Tag", {
    label: { type: DataTypes.STRING(40), allowNull: false },
  }, { tableName: "sq_tags", timestamps: false });
  Author.hasMany(Book, { onDelete: "CASCADE", foreignKey: { name: "AuthorId", allowNull: false } });
  Book.belongsTo(Author, { foreignKey: { name: "AuthorId", allowNull: false } });
  Book.belongsToMany(Tag, { through: "sq_book_tags" });
  Tag.belongsToMany(Book, { through: "sq_book_tags" });

  const out = {};
  const changes = () => statements.filter((s) => CHANGES.test(s.trim()));
  await sequelize.authenticate();
  await sequelize.sync();
  await sequelize.sync();  // a second sync finds everything there and does not fail
  statements = [];
  await sequelize.sync({ alter: true });
  out.alter1 = changes();
  statements = [];
  await sequelize.sync({ alter: true });
  out.alter2 = changes();

  const qi = sequelize.getQueryInterface();
  const described = await qi.describeTable("sq_authors");
  out.describe = Object.fromEntries(Object.entries(described).map(([k, v]) => [k, {
    type: v.type, allowNull: v.allowNull, defaultValue: v.defaultValue ?? null,
    primaryKey: v.primaryKey, special: v.special,
  }]));
  const indexes = await qi.showIndex("sq_books");
  out.indexes = indexes.map((i) => ({ name: i.name, unique: i.unique, primary: i.primary,
    fields: i.fields.map((f) => f.attribute) })).sort((a, b) => a.name.localeCompare(b.name));
  // each sync({ alter: true }) adds an unnamed UNIQUE again: PostgreSQL numbers the names
  out.constraints = (await sequelize.query(
    "SELECT conname, contype FROM pg_constraint WHERE conrelid = 'sq_authors'::regclass " +
    "ORDER BY conname", { type: QueryTypes.SELECT })).map((r) => [r.conname, r.contype]);
  const fks = await qi.getForeignKeyReferencesForTable("sq_book_tags");
  out.fks = fks.map((f) => [f.columnName, f.referencedTableName, f.referencedColumnName]).sort();

  const ursula = await Author.create({
    name: "Ursula", rating: "4.50", born: new Date("1929-10-21T00:00:00Z"),
    meta: { tags: ["sf"] }, genre: "fantasy",
  });
  const iain = await Author.create({ name: "Iain", active: false, genre: "sf" });
  out.created = { id: ursula.id, active: ursula.active, rating: ursula.rating,
    bornIsDate: ursula.born instanceof Date, createdIsDate: ursula.createdAt instanceof Date };
  const earthsea = await Book.create({ title: "Earthsea", pages: 200, AuthorId: ursula.id });
  await Book.create({ title: "Lathe", AuthorId: ursula.id });
  const excession = await Book.create({ title: "Excession", AuthorId: iain.id });
  const [classic, space] = await Tag.bulkCreate([{ label: "classic" }, { label: "space" }]);
  await earthsea.addTags([classic]);
  await excession.addTags([classic, space]);

  const found = await Author.findAll({
    include: [{ model: Book, include: [Tag] }], order: [["name", "ASC"], [Book, "title", "ASC"]],
  });
  out.found = found.map((a) => ({
    name: a.name, genre: a.genre, meta: a.meta, born: a.born ? a.born.toISOString() : null,
    books: a.Books.map((b) => [b.title, b.pages, b.Tags.map((t) => t.label).sort()]),
  }));
  const [n] = await Book.update({ pages: 184 }, { where: { title: "Lathe" } });
  out.updated = [n, (await Book.findOne({ where: { title: "Lathe" } })).pages];
  try {
    await sequelize.transaction(async (t) => {
      await Author.create({ name: "Ghost" }, { transaction: t });
      throw new Error("roll back");
    });
  } catch (e) { out.rollbackError = e.message; }
  out.ghosts = await Author.count({ where: { name: "Ghost" } });
  try { await Author.create({ name: "Ursula" }); } catch (e) {
    out.duplicate = [e.name, e.parent && e.parent.code];
  }
  try { await Book.create({ title: "Orphan", AuthorId: 999 }); } catch (e) {
    out.foreignKey = [e.name, e.parent && e.parent.code];
  }
  await iain.destroy();  // ON DELETE CASCADE takes Excession (and its tags' join rows)
  out.booksLeft = (await Book.findAll({ order: [["title", "ASC"]] })).map((b) => b.title);
  out.joinRows = await sequelize.query(
    "SELECT count(*)::int AS n FROM sq_book_tags", { type: QueryTypes.SELECT });
  out.raw = await sequelize.query(
    "SELECT name, genre FROM sq_authors WHERE name = :name OR rating > :r ORDER BY name",
    { replacements: { name: "Iain", r: 4 }, type: QueryTypes.SELECT });
  out.rawPositional = await sequelize.query(
    "SELECT title FROM sq_books WHERE pages >= ? ORDER BY title",
    { replacements: [100], type: QueryTypes.SELECT });
  await sequelize.close();
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
