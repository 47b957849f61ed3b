-- AFTER ROW and statement-level triggers (proxy/pgserver/after_triggers.py): audit logs
-- (INSERT bodies with NEW / OLD / TG_ variables), counters hitting one row several times
-- (UPDATE bodies, per row), OLD in AFTER UPDATE, statement triggers firing once (also
-- for no rows), a RAISE in an AFTER trigger undoing the row and what the triggers wrote,
-- triggers firing triggers, RETURNING read back, and the catalog rows.
-- @setup
CREATE TABLE d_ta_posts (id int PRIMARY KEY, title text, n_comments int NOT NULL DEFAULT 0, total numeric(10,2) NOT NULL DEFAULT 0);
CREATE TABLE d_ta_comments (id serial PRIMARY KEY, post_id int, body text, amount numeric(10,2));
CREATE TABLE d_ta_log (n serial PRIMARY KEY, tbl text, op text, row_id int, old_body text, new_body text, info text);
INSERT INTO d_ta_posts (id, title) VALUES (1, 'one'), (2, 'two'), (3, 'three');
CREATE FUNCTION d_ta_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO d_ta_log (tbl, op, row_id, old_body, new_body, info) VALUES (TG_TABLE_NAME, TG_OP, COALESCE(NEW.id, OLD.id), OLD.body, NEW.body, TG_WHEN || ' ' || TG_LEVEL || ' ' || TG_NAME || ' ' || TG_TABLE_SCHEMA); RETURN NULL; END $$;
CREATE FUNCTION d_ta_count() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF TG_OP = 'INSERT' THEN UPDATE d_ta_posts SET n_comments = n_comments + 1, total = total + COALESCE(NEW.amount, 0) WHERE id = NEW.post_id; ELSIF TG_OP = 'DELETE' THEN UPDATE d_ta_posts SET n_comments = n_comments - 1, total = total - COALESCE(OLD.amount, 0) WHERE id = OLD.post_id; ELSIF NEW.post_id IS DISTINCT FROM OLD.post_id THEN UPDATE d_ta_posts SET n_comments = n_comments - 1 WHERE id = OLD.post_id; UPDATE d_ta_posts SET n_comments = n_comments + 1 WHERE id = NEW.post_id; END IF; RETURN NULL; END $$;
CREATE FUNCTION d_ta_stmt() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO d_ta_log (tbl, op, info) VALUES (TG_TABLE_NAME, TG_OP, TG_WHEN || ' ' || TG_LEVEL); RETURN NULL; END $$;
CREATE TRIGGER d_ta_audit_t AFTER INSERT OR UPDATE OR DELETE ON d_ta_comments FOR EACH ROW EXECUTE FUNCTION d_ta_audit();
CREATE TRIGGER d_ta_count_t AFTER INSERT OR UPDATE OF post_id OR DELETE ON d_ta_comments FOR EACH ROW EXECUTE FUNCTION d_ta_count();
CREATE TRIGGER d_ta_stmt_b BEFORE DELETE ON d_ta_comments FOR EACH STATEMENT EXECUTE FUNCTION d_ta_stmt();
CREATE TRIGGER d_ta_stmt_a AFTER UPDATE ON d_ta_comments EXECUTE FUNCTION d_ta_stmt();
-- @query insert_many_rows_one_post
INSERT INTO d_ta_comments (post_id, body, amount) VALUES (1, 'a', 1.5), (1, 'b', 2), (2, 'c', NULL), (1, 'd', 10);
-- @query insert_returning
INSERT INTO d_ta_comments (post_id, body, amount) VALUES (3, 'e', 5) RETURNING id, body, amount * 2 AS twice;
-- @query counters_add_up
SELECT id, n_comments, total FROM d_ta_posts ORDER BY id;
-- @query update_fires_row_and_statement
UPDATE d_ta_comments SET body = upper(body) WHERE post_id = 1;
-- @query update_no_rows_fires_statement_only
UPDATE d_ta_comments SET body = 'zz' WHERE id = 999;
-- @query update_of_post_id_moves_counter
UPDATE d_ta_comments SET post_id = 2 WHERE body = 'A' RETURNING id, post_id, body;
-- @query delete_returning
DELETE FROM d_ta_comments WHERE post_id = 2 RETURNING id, body;
-- @query counters_after_update_delete
SELECT id, n_comments, total FROM d_ta_posts ORDER BY id;
-- @query audit_log
SELECT n, tbl, op, row_id, old_body, new_body, info FROM d_ta_log ORDER BY n;
-- @query guard_function
CREATE FUNCTION d_ta_guard() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.amount > 100 THEN RAISE EXCEPTION 'amount % too large for post %', NEW.amount, NEW.post_id USING ERRCODE = 'check_violation'; END IF; RETURN NEW; END $$;
-- @query guard_trigger
CREATE TRIGGER d_ta_guard_t AFTER INSERT OR UPDATE ON d_ta_comments FOR EACH ROW EXECUTE FUNCTION d_ta_guard();
-- @query after_raise_undoes_all error
INSERT INTO d_ta_comments (post_id, body, amount) VALUES (3, 'ok', 1), (3, 'big', 500);
-- @query after_raise_in_update error
UPDATE d_ta_comments SET amount = 1000 WHERE body = 'e';
-- @query nothing_left_by_the_failures
SELECT (SELECT count(*) FROM d_ta_comments) AS comments, (SELECT count(*) FROM d_ta_log) AS log, (SELECT n_comments FROM d_ta_posts WHERE id = 3) AS n3;
-- @query trigger_catalog
SELECT t.tgname, t.tgtype, t.tgenabled FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relname = 'd_ta_comments' ORDER BY t.tgname;
-- @query triggerdef_pretty
SELECT pg_get_triggerdef(t.oid, true) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relname = 'd_ta_comments' ORDER BY t.tgname;
-- @query chain_table
CREATE TABLE d_ta_chain (id int PRIMARY KEY, parent int, note text);
-- @query chain_function
CREATE FUNCTION d_ta_chain_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.parent IS NOT NULL THEN UPDATE d_ta_chain SET note = COALESCE(note, '') || '<' || NEW.id WHERE id = NEW.parent; END IF; RETURN NULL; END $$;
-- @query chain_trigger
CREATE TRIGGER d_ta_chain_t AFTER INSERT OR UPDATE ON d_ta_chain FOR EACH ROW EXECUTE FUNCTION d_ta_chain_f();
-- @query chain_insert
INSERT INTO d_ta_chain VALUES (1, NULL, NULL), (2, 1, NULL), (3, 2, NULL);
-- @query chain_rows
SELECT id, parent, note FROM d_ta_chain ORDER BY id;
-- @query record_table
CREATE TABLE d_ta_rec (id int PRIMARY KEY, name text, tags text[]);
-- @query record_log
CREATE TABLE d_ta_rec_log (n serial PRIMARY KEY, op text, old_row jsonb, new_row jsonb);
-- @query record_function
CREATE FUNCTION d_ta_rec_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO d_ta_rec_log (op, old_row, new_row) VALUES (TG_OP, to_jsonb(OLD), to_jsonb(NEW)); RAISE NOTICE '% on %', TG_OP, NEW.id; RETURN NULL; END $$;
-- @query record_trigger
CREATE TRIGGER d_ta_rec_t AFTER INSERT OR UPDATE OR DELETE ON d_ta_rec FOR EACH ROW EXECUTE FUNCTION d_ta_rec_f();
-- @query record_insert
INSERT INTO d_ta_rec VALUES (1, 'a', ARRAY['x', 'y']), (2, 'b', NULL);
-- @query record_on_conflict_do_nothing
INSERT INTO d_ta_rec VALUES (1, 'dup', NULL), (3, 'c', '{}') ON CONFLICT DO NOTHING RETURNING id, name;
-- @query record_update
UPDATE d_ta_rec SET name = name || '!' WHERE id IN (1, 3);
-- @query record_delete
DELETE FROM d_ta_rec WHERE id = 2;
-- @query record_log_rows
SELECT n, op, old_row, new_row FROM d_ta_rec_log ORDER BY n;
-- @query old_new_function
CREATE FUNCTION d_ta_diff_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.name IS DISTINCT FROM OLD.name THEN INSERT INTO d_ta_rec_log (op, old_row, new_row) VALUES ('rename', to_jsonb(OLD.name), to_jsonb(NEW.name)); END IF; RETURN NEW; END $$;
-- @query old_new_trigger
CREATE TRIGGER d_ta_diff_t AFTER UPDATE ON d_ta_rec FOR EACH ROW WHEN (OLD.id < 10) EXECUTE FUNCTION d_ta_diff_f();
-- @query update_from_reads_old
UPDATE d_ta_rec r SET name = s.name FROM (VALUES (1, 'one'), (3, 'c!')) AS s(id, name) WHERE r.id = s.id RETURNING r.id, r.name;
-- @query old_new_log
SELECT op, old_row, new_row FROM d_ta_rec_log WHERE op = 'rename' ORDER BY n;
-- @query upsert_stmt_trigger
CREATE TRIGGER d_ta_rec_s AFTER INSERT OR UPDATE ON d_ta_rec FOR EACH STATEMENT EXECUTE FUNCTION d_ta_stmt();
-- @query upsert_updates_and_inserts
INSERT INTO d_ta_rec (id, name) VALUES (1, 'up1'), (7, 'new7'), (3, 'up3') ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name || '*' RETURNING id, name;
-- @query upsert_where_false_skips
INSERT INTO d_ta_rec (id, name) VALUES (7, 'x'), (8, 'y') ON CONFLICT (id) DO UPDATE SET name = 'z' WHERE d_ta_rec.name = 'nope' RETURNING id, name;
-- @query upsert_log_rows
SELECT op, old_row, new_row FROM d_ta_rec_log WHERE n > 9 ORDER BY n;
-- @query upsert_statement_log
SELECT tbl, op, info FROM d_ta_log WHERE tbl = 'd_ta_rec' ORDER BY n;
