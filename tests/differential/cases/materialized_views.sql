-- Materialized views: a stored table the catalog shows as relkind 'm' (pg_matviews),
-- refreshed from its stored query; indexes on it survive REFRESH.
-- @setup
CREATE TABLE d_mv_src (id int PRIMARY KEY, grp varchar(10), amount numeric(10,2));
INSERT INTO d_mv_src VALUES (1, 'a', 1.50), (2, 'a', 2.25), (3, 'b', 10.00);
-- @query create_with_data
CREATE MATERIALIZED VIEW d_mv_totals AS SELECT grp, count(*) AS n, sum(amount) AS total FROM d_mv_src GROUP BY grp
-- @query select_rows
SELECT grp, n, total FROM d_mv_totals ORDER BY grp
-- @query create_again error
CREATE MATERIALIZED VIEW d_mv_totals AS SELECT 1 AS x
-- @query create_if_not_exists
CREATE MATERIALIZED VIEW IF NOT EXISTS d_mv_totals AS SELECT 1 AS x
-- @query create_no_data
CREATE MATERIALIZED VIEW d_mv_empty (k, label) AS SELECT id, grp FROM d_mv_src WITH NO DATA
-- @query select_unpopulated error
SELECT * FROM d_mv_empty
-- @query pg_class_rows
SELECT relname, relkind, relispopulated, relnatts FROM pg_class WHERE relname IN ('d_mv_totals', 'd_mv_empty') ORDER BY relname
-- @query pg_matviews_rows
SELECT schemaname, matviewname, hasindexes, ispopulated, definition IS NOT NULL AS has_def FROM pg_matviews WHERE matviewname LIKE 'd\_mv\_%' ORDER BY matviewname
-- @query not_in_information_schema_tables
SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'd\_mv\_%' AND table_name <> 'd_mv_src'
-- @query not_in_information_schema_views
SELECT count(*) FROM information_schema.views WHERE table_name LIKE 'd\_mv\_%'
-- @query not_in_pg_tables
SELECT count(*) FROM pg_tables WHERE tablename LIKE 'd\_mv\_%' AND tablename <> 'd_mv_src'
-- @query columns_of_matview
SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a WHERE a.attrelid = 'd_mv_empty'::regclass AND a.attnum > 0 ORDER BY a.attnum
-- @query viewdef_not_null
SELECT pg_get_viewdef('d_mv_totals'::regclass) IS NOT NULL
-- @query new_rows
INSERT INTO d_mv_src VALUES (4, 'b', 5.00), (5, 'c', 0.25)
-- @query stale_until_refresh
SELECT grp, n FROM d_mv_totals ORDER BY grp
-- @query refresh
REFRESH MATERIALIZED VIEW d_mv_totals
-- @query after_refresh
SELECT grp, n, total FROM d_mv_totals ORDER BY grp
-- @query refresh_concurrently_without_unique_index error
REFRESH MATERIALIZED VIEW CONCURRENTLY d_mv_totals
-- @query unique_index
CREATE UNIQUE INDEX d_mv_totals_grp ON d_mv_totals (grp)
-- @query refresh_concurrently
REFRESH MATERIALIZED VIEW CONCURRENTLY d_mv_totals
-- @query index_survives_refresh
SELECT indexname FROM pg_indexes WHERE tablename = 'd_mv_totals' ORDER BY indexname
-- @query hasindexes_now
SELECT hasindexes FROM pg_matviews WHERE matviewname = 'd_mv_totals'
-- @query refresh_concurrently_unpopulated error
REFRESH MATERIALIZED VIEW CONCURRENTLY d_mv_empty
-- @query populate
REFRESH MATERIALIZED VIEW d_mv_empty
-- @query populated_rows
SELECT k, label FROM d_mv_empty ORDER BY k
-- @query populated_flag
SELECT ispopulated FROM pg_matviews WHERE matviewname = 'd_mv_empty'
-- @query unpopulate
REFRESH MATERIALIZED VIEW d_mv_empty WITH NO DATA
-- @query unpopulated_again error
SELECT count(*) FROM d_mv_empty
-- @query refresh_in_block_begin
BEGIN
-- @query refresh_in_block
REFRESH MATERIALIZED VIEW d_mv_empty
-- @query refresh_in_block_rollback
ROLLBACK
-- @query rolled_back_refresh error
SELECT count(*) FROM d_mv_empty
-- @query refresh_a_table error
REFRESH MATERIALIZED VIEW d_mv_src
-- @query drop_table_on_matview error
DROP TABLE d_mv_totals
-- @query drop_view_on_matview error
DROP VIEW d_mv_totals
-- @query drop_matview_on_table error
DROP MATERIALIZED VIEW d_mv_src
-- @query rename
ALTER MATERIALIZED VIEW d_mv_empty RENAME TO d_mv_renamed
-- @query rename_column
ALTER MATERIALIZED VIEW d_mv_renamed RENAME COLUMN label TO grp_label
-- @query renamed_columns
SELECT a.attname FROM pg_attribute a WHERE a.attrelid = 'd_mv_renamed'::regclass AND a.attnum > 0 ORDER BY a.attnum
-- @query refresh_renamed
REFRESH MATERIALIZED VIEW d_mv_renamed
-- @query renamed_rows
SELECT k, grp_label FROM d_mv_renamed ORDER BY k
-- @query comment
COMMENT ON MATERIALIZED VIEW d_mv_renamed IS 'per id'
-- @query comment_read
SELECT obj_description('d_mv_renamed'::regclass, 'pg_class')
-- @query alter_if_exists_missing
ALTER MATERIALIZED VIEW IF EXISTS d_mv_nope RENAME TO d_mv_nope2
-- @query drop_if_exists_several
DROP MATERIALIZED VIEW IF EXISTS d_mv_nope, d_mv_renamed
-- @query drop_missing error
DROP MATERIALIZED VIEW d_mv_nope
-- @query drop
DROP MATERIALIZED VIEW d_mv_totals
-- @query gone
SELECT count(*) FROM pg_matviews WHERE matviewname LIKE 'd\_mv\_%'
-- @query failing_source
CREATE TABLE d_mv_div (d int)
-- @query failing_source_rows
INSERT INTO d_mv_div VALUES (2), (5)
-- @query failing_create
CREATE MATERIALIZED VIEW d_mv_q AS SELECT 10 / d AS q FROM d_mv_div
-- @query failing_zero
INSERT INTO d_mv_div VALUES (0)
-- @query failing_refresh error
REFRESH MATERIALIZED VIEW d_mv_q
-- @query failing_refresh_keeps_old_rows
SELECT q FROM d_mv_q ORDER BY q
-- @query failing_refresh_in_block_begin
BEGIN
-- @query failing_refresh_fix
DELETE FROM d_mv_div WHERE d = 0
-- @query failing_refresh_in_block
REFRESH MATERIALIZED VIEW d_mv_q
-- @query failing_refresh_in_block_sees_it
SELECT q FROM d_mv_q ORDER BY q
-- @query failing_refresh_in_block_commit
COMMIT
-- @query schema_qualified
CREATE SCHEMA d_mv_schema
-- @query schema_qualified_create
CREATE MATERIALIZED VIEW d_mv_schema.d_mv_in AS SELECT q FROM d_mv_q
-- @query schema_qualified_rows
SELECT schemaname, matviewname FROM pg_matviews WHERE matviewname = 'd_mv_in'
-- @query set_schema
ALTER MATERIALIZED VIEW d_mv_schema.d_mv_in SET SCHEMA public
-- @query set_schema_rows
SELECT schemaname, matviewname, ispopulated FROM pg_matviews WHERE matviewname = 'd_mv_in'
-- @query set_schema_refresh
REFRESH MATERIALIZED VIEW public.d_mv_in
-- @query set_schema_select
SELECT q FROM d_mv_in ORDER BY q
-- @query cleanup
DROP MATERIALIZED VIEW d_mv_in, d_mv_q
-- @query drop_schema_cascade_setup
CREATE MATERIALIZED VIEW d_mv_schema.d_mv_gone AS SELECT 1 AS a
-- @query drop_schema_cascade
DROP SCHEMA d_mv_schema CASCADE
-- @query drop_schema_cascade_schema_again
CREATE SCHEMA d_mv_schema
-- @query drop_schema_cascade_table_of_that_name
CREATE TABLE d_mv_schema.d_mv_gone (a int)
-- @query drop_schema_cascade_is_a_table
SELECT relkind FROM pg_class WHERE relname = 'd_mv_gone'
-- @query drop_schema_cascade_not_listed
SELECT count(*) FROM pg_matviews WHERE matviewname = 'd_mv_gone'
-- @query alter_table_rename_setup
CREATE MATERIALIZED VIEW d_mv_alt AS SELECT 1 AS a
-- @query alter_table_rename
ALTER TABLE d_mv_alt RENAME TO d_mv_alt2
-- @query alter_table_rename_still_a_matview
SELECT matviewname, ispopulated FROM pg_matviews WHERE matviewname LIKE 'd\_mv\_alt%'
-- @query alter_table_rename_refresh
REFRESH MATERIALIZED VIEW d_mv_alt2
-- @query alter_table_rename_drop
DROP MATERIALIZED VIEW d_mv_alt2
