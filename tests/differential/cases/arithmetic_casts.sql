-- Arithmetic operators, integer/numeric/float typing, and casts.
-- @query int_add
SELECT 1 + 2, 7 - 10, 6 * 7
-- @query numeric_literal_arith
SELECT 1.5 + 2.25, 2.5 * 4, 10.0 * 0.25
-- @query float_arith
SELECT 1.5::float8 * 2, 1::float8 / 3
-- @query mixed_int_numeric
SELECT 3 + 0.5, 10 - 2.25
-- @query bigint_arith
SELECT 9000000000 * 2, 2147483647::bigint + 1
-- @query unary_minus_abs
SELECT -5, abs(-17), abs(-2.5)
-- @query power_sqrt
SELECT power(2::float8, 10), sqrt(16::float8)
-- @query round_ceil_floor
SELECT round(2.567, 2), ceil(2.1), floor(-2.1)
-- @query mod_function
SELECT mod(17, 5), mod(-17, 5)
-- @query cast_text_to_int
SELECT '42'::int, CAST('-7' AS integer)
-- @query cast_int_to_text
SELECT 42::text, CAST(3.50 AS text)
-- @query cast_numeric_scale
SELECT 3.14159::numeric(10,2), CAST(2 AS numeric(5,1))
-- @query cast_float_to_int_rounds
SELECT 2.5::float8::int, 3.5::float8::int, (-2.5)::float8::int
-- @query cast_bool
SELECT 'true'::boolean, 't'::boolean, 'no'::boolean, 1::boolean
-- @query cast_date_text
SELECT '2024-02-29'::date, CAST('2024-02-29' AS date)::text
-- @query cast_smallint
SELECT 123::smallint, (-32768)::smallint
-- @query greatest_least
SELECT greatest(1, 5, 3), least(4, 2, 8), greatest(1.5, 2)
-- @query sign_and_trunc
SELECT trunc(2.789, 1), trunc(-2.7)
-- @query int_overflow error
SELECT 2147483647 + 1
-- @query bad_int_cast error
SELECT 'abc'::int
-- @query smallint_out_of_range error
SELECT 40000::smallint
