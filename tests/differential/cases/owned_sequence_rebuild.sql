-- A sequence owned by a table (ALTER SEQUENCE ... OWNED BY) survives the table's rebuild
-- around its indexes (ALTER TABLE ... SET DEFAULT / RENAME COLUMN on an indexed table): it
-- keeps its position and its owner, and goes when the table goes. Runs in order.
-- @setup
CREATE TABLE d_own (id serial PRIMARY KEY, v text);
CREATE INDEX d_own_v ON d_own (v);
CREATE SEQUENCE d_own_sq START 10;
-- @query draw
SELECT setval('d_own_sq', 10)
-- @query owned_by
ALTER SEQUENCE d_own_sq OWNED BY d_own.id
-- @query set_default
ALTER TABLE d_own ALTER COLUMN id SET DEFAULT nextval('d_own_sq')
-- @query insert_draws_on
INSERT INTO d_own (v) VALUES ('q') RETURNING id
-- @query rename_column
ALTER TABLE d_own RENAME COLUMN v TO w
-- @query insert_again
INSERT INTO d_own (w) VALUES ('r') RETURNING id
-- @query drop_table
DROP TABLE d_own
-- @query sequence_gone_with_table
SELECT count(*) FROM pg_class WHERE relname = 'd_own_sq'
