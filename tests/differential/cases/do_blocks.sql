-- DO blocks (transpiler/do_block.py's subset of PL/pgSQL): the idiom ORMs and
-- migration tools (Sequelize, drizzle-kit) wrap CREATE TYPE in, as one subtransaction:
-- a matching handler swallows the error after the block's changes are rolled back, no
-- match raises the error with its SQLSTATE, a failed block leaves nothing, and inside a
-- transaction block it behaves as a savepoint.
-- @setup
CREATE TYPE d_do_mood AS ENUM ('sad', 'ok');
CREATE TABLE d_do_t (id int PRIMARY KEY, note text);
-- @query do_duplicate_type_swallowed
DO 'BEGIN CREATE TYPE "public"."d_do_mood" AS ENUM(''sad'', ''ok''); EXCEPTION WHEN duplicate_object THEN null; END';
-- @query do_dollar_quoted_language_clause
DO LANGUAGE plpgsql $$ BEGIN CREATE TYPE d_do_mood AS ENUM ('sad'); EXCEPTION WHEN duplicate_object OR duplicate_table THEN NULL; END $$;
-- @query do_new_type_created
DO $$ BEGIN CREATE TYPE d_do_new AS ENUM ('x', 'y'); EXCEPTION WHEN duplicate_object THEN null; END $$;
-- @query do_new_type_labels
SELECT e.enumlabel FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid WHERE t.typname = 'd_do_new' ORDER BY e.enumsortorder;
-- @query do_no_matching_handler error
DO $$ BEGIN CREATE TYPE d_do_mood AS ENUM ('sad'); EXCEPTION WHEN undefined_table THEN NULL; END $$;
-- @query do_without_handler error
DO $$ BEGIN CREATE TYPE d_do_mood AS ENUM ('sad'); END $$;
-- @query do_handler_after_rollback
DO $$ BEGIN INSERT INTO d_do_t VALUES (1, 'block'); INSERT INTO d_do_t VALUES (1, 'dup'); EXCEPTION WHEN unique_violation THEN INSERT INTO d_do_t VALUES (2, 'handler'); END $$;
-- @query do_handler_after_rollback_rows
SELECT id, note FROM d_do_t ORDER BY id;
-- @query do_success_commits
DO $$ BEGIN INSERT INTO d_do_t VALUES (3, 'a'); UPDATE d_do_t SET note = 'b' WHERE id = 3; END $$;
-- @query do_failure_is_atomic error
DO $$ BEGIN INSERT INTO d_do_t VALUES (4, 'x'); INSERT INTO d_do_t VALUES (4, 'y'); END $$;
-- @query do_failure_left_nothing
SELECT id, note FROM d_do_t ORDER BY id;
-- @query do_sqlstate_and_class_conditions
DO $$ BEGIN INSERT INTO d_do_t VALUES (3, 'again'); EXCEPTION WHEN SQLSTATE '22012' THEN NULL; WHEN integrity_constraint_violation THEN UPDATE d_do_t SET note = 'class' WHERE id = 3; END $$;
-- @query do_others
DO $$ BEGIN INSERT INTO d_do_t VALUES (3, 'again'); EXCEPTION WHEN others THEN UPDATE d_do_t SET note = note || '+others' WHERE id = 3; END $$;
-- @query do_conditions_rows
SELECT id, note FROM d_do_t ORDER BY id;
-- @query do_in_transaction_as_savepoint
BEGIN; INSERT INTO d_do_t VALUES (5, 'before'); DO $$ BEGIN INSERT INTO d_do_t VALUES (6, 'in'); INSERT INTO d_do_t VALUES (5, 'dup'); EXCEPTION WHEN unique_violation THEN NULL; END $$; INSERT INTO d_do_t VALUES (7, 'after'); COMMIT;
-- @query do_in_transaction_rows
SELECT id, note FROM d_do_t WHERE id >= 5 ORDER BY id;
-- @query do_in_transaction_nothing_to_undo
BEGIN; INSERT INTO d_do_t VALUES (8, 'before'); DO 'BEGIN CREATE TYPE d_do_mood AS ENUM (''sad''); EXCEPTION WHEN duplicate_object THEN NULL; END'; INSERT INTO d_do_t VALUES (9, 'after'); COMMIT;
-- @query do_in_batch_of_statements
INSERT INTO d_do_t VALUES (10, 'batch'); DO 'BEGIN CREATE TYPE d_do_mood AS ENUM (''sad''); EXCEPTION WHEN duplicate_object THEN NULL; END'; INSERT INTO d_do_t VALUES (11, 'batch');
-- @query do_in_transaction_more_rows
SELECT id, note FROM d_do_t WHERE id >= 8 ORDER BY id;
