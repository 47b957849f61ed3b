-- Window functions.
-- @setup
CREATE TABLE d_scores (id int PRIMARY KEY, team text, player text, score int);
INSERT INTO d_scores VALUES (1, 'red', 'a', 10), (2, 'red', 'b', 30), (3, 'red', 'c', 30), (4, 'blue', 'd', 5), (5, 'blue', 'e', 25), (6, 'green', 'f', NULL);
-- @query row_number
SELECT id, row_number() OVER (ORDER BY id) FROM d_scores
-- @query row_number_partition
SELECT id, row_number() OVER (PARTITION BY team ORDER BY id) FROM d_scores
-- @query rank_dense_rank
SELECT id, rank() OVER (ORDER BY score DESC NULLS LAST), dense_rank() OVER (ORDER BY score DESC NULLS LAST) FROM d_scores
-- @query running_sum
SELECT id, (sum(score) OVER (ORDER BY id))::bigint FROM d_scores
-- @query partition_sum
SELECT id, (sum(score) OVER (PARTITION BY team))::bigint FROM d_scores
-- @query partition_avg
SELECT id, (avg(score) OVER (PARTITION BY team))::float8 FROM d_scores
-- @query lag_lead
SELECT id, lag(score) OVER (ORDER BY id), lead(score, 1, -1) OVER (ORDER BY id) FROM d_scores
-- @query first_last_value
SELECT id, first_value(player) OVER w, last_value(player) OVER w FROM d_scores WINDOW w AS (PARTITION BY team ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
-- @query rows_frame
SELECT id, (sum(score) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING))::bigint FROM d_scores
-- @query ntile
SELECT id, ntile(2) OVER (ORDER BY id) FROM d_scores
-- @query count_over
SELECT id, count(*) OVER (), count(score) OVER (PARTITION BY team) FROM d_scores
-- @query percent_rank
SELECT id, percent_rank() OVER (ORDER BY id), cume_dist() OVER (ORDER BY id) FROM d_scores
-- @query window_in_subquery_filter
SELECT player FROM (SELECT player, row_number() OVER (PARTITION BY team ORDER BY score DESC NULLS LAST, id) AS rn FROM d_scores) s WHERE rn = 1
-- @query window_ordered_output
SELECT id, max(score) OVER (PARTITION BY team ORDER BY id) FROM d_scores ORDER BY id
