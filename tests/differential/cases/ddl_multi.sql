-- Statements over several objects (DROP a, b; TRUNCATE a, b), TRUNCATE options and
-- ALTER TABLE ... RENAME on a view. Runs in order.
-- @setup
CREATE TABLE d_multi_a (id int, v text);
CREATE TABLE d_multi_b (id int);
CREATE TABLE d_multi_c (id int);
CREATE TABLE d_multi_keep (id int);
CREATE VIEW d_multi_va AS SELECT 1 AS x;
CREATE VIEW d_multi_vb AS SELECT 2 AS y;
CREATE VIEW d_multi_vren AS SELECT 3 AS z;
CREATE TABLE d_multi_t1 (id serial, v int);
CREATE TABLE d_multi_t2 (id int);
INSERT INTO d_multi_t1 (v) VALUES (1), (2);
INSERT INTO d_multi_t2 VALUES (1), (2), (3);
INSERT INTO d_multi_keep VALUES (1);
-- @query drop_two_tables
DROP TABLE d_multi_a, d_multi_b
-- @query dropped_tables_are_gone
SELECT count(*) FROM information_schema.tables WHERE table_name IN ('d_multi_a', 'd_multi_b')
-- @query drop_missing_among_several error
DROP TABLE d_multi_c, d_multi_missing
-- @query failed_drop_dropped_nothing
SELECT count(*) FROM d_multi_c
-- @query drop_if_exists_several_cascade
DROP TABLE IF EXISTS d_multi_c, d_multi_missing CASCADE
-- @query drop_if_exists_left_nothing
SELECT count(*) FROM information_schema.tables WHERE table_name = 'd_multi_c'
-- @query drop_two_views
DROP VIEW d_multi_va, d_multi_vb
-- @query dropped_views_are_gone
SELECT count(*) FROM information_schema.views WHERE table_name IN ('d_multi_va', 'd_multi_vb')
-- @query truncate_two_tables
TRUNCATE TABLE d_multi_t1, d_multi_t2
-- @query truncated_rows
SELECT (SELECT count(*) FROM d_multi_t1) AS t1, (SELECT count(*) FROM d_multi_t2) AS t2, (SELECT count(*) FROM d_multi_keep) AS keep
-- @query truncate_continue_identity
TRUNCATE d_multi_keep CONTINUE IDENTITY RESTRICT
-- @query truncate_only_cascade
TRUNCATE ONLY d_multi_t2 CASCADE
-- @query truncate_missing_among_several error
TRUNCATE d_multi_keep, d_multi_missing
-- @query alter_table_renames_view
ALTER TABLE d_multi_vren RENAME TO d_multi_vren2
-- @query renamed_view_reads
SELECT z FROM d_multi_vren2
-- @query alter_table_renames_table
ALTER TABLE d_multi_t2 RENAME TO d_multi_t2b
-- @query renamed_table_reads
SELECT count(*) FROM d_multi_t2b
-- @query vacuum_no_rows
VACUUM d_multi_keep
-- @query analyze_no_rows
ANALYZE d_multi_keep
-- @query vacuum_analyze_no_rows
VACUUM ANALYZE d_multi_keep
