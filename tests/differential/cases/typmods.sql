-- Declared column types as PostgreSQL 15 reports them: varchar(n), numeric(p,s),
-- timestamp(p) in pg_attribute, format_type and information_schema; length enforcement
-- of varchar(n) on INSERT / UPDATE, and an explicit cast cutting to n.
-- @setup
CREATE TABLE tmod_t (id int PRIMARY KEY, vc varchar(5), vc40 character varying(40), n numeric(7,2), n10 numeric(10), ts timestamp(3), ts0 timestamp(0), tx text, i int);
INSERT INTO tmod_t VALUES (1, 'abc', 'x', 12.5, 42, '2020-01-01 12:00:00.1236', '2020-01-01 12:00:01.6', 'text', 7);
-- @query attributes
SELECT attname, atttypid, atttypmod, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'tmod_t'::regclass AND attnum > 0 ORDER BY attnum;
-- @query information_schema_columns
SELECT column_name, data_type, character_maximum_length, numeric_precision, numeric_scale, datetime_precision FROM information_schema.columns WHERE table_name = 'tmod_t' ORDER BY ordinal_position;
-- @query values_rounded_to_precision
SELECT id, vc, n, n10, ts, ts0 FROM tmod_t ORDER BY id;
-- @query insert_too_long error
INSERT INTO tmod_t (id, vc) VALUES (2, 'abcdef');
-- @query update_too_long error
UPDATE tmod_t SET vc = 'toolong' WHERE id = 1;
-- @query insert_fits
INSERT INTO tmod_t (id, vc) VALUES (3, 'abcde') RETURNING id, vc;
-- @query multibyte_counts_characters
INSERT INTO tmod_t (id, vc) VALUES (4, 'ééééé') RETURNING vc, length(vc);
-- @query multibyte_too_long error
INSERT INTO tmod_t (id, vc) VALUES (5, 'éééééé');
-- @query cast_cuts_to_n
SELECT 'abcdef'::varchar(3) AS a, CAST('abcdef' AS character varying(2)) AS b, 'ab'::varchar(5) AS c;
-- @query pg_typeof_of_columns
SELECT pg_typeof(n), pg_typeof(ts), pg_typeof(upper(vc)), pg_typeof(tx) FROM tmod_t WHERE id = 1;
-- @query rows_after_errors
SELECT id, vc FROM tmod_t ORDER BY id;
-- @query char_cast_cuts_and_ignores_trailing_blanks
SELECT 'abcdef'::char(2) AS a, length('ab  '::char(4)) AS l, 'ab'::char(4) = 'ab  '::char(4) AS eq, 'ab '::char(4) || 'x' AS cat, 'xyz'::char AS one, CAST('abcd' AS character(3)) AS b;
-- @query char_cast_result_padded
SELECT 'ab'::char(4) AS padded, 'ab'::char(4), CAST('abcdef' AS character(3)) AS c, 'x'::char(3) || 'y' AS cat, upper('ab'::char(4)) AS up;
