-- currval / lastval of this session (proxy/pgserver/sequence_values.py), and temp tables
-- ON COMMIT (proxy/pgserver/temp_on_commit.py), on one connection in autocommit.
-- @setup
CREATE TABLE d_cv_items (id serial PRIMARY KEY, v text);
CREATE SEQUENCE d_cv_down INCREMENT BY -1;
CREATE TABLE d_cv_desc (id int DEFAULT nextval('d_cv_down'), v text);
-- @query currval_before_any error
SELECT currval('d_cv_items_id_seq')
-- @query insert_values
INSERT INTO d_cv_items (v) VALUES ('a'), ('b'), ('c')
-- @query currval_after_values
SELECT currval('d_cv_items_id_seq'), lastval(), currval('public.d_cv_items_id_seq'::regclass)
-- @query insert_given_id
INSERT INTO d_cv_items (id, v) VALUES (50, 'x')
-- @query currval_unchanged_by_given_id
SELECT currval('d_cv_items_id_seq')
-- @query insert_default_values
INSERT INTO d_cv_items DEFAULT VALUES
-- @query currval_after_default_values
SELECT currval('d_cv_items_id_seq')
-- @query insert_select
INSERT INTO d_cv_items (v) SELECT 'g' || g FROM generate_series(1, 4) AS g
-- @query currval_after_select
SELECT currval('d_cv_items_id_seq') AS c, lastval() AS l
-- @query insert_returning
INSERT INTO d_cv_items (v) VALUES ('r') RETURNING id, v
-- @query currval_in_expression
SELECT currval('d_cv_items_id_seq') * 10 + 1 AS x, lastval() = currval('d_cv_items_id_seq') AS same
-- @query setval_called
SELECT setval('d_cv_items_id_seq', 100)
-- @query currval_after_setval
SELECT currval('d_cv_items_id_seq'), lastval()
-- @query descending_insert
INSERT INTO d_cv_desc (v) VALUES ('a'), ('b'), ('c')
-- @query descending_currval
SELECT currval('d_cv_down'), lastval()
-- @query on_commit_drop_create
CREATE TEMP TABLE d_cv_stage (a int) ON COMMIT DROP
-- @query on_commit_drop_gone error
SELECT * FROM d_cv_stage
-- @query on_commit_delete_rows_create
CREATE TEMP TABLE d_cv_rows (a int) ON COMMIT DELETE ROWS
-- @query on_commit_delete_rows_insert
INSERT INTO d_cv_rows VALUES (1), (2)
-- @query on_commit_delete_rows_empty
SELECT count(*) FROM d_cv_rows
-- @query on_commit_ctas
CREATE TEMP TABLE d_cv_snap ON COMMIT PRESERVE ROWS AS SELECT id, v FROM d_cv_items WHERE id <= 3
-- @query on_commit_preserved
SELECT id, v FROM d_cv_snap ORDER BY id
-- @query currval_no_such_sequence error
SELECT currval('d_cv_nowhere')
-- @query dropped_sequence_drop
DROP TABLE d_cv_desc
-- @query dropped_sequence_drop_seq
DROP SEQUENCE d_cv_down
-- @query dropped_sequence_currval error
SELECT currval('d_cv_down')
