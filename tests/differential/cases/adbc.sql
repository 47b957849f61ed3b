-- The catalog queries ADBC's PostgreSQL driver 1.13 sends (captured from PostgreSQL 15's
-- log, log_statement = all, while tests/tools/test_adbc.py ran; its $n parameters written
-- in): the type table read at connect (`typreceive != 0`: a regproc column compared with
-- an oid), an ingested table's columns (`$1::regclass` of '"public" . "t"'),
-- adbc_get_objects (schemas, tables by relkind = ANY, columns, and constraints through
-- `CROSS JOIN UNNEST(conkey) AS conkeys`), adbc_get_table_schema; and ConnectorX's
-- partition range query.
-- @setup
CREATE TABLE d_adbc_parent (id integer PRIMARY KEY, code text UNIQUE);
CREATE TABLE d_adbc_child (id bigint PRIMARY KEY, parent_id integer REFERENCES d_adbc_parent (id), n numeric(10, 2), tags text[], doc jsonb, CHECK (n > 0));
COMMENT ON COLUMN d_adbc_child.n IS 'amount';
INSERT INTO d_adbc_parent VALUES (1, 'a'), (2, 'b');
INSERT INTO d_adbc_child VALUES (10, 1, 1.5, '{x}', '{}'), (20, 2, 2.5, NULL, NULL), (30, 1, NULL, '{}', '[1]');
-- @query connect_types
SELECT oid, typname, typreceive, typbasetype, typrelid, typarray FROM pg_catalog.pg_type WHERE (typreceive != 0 OR typsend != 0) AND typtype != 'r' AND typreceive::TEXT != 'array_recv' AND typname IN ('int4', 'text', 'numeric', 'jsonb', 'bytea', 'timestamptz', '_int4')
-- @query regproc_equal_zero
SELECT count(*) FROM pg_catalog.pg_type WHERE typreceive = 0 AND typname IN ('int4', 'text')
-- @query current_schema
SELECT CURRENT_SCHEMA()
-- @query ingest_columns_spaced_qualified_name
SELECT attr.attname, attr.atttypid FROM pg_catalog.pg_attribute AS attr WHERE attr.attrelid = '"public" . "d_adbc_child"'::regclass::oid AND attr.attnum > 0 AND NOT attr.attisdropped
-- @query regclass_spaced_unquoted
SELECT 'public . d_adbc_child'::regclass::text
-- @query table_schema
SELECT attname, atttypid FROM pg_catalog.pg_class AS cls INNER JOIN pg_catalog.pg_attribute AS attr ON cls.oid = attr.attrelid INNER JOIN pg_catalog.pg_type AS typ ON attr.atttypid = typ.oid WHERE attr.attnum >= 0 AND cls.oid = 'd_adbc_child'::regclass::oid ORDER BY attr.attnum
-- @query objects_schemas
SELECT nspname FROM pg_catalog.pg_namespace WHERE (nspname !~ '^pg_' OR oid = pg_my_temp_schema()) AND nspname <> 'information_schema' AND nspname = 'public'
-- @query objects_tables
SELECT c.relname, CASE c.relkind WHEN 'r' THEN 'table' WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 't' THEN 'TOAST table' WHEN 'f' THEN 'foreign table' WHEN 'p' THEN 'partitioned table' END AS reltype FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = ANY('{p,f,t,m,v,r}') AND c.relname LIKE 'd_adbc_%'
-- @query objects_columns
SELECT attr.attname, attr.attnum, pg_catalog.col_description(cls.oid, attr.attnum), typ.typname FROM pg_catalog.pg_attribute AS attr INNER JOIN pg_catalog.pg_class AS cls ON attr.attrelid = cls.oid INNER JOIN pg_catalog.pg_namespace AS nsp ON nsp.oid = cls.relnamespace INNER JOIN pg_catalog.pg_type AS typ ON attr.atttypid = typ.oid WHERE attr.attnum > 0 AND NOT attr.attisdropped AND nsp.nspname LIKE 'public' AND cls.relname LIKE 'd_adbc_child'
-- @query objects_constraints
WITH fk_unnest AS ( SELECT con.conname, 'FOREIGN KEY' AS contype, conrelid, UNNEST(con.conkey) AS conkey, confrelid, UNNEST(con.confkey) AS confkey FROM pg_catalog.pg_constraint AS con INNER JOIN pg_catalog.pg_class AS cls ON cls.oid = conrelid INNER JOIN pg_catalog.pg_namespace AS nsp ON nsp.oid = cls.relnamespace WHERE con.contype = 'f' AND nsp.nspname = 'public' AND cls.relname = 'd_adbc_child' ), fk_names AS ( SELECT fk_unnest.conname, fk_unnest.contype, fk_unnest.conkey, fk_unnest.confkey, attr.attname, fnsp.nspname AS fschema, fcls.relname AS ftable, fattr.attname AS fattname FROM fk_unnest INNER JOIN pg_catalog.pg_class AS cls ON cls.oid = fk_unnest.conrelid INNER JOIN pg_catalog.pg_class AS fcls ON fcls.oid = fk_unnest.confrelid INNER JOIN pg_catalog.pg_namespace AS fnsp ON fnsp.oid = fcls.relnamespace INNER JOIN pg_catalog.pg_attribute AS attr ON attr.attnum = fk_unnest.conkey AND attr.attrelid = fk_unnest.conrelid LEFT JOIN pg_catalog.pg_attribute AS fattr ON fattr.attnum = fk_unnest.confkey AND fattr.attrelid = fk_unnest.confrelid ), fkeys AS ( SELECT conname, contype, ARRAY_AGG(attname ORDER BY conkey) AS colnames, fschema, ftable, ARRAY_AGG(fattname ORDER BY confkey) AS fcolnames FROM fk_names GROUP BY conname, contype, fschema, ftable ), other_constraints AS ( SELECT con.conname, CASE con.contype WHEN 'c' THEN 'CHECK' WHEN 'u' THEN 'UNIQUE' WHEN 'p' THEN 'PRIMARY KEY' END AS contype, ARRAY_AGG(attr.attname) AS colnames FROM pg_catalog.pg_constraint AS con CROSS JOIN UNNEST(conkey) AS conkeys INNER JOIN pg_catalog.pg_class AS cls ON cls.oid = con.conrelid INNER JOIN pg_catalog.pg_namespace AS nsp ON nsp.oid = cls.relnamespace INNER JOIN pg_catalog.pg_attribute AS attr ON attr.attnum = conkeys AND cls.oid = attr.attrelid WHERE con.contype IN ('c', 'u', 'p') AND nsp.nspname = 'public' AND cls.relname = 'd_adbc_child' GROUP BY conname, contype ) SELECT conname, contype, colnames, fschema, ftable, fcolnames FROM fkeys UNION ALL SELECT conname, contype, colnames, NULL, NULL, NULL FROM other_constraints
-- @query unnest_as_alias_in_join
SELECT k FROM d_adbc_parent p CROSS JOIN UNNEST(ARRAY[p.id, p.id * 10]) AS k ORDER BY k
-- @query connectorx_range
SELECT min(CXTMPTAB_RANGE.id), max(CXTMPTAB_RANGE.id) FROM (SELECT id, parent_id, n FROM d_adbc_child) AS CXTMPTAB_RANGE
-- @query connectorx_partition
SELECT * FROM (SELECT id, parent_id, n FROM d_adbc_child) AS CXTMPTAB_PART WHERE 10 <= CXTMPTAB_PART.id AND CXTMPTAB_PART.id < 25
