-- Array columns with a PostgreSQL array-text default (Rails' `array: true, default: []`,
-- Prisma's `String[] @default([])`): the row gets the array, and the catalog shows the
-- default as PostgreSQL does (pg_dump, ORMs comparing defaults). Runs in order.
-- @setup
CREATE TABLE d_arrdef (id int, tags text[] DEFAULT '{}', nums int[] DEFAULT '{1,2}' NOT NULL, t4 text[] DEFAULT '{}'::text[], t6 varchar(10)[] DEFAULT '{"a b",c,NULL}', big bigint[] DEFAULT '{}'::bigint[]);
-- @query insert_defaults
INSERT INTO d_arrdef (id) VALUES (1) RETURNING *
-- @query column_default
SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'd_arrdef' ORDER BY ordinal_position
-- @query pg_get_expr
SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'd_arrdef'::regclass ORDER BY adnum
-- @query add_column_default
ALTER TABLE d_arrdef ADD COLUMN t7 text[] DEFAULT '{z,"y x"}'
-- @query added_default_filled
SELECT id, t7 FROM d_arrdef ORDER BY id
-- @query cardinality
SELECT cardinality(tags), cardinality(nums), cardinality(t6) FROM d_arrdef
