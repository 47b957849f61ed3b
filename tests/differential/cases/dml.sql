-- INSERT / UPDATE / DELETE row counts, RETURNING, ON CONFLICT. Runs in order.
-- @setup
CREATE TABLE d_kv (k int PRIMARY KEY, v text, n int DEFAULT 0);
CREATE TABLE d_log (id int, msg text);
CREATE TABLE d_upsert_batch (id int PRIMARY KEY, email text UNIQUE, n int);
-- @query insert_one
INSERT INTO d_kv VALUES (1, 'one', 1)
-- @query insert_many
INSERT INTO d_kv VALUES (2, 'two', 2), (3, 'three', 3), (4, 'four', 4)
-- @query insert_default
INSERT INTO d_kv (k, v) VALUES (5, 'five')
-- @query insert_fewer_values_than_columns
INSERT INTO d_kv VALUES (20, 'twenty')
-- @query insert_fewer_values_many_rows
INSERT INTO d_kv VALUES (21, 'a'), (22, 'b')
-- @query insert_fewer_select_columns
INSERT INTO d_kv SELECT 23
-- @query insert_fewer_union_returning
INSERT INTO d_kv SELECT 24, 'x' UNION ALL SELECT 25, 'y' RETURNING k, v, n
-- @query insert_select
INSERT INTO d_log SELECT k, v FROM d_kv WHERE k <= 2
-- @query insert_returning
INSERT INTO d_kv VALUES (6, 'six', 6) RETURNING k, v
-- @query insert_returning_star
INSERT INTO d_kv VALUES (7, 'seven', 7) RETURNING *
-- @query insert_returning_expr
INSERT INTO d_log VALUES (10, 'x') RETURNING id * 2 AS twice, upper(msg)
-- @query select_after_inserts
SELECT k, v, n FROM d_kv ORDER BY k
-- @query update_count
UPDATE d_kv SET n = n + 10 WHERE k > 4
-- @query update_none
UPDATE d_kv SET n = 0 WHERE k > 100
-- @query update_returning
UPDATE d_kv SET v = upper(v) WHERE k IN (1, 2) RETURNING k, v
-- @query delete_count
DELETE FROM d_log WHERE id = 10
-- @query delete_returning
DELETE FROM d_kv WHERE k = 7 RETURNING k, n
-- @query delete_none
DELETE FROM d_kv WHERE k = 7
-- @query upsert_do_nothing
INSERT INTO d_kv VALUES (1, 'dup', 0) ON CONFLICT (k) DO NOTHING
-- @query upsert_do_update
INSERT INTO d_kv VALUES (2, 'new two', 20) ON CONFLICT (k) DO UPDATE SET v = excluded.v, n = excluded.n
-- @query upsert_mixed_returning
INSERT INTO d_kv VALUES (3, 'THREE', 30), (8, 'eight', 8) ON CONFLICT (k) DO UPDATE SET n = d_kv.n + excluded.n RETURNING k, v, n
-- @query select_after_upserts
SELECT k, v, n FROM d_kv ORDER BY k
-- @query duplicate_key error
INSERT INTO d_kv VALUES (1, 'again', 0)
-- @query not_null_violation error
INSERT INTO d_kv (v) VALUES ('no key')
-- @query insert_wrong_type error
INSERT INTO d_kv VALUES ('abc', 'x', 0)
-- @query delete_all
DELETE FROM d_log
-- @query count_after_delete
SELECT count(*) FROM d_log
-- @query upsert_batch_duplicate_key error
INSERT INTO d_upsert_batch (id, email, n) VALUES (1, 'a', 1), (2, 'a', 2) ON CONFLICT (email) DO UPDATE SET n = excluded.n
-- @query upsert_batch_duplicate_numeric_key error
INSERT INTO d_upsert_batch (id, email, n) VALUES (1.0, 'x', 1), (1, 'y', 2) ON CONFLICT (id) DO UPDATE SET n = excluded.n
-- @query upsert_batch_distinct_keys
INSERT INTO d_upsert_batch (id, email, n) VALUES (1, 'a', 1), (2, 'b', 2) ON CONFLICT (id) DO UPDATE SET n = excluded.n RETURNING id, n
-- @query upsert_batch_do_nothing_duplicates
INSERT INTO d_upsert_batch (id, email, n) VALUES (5, 'c', 1), (5, 'c', 2) ON CONFLICT (id) DO NOTHING RETURNING id, n
-- @query upsert_batch_rows
SELECT * FROM d_upsert_batch ORDER BY id
