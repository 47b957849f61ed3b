-- The catalog queries Ibis 12's PostgreSQL backend sends (tests/tools/test_ibis.py; its
-- psycopg parameters written in): the session's temp schema, then a relation's columns
-- (format_type, an enum check, nspname = ANY of the current and the temp schema) -- also
-- of the temporary view con.sql() creates to describe a query.
-- @setup
CREATE TABLE d_ibis_t (id bigint NOT NULL, name text, amount double precision, d numeric(10, 2), ts timestamp, tstz timestamptz, arr bigint[], u uuid);
-- @query my_temp_schema_names_a_temp_namespace
SELECT pg_my_temp_schema() = 0 OR EXISTS (SELECT 1 FROM pg_namespace WHERE oid = pg_my_temp_schema() AND nspname LIKE 'pg\_temp\_%') AS ok
-- @query table_columns
SELECT a.attname AS column_name, CASE WHEN EXISTS(SELECT 1 FROM pg_catalog.pg_type t INNER JOIN pg_catalog.pg_enum e ON e.enumtypid = t.oid AND t.typname = pg_catalog.format_type(a.atttypid, a.atttypmod)) THEN 'enum' ELSE pg_catalog.format_type(a.atttypid, a.atttypmod) END AS data_type, NOT a.attnotnull AS nullable FROM pg_catalog.pg_attribute a INNER JOIN pg_catalog.pg_class c ON a.attrelid = c.oid INNER JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid WHERE a.attnum > 0 AND NOT a.attisdropped AND n.nspname = ANY(ARRAY['public']) AND c.relname = 'd_ibis_t' ORDER BY a.attnum ASC
