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
-- ALTER COLUMN TYPE: hatiproxy rebuilds the table (DuckDB cannot change a column with a
-- CHECK, and a new varchar(n) needs one); the other columns' lengths, DEFAULT, UNIQUE stay.
-- @setup
CREATE TABLE d_vlen_alter (id int PRIMARY KEY, name varchar(5) NOT NULL DEFAULT 'anon', code varchar(3) UNIQUE, n integer);
INSERT INTO d_vlen_alter VALUES (1, 'abcde', 'ab', 12345), (2, 'ab', 'cd', 7);
-- @query alter_type_widen
ALTER TABLE d_vlen_alter ALTER COLUMN name TYPE varchar(20)
-- @query alter_type_widened_insert
INSERT INTO d_vlen_alter (id, name) VALUES (3, 'twenty characters ok')
-- @query alter_type_widened_too_long error
INSERT INTO d_vlen_alter (id, name) VALUES (4, 'twenty-one characters')
-- @query alter_type_narrow_too_long error
ALTER TABLE d_vlen_alter ALTER COLUMN name TYPE varchar(10)
-- @query alter_type_integer_to_short_varchar error
ALTER TABLE d_vlen_alter ALTER COLUMN n TYPE varchar(4)
-- @query alter_type_integer_to_varchar
ALTER TABLE d_vlen_alter ALTER COLUMN n TYPE varchar(5)
-- @query alter_type_varchar_to_text
ALTER TABLE d_vlen_alter ALTER COLUMN code TYPE text
-- @query alter_type_typmods
SELECT attname, format_type(atttypid, atttypmod), atttypmod FROM pg_attribute WHERE attrelid = 'd_vlen_alter'::regclass AND attnum > 0 ORDER BY attnum
-- @query alter_type_default_kept
INSERT INTO d_vlen_alter (id, code) VALUES (5, 'a code longer than three')
-- @query alter_type_unique_kept error
INSERT INTO d_vlen_alter (id, code) VALUES (6, 'ab')
-- @query alter_type_other_length_kept error
INSERT INTO d_vlen_alter (id, n) VALUES (7, '123456')
-- @query alter_type_using
ALTER TABLE d_vlen_alter ALTER COLUMN n TYPE integer USING length(n)
-- @query alter_type_rows
SELECT id, name, code, n FROM d_vlen_alter ORDER BY id
