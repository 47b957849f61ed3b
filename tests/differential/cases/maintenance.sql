-- Maintenance statements (transpiler/maintenance.py): PostgreSQL's VACUUM / ANALYZE options
-- (DuckDB's grammar has none: 0A000 before), REINDEX and CLUSTER (acknowledged: DuckDB's
-- indexes follow every write, its tables have no physical order), COMMENT's tag alone.
-- @setup
CREATE TABLE d_mnt (id int PRIMARY KEY, v text);
CREATE INDEX d_mnt_v ON d_mnt (v);
CREATE TABLE d_mnt2 (id int);
INSERT INTO d_mnt VALUES (1, 'a'), (2, 'b');
CREATE VIEW d_mnt_view AS SELECT * FROM d_mnt;
CREATE MATERIALIZED VIEW d_mnt_mat AS SELECT * FROM d_mnt;
CREATE SEQUENCE d_mnt_seq;
CREATE SCHEMA d_mnt_s;
CREATE TABLE d_mnt_s."Mixed" ("Id" int, v text);
-- @query vacuum_verbose_analyze
VACUUM (VERBOSE, ANALYZE) d_mnt
-- @query vacuum_full
VACUUM FULL d_mnt
-- @query vacuum_freeze_verbose
VACUUM FREEZE VERBOSE d_mnt
-- @query vacuum_options_with_values
VACUUM (INDEX_CLEANUP off, PARALLEL 2) d_mnt
-- @query vacuum_several_tables
VACUUM ANALYZE d_mnt, d_mnt2
-- @query analyze_verbose_columns
ANALYZE VERBOSE d_mnt (v)
-- @query analyze_several_tables
ANALYZE d_mnt, d_mnt2
-- @query analyze_missing_table error
ANALYZE VERBOSE d_mnt_nosuch
-- @query vacuum_view_skipped
VACUUM d_mnt_view
-- @query analyze_view_skipped
ANALYZE d_mnt_view
-- @query vacuum_table_and_view
VACUUM ANALYZE d_mnt, d_mnt_view, d_mnt_seq
-- @query vacuum_system_catalogs
VACUUM pg_catalog.pg_type
-- @query analyze_system_catalog_unqualified
ANALYZE pg_proc
-- @query vacuum_information_schema_view
VACUUM information_schema.tables
-- @query vacuum_materialized_view
VACUUM ANALYZE d_mnt_mat
-- @query analyze_quoted_names
ANALYZE d_mnt_s."Mixed" ("Id", v)
-- @query analyze_missing_column error
ANALYZE d_mnt (nosuch)
-- @query vacuum_missing_in_list error
VACUUM d_mnt, d_mnt_nosuch
-- @query analyze_folded_column_missing error
ANALYZE d_mnt_s."Mixed" (id)
-- @query reindex_table
REINDEX TABLE d_mnt
-- @query reindex_index
REINDEX INDEX d_mnt_v
-- @query reindex_missing error
REINDEX TABLE d_mnt_nosuch
-- @query cluster_using
CLUSTER d_mnt USING d_mnt_v
-- @query cluster_missing error
CLUSTER VERBOSE d_mnt_nosuch
-- @query comment_tag
COMMENT ON TABLE d_mnt IS 'kept'
-- @query rows_unchanged
SELECT id, v, obj_description('d_mnt'::regclass, 'pg_class') FROM d_mnt ORDER BY id
