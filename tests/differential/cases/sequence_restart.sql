-- Sequences moved back: setval to a lower value, ALTER SEQUENCE ... RESTART [WITH n],
-- TRUNCATE ... RESTART IDENTITY (Django's flush); hatiproxy makes the sequence again.
-- @setup
CREATE TABLE d_seqr_a (id serial PRIMARY KEY, v text);
CREATE INDEX d_seqr_a_v ON d_seqr_a (v);
CREATE TABLE d_seqr_b (id bigserial PRIMARY KEY, a int REFERENCES d_seqr_a (id));
CREATE SEQUENCE d_seqr_s START 5 INCREMENT 5;
INSERT INTO d_seqr_a (v) VALUES ('x'), ('y'), ('z');
INSERT INTO d_seqr_b (a) VALUES (1), (2);
-- @query make_room
DELETE FROM d_seqr_a WHERE id >= 2 AND id NOT IN (SELECT a FROM d_seqr_b)
-- @query setval_back
SELECT setval('d_seqr_a_id_seq', 2)
-- @query next_after_setval_back
INSERT INTO d_seqr_a (v) VALUES ('w') RETURNING id
-- @query setval_back_not_called
SELECT setval('public.d_seqr_a_id_seq', 1, false)
-- @query key_taken_after_setval_back error
INSERT INTO d_seqr_a (v) VALUES ('q') RETURNING id
-- @query restart_with
ALTER SEQUENCE d_seqr_a_id_seq RESTART WITH 10
-- @query next_after_restart_with
INSERT INTO d_seqr_a (v) VALUES ('r') RETURNING id
-- @query drawn_sequence
WITH d AS (SELECT nextval('d_seqr_s') AS n FROM generate_series(1, 2)) SELECT n FROM d ORDER BY n
-- @query restart_to_start
ALTER SEQUENCE d_seqr_s RESTART
-- @query next_after_restart
WITH d AS (SELECT nextval('d_seqr_s') AS n) SELECT n FROM d
-- @query truncate_restart_identity
TRUNCATE d_seqr_b, d_seqr_a RESTART IDENTITY
-- @query next_after_truncate_a
INSERT INTO d_seqr_a (v) VALUES ('n') RETURNING id
-- @query next_after_truncate_b
INSERT INTO d_seqr_b (a) VALUES (1) RETURNING id
-- @query default_kept
SELECT column_default FROM information_schema.columns WHERE table_name = 'd_seqr_a' AND column_name = 'id'
-- DROP TABLE drops its serial columns' sequences (OWNED BY): a table made again starts at 1
-- @setup
CREATE TABLE d_seqr_drop (id serial PRIMARY KEY, n bigserial, v text);
INSERT INTO d_seqr_drop (v) VALUES ('a'), ('b');
DROP TABLE d_seqr_drop;
-- @query dropped_table_sequences_gone
SELECT count(*) FROM pg_class WHERE relname IN ('d_seqr_drop_id_seq', 'd_seqr_drop_n_seq')
-- @query dropped_sequence_missing error
SELECT nextval('d_seqr_drop_id_seq')
-- @query made_again_starts_at_one
CREATE TABLE d_seqr_drop (id serial PRIMARY KEY, v text)
-- @query made_again_first_id
INSERT INTO d_seqr_drop (v) VALUES ('c') RETURNING id
