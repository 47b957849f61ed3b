// knex 3 over node-postgres against a hatiproxy server: migrations, the schema builder,
// insert().returning(), select, update, delete and a rolled-back transaction.
// Run by tests/tools/test_knex.py: `node test_knex.js PORT`; prints one JSON line.
const path = require('path');
const knexLib = require(path.join(__dirname, '..', 'node', 'node_modules', 'knex'));

const port = Number(process.argv[2]);
const knex = knexLib({
  client: 'pg',
  connection: { host: '127.0.0.1', port, user: 'x', database: 'hatidata' },
  pool: { min: 0, max: 2 },
});

// Migrations as a user writes them, from an in-memory source (no files to lay out).
const migrations = {
  '001_authors': {
    up: (k) => k.schema.createTable('kx_authors', (t) => {
      t.increments('id');
      t.string('name', 100).notNullable();
      t.integer('age');
      t.timestamps(true, true);
    }),
    down: (k) => k.schema.dropTable('kx_authors'),
  },
  '002_books': {
    up: (k) => k.schema.createTable('kx_books', (t) => {
      t.increments('id');
      t.string('title').notNullable();
      t.integer('author_id').unsigned().notNullable();
      t.timestamps(true, true);
    }),
    down: (k) => k.schema.dropTable('kx_books'),
  },
};
// `node test_knex.js PORT foreign`: a migration with a foreign key (ALTER TABLE ... ADD
// CONSTRAINT ... FOREIGN KEY, as knex emits it), run on its own.
const foreignMigrations = {
  '001_shelves': {
    up: (k) => k.schema.createTable('kx_shelves', (t) => {
      t.increments('id');
      t.string('label');
    }),
    down: (k) => k.schema.dropTable('kx_shelves'),
  },
  '002_slots': {
    up: (k) => k.schema.createTable('kx_slots', (t) => {
      t.increments('id');
      t.integer('shelf_id').unsigned().notNullable();
      t.foreign('shelf_id').references('kx_shelves.id');
    }),
    down: (k) => k.schema.dropTable('kx_slots'),
  },
};
const chosen = process.argv[3] === 'foreign' ? foreignMigrations : migrations;
const migrationSource = {
  getMigrations: async () => Object.keys(chosen),
  getMigrationName: (name) => name,
  getMigration: async (name) => chosen[name],
};

async function foreign() {
  const out = {};
  const [, applied] = await knex.migrate.latest({ migrationSource });
  out.migrated = applied;
  const [shelf] = await knex('kx_shelves').insert({ label: 'top' }).returning('id');
  await knex('kx_slots').insert({ shelf_id: shelf.id });
  try {
    await knex('kx_slots').insert({ shelf_id: shelf.id + 1000 });
    out.orphanInserted = true;
  } catch (e) {
    out.orphanError = e.code;
  }
  const [, rolledBack] = await knex.migrate.rollback({ migrationSource }, true);
  out.rolledBack = rolledBack;
  console.log(JSON.stringify(out));
}

async function main() {
  const out = {};
  const [, applied] = await knex.migrate.latest({ migrationSource });
  out.migrated = applied;
  const [, again] = await knex.migrate.latest({ migrationSource });
  out.migratedAgain = again;
  out.hasBooks = await knex.schema.hasTable('kx_books');
  out.hasAge = await knex.schema.hasColumn('kx_authors', 'age');

  const inserted = await knex('kx_authors').insert({ name: 'Ursula', age: 88 }).returning('*');
  out.inserted = inserted.map((r) => ({
    id: r.id, name: r.name, age: r.age,
    createdIsDate: r.created_at instanceof Date, updatedIsDate: r.updated_at instanceof Date,
  }));
  const many = await knex('kx_authors')
    .insert([{ name: 'Iain', age: 50 }, { name: 'Octavia', age: 58 }])
    .returning(['id', 'name']);
  out.insertedMany = many;
  const authorId = inserted[0].id;
  const books = await knex('kx_books')
    .insert([{ title: 'Earthsea', author_id: authorId }, { title: 'Lathe', author_id: authorId }])
    .returning('id');
  out.bookIds = books.map((b) => b.id);

  out.older = await knex('kx_authors').where('age', '>', 55).orderBy('id').select('name', 'age');
  out.joined = await knex('kx_books')
    .join('kx_authors', 'kx_authors.id', 'kx_books.author_id')
    .where('kx_authors.name', 'Ursula').orderBy('kx_books.title').select('kx_books.title');
  out.counted = await knex('kx_books').count('* as n').first();

  out.updated = await knex('kx_authors').where({ name: 'Iain' }).update({ age: 51 }, ['id', 'age']);
  out.updateCount = await knex('kx_authors').where('age', '<', 60).update({ age: knex.raw('age + 1') });
  out.deleted = await knex('kx_authors').where({ name: 'Octavia' }).del();

  try {
    await knex.transaction(async (trx) => {
      await trx('kx_authors').insert({ name: 'Ghost', age: 1 });
      throw new Error('roll back');
    });
  } catch (e) {
    out.rollbackError = e.message;
  }
  out.ghosts = (await knex('kx_authors').where({ name: 'Ghost' })).length;
  await knex.transaction(async (trx) => {
    await trx('kx_authors').insert({ name: 'Kept', age: 2 });
  });
  out.kept = (await knex('kx_authors').where({ name: 'Kept' })).length;
  out.names = (await knex('kx_authors').orderBy('id').select('name')).map((r) => r.name);

  const [, rolledBack] = await knex.migrate.rollback({ migrationSource }, true);
  out.rolledBack = rolledBack;
  out.hasBooksAfter = await knex.schema.hasTable('kx_books');
  console.log(JSON.stringify(out));
}

(process.argv[3] === 'foreign' ? foreign() : main())
  .catch((e) => { console.error(e && e.stack ? e.stack : e); process.exitCode = 1; })
  .finally(() => knex.destroy());
