-- The catalog queries Peewee 4.5 sends (captured from PostgreSQL 15's log,
-- log_statement = all, while tests/tools/test_peewee.py ran): get_tables, get_columns,
-- get_primary_keys, get_indexes (`FROM generate_subscripts(idx.indkey, 1) AS k`),
-- get_foreign_keys (referential_constraints' rules), sequence_exists, and
-- playhouse.reflection's pg_attribute query; its create_tables(safe=True) again.
-- @setup
CREATE TABLE IF NOT EXISTS "d_pw_author" ("id" SERIAL NOT NULL PRIMARY KEY, "name" VARCHAR(80) NOT NULL, "joined" TIMESTAMP NOT NULL, "active" BOOLEAN NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS "d_pw_author_name" ON "d_pw_author" ("name");
INSERT INTO "d_pw_author" ("name", "joined", "active") VALUES ('Ann', '2024-01-02T03:04:05'::timestamp, true), ('Bob', '2023-05-06T07:08:09'::timestamp, false);
CREATE TABLE IF NOT EXISTS "d_pw_book" ("id" SERIAL NOT NULL PRIMARY KEY, "author_id" INTEGER NOT NULL, "title" VARCHAR(255) NOT NULL, "price" NUMERIC(8, 2), "meta" JSONB, "published" DATE, FOREIGN KEY ("author_id") REFERENCES "d_pw_author" ("id") ON DELETE CASCADE);
CREATE INDEX IF NOT EXISTS "d_pw_book_author_id" ON "d_pw_book" ("author_id");
CREATE UNIQUE INDEX IF NOT EXISTS "d_pw_book_author_id_title" ON "d_pw_book" ("author_id", "title");
CREATE TABLE d_pw_review (id serial PRIMARY KEY, book_id integer REFERENCES d_pw_book (id) ON DELETE SET NULL ON UPDATE RESTRICT);
-- @query create_tables_safe_again
CREATE TABLE IF NOT EXISTS "d_pw_book" ("id" SERIAL NOT NULL PRIMARY KEY, "author_id" INTEGER NOT NULL, "title" VARCHAR(255) NOT NULL, "price" NUMERIC(8, 2), "meta" JSONB, "published" DATE, FOREIGN KEY ("author_id") REFERENCES "d_pw_author" ("id") ON DELETE CASCADE)
-- @query still_one_foreign_key
SELECT conname, contype, confdeltype, confupdtype FROM pg_constraint WHERE conrelid = 'd_pw_book'::regclass ORDER BY conname
-- @query get_tables
SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = COALESCE(NULL, current_schema()) AND tablename LIKE 'd_pw_%' ORDER BY tablename
-- @query get_columns
SELECT c.column_name, c.is_nullable, c.data_type, c.column_default, pg_catalog.format_type(a.atttypid, a.atttypmod), c.is_identity FROM information_schema.columns AS c INNER JOIN pg_catalog.pg_namespace AS n ON (n.nspname = c.table_schema) INNER JOIN pg_catalog.pg_class AS t ON (t.relname = c.table_name AND t.relnamespace = n.oid) INNER JOIN pg_catalog.pg_attribute AS a ON (a.attrelid = t.oid AND a.attname = c.column_name) WHERE c.table_name = 'd_pw_book' AND c.table_schema = COALESCE(NULL, current_schema()) AND NOT a.attisdropped ORDER BY c.ordinal_position
-- @query get_primary_keys
SELECT kc.column_name FROM information_schema.table_constraints AS tc INNER JOIN information_schema.key_column_usage AS kc ON ( tc.table_name = kc.table_name AND tc.table_schema = kc.table_schema AND tc.constraint_name = kc.constraint_name) WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_name = 'd_pw_book' AND tc.table_schema = COALESCE(NULL, current_schema()) ORDER BY kc.ordinal_position
-- @query get_indexes
SELECT i.relname, idxs.indexdef, idx.indisunique, ARRAY( SELECT pg_get_indexdef(idx.indexrelid, k + 1, TRUE) FROM generate_subscripts(idx.indkey, 1) AS k ORDER BY k) FROM pg_catalog.pg_class AS t INNER JOIN pg_catalog.pg_namespace AS n ON t.relnamespace = n.oid INNER JOIN pg_catalog.pg_index AS idx ON t.oid = idx.indrelid INNER JOIN pg_catalog.pg_class AS i ON idx.indexrelid = i.oid INNER JOIN pg_catalog.pg_indexes AS idxs ON ( idxs.tablename = t.relname AND idxs.indexname = i.relname AND idxs.schemaname = n.nspname) WHERE t.relname = 'd_pw_book' AND t.relkind = 'r' AND n.nspname = COALESCE(NULL, current_schema()) ORDER BY idx.indisunique DESC, i.relname
-- @query get_foreign_keys
SELECT DISTINCT kcu.column_name, ccu.table_name, ccu.column_name, tc.constraint_name, rc.delete_rule, rc.update_rule FROM information_schema.table_constraints AS tc JOIN information_schema.key_column_usage AS kcu ON (tc.constraint_name = kcu.constraint_name AND tc.constraint_schema = kcu.constraint_schema AND tc.table_name = kcu.table_name AND tc.table_schema = kcu.table_schema) JOIN information_schema.constraint_column_usage AS ccu ON (ccu.constraint_name = tc.constraint_name AND ccu.constraint_schema = tc.constraint_schema) JOIN information_schema.referential_constraints AS rc ON (rc.constraint_name = tc.constraint_name AND rc.constraint_schema = tc.constraint_schema) WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_name = 'd_pw_book' AND tc.table_schema = COALESCE(NULL, current_schema())
-- @query referential_rules
SELECT constraint_name, update_rule, delete_rule FROM information_schema.referential_constraints WHERE constraint_name LIKE 'd_pw_%' ORDER BY constraint_name
-- @query sequence_exists
SELECT COUNT(*) FROM pg_class, pg_namespace WHERE relkind='S' AND pg_class.relnamespace = pg_namespace.oid AND relname='d_pw_author_id_seq' AND nspname=COALESCE(NULL, current_schema())
-- @query reflection_types
select oid, typname, format_type(oid, NULL) from pg_type WHERE typname IN ('int4', 'varchar', 'numeric', 'jsonb', 'timestamp', 'bool', 'date')
-- @query reflection_attributes
SELECT a.attname, a.atttypid FROM pg_catalog.pg_attribute AS a INNER JOIN pg_catalog.pg_class AS t ON a.attrelid = t.oid INNER JOIN pg_catalog.pg_namespace AS n ON t.relnamespace = n.oid WHERE t.relname = 'd_pw_book' AND n.nspname = COALESCE(NULL, current_schema()) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum
-- @query generate_subscripts_in_from
SELECT k, n FROM generate_subscripts(ARRAY['a', 'b', 'c'], 1) WITH ORDINALITY AS g(k, n) ORDER BY k
-- @query generate_subscripts_after_comma
SELECT p.id, k FROM d_pw_author p, generate_subscripts(ARRAY[10, 20], 1) AS k ORDER BY p.id, k
