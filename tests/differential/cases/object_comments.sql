-- COMMENT ON SCHEMA / COMMENT ON CONSTRAINT (pg_dump writes both), read back through
-- pg_description and obj_description; a missing schema, constraint or table is an error.
-- Runs in order.
-- @setup
CREATE SCHEMA d_oc_app;
CREATE TABLE d_oc_app.d_oc_orders (id int PRIMARY KEY, total numeric CONSTRAINT d_oc_total_check CHECK (total > 0));
CREATE TABLE d_oc_lines (id int, qty int);
-- @query comment_schema
COMMENT ON SCHEMA d_oc_app IS 'the application'
-- @query schema_comment_read
SELECT nspname, obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = 'd_oc_app'
-- @query comment_check
COMMENT ON CONSTRAINT d_oc_total_check ON d_oc_app.d_oc_orders IS 'it''s positive'
-- @query comment_pkey
COMMENT ON CONSTRAINT d_oc_orders_pkey ON d_oc_app.d_oc_orders IS 'the key'
-- @query add_unique
ALTER TABLE d_oc_lines ADD CONSTRAINT d_oc_lines_qty_key UNIQUE (qty)
-- @query comment_added_unique
COMMENT ON CONSTRAINT d_oc_lines_qty_key ON d_oc_lines IS 'one per qty'
-- @query constraint_comments_read
SELECT c.conname, d.description FROM pg_constraint c JOIN pg_description d ON d.objoid = c.oid AND d.classoid = 'pg_constraint'::regclass WHERE c.conname LIKE 'd_oc_%' ORDER BY 1
-- @query obj_description_of_constraint
SELECT obj_description(oid, 'pg_constraint') FROM pg_constraint WHERE conname = 'd_oc_total_check'
-- @query comment_removed
COMMENT ON CONSTRAINT d_oc_orders_pkey ON d_oc_app.d_oc_orders IS NULL
-- @query comment_emptied
COMMENT ON SCHEMA d_oc_app IS ''
-- @query after_removal
SELECT (SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = 'd_oc_app'), (SELECT count(*) FROM pg_description d JOIN pg_constraint c ON c.oid = d.objoid WHERE c.conname = 'd_oc_orders_pkey')
-- @query missing_schema error
COMMENT ON SCHEMA d_oc_nope IS 'x'
-- @query missing_constraint error
COMMENT ON CONSTRAINT d_oc_nope ON d_oc_lines IS 'x'
-- @query missing_table error
COMMENT ON CONSTRAINT d_oc_nope ON d_oc_nope IS 'x'
-- A PRIMARY KEY added to a table that has an index (as pg_dump adds them, after a UNIQUE)
-- rebuilds the table: its serial's sequence keeps its start, position and comment.
-- @query serial_table
CREATE TABLE d_oc_ser (id serial NOT NULL, code text)
-- @query serial_unique
ALTER TABLE d_oc_ser ADD CONSTRAINT d_oc_ser_code_key UNIQUE (code)
-- @query serial_drawn
SELECT setval('d_oc_ser_id_seq', 41)
-- @query serial_comment
COMMENT ON SEQUENCE d_oc_ser_id_seq IS 'ids'
-- @query serial_pkey
ALTER TABLE d_oc_ser ADD CONSTRAINT d_oc_ser_pkey PRIMARY KEY (id)
-- @query serial_sequence_kept
SELECT start_value, last_value, obj_description('d_oc_ser_id_seq'::regclass, 'pg_class') FROM pg_sequences WHERE sequencename = 'd_oc_ser_id_seq'
-- @query serial_keys
SELECT conname, contype FROM pg_constraint WHERE conrelid = 'd_oc_ser'::regclass ORDER BY 1
-- COMMENT ON FUNCTION as pg_dump writes it (qualified, with the argument types)
-- @query function_made
CREATE FUNCTION d_oc_app.d_oc_twice(x integer) RETURNS integer LANGUAGE sql AS 'SELECT 2 * x'
-- @query function_comment
COMMENT ON FUNCTION d_oc_app.d_oc_twice(integer) IS 'doubles'
-- @query function_described
SELECT proname, obj_description(oid, 'pg_proc') FROM pg_proc WHERE proname = 'd_oc_twice'
-- @query function_comment_removed
COMMENT ON FUNCTION d_oc_app.d_oc_twice(integer) IS NULL
-- @query function_no_description
SELECT count(*) FROM pg_description d JOIN pg_proc p ON p.oid = d.objoid WHERE p.proname = 'd_oc_twice'
-- @query missing_function error
COMMENT ON FUNCTION d_oc_nope(integer) IS 'x'
