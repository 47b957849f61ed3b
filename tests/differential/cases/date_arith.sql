-- date - date is an integer (days) in PostgreSQL, so it adds to a date again;
-- date +/- integer is a date.
-- @setup
CREATE TABLE d_date_arith (id int PRIMARY KEY, d date, e date, n int);
INSERT INTO d_date_arith VALUES (1, '2020-01-01', '2020-03-01', 3), (2, '2024-02-28', '2024-03-01', -2), (3, NULL, '2020-01-01', 1);
-- @query date_minus_date
SELECT id, e - d AS days FROM d_date_arith ORDER BY id
-- @query date_plus_date_difference
SELECT id, d + (e - d) AS back_to_e FROM d_date_arith ORDER BY id
-- @query date_plus_minus_integer_column
SELECT id, d + n, d - n, n + d FROM d_date_arith ORDER BY id
-- @query literal_dates
SELECT DATE '2020-03-01' - DATE '2020-01-01', DATE '2020-01-01' + 5, DATE '2020-01-01' - 3
-- @query difference_in_where
SELECT id FROM d_date_arith WHERE e - d > 30 ORDER BY id
-- @query difference_max
SELECT max(e - d), min(e - d) FROM d_date_arith
-- @query qualified_columns
SELECT t.e - t.d FROM d_date_arith t WHERE t.id = 1
-- @query difference_through_cte_is_integer
WITH x AS (SELECT id, d, e FROM d_date_arith) SELECT id, e - d AS days, pg_typeof(e - d)::text FROM x ORDER BY id
-- @query difference_through_subquery_is_integer
SELECT s.id, s.e - s.d, pg_typeof(s.e - s.d)::text, s.d + (s.e - s.d) FROM (SELECT id, d, e FROM d_date_arith) s ORDER BY s.id
-- @query difference_of_computed_dates_in_cte
WITH x AS (SELECT DATE '2020-03-01' AS e, CAST('2020-01-01' AS date) AS d) SELECT e - d, pg_typeof(e - d)::text FROM x
