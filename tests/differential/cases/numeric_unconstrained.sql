-- PostgreSQL's bare numeric (no precision): values keep their decimals (DuckDB's bare
-- DECIMAL is (18,3) and rounded them); read back without padding zeros.
-- @setup
CREATE TABLE d_bare_num (id int PRIMARY KEY, x numeric, d decimal, arr numeric[]);
INSERT INTO d_bare_num VALUES (1, 1.23456, 2.5, ARRAY[1.5, 2.25]), (2, 123456789012345.123456, 100, ARRAY[0.001]), (3, -0.0000001, 0, NULL), (4, NULL, 12345678901234567890123.5, ARRAY[3]);
-- @query bare_numeric_keeps_decimals
SELECT id, x, d, arr FROM d_bare_num ORDER BY id
-- @query bare_numeric_sum
SELECT sum(x), sum(d) FROM d_bare_num
-- @query bare_numeric_arithmetic
SELECT id, x + d, x - 1, x * 2 FROM d_bare_num WHERE id < 3 ORDER BY id
-- @query bare_numeric_product_of_columns
SELECT x * d FROM d_bare_num WHERE id = 1
-- @query bare_numeric_compare
SELECT id FROM d_bare_num WHERE x > 1.2345 ORDER BY id
-- @query bare_numeric_casts
SELECT '1.23456'::numeric, CAST('0.000001' AS numeric), 7::numeric, '12345678901234567890123'::decimal, 2.5::numeric * 3
-- @query bare_numeric_round
SELECT round(x, 2), round(d) FROM d_bare_num WHERE id = 1
-- @query bare_numeric_param_cast
SELECT CAST(1.5 AS numeric) + 0.25
-- @query bare_numeric_catalog
SELECT a.attname, a.atttypmod, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = 'd_bare_num' AND a.attnum > 0 ORDER BY a.attnum
-- @query bare_numeric_information_schema
SELECT column_name, data_type, numeric_precision, numeric_precision_radix, numeric_scale FROM information_schema.columns WHERE table_name = 'd_bare_num' ORDER BY ordinal_position
-- @query bare_numeric_update
UPDATE d_bare_num SET x = x * 10 WHERE id = 1 RETURNING x
