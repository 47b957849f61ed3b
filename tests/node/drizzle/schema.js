// The drizzle schema tests/tools/test_drizzle.py pushes (drizzle-kit push) and queries.
const { pgTable, serial, text, integer, timestamp, boolean, index } = require("drizzle-orm/pg-core");

const authors = pgTable("dz_authors", {
  id: serial("id").primaryKey(),
  name: text("name").notNull(),
  active: boolean("active").notNull().default(true),
  createdAt: timestamp("created_at").notNull().defaultNow(),
});

const books = pgTable(
  "dz_books",
  {
    id: serial("id").primaryKey(),
    authorId: integer("author_id")
      .notNull()
      .references(() => authors.id),
    title: text("title").notNull(),
    pages: integer("pages"),
  },
  (t) => [index("dz_books_title_idx").on(t.title)],
);

module.exports = { authors, books };
