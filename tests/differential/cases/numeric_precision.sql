-- Numeric precision and scale, float edge cases.
-- @setup
CREATE TABLE d_money (id int PRIMARY KEY, amount numeric(12,4), rate numeric(6,3));
INSERT INTO d_money VALUES (1, 1234.5678, 0.125), (2, -0.0001, 1.000), (3, 99999999.9999, 2.5);
-- @query numeric_column
SELECT id, amount, rate FROM d_money
-- @query numeric_sum
SELECT sum(amount) FROM d_money
-- @query numeric_multiply
SELECT id, amount * rate FROM d_money
-- @query numeric_add_scales
SELECT 0.1 + 0.2, 1.10 + 2.205
-- @query numeric_compare_exact
SELECT 0.1 + 0.2 = 0.3
-- @query float_not_exact
SELECT 0.1::float8 + 0.2::float8 = 0.3::float8
-- @query large_numeric
SELECT 123456789012345678.123::numeric(30,3) + 1
-- @query numeric_round_half
SELECT round(0.5), round(1.5), round(2.5), round(-2.5)
-- @query numeric_cast_round
SELECT 1.005::numeric(5,2), 1.015::numeric(5,2)
-- @query float4_values
SELECT 1.5::real, 0.25::float4
-- @query float_special
SELECT 'NaN'::float8, 'Infinity'::float8, '-Infinity'::float8
-- @query numeric_to_float
SELECT 1.25::numeric::float8
-- @query int_to_numeric
SELECT 7::numeric(5,2)
-- @query numeric_overflow error
SELECT 12345.678::numeric(5,2)
