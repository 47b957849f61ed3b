-- Postgres' convenience views, with `public` in place of DuckDB's `main`.

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_tables AS
SELECT r.nspname AS schemaname, r.relname AS tablename,
       coalesce(__hati_catalog.pg.__hati_owner_name('relation', r.nspname, r.relname),
                {{owner}}) AS tableowner,
       NULL::VARCHAR AS tablespace, r.relhasindex AS hasindexes, FALSE AS hasrules,
       FALSE AS hastriggers, FALSE AS rowsecurity
FROM __hati_catalog.pg.__hati_rel r WHERE r.relkind = 'r';

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_views AS
SELECT r.nspname AS schemaname, r.relname AS viewname,
       coalesce(__hati_catalog.pg.__hati_owner_name('relation', r.nspname, r.relname),
                {{owner}}) AS viewowner,
       r.viewdef AS definition
FROM __hati_catalog.pg.__hati_rel r WHERE r.relkind = 'v';

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_matviews AS
SELECT r.nspname AS schemaname, r.relname AS matviewname,
       coalesce(__hati_catalog.pg.__hati_owner_name('relation', r.nspname, r.relname),
                {{owner}}) AS matviewowner,
       NULL::VARCHAR AS tablespace, r.relhasindex AS hasindexes, r.ispopulated,
       r.viewdef AS definition
FROM __hati_catalog.pg.__hati_rel r WHERE r.relkind = 'm';

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_indexes AS
SELECT i.nspname AS schemaname, i.table_name AS tablename, i.index_name AS indexname,
       NULL::VARCHAR AS tablespace, __hati_catalog.pg.pg_get_indexdef(i.indexrelid) AS indexdef
FROM __hati_catalog.pg.__hati_index i;

-- DuckDB's sequences are all bigint; one bounded by integer's / smallint's maximum (an
-- identity column's, transpiler/serial_columns.py) is described as of that type, so
-- pg_dump writes NO MAXVALUE for it as for PostgreSQL's.
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_sequence AS
SELECT s.sequence_oid::BIGINT AS seqrelid,
       CASE s.max_value WHEN 2147483647 THEN 23 WHEN 32767 THEN 21 ELSE 20 END::BIGINT AS seqtypid,
       s.start_value AS seqstart,
       s.increment_by AS seqincrement, s.max_value AS seqmax, s.min_value AS seqmin,
       1::BIGINT AS seqcache, s.cycle AS seqcycle
FROM duckdb_sequences() s
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = s.database_name AND n.duck_schema = s.schema_name;

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_sequences AS
SELECT n.nspname AS schemaname, s.sequence_name AS sequencename, {{owner}} AS sequenceowner,
       CASE s.max_value WHEN 2147483647 THEN 'integer' WHEN 32767 THEN 'smallint'
            ELSE 'bigint' END AS data_type,
       s.start_value, s.min_value, s.max_value, s.increment_by,
       s.cycle, 1::BIGINT AS cache_size, s.last_value
FROM duckdb_sequences() s
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = s.database_name AND n.duck_schema = s.schema_name;

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_stat_user_tables AS
SELECT r.oid AS relid, r.nspname AS schemaname, r.relname,
       0::BIGINT AS seq_scan, 0::BIGINT AS seq_tup_read, 0::BIGINT AS idx_scan,
       0::BIGINT AS idx_tup_fetch, 0::BIGINT AS n_tup_ins, 0::BIGINT AS n_tup_upd,
       0::BIGINT AS n_tup_del, 0::BIGINT AS n_tup_hot_upd,
       CAST(r.reltuples AS BIGINT) AS n_live_tup, 0::BIGINT AS n_dead_tup,
       NULL::TIMESTAMPTZ AS last_vacuum, NULL::TIMESTAMPTZ AS last_autovacuum,
       NULL::TIMESTAMPTZ AS last_analyze, NULL::TIMESTAMPTZ AS last_autoanalyze
FROM __hati_catalog.pg.__hati_rel r
WHERE r.relkind IN ('r', 'm') AND r.nspname NOT IN ('pg_catalog', 'information_schema');
-- Index usage counters (none kept): one row per index of a user table.
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_stat_user_indexes AS
SELECT i.indrelid AS relid, i.indexrelid, t.nspname AS schemaname, t.relname,
       ic.relname AS indexrelname, 0::BIGINT AS idx_scan, NULL::TIMESTAMPTZ AS last_idx_scan,
       0::BIGINT AS idx_tup_read, 0::BIGINT AS idx_tup_fetch
FROM __hati_catalog.pg.pg_index i
JOIN __hati_catalog.pg.__hati_rel t ON t.oid = i.indrelid
JOIN __hati_catalog.pg.__hati_rel ic ON ic.oid = i.indexrelid
WHERE t.nspname NOT IN ('pg_catalog', 'information_schema');
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_stat_all_indexes AS
SELECT * FROM __hati_catalog.pg.pg_stat_user_indexes;
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_stat_all_tables AS
SELECT * FROM __hati_catalog.pg.pg_stat_user_tables;
-- Block I/O counters (none kept): one row per user table (Sequelize's describeTable
-- joins pg_statio_all_tables to pg_description for column comments).
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_statio_user_tables AS
SELECT r.oid AS relid, r.nspname AS schemaname, r.relname,
       0::BIGINT AS heap_blks_read, 0::BIGINT AS heap_blks_hit, 0::BIGINT AS idx_blks_read,
       0::BIGINT AS idx_blks_hit, NULL::BIGINT AS toast_blks_read,
       NULL::BIGINT AS toast_blks_hit, NULL::BIGINT AS tidx_blks_read,
       NULL::BIGINT AS tidx_blks_hit
FROM __hati_catalog.pg.__hati_rel r
WHERE r.relkind IN ('r', 'm') AND r.nspname NOT IN ('pg_catalog', 'information_schema');
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_statio_all_tables AS
SELECT * FROM __hati_catalog.pg.pg_statio_user_tables;

-- One row per running COPY FROM STDIN / TO STDOUT, its counters moving as the data flows
-- (proxy/pgserver/copy.py, copy_out.py); relid 0 for COPY (query) TO, as in PostgreSQL.
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_stat_progress_copy AS
SELECT __h_p.pid, __h_p.datid, __h_p.datname,
       CASE WHEN __h_p.command IS NULL THEN NULL WHEN __h_p.relation IS NULL THEN 0
            ELSE coalesce(__hati_catalog.pg.to_regclass(__h_p.relation), 0) END AS relid,
       __h_p.command, __h_p.type, __h_p.bytes_processed, __h_p.bytes_total,
       __h_p.tuples_processed, __h_p.tuples_excluded
FROM (SELECT unnest(__hati_backend_progress(getvariable('__hati_backend')), recursive := true))
    __h_p;
