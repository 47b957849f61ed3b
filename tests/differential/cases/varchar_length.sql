-- varchar(n): the declared length in the catalog (pg_attribute, format_type,
-- information_schema) and enforced on INSERT / UPDATE (22001); explicit casts truncate.
-- hatiproxy keeps the length as a CHECK constraint DuckDB enforces (see README).
-- @setup
CREATE TABLE d_vlen (id int PRIMARY KEY, name varchar(10), code character varying(3) NOT NULL, note text);
INSERT INTO d_vlen VALUES (1, 'abcdefghij', 'abc', 'full length');
-- @query attribute_typmods
SELECT attname, format_type(atttypid, atttypmod), atttypmod FROM pg_attribute WHERE attrelid = 'd_vlen'::regclass AND attnum > 0 ORDER BY attnum
-- @query attribute_type_names
SELECT a.attname, t.typname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid WHERE a.attrelid = 'd_vlen'::regclass AND a.attnum > 0 ORDER BY a.attnum
-- @query information_schema_lengths
SELECT column_name, data_type, character_maximum_length, character_octet_length, udt_name FROM information_schema.columns WHERE table_name = 'd_vlen' ORDER BY ordinal_position
-- @query length_is_not_a_listed_constraint
SELECT count(*) FROM pg_constraint WHERE conrelid = 'd_vlen'::regclass AND contype = 'c'
-- @query insert_too_long error
INSERT INTO d_vlen VALUES (2, 'abcdefghijk', 'abc', NULL)
-- @query insert_too_long_second_column error
INSERT INTO d_vlen VALUES (2, 'ok', 'abcd', NULL)
-- @query update_too_long error
UPDATE d_vlen SET name = name || 'x' WHERE id = 1
-- @query insert_multibyte_counts_characters
INSERT INTO d_vlen VALUES (3, 'éééééééééé', 'äöü', NULL)
-- @query insert_null_is_fine
INSERT INTO d_vlen VALUES (4, NULL, 'x', NULL)
-- @query insert_explicit_cast_truncates
INSERT INTO d_vlen VALUES (5, 'abcdefghijklmnop'::varchar(10), 'xyz', NULL)
-- @query rows_after_writes
SELECT id, name, length(name), code FROM d_vlen ORDER BY id
-- @query cast_truncates
SELECT 'abcdef'::varchar(3) AS a, CAST('hello world' AS character varying(5)) AS b, 12345::varchar(2) AS c, 'ab'::varchar(5) AS d
-- @query cast_truncates_characters
SELECT 'ééééé'::varchar(2) AS a, NULL::varchar(2) AS b
-- @query cast_column_name
SELECT 'abc'::varchar(2)
