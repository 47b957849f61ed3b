-- sum of an integer / smallint is bigint, as in PostgreSQL (transpiler/int_results.py):
-- DuckDB's HUGEINT went out as numeric, so clients got Decimal('15') instead of 15.
-- @setup
CREATE TABLE d_sum (id int PRIMARY KEY, grp text, n int, s smallint, b bigint, ok boolean);
INSERT INTO d_sum VALUES (1, 'a', 5, 1, 10, true), (2, 'a', 7, 2, 20, false), (3, 'b', NULL, 3, 30, true);
-- @query sum_int_is_bigint
SELECT sum(n), sum(s) FROM d_sum
-- @query sum_int_group_by
SELECT grp, sum(n) FROM d_sum GROUP BY grp ORDER BY grp
-- @query sum_int_window
SELECT id, sum(n) OVER (ORDER BY id) FROM d_sum ORDER BY id
-- @query sum_of_int_literals_and_case
SELECT sum(1), sum(CASE WHEN ok THEN 1 ELSE 0 END), sum(CASE WHEN ok THEN 1 END) FROM d_sum
-- @query sum_bigint_stays_numeric
SELECT sum(b), sum(b) / 3 FROM d_sum
-- @query sum_int_where_nothing_matches
SELECT sum(n) FROM d_sum WHERE id > 9
