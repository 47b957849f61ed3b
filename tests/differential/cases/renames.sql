-- Rails' rename_table and the renames around it: ALTER TABLE ... RENAME TO keeps the
-- names of the table's constraints (d_rn_a_pkey stays), ALTER SEQUENCE ... RENAME TO
-- (DuckDB has none: proxy/pgserver/sequence_rename.py), ALTER INDEX of a constraint's
-- index (the constraint follows), and sequences named by schema (`'public.s'`).
-- @setup
CREATE TABLE d_rn_a (id serial PRIMARY KEY, code text UNIQUE, n int CHECK (n > 0));
INSERT INTO d_rn_a (code, n) VALUES ('x', 1), ('y', 2);
CREATE SEQUENCE d_rn_s START 5;
-- @query rename_table
ALTER TABLE d_rn_a RENAME TO d_rn_b
-- @query constraints_keep_their_names
SELECT conname, contype FROM pg_constraint WHERE conrelid = 'd_rn_b'::regclass ORDER BY 1
-- @query indexes_keep_their_names
SELECT indexname FROM pg_indexes WHERE tablename = 'd_rn_b' ORDER BY 1
-- @query rename_sequence
ALTER SEQUENCE d_rn_a_id_seq RENAME TO d_rn_b_id_seq
-- @query rename_pkey_index
ALTER INDEX d_rn_a_pkey RENAME TO d_rn_b_pkey
-- @query rename_unique_index
ALTER INDEX d_rn_a_code_key RENAME TO d_rn_b_code_key
-- @query rename_check
ALTER TABLE d_rn_b RENAME CONSTRAINT d_rn_a_n_check TO d_rn_b_n_check
-- @query renamed_constraints
SELECT conname, contype FROM pg_constraint WHERE conrelid = 'd_rn_b'::regclass ORDER BY 1
-- @query renamed_indexes
SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'd_rn_b' ORDER BY 1
-- @query relations_after
SELECT relname, relkind FROM pg_class WHERE relname LIKE 'd\_rn\_%' ORDER BY 1
-- @query serial_keeps_counting
INSERT INTO d_rn_b (code, n) VALUES ('z', 3) RETURNING id
-- @query serial_sequence_named
SELECT pg_get_serial_sequence('d_rn_b', 'id'), pg_get_serial_sequence('public.d_rn_b', 'id')
-- @query default_names_it
SELECT column_default FROM information_schema.columns WHERE table_name = 'd_rn_b' AND column_name = 'id'
-- @query sequence_state_kept
SELECT sequencename, start_value, last_value, increment_by FROM pg_sequences WHERE sequencename LIKE 'd\_rn\_%' ORDER BY 1
-- @query sequence_owned_by_column
SELECT d.deptype, a.attname FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid WHERE d.objid = 'd_rn_b_id_seq'::regclass AND d.refobjid = 'd_rn_b'::regclass
-- @query duplicate_key_names_renamed_constraint error
INSERT INTO d_rn_b (code, n) VALUES ('z', 4)
-- @query rename_missing_sequence error
ALTER SEQUENCE d_rn_nosuch RENAME TO d_rn_other
-- @query rename_missing_sequence_if_exists
ALTER SEQUENCE IF EXISTS d_rn_nosuch RENAME TO d_rn_other
-- @query rename_sequence_to_taken_name error
ALTER SEQUENCE d_rn_s RENAME TO d_rn_b
-- @query rename_index_to_taken_name error
ALTER INDEX d_rn_b_pkey RENAME TO d_rn_b_id_seq
-- @query nextval_public
SELECT nextval('public.d_rn_s') >= 5
-- @query nextval_quoted_public
SELECT nextval('"public"."d_rn_s"') > 5
-- @query currval_quoted_public
SELECT currval('"public"."d_rn_s"') > 5
-- @query setval_public
SELECT setval('public.d_rn_s', 20)
-- @query nextval_public_regclass
SELECT nextval('public.d_rn_s'::regclass) > 5
-- @query setval_public_again
SELECT setval('public.d_rn_s', 20)
-- @query default_public_regclass
CREATE TABLE d_rn_c (id bigint DEFAULT nextval('public.d_rn_s'::regclass) NOT NULL, v text)
-- @query insert_draws_from_it
INSERT INTO d_rn_c (v) VALUES ('q') RETURNING id
-- @query default_shown
SELECT column_default FROM information_schema.columns WHERE table_name = 'd_rn_c' AND column_name = 'id'
-- @query rename_drawn_sequence
ALTER SEQUENCE public.d_rn_s RENAME TO d_rn_s2
-- @query default_follows
SELECT column_default FROM information_schema.columns WHERE table_name = 'd_rn_c' AND column_name = 'id'
-- @query insert_after_rename
INSERT INTO d_rn_c (v) VALUES ('r') RETURNING id
-- @query renamed_sequence_in_transaction
BEGIN; ALTER SEQUENCE d_rn_s2 RENAME TO d_rn_s3; ROLLBACK
-- @query rolled_back_rename
SELECT sequencename FROM pg_sequences WHERE sequencename LIKE 'd\_rn\_s%' ORDER BY 1
-- @query rename_column
ALTER TABLE d_rn_b RENAME COLUMN code TO label
-- @query columns_after
SELECT a.attname FROM pg_attribute a WHERE a.attrelid = 'd_rn_b'::regclass AND a.attnum > 0 ORDER BY a.attnum
-- @query drop_table_drops_its_sequence
DROP TABLE d_rn_b
-- @query sequences_left
SELECT sequencename FROM pg_sequences WHERE sequencename LIKE 'd\_rn\_%' ORDER BY 1
-- @query rails_table_setup
CREATE TABLE d_rn_old (id bigserial PRIMARY KEY, tag text)
-- @query rails_index_setup
CREATE INDEX index_d_rn_old_on_tag ON d_rn_old (tag)
-- @query rails_rows
INSERT INTO d_rn_old (tag) VALUES ('a'), ('b')
-- @query rails_rename_table
ALTER TABLE "d_rn_old" RENAME TO "d_rn_new"
-- @query rails_rename_sequence_as_table
ALTER TABLE "public"."d_rn_old_id_seq" RENAME TO "d_rn_new_id_seq"
-- @query rails_rename_pkey_as_table
ALTER TABLE "d_rn_old_pkey" RENAME TO "d_rn_new_pkey"
-- @query rails_rename_index
ALTER INDEX "index_d_rn_old_on_tag" RENAME TO "index_d_rn_new_on_tag"
-- @query rails_rename_index_as_table
ALTER TABLE index_d_rn_new_on_tag RENAME TO index_d_rn_new_tag
-- @query rails_relations
SELECT relname, relkind FROM pg_class WHERE relname LIKE '%d\_rn\_old%' OR relname LIKE '%d\_rn\_new%' ORDER BY 1
-- @query rails_pk_and_sequence
SELECT pg_get_serial_sequence('d_rn_new', 'id'), (SELECT conname FROM pg_constraint WHERE conrelid = 'd_rn_new'::regclass)
-- @query rails_keeps_counting
INSERT INTO d_rn_new (tag) VALUES ('c') RETURNING id
-- @query rename_missing_as_table error
ALTER TABLE d_rn_nosuch RENAME TO d_rn_other
-- @query moved_table_setup
CREATE SCHEMA d_rn_sch
-- @query moved_table
CREATE TABLE d_rn_mv (id serial PRIMARY KEY, v text)
-- @query move_it
ALTER TABLE d_rn_mv SET SCHEMA d_rn_sch
-- @query rename_its_moved_sequence
ALTER SEQUENCE d_rn_sch.d_rn_mv_id_seq RENAME TO d_rn_mv_seq2
-- @query moved_default_follows
INSERT INTO d_rn_sch.d_rn_mv (v) VALUES ('a') RETURNING id
-- @query moved_serial_sequence
SELECT pg_get_serial_sequence('d_rn_sch.d_rn_mv', 'id')
-- @query drop_moved_table
DROP TABLE d_rn_sch.d_rn_mv
