-- char(n) / character(n) / char columns and unsized varchar columns, as PostgreSQL 15
-- types them (transpiler/varchar_length.py: the declaration is kept as a CHECK DuckDB
-- keeps; proxy/db/catalog/30_relations.sql reads it back; results.encoders_for pads).
-- @setup
CREATE TABLE d_chr (id int, c char(3), b character(2), one char, v varchar, cv character varying, vn varchar(4), t text, d varchar DEFAULT 'x', "Odd Name" char(2));
INSERT INTO d_chr (id, c, b, one, v, cv, vn, t) VALUES (1, 'ab', 'x', 'y', 'v', 'cv', 'vn', 't'), (2, 'abc', 'xy', ' ', NULL, NULL, NULL, NULL), (3, NULL, NULL, NULL, 'long text value', '', 'abcd', '');
-- @query char_values_padded
SELECT id, c, b, one, "Odd Name" FROM d_chr ORDER BY id
-- @query char_star_padded
SELECT * FROM d_chr ORDER BY id
-- @query char_length_ignores_padding
SELECT id, length(c), char_length(b), c || '|' FROM d_chr ORDER BY id
-- @query char_equality
SELECT id FROM d_chr WHERE c = 'ab' ORDER BY id
-- @query char_in_subquery_padded
SELECT s.c FROM (SELECT c, id FROM d_chr) s ORDER BY s.id
-- @query char_too_long error
INSERT INTO d_chr (id, c) VALUES (4, 'abcd')
-- @query char_too_long_update error
UPDATE d_chr SET b = 'xyz' WHERE id = 1
-- @query bare_char_is_one error
INSERT INTO d_chr (id, one) VALUES (5, 'ab')
-- @query char_blanks_beyond_n_cut
INSERT INTO d_chr (id, c) VALUES (6, 'xyz   ') RETURNING c
-- @query catalog_types
SELECT attname, atttypid::int, atttypmod, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'd_chr'::regclass AND attnum > 0 ORDER BY attnum
-- @query information_schema_columns
SELECT column_name, data_type, character_maximum_length, character_octet_length, udt_name, column_default FROM information_schema.columns WHERE table_name = 'd_chr' ORDER BY ordinal_position
-- @query no_constraints_listed
SELECT count(*) FROM pg_constraint WHERE conrelid = 'd_chr'::regclass
-- @query relchecks_zero
SELECT relchecks FROM pg_class WHERE relname = 'd_chr'
-- @query unsized_default_shown
SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'd_chr'::regclass
-- @query unsized_varchar_takes_any_length
INSERT INTO d_chr (id, v) VALUES (7, repeat('x', 5000)) RETURNING length(v)
-- @setup
CREATE TABLE d_chr_r (id int, c char(3), v varchar);
INSERT INTO d_chr_r VALUES (1, 'ab', 'x');
ALTER TABLE d_chr_r RENAME COLUMN c TO c2;
ALTER TABLE d_chr_r RENAME TO d_chr_r2;
-- @query renamed_keeps_types
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'd_chr_r2'::regclass AND attnum > 0 ORDER BY attnum
-- @query renamed_still_checked error
INSERT INTO d_chr_r2 VALUES (2, 'abcd', 'y')
-- @query renamed_padded
SELECT c2 FROM d_chr_r2
-- @setup
CREATE TABLE d_chr_ctas AS SELECT c, v, vn FROM d_chr;
-- @query ctas_keeps_types
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'd_chr_ctas'::regclass AND attnum > 0 ORDER BY attnum
-- @query ctas_values_padded
SELECT c FROM d_chr_ctas WHERE c IS NOT NULL ORDER BY c
-- @setup
CREATE TABLE d_chr_vsrc (id int, vn varchar(5), c char(3), v varchar, t text);
INSERT INTO d_chr_vsrc VALUES (1, 'ab', 'x', 'v', 't');
CREATE VIEW d_chr_view AS SELECT vn, c, v, t, id, upper(vn) AS up, vn AS renamed FROM d_chr_vsrc;
CREATE VIEW d_chr_view_star AS SELECT * FROM d_chr_vsrc;
CREATE VIEW d_chr_view_of_view AS SELECT c, vn FROM d_chr_view;
-- @query view_catalog_types
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'd_chr_view'::regclass AND attnum > 0 ORDER BY attnum
-- @query view_star_catalog_types
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'd_chr_view_star'::regclass AND attnum > 0 ORDER BY attnum
-- @query view_of_view_catalog_types
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'd_chr_view_of_view'::regclass AND attnum > 0 ORDER BY attnum
-- @query view_information_schema
SELECT column_name, data_type, character_maximum_length FROM information_schema.columns WHERE table_name = 'd_chr_view' ORDER BY ordinal_position
-- @query view_values_padded
SELECT * FROM d_chr_view
-- @query view_of_view_values_padded
SELECT c, vn FROM d_chr_view_of_view
-- @setup
CREATE TABLE d_chr_twice AS SELECT vn, vn AS again, c, c AS c_again FROM d_chr_vsrc;
-- @query ctas_column_read_twice
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'd_chr_twice'::regclass AND attnum > 0 ORDER BY attnum
