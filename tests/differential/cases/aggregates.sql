-- Aggregates, GROUP BY, HAVING.
-- @setup
CREATE TABLE d_sales (id int PRIMARY KEY, region text, product text, qty int, price numeric(10,2), weight float8);
INSERT INTO d_sales VALUES
  (1, 'north', 'apple', 10, 1.50, 0.5),
  (2, 'north', 'pear', 5, 2.25, 1.25),
  (3, 'south', 'apple', 7, 1.55, 0.75),
  (4, 'south', 'plum', NULL, 3.00, NULL),
  (5, 'east', 'apple', 3, 1.45, 2.5),
  (6, 'east', 'pear', 8, NULL, 0.125),
  (7, 'north', 'apple', 2, 1.50, 1.0);
-- @query count_star_and_col
SELECT count(*), count(qty), count(price), count(DISTINCT product) FROM d_sales
-- @query sum_numeric
SELECT sum(price) FROM d_sales
-- @query sum_float
SELECT sum(weight) FROM d_sales
-- @query min_max
SELECT min(qty), max(qty), min(product), max(price) FROM d_sales
-- @query avg_float
SELECT avg(weight) FROM d_sales
-- @query group_by_count
SELECT region, count(*) FROM d_sales GROUP BY region
-- @query group_by_sum
SELECT region, sum(qty)::bigint AS q FROM d_sales GROUP BY region ORDER BY region
-- @query group_by_two_cols
SELECT region, product, count(*), sum(qty)::bigint FROM d_sales GROUP BY region, product
-- @query having
SELECT product, count(*) FROM d_sales GROUP BY product HAVING count(*) > 1
-- @query having_sum
SELECT region FROM d_sales GROUP BY region HAVING sum(qty) >= 15
-- @query group_by_expression
SELECT qty > 5 AS big, count(*) FROM d_sales GROUP BY qty > 5
-- @query aggregate_empty
SELECT count(*), sum(qty), max(qty) FROM d_sales WHERE false
-- @query group_by_empty
SELECT region, count(*) FROM d_sales WHERE false GROUP BY region
-- @query filter_clause
SELECT count(*) FILTER (WHERE qty > 4), sum(qty) FILTER (WHERE region = 'north')::bigint FROM d_sales
-- @query bool_and_or
SELECT bool_and(qty > 1), bool_or(qty > 9) FROM d_sales
-- @query string_agg_group
SELECT region, string_agg(product, '|' ORDER BY id) FROM d_sales GROUP BY region
-- @query array_agg_ordered
SELECT array_agg(id ORDER BY id DESC) FROM d_sales WHERE region = 'north'
-- @query stddev_variance
SELECT stddev_samp(weight), var_pop(weight) FROM d_sales
-- @query count_distinct_group
SELECT region, count(DISTINCT product) FROM d_sales GROUP BY region
-- @query group_by_ordinal
SELECT product, max(qty) FROM d_sales GROUP BY 1 ORDER BY 1
-- @query sum_of_products
SELECT region, sum(qty * price) FROM d_sales GROUP BY region
-- @query nested_aggregate_error error
SELECT sum(count(*)) FROM d_sales
-- @query ungrouped_column_error error
SELECT region, count(*) FROM d_sales
