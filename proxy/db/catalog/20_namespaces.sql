-- Schemas. DuckDB's `main` of the user database is Postgres' `public` (oid 2200);
-- this package's own schemas are shown as pg_catalog (11) and information_schema.

CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_ns AS
SELECT database_name AS duck_db, schema_name AS duck_schema,
       CASE WHEN database_name = 'temp' THEN oid
            WHEN schema_name = 'main' THEN 2200 ELSE oid END::BIGINT AS oid,
       CASE WHEN database_name = 'temp' THEN 'pg_temp_1'
            WHEN schema_name = 'main' THEN 'public' ELSE schema_name END AS nspname
FROM duckdb_schemas()
WHERE (database_name = {{duck_db}} AND schema_name <> 'hatidata_internal')
   OR (database_name = 'temp' AND schema_name = 'main')
UNION ALL SELECT '__hati_catalog', 'pg', 11, 'pg_catalog'
UNION ALL SELECT '__hati_catalog', 'info', 13000, 'information_schema';

-- Who owns what: __hati_owners (10_types.sql).

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_namespace AS
SELECT ns.oid, ns.nspname,
       -- public belongs to pg_database_owner (6171), as in PostgreSQL 15
       coalesce(ow.owner_oid, CASE WHEN ns.oid = 2200 THEN 6171 ELSE 10 END)::BIGINT
           AS nspowner,
       -- public's ACL as PostgreSQL 15 creates it (owner=UC, PUBLIC=U), which pg_dump
       -- takes as public's initial privileges: nothing to GRANT or REVOKE
       CASE WHEN ns.oid = 2200
            THEN ['pg_database_owner=UC/pg_database_owner', '=U/pg_database_owner']
       END::VARCHAR[] AS nspacl
FROM __hati_catalog.pg.__hati_ns ns
LEFT JOIN __hati_catalog.pg.__hati_owners ow
  ON ow.class = 'schema' AND ow.name = lower(ns.nspname) AND ns.duck_db <> '__hati_catalog'
-- the session's temp schema once it holds something, as PostgreSQL makes it (psql's \dnS)
WHERE ns.duck_db <> 'temp' OR EXISTS (
    SELECT 1 FROM duckdb_tables() t
    WHERE t.database_name = 'temp' AND t.table_name NOT IN ({{snapshot_names}})
    UNION ALL
    SELECT 1 FROM duckdb_views() v WHERE v.database_name = 'temp' AND NOT v.internal)
UNION ALL SELECT 99, 'pg_toast', 10, NULL;

-- public first, like the default search_path "$user", public; pg_catalog is implicit.
CREATE OR REPLACE MACRO __hati_catalog.pg.current_schema() AS 'public';
CREATE OR REPLACE MACRO __hati_catalog.pg.current_schemas(include_implicit) AS
    CASE WHEN include_implicit THEN ['pg_catalog', 'public'] ELSE ['public'] END;
CREATE OR REPLACE MACRO __hati_catalog.pg.current_database() AS {{database_name}};
