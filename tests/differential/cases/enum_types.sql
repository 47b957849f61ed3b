-- User ENUM types are in pg_type (typtype 'e') with their labels in pg_enum, as psql's
-- \dT and SQLAlchemy's enum reflection read them.
-- @setup
CREATE TYPE d_enum_mood AS ENUM ('sad', 'ok', 'happy');
-- @query enum_in_pg_type
SELECT t.typname, t.typtype, t.typcategory, t.typlen, n.nspname FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace WHERE t.typname = 'd_enum_mood'
-- @query enum_labels_in_order
SELECT e.enumlabel FROM pg_catalog.pg_enum e JOIN pg_catalog.pg_type t ON t.oid = e.enumtypid WHERE t.typname = 'd_enum_mood' ORDER BY e.enumsortorder
-- @query enum_labels_aggregated
SELECT t.typname, array_agg(e.enumlabel ORDER BY e.enumsortorder) FROM pg_catalog.pg_type t JOIN pg_catalog.pg_enum e ON e.enumtypid = t.oid WHERE t.typtype = 'e' AND t.typname LIKE 'd_enum%' GROUP BY t.typname
-- @query psql_dT_row
SELECT n.nspname, pg_catalog.format_type(t.oid, NULL) FROM pg_catalog.pg_type t LEFT JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace WHERE t.typtype = 'e' AND t.typname = 'd_enum_mood' AND pg_catalog.pg_type_is_visible(t.oid)
-- @query enum_columns_typed_as_the_enum
CREATE TABLE d_enum_cols (id int, m d_enum_mood, ms d_enum_mood[])
-- @query enum_columns_insert
INSERT INTO d_enum_cols VALUES (1, 'ok', ARRAY['sad', 'happy']::d_enum_mood[]), (2, NULL, '{ok}')
-- @query enum_columns_atttypid
SELECT a.attname, t.typname, t.typtype, t.typcategory, format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid WHERE a.attrelid = 'd_enum_cols'::regclass AND a.attnum > 0 ORDER BY a.attnum
-- @query enum_array_type_row
SELECT a.typname, a.typcategory, e.typname AS elem FROM pg_catalog.pg_type a JOIN pg_catalog.pg_type e ON e.oid = a.typelem AND e.typarray = a.oid WHERE e.typname = 'd_enum_mood'
-- @query enum_values_read_as_text
SELECT id, m::text, ms[1]::text, ms[2]::text FROM d_enum_cols ORDER BY id
