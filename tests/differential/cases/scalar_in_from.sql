-- A function returning one value called in FROM (transpiler/scalar_from.py):
-- one row, its column named after the function, else the column alias, else the table
-- alias. TypeORM's first query is `SELECT * FROM current_schema()`. Each query names the
-- column, so a wrong name fails on one side only.
-- @query current_schema_in_from
SELECT current_schema FROM current_schema()
-- @query current_database_in_from
SELECT current_database IS NOT NULL FROM current_database()
-- @query version_in_from
SELECT version LIKE 'PostgreSQL 15%' FROM version()
-- @query table_alias_names_the_column
SELECT t FROM upper('x') t
-- @query column_alias_names_the_column
SELECT t.c FROM upper('x') AS t(c)
-- @query scalar_beside_a_set_returning_function
SELECT g.i, u.u FROM generate_series(1, 2) g(i) CROSS JOIN lower('A') u ORDER BY 1
-- @query backend_pid_in_from
SELECT pg_backend_pid > 0 FROM pg_backend_pid()
-- @query setting_in_from
SELECT current_setting FROM current_setting('client_encoding')
-- @query now_in_from
SELECT now IS NOT NULL FROM now()
-- @query joined_scalar
SELECT a.n, s.s FROM (VALUES (1)) a(n) JOIN current_schema() s ON true
-- @setup
CREATE TABLE sif_t (id int PRIMARY KEY, made timestamptz DEFAULT now(), at timestamptz DEFAULT CURRENT_TIMESTAMP, u uuid DEFAULT gen_random_uuid(), n int DEFAULT 0);
COMMENT ON TABLE sif_t IS 'scalar in from';
-- @query quoted_information_schema
SELECT "table_schema", "table_name" FROM "information_schema"."tables" WHERE "table_name" = 'sif_t'
-- @query quoted_pg_catalog
SELECT c.relname FROM "pg_catalog"."pg_class" c WHERE c.relname = 'sif_t'
-- @query regclass_of_a_built_name
SELECT obj_description(('"' || table_schema || '"."' || table_name || '"')::regclass, 'pg_class') FROM information_schema.tables WHERE table_name = 'sif_t'
-- @query regtype_of_a_quoted_name_as_text
SELECT ('"' || 'pg_catalog' || '"."' || 'int4' || '"')::"regtype"::text, 'int4'::regtype::text, '"pg_catalog"."varchar"'::regtype::text
-- @query defaults_as_written
SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'sif_t' ORDER BY ordinal_position
