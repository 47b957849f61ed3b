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
-- ADD COLUMN of an array NOT NULL with a default to a table with rows (Piccolo's
-- `Array(default=list)`, Django's ArrayField(default=list)): DuckDB 1.5 reads the new
-- column as NULL in the adding transaction, so the NOT NULL is set on the table made again.
-- @query add_array_column_not_null
ALTER TABLE d_arrdef ADD COLUMN t8 varchar(255)[] NOT NULL DEFAULT '{}'
-- @query add_int_array_column_not_null_in_a_block
BEGIN; CREATE INDEX d_arrdef_id ON d_arrdef (id); ALTER TABLE d_arrdef ADD COLUMN t9 int[] NOT NULL DEFAULT '{1,2}'; COMMIT
-- @query added_not_null_arrays_filled
SELECT id, t8, t9 FROM d_arrdef ORDER BY id
-- @query added_not_null_array_refuses_null error
INSERT INTO d_arrdef (id, t9) VALUES (3, NULL)
-- @query added_not_null_array_rolled_back
BEGIN; ALTER TABLE d_arrdef ADD COLUMN t10 text[] NOT NULL DEFAULT '{a}'; ROLLBACK
-- @query columns_after_not_null_arrays
SELECT column_name, is_nullable, column_default FROM information_schema.columns WHERE table_name = 'd_arrdef' ORDER BY ordinal_position
-- @query index_kept_after_not_null_arrays
SELECT indexname FROM pg_indexes WHERE tablename = 'd_arrdef' ORDER BY 1
-- `DEFAULT NULL` (Piccolo writes it for a nullable column): PostgreSQL stores no default.
-- @query add_column_default_null
ALTER TABLE d_arrdef ADD COLUMN t11 int DEFAULT NULL; ALTER TABLE d_arrdef ADD COLUMN t12 text[] DEFAULT NULL::text[]
-- @query default_null_is_no_default
SELECT a.attname, a.atthasdef, c.column_default, (SELECT count(*) FROM pg_attrdef d WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum) FROM pg_attribute a JOIN information_schema.columns c ON c.table_name = 'd_arrdef' AND c.column_name = a.attname WHERE a.attrelid = 'd_arrdef'::regclass AND a.attname IN ('t11', 't12') ORDER BY 1
