-- PostgreSQL's `/` and `%` (transpiler/division.py): int / int truncates toward zero,
-- a zero divisor raises 22012 division by zero for every type, a NULL operand is NULL.
-- numeric / numeric (or integer) is numeric with 16 decimals, PostgreSQL's scale for a
-- quotient in [1, 10000) (known_differences.sql numeric_division_scale: the others);
-- float8 overflow and underflow are 22003.
-- @setup
CREATE TABLE d_div (id int PRIMARY KEY, s int2, i int4, b int8, n numeric(10,2), f float8);
INSERT INTO d_div VALUES (1, 7, 2, -3, 7.50, 2.5), (2, -7, 2, 4, -1.25, -0.5), (3, 9, -4, 10, 3.00, 4.0), (4, 5, 0, 0, 0.00, 0.0), (5, NULL, 3, NULL, NULL, NULL);
CREATE VIEW d_div_v AS SELECT id, s / i AS q, s % i AS r FROM d_div WHERE i <> 0;
-- @query integer_division
SELECT 7 / 2, -7 / 2, 7 / -2, -7 / -2
-- @query integer_division_types
SELECT 7::int2 / 2::int2, 7::int2 / 2::int8, 7::int8 / 2, 9000000000 / 2, -7::int8 / 2::int2
-- @query int_division_by_zero error
SELECT 1 / 0
-- @query numeric_division_by_zero error
SELECT 1.0 / 0
-- @query modulo_by_zero error
SELECT 5 % 0
-- @query float_division_by_zero error
SELECT 1::float8 / 0
-- @query float_zero_over_zero error
SELECT 0::float8 / 0::float8
-- @query bigint_modulo_by_zero error
SELECT 5::int8 % 0::int8
-- @query mod_function_by_zero error
SELECT mod(5, 0)
-- @query infinity_over_two
SELECT 'Infinity'::float8 / 2, '-Infinity'::float8 / -2
-- @query float_division_keeps_fraction
SELECT 7.5::float8 / 2, 10::int / 4.0::float8, 1::float8 / 3
-- @query numeric_division_keeps_fraction
SELECT (7.5 / 2)::float8, (10 / 4.0)::float8, (10::int / 4.0)::float8
-- @query integer_modulo_negative
SELECT 7 % 2, -7 % 2, 7 % -2, -7 % -2, mod(-7, 3), -7::int8 % 3::int2
-- @query null_operands
SELECT NULL::int / 0, 1 / NULL::int, NULL::int % 0, NULL::float8 / 0, NULL::int / NULL::int
-- @query column_division_mixed_types
SELECT id, s / i, b / s, s / b, i / b, b % i, s % i FROM d_div WHERE id <> 4 ORDER BY id
-- @query column_division_negative_operands
SELECT id, -s / i, s / -i, (s * -1) % i FROM d_div WHERE id IN (1, 2, 3) ORDER BY id
-- @query column_division_float_numeric
SELECT id, f / i, (n / i)::float8, s / f FROM d_div WHERE id <> 4 ORDER BY id
-- @query column_division_by_zero_column error
SELECT id, s / i FROM d_div
-- @query column_division_by_zero_in_where error
SELECT id FROM d_div WHERE s / b > 0
-- @query column_modulo_by_zero_column error
SELECT sum(s % b) FROM d_div
-- @query division_guarded_by_where
SELECT id, s / i FROM d_div WHERE i <> 0 ORDER BY id
-- @query division_in_expression
SELECT id, (s + b) / (i + 1) * 2 + s % 3 FROM d_div WHERE id IN (1, 2, 3) ORDER BY id
-- @query division_in_aggregate
SELECT sum(s / i)::int8, min(b / i), max(s % i) FROM d_div WHERE i <> 0
-- @query division_of_aggregates
SELECT max(s) / count(*), sum(i)::int8 / count(i), avg(f) / count(f) FROM d_div
-- @query division_in_view
SELECT * FROM d_div_v ORDER BY id
-- @query division_in_cte
WITH q AS (SELECT id, b / i AS x FROM d_div WHERE i <> 0) SELECT id, x FROM q ORDER BY id
-- @query division_in_subquery
SELECT id, (SELECT max(s) FROM d_div) / i FROM d_div WHERE i <> 0 ORDER BY id
-- @query division_by_zero_in_cte error
WITH q AS (SELECT id, b / i AS x FROM d_div) SELECT max(x) FROM q
-- @query division_by_zero_subquery_divisor error
SELECT 10 / (SELECT min(abs(i)) FROM d_div)
-- @query interval_division
SELECT interval '1 hour' / 2, interval '3 days' / 4
-- @query division_in_case_guard
SELECT id, CASE WHEN i = 0 THEN NULL ELSE s / i END FROM d_div ORDER BY id
-- @query nullif_divisor
SELECT id, s / nullif(i, 0), s % nullif(b, 0) FROM d_div ORDER BY id
-- @query numeric_division_is_numeric
SELECT 10.0 / 4, 7.5 / 2, 10 / 4.0, 1234.50 / 100, 100.0 / 7, 22 / 7.0, -22.0 / 7, -1.25 / 2
-- @query numeric_column_division
SELECT id, n / i, b / n, n / 2.5 FROM d_div WHERE id IN (1, 3) ORDER BY id
-- @query numeric_over_float_is_float
SELECT id, n / f, f / n FROM d_div WHERE id IN (1, 2, 3) ORDER BY id
-- @query numeric_column_division_by_zero error
SELECT id, n / b FROM d_div
-- @query float_division_overflow error
SELECT 1e308::float8 / 1e-308::float8
-- @query float_division_underflow error
SELECT 1e-308::float8 / 1e308::float8
-- @query float4_division
SELECT 7::float4 / 2::float4, 1::float4 / 4::float4, -3::float4 / 8::float4
-- @query int_min_modulo_minus_one
SELECT (-2147483648)::int4 % -1, (-9223372036854775807 - 1) % -1, 7 % -1, mod(-7, -1), 7.5 % -1
-- @query unnest_division
SELECT unnest(ARRAY[1.5::float8, 7.0]) / 2
