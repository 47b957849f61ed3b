-- Everyday DDL and query odds of migrations (Django, Alembic, Rails): ALTER TABLE ...
-- RENAME CONSTRAINT of each kind, and what the catalog, the violation messages and DROP
-- CONSTRAINT see afterwards; named PRIMARY KEYs; ORDER BY an output column's name. Runs
-- in order.
-- @setup
CREATE TABLE d_rc_p (id int CONSTRAINT d_rc_p_pkey PRIMARY KEY, code text CONSTRAINT d_rc_p_code_key UNIQUE, n int CONSTRAINT d_rc_p_n_check CHECK (n > 0), m int CHECK (m < 100));
CREATE TABLE d_rc_c (id int PRIMARY KEY, p int CONSTRAINT d_rc_c_p_fkey REFERENCES d_rc_p (id));
CREATE TABLE d_rc_a (id int NOT NULL, email text, k int);
CREATE SCHEMA d_rc_s;
CREATE TABLE d_rc_s.t (id int PRIMARY KEY, v int CHECK (v <> 0));
CREATE TABLE d_rc_named (id int, CONSTRAINT d_rc_named_pk PRIMARY KEY (id));
CREATE TABLE d_ui (id int NOT NULL, email text, k int);
INSERT INTO d_ui VALUES (1, 'a', 1), (2, 'b', 2);
CREATE UNIQUE INDEX d_ui_email_idx ON d_ui (email);
CREATE UNIQUE INDEX d_ui_id_idx ON d_ui (id);
CREATE UNIQUE INDEX d_ui_k ON d_ui (k);
CREATE INDEX d_ui_plain ON d_ui (email);
CREATE UNIQUE INDEX d_ui_expr ON d_ui (lower(email));
CREATE SCHEMA d_ss;
CREATE TABLE d_ss_p (id serial PRIMARY KEY, code text UNIQUE, n int CHECK (n > 0) DEFAULT 5);
CREATE INDEX d_ss_p_n ON d_ss_p (n);
CREATE TABLE d_ss_c (id int PRIMARY KEY, p int REFERENCES d_ss_p (id));
INSERT INTO d_ss_p (code) VALUES ('a'), ('b');
INSERT INTO d_ss_c VALUES (1, 1);
COMMENT ON TABLE d_ss_p IS 'the parent';
COMMENT ON COLUMN d_ss_p.code IS 'a code';
CREATE SEQUENCE d_ss_seq;
CREATE VIEW d_ss_v AS SELECT 1 AS a;
CREATE TABLE d_ss.d_ss_dup (a int);
CREATE TABLE d_ss_dup (a int);
CREATE FUNCTION d_df_add(a int, b int) RETURNS int LANGUAGE sql AS 'SELECT a + b';
CREATE SEQUENCE d_md_a;
CREATE SEQUENCE d_md_b;
CREATE SCHEMA d_md_s1;
CREATE SCHEMA d_md_s2;
CREATE TABLE d_ob (m int, n text);
INSERT INTO d_ob VALUES (10, 'b'), (9, 'a'), (100, 'c'), (NULL, 'd');
-- @query rename_pkey
ALTER TABLE d_rc_p RENAME CONSTRAINT d_rc_p_pkey TO d_rc_p_pk2
-- @query rename_unique
ALTER TABLE d_rc_p RENAME CONSTRAINT d_rc_p_code_key TO d_rc_p_code_uq
-- @query rename_named_check
ALTER TABLE d_rc_p RENAME CONSTRAINT d_rc_p_n_check TO d_rc_p_n_positive
-- @query rename_generated_check
ALTER TABLE d_rc_p RENAME CONSTRAINT d_rc_p_m_check TO d_rc_p_m_small
-- @query rename_fkey
ALTER TABLE d_rc_c RENAME CONSTRAINT d_rc_c_p_fkey TO d_rc_c_parent
-- @query rename_missing error
ALTER TABLE d_rc_p RENAME CONSTRAINT d_rc_nope TO d_rc_nope2
-- @query rename_missing_table error
ALTER TABLE d_rc_missing RENAME CONSTRAINT a TO b
-- @query rename_missing_table_if_exists
ALTER TABLE IF EXISTS d_rc_missing RENAME CONSTRAINT a TO b
-- @query rename_to_taken_index error
ALTER TABLE d_rc_p RENAME CONSTRAINT d_rc_p_pk2 TO d_rc_p_code_uq
-- @query rename_check_to_taken error
ALTER TABLE d_rc_p RENAME CONSTRAINT d_rc_p_m_small TO d_rc_p_n_positive
-- @query constraints_renamed
SELECT conname, contype, conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid IN ('d_rc_p'::regclass, 'd_rc_c'::regclass) ORDER BY 1
-- @query table_constraints_renamed
SELECT constraint_name, constraint_type FROM information_schema.table_constraints WHERE table_name IN ('d_rc_p', 'd_rc_c') AND constraint_type <> 'CHECK' ORDER BY 1
-- @query indexes_renamed
SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'd_rc_p' ORDER BY 1
-- @query index_relations_renamed
SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'd_rc_p'::regclass ORDER BY 1
-- @query check_violation_new_name error
INSERT INTO d_rc_p VALUES (1, 'a', 0, 1)
-- @query row_in
INSERT INTO d_rc_p VALUES (1, 'a', 1, 1)
-- @query pk_violation_new_name error
INSERT INTO d_rc_p VALUES (1, 'b', 1, 1)
-- @query unique_violation_new_name error
INSERT INTO d_rc_p VALUES (2, 'a', 1, 1)
-- @query fk_violation_new_name error
INSERT INTO d_rc_c VALUES (1, 99)
-- @query add_unique_then_rename
ALTER TABLE d_rc_a ADD CONSTRAINT d_rc_a_email_key UNIQUE (email)
-- @query rename_added_unique
ALTER TABLE d_rc_a RENAME CONSTRAINT d_rc_a_email_key TO d_rc_a_email_uq
-- @query add_named_pk
ALTER TABLE d_rc_a ADD CONSTRAINT d_rc_a_pk PRIMARY KEY (id)
-- @query added_renamed
SELECT conname, contype FROM pg_constraint WHERE conrelid = 'd_rc_a'::regclass ORDER BY 1
-- @query added_indexes
SELECT indexname FROM pg_indexes WHERE tablename = 'd_rc_a' ORDER BY 1
-- @query rename_in_schema
ALTER TABLE d_rc_s.t RENAME CONSTRAINT t_v_check TO t_v_nonzero
-- @query rename_pk_in_schema
ALTER TABLE d_rc_s.t RENAME CONSTRAINT t_pkey TO t_key
-- @query schema_constraints
SELECT conname, contype FROM pg_constraint WHERE conrelid = 'd_rc_s.t'::regclass ORDER BY 1
-- @query named_pk_at_create
SELECT conname, contype FROM pg_constraint WHERE conrelid = 'd_rc_named'::regclass ORDER BY 1
-- @query named_pk_index
SELECT indexname FROM pg_indexes WHERE tablename = 'd_rc_named'
-- @query drop_renamed_check
ALTER TABLE d_rc_p DROP CONSTRAINT d_rc_p_n_positive
-- @query drop_renamed_fkey
ALTER TABLE d_rc_c DROP CONSTRAINT d_rc_c_parent
-- @query drop_renamed_unique
ALTER TABLE d_rc_p DROP CONSTRAINT d_rc_p_code_uq
-- @query drop_renamed_added_unique
ALTER TABLE d_rc_a DROP CONSTRAINT d_rc_a_email_uq
-- @query drop_renamed_pk
ALTER TABLE d_rc_p DROP CONSTRAINT d_rc_p_pk2
-- @query drop_named_pk
ALTER TABLE d_rc_named DROP CONSTRAINT d_rc_named_pk
-- @query after_drops
SELECT conrelid::regclass::text, conname, contype FROM pg_constraint WHERE conrelid IN ('d_rc_p'::regclass, 'd_rc_c'::regclass, 'd_rc_a'::regclass, 'd_rc_named'::regclass) ORDER BY 1, 2
-- @query dropped_ok
INSERT INTO d_rc_p VALUES (1, 'a', -1, 1)
-- @query renamed_table_keeps_pk_name
ALTER TABLE d_rc_a RENAME TO d_rc_a2
-- @query renamed_table_pk
SELECT conname, contype FROM pg_constraint WHERE conrelid = 'd_rc_a2'::regclass ORDER BY 1
-- ORDER BY a bare name: an output column of that name first (its PostgreSQL name too),
-- then an input column.
-- @query order_by_cast_alias
SELECT m::text AS m FROM d_ob ORDER BY m
-- @query order_by_implicit_cast_name
SELECT m::text FROM d_ob ORDER BY m
-- @query order_by_implicit_name_desc
SELECT m::text FROM d_ob ORDER BY m DESC NULLS LAST
-- @query order_by_function_name
SELECT upper(n) FROM d_ob ORDER BY upper DESC
-- @query order_by_expression_uses_input
SELECT m::text AS m FROM d_ob ORDER BY m + 0
-- @query order_by_count_name
SELECT count(*) FROM d_ob GROUP BY n ORDER BY count, n
-- @query order_by_union_output
SELECT m::text FROM d_ob UNION ALL SELECT '5' ORDER BY m
-- @query order_by_distinct_output
SELECT DISTINCT m::text FROM d_ob ORDER BY m
-- @query order_by_in_subquery
SELECT * FROM (SELECT m::text AS v FROM d_ob ORDER BY v LIMIT 2) s ORDER BY 1
-- @query order_by_ambiguous error
SELECT m::text, m FROM d_ob ORDER BY m
-- @query order_by_ambiguous_aliases error
SELECT m::text AS m, m AS m FROM d_ob ORDER BY m
-- @query order_by_input_column
SELECT n AS x FROM d_ob ORDER BY m
-- ADD CONSTRAINT ... USING INDEX: the unique index becomes the constraint's, renamed.
-- @query using_index_unique
ALTER TABLE d_ui ADD CONSTRAINT d_ui_email_uniq UNIQUE USING INDEX d_ui_email_idx
-- @query using_index_pk
ALTER TABLE d_ui ADD CONSTRAINT d_ui_pk PRIMARY KEY USING INDEX d_ui_id_idx
-- @query using_index_unnamed
ALTER TABLE d_ui ADD UNIQUE USING INDEX d_ui_k
-- @query using_index_second_pk error
ALTER TABLE d_ui ADD PRIMARY KEY USING INDEX d_ui_k
-- @query using_index_not_unique error
ALTER TABLE d_ui ADD CONSTRAINT d_ui_x UNIQUE USING INDEX d_ui_plain
-- @query using_index_expression error
ALTER TABLE d_ui ADD CONSTRAINT d_ui_y UNIQUE USING INDEX d_ui_expr
-- @query using_index_missing error
ALTER TABLE d_ui ADD CONSTRAINT d_ui_z UNIQUE USING INDEX d_ui_nosuch
-- @query using_index_constraints
SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'd_ui'::regclass ORDER BY 1
-- @query using_index_indexes
SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'd_ui' AND indexname <> 'd_ui_expr' ORDER BY 1
-- @query using_index_unique_violation error
INSERT INTO d_ui VALUES (3, 'a', 3)
-- @query using_index_pk_violation error
INSERT INTO d_ui VALUES (1, 'z', 4)
-- @query using_index_rows
SELECT * FROM d_ui ORDER BY id
-- @query using_index_drop_unique
ALTER TABLE d_ui DROP CONSTRAINT d_ui_email_uniq
-- @query using_index_drop_pk
ALTER TABLE d_ui DROP CONSTRAINT d_ui_pk
-- @query using_index_after_drops
SELECT indexname FROM pg_indexes WHERE tablename = 'd_ui' ORDER BY 1
-- SET SCHEMA: rows, constraints, indexes, comments, serial sequences and foreign keys
-- follow the table; a sequence and a view move too.
-- @query set_schema_table
ALTER TABLE d_ss_p SET SCHEMA d_ss
-- @query set_schema_rows
SELECT * FROM d_ss.d_ss_p ORDER BY id
-- @query set_schema_gone_from_public error
SELECT * FROM public.d_ss_p
-- @query set_schema_serial_follows
INSERT INTO d_ss.d_ss_p (code) VALUES ('c') RETURNING id, n
-- @query set_schema_indexes
SELECT schemaname, tablename, indexname FROM pg_indexes WHERE tablename = 'd_ss_p' ORDER BY 3
-- @query set_schema_constraints
SELECT conname, contype, connamespace::regnamespace::text, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'd_ss.d_ss_p'::regclass ORDER BY 1
-- @query set_schema_fk_follows
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'd_ss_c'::regclass AND contype = 'f'
-- @query set_schema_fk_enforced error
INSERT INTO d_ss_c VALUES (2, 99)
-- @query set_schema_unique_enforced error
INSERT INTO d_ss.d_ss_p (code) VALUES ('a')
-- @query set_schema_comments
SELECT obj_description('d_ss.d_ss_p'::regclass), col_description('d_ss.d_ss_p'::regclass, 2)
-- @query set_schema_defaults
SELECT column_name, column_default FROM information_schema.columns WHERE table_schema = 'd_ss' AND table_name = 'd_ss_p' ORDER BY ordinal_position
-- @query set_schema_sequence_moved
SELECT sequence_schema, sequence_name FROM information_schema.sequences WHERE sequence_name = 'd_ss_p_id_seq'
-- @query set_schema_missing error
ALTER TABLE d_ss_missing SET SCHEMA d_ss
-- @query set_schema_missing_if_exists
ALTER TABLE IF EXISTS d_ss_missing SET SCHEMA d_ss
-- @query set_schema_no_schema error
ALTER TABLE d_ss.d_ss_p SET SCHEMA d_ss_nosuch
-- @query set_schema_sequence
ALTER SEQUENCE d_ss_seq SET SCHEMA d_ss
-- @query set_schema_sequence_next
SELECT nextval('d_ss.d_ss_seq') > 0
-- @query set_schema_view
ALTER VIEW d_ss_v SET SCHEMA d_ss
-- @query set_schema_view_reads
SELECT * FROM d_ss.d_ss_v
-- @query set_schema_back
ALTER TABLE d_ss.d_ss_p SET SCHEMA public
-- @query set_schema_back_rows
SELECT id, code FROM d_ss_p ORDER BY id
-- @query set_schema_same_schema
ALTER SEQUENCE d_ss.d_ss_seq SET SCHEMA d_ss
-- @query set_schema_name_taken error
ALTER TABLE public.d_ss_dup SET SCHEMA d_ss
-- DROP FUNCTION with its argument types (a migration's down step)
-- @query drop_function_with_args
DROP FUNCTION d_df_add(int, int)
-- @query drop_function_gone
SELECT count(*) FROM pg_proc WHERE proname = 'd_df_add'
-- @query drop_function_again error
DROP FUNCTION d_df_add(int, int)
-- DROP SEQUENCE / SCHEMA of several objects: one DuckDB DROP each, all or nothing
-- @query drop_sequences
DROP SEQUENCE IF EXISTS public.d_md_a, d_md_missing, d_md_b
-- @query sequences_gone
SELECT count(*) FROM information_schema.sequences WHERE sequence_name LIKE 'd_md_%'
-- @query drop_schemas_one_missing error
DROP SCHEMA d_md_s1, d_md_nope, d_md_s2
-- @query schemas_kept
SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'd_md_%'
-- @query drop_schemas
DROP SCHEMA IF EXISTS d_md_s1, d_md_nope, d_md_s2
-- @query schemas_gone
SELECT count(*) FROM information_schema.schemata WHERE schema_name LIKE 'd_md_%'
