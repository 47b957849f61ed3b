-- Data-modifying statements in WITH (transpiler/dml_cte.py, proxy/pgserver/dml_ctes.py):
-- each DML CTE runs, referenced or not, its RETURNING rows read by the main statement;
-- the command tag and rows are the main statement's; a failure in any part leaves
-- nothing. What could show the steps ran one after another (a part reading a table an
-- earlier DML CTE modified) is refused with 0A000 (PostgreSQL answers it: see
-- known_differences.sql's dml_cte_reads_modified_table).
-- @setup
CREATE TABLE d_dc_orders (id int PRIMARY KEY, shipped boolean, note text);
CREATE TABLE d_dc_archive (id int, shipped boolean, note text);
CREATE TABLE d_dc_a (id serial PRIMARY KEY, v int);
CREATE TABLE d_dc_b (id serial PRIMARY KEY, a_id int, tag text);
CREATE TABLE d_dc_log (what text, n int);
CREATE TABLE d_dc_iv (id int, iv interval, amount numeric(12,4));
INSERT INTO d_dc_iv VALUES (1, interval '1 month 2 days 03:00:00', 1.2345);
CREATE TABLE d_dc_parent (id int PRIMARY KEY);
CREATE TABLE d_dc_child (id int, p int REFERENCES d_dc_parent (id));
INSERT INTO d_dc_parent VALUES (1);
INSERT INTO d_dc_orders VALUES (1, true, 'one'), (2, false, 'two'), (3, true, 'three'), (4, false, 'four');
-- @query dml_cte_move_rows
WITH moved AS (DELETE FROM d_dc_orders WHERE shipped RETURNING *) INSERT INTO d_dc_archive SELECT * FROM moved;
-- @query dml_cte_moved_archive
SELECT id, shipped, note FROM d_dc_archive ORDER BY id;
-- @query dml_cte_moved_left
SELECT id, note FROM d_dc_orders ORDER BY id;
-- @query dml_cte_update_count
WITH u AS (UPDATE d_dc_orders SET note = note || '!' WHERE id > 1 RETURNING id) SELECT count(*) FROM u;
-- @query dml_cte_update_rows_returned
WITH u AS (UPDATE d_dc_orders SET note = upper(note) RETURNING id, note) SELECT id, note FROM u ORDER BY id;
-- @query dml_cte_insert_chain_returning
WITH ins AS (INSERT INTO d_dc_a (v) VALUES (10), (20) RETURNING id, v) INSERT INTO d_dc_b (a_id, tag) SELECT id, 'from ' || v FROM ins ORDER BY id RETURNING a_id, tag;
-- @query dml_cte_several_and_a_select
WITH x AS (SELECT 7 AS k), i1 AS (INSERT INTO d_dc_a (v) SELECT k FROM x RETURNING id, v), i2 AS (INSERT INTO d_dc_log (what, n) SELECT 'a', v FROM i1 RETURNING n) SELECT (SELECT count(*) FROM i1) AS a_rows, (SELECT max(n) FROM i2) AS logged, (SELECT k FROM x) AS k;
-- @query dml_cte_unreferenced_still_runs
WITH gone AS (DELETE FROM d_dc_archive WHERE id = 3 RETURNING *), kept AS (INSERT INTO d_dc_log VALUES ('b', 2) RETURNING n) SELECT n FROM kept;
-- @query dml_cte_unreferenced_effect
SELECT (SELECT count(*) FROM d_dc_archive) AS archived, (SELECT count(*) FROM d_dc_log) AS logged;
-- @query dml_cte_without_returning_runs
WITH d AS (DELETE FROM d_dc_log) SELECT 1 AS one;
-- @query dml_cte_without_returning_effect
SELECT count(*) FROM d_dc_log;
-- @query dml_cte_referenced_twice
WITH ins AS (INSERT INTO d_dc_log VALUES ('c', 3), ('d', 4) RETURNING n) SELECT a.n AS x, b.n AS y FROM ins a JOIN ins b ON a.n < b.n;
-- @query dml_cte_column_aliases
WITH ins (what_, n_) AS (INSERT INTO d_dc_log VALUES ('e', 5) RETURNING what, n) SELECT n_, what_ FROM ins;
-- @query dml_cte_update_main
WITH del AS (DELETE FROM d_dc_log WHERE n = 3 RETURNING n) UPDATE d_dc_orders SET note = 'seen ' || (SELECT count(*) FROM del) WHERE id = 2;
-- @query dml_cte_update_main_effect
SELECT id, note FROM d_dc_orders ORDER BY id;
-- @query dml_cte_no_rows
WITH u AS (UPDATE d_dc_orders SET note = 'never' WHERE id > 100 RETURNING id) SELECT count(*) FROM u;
-- @query dml_cte_failure_is_atomic error
WITH d AS (DELETE FROM d_dc_log RETURNING n) INSERT INTO d_dc_orders (id, note) SELECT 2, 'dup' FROM d;
-- @query dml_cte_failure_left_nothing
SELECT what, n FROM d_dc_log ORDER BY what;
-- @query dml_cte_without_returning_read error
WITH d AS (DELETE FROM d_dc_log) SELECT * FROM d;
-- @query dml_cte_nested_with error
SELECT * FROM (WITH d AS (DELETE FROM d_dc_log RETURNING n) SELECT n FROM d) s;
-- @query dml_cte_in_block_commits
BEGIN; WITH ins AS (INSERT INTO d_dc_log VALUES ('g', 7) RETURNING n) INSERT INTO d_dc_log SELECT 'h', n + 1 FROM ins; COMMIT;
-- @query dml_cte_in_block_rows
SELECT what, n FROM d_dc_log ORDER BY what;
-- @query dml_cte_values_kept_exact
WITH m AS (DELETE FROM d_dc_iv RETURNING iv, amount) SELECT timestamp '2024-01-31 00:00' + iv AS at, amount FROM m;
-- @query dml_cte_foreign_key_checked
WITH c AS (INSERT INTO d_dc_child VALUES (1, 1) RETURNING p) INSERT INTO d_dc_log SELECT 'fk', p FROM c;
-- @query dml_cte_foreign_key_violation error
WITH c AS (INSERT INTO d_dc_child VALUES (2, 99) RETURNING p) INSERT INTO d_dc_log SELECT 'bad', p FROM c;
-- @query dml_cte_foreign_key_rows
SELECT (SELECT count(*) FROM d_dc_child) AS children, (SELECT count(*) FROM d_dc_log WHERE what IN ('fk', 'bad')) AS logged;
-- @query dml_cte_in_do_block
DO $$ BEGIN WITH d AS (DELETE FROM d_dc_log WHERE what = 'fk' RETURNING n) INSERT INTO d_dc_log SELECT 'do', n FROM d; END $$;
-- @query dml_cte_in_do_block_rows
SELECT what, n FROM d_dc_log WHERE what IN ('fk', 'do') ORDER BY what;
-- @query dml_cte_select_in_do_block error
DO $$ BEGIN WITH d AS (DELETE FROM d_dc_log WHERE what = 'do' RETURNING n) SELECT n FROM d; END $$;
-- @query dml_cte_returning_expression_names
WITH u AS (UPDATE d_dc_orders SET note = note WHERE id = 2 RETURNING id * 2, upper(note), id) SELECT * FROM u;
