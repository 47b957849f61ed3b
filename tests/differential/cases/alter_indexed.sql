-- ALTER TABLE on a table with indexes (proxy/pgserver/alter_indexed.py): DuckDB 1.5 refuses
-- RENAME TO, RENAME COLUMN, DROP COLUMN and SET / DROP NOT NULL there ("entries that depend
-- on it"); PostgreSQL runs them, the indexes following the table and its columns.
-- @setup
CREATE TABLE d_aix (id int PRIMARY KEY, code text NOT NULL, qty int, note text);
CREATE UNIQUE INDEX d_aix_code ON d_aix (code);
CREATE INDEX d_aix_qty ON d_aix (qty);
CREATE INDEX d_aix_note ON d_aix (note);
COMMENT ON TABLE d_aix IS 'items';
COMMENT ON COLUMN d_aix.code IS 'the code';
INSERT INTO d_aix VALUES (1, 'a', 1, 'x'), (2, 'b', NULL, 'y');
CREATE TABLE d_aixd (id serial PRIMARY KEY, name varchar(50) NOT NULL UNIQUE, city varchar(30), rating int NOT NULL DEFAULT 3);
CREATE INDEX d_aixd_rating ON d_aixd (rating);
INSERT INTO d_aixd (name, city) VALUES ('one', 'x'), ('two', NULL);
-- @query rename_column_of_an_indexed_table
ALTER TABLE d_aix RENAME COLUMN code TO sku
-- @query index_follows_the_renamed_column
SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'd_aix' ORDER BY 1
-- @query unique_index_still_enforced error
INSERT INTO d_aix VALUES (3, 'a', 3, 'z')
-- @query comment_follows_the_renamed_column
SELECT col_description('d_aix'::regclass, 2), obj_description('d_aix'::regclass, 'pg_class')
-- @query drop_column_drops_its_index
ALTER TABLE d_aix DROP COLUMN note
-- @query indexes_after_drop_column
SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'd_aix' ORDER BY 1
-- @query set_not_null_refused_by_a_null error
ALTER TABLE d_aix ALTER COLUMN qty SET NOT NULL
-- @query table_unchanged_after_the_refusal
SELECT id, sku, qty FROM d_aix ORDER BY id
-- @query set_not_null
UPDATE d_aix SET qty = 0 WHERE qty IS NULL
-- @query set_not_null_now
ALTER TABLE d_aix ALTER COLUMN qty SET NOT NULL
-- @query null_refused_after_set_not_null error
INSERT INTO d_aix VALUES (4, 'd', NULL)
-- @query drop_not_null
ALTER TABLE d_aix ALTER COLUMN qty DROP NOT NULL
-- @query rename_an_indexed_table
ALTER TABLE d_aix RENAME TO d_aix2
-- @query indexes_follow_the_renamed_table
SELECT tablename, indexname, indexdef FROM pg_indexes WHERE tablename IN ('d_aix', 'd_aix2') AND indexname NOT LIKE '%pkey' ORDER BY 2
-- @query rows_and_comments_of_the_renamed_table
SELECT id, sku, qty, obj_description('d_aix2'::regclass, 'pg_class'), col_description('d_aix2'::regclass, 2) FROM d_aix2 ORDER BY id
-- @query rolled_back_rename
BEGIN; ALTER TABLE d_aix2 RENAME COLUMN sku TO code; ROLLBACK
-- @query nothing_renamed_after_rollback
SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'd_aix2' AND indexname NOT LIKE '%pkey' ORDER BY 1
-- @query unique_enforced_after_everything error
INSERT INTO d_aix2 VALUES (5, 'b', 5)
-- An index dropped earlier in the same transaction (Aerich's downgrade script `DROP INDEX
-- ...; ALTER TABLE ... DROP COLUMN ...`): DuckDB still refuses the ALTER for it.
-- @query drop_index_then_column_rolled_back
BEGIN; DROP INDEX d_aixd_rating; ALTER TABLE d_aixd DROP COLUMN city; ROLLBACK
-- @query index_and_column_back_after_rollback
SELECT indexname, (SELECT count(*) FROM information_schema.columns WHERE table_name = 'd_aixd') FROM pg_indexes WHERE tablename = 'd_aixd' ORDER BY 1
-- @query drop_index_then_columns_in_one_script
DROP INDEX IF EXISTS d_aixd_rating; ALTER TABLE d_aixd DROP COLUMN city; ALTER TABLE d_aixd DROP COLUMN rating
-- @query rows_after_drop_index_then_columns
SELECT * FROM d_aixd ORDER BY id
-- @query unique_kept_after_drop_index_then_columns error
INSERT INTO d_aixd (name) VALUES ('one')
-- @query serial_kept_after_drop_index_then_columns
INSERT INTO d_aixd (name) VALUES ('three') RETURNING id
