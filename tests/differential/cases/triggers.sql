-- BEFORE ROW triggers with PL/pgSQL trigger functions (transpiler/plpgsql_trigger.py,
-- trigger_rewrite.py, proxy/pgserver/triggers.py): the updated_at / version pattern of
-- real schemas, IF / ELSIF / ELSE, WHEN, UPDATE OF, RETURN NULL, several triggers in
-- name order, INSERT ... SELECT and multi-row VALUES, the catalog rows.
-- @setup
CREATE TABLE d_trg_posts (id serial PRIMARY KEY, title text NOT NULL, body text, updated_at timestamptz NOT NULL DEFAULT '2000-01-01 00:00:00+00', version int NOT NULL DEFAULT 1, status text);
CREATE OR REPLACE FUNCTION d_trg_touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.updated_at = '2030-01-01 00:00:00+00'; RETURN NEW; END; $$;
CREATE FUNCTION d_trg_bump() RETURNS trigger AS $$ BEGIN NEW.version := OLD.version + 1; RETURN NEW; END $$ LANGUAGE plpgsql;
CREATE FUNCTION d_trg_status() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.title = 'skip' THEN RETURN NULL; ELSIF NEW.title LIKE 'draft%' THEN NEW.status := 'draft'; ELSE NEW.status = coalesce(NEW.status, lower(TG_OP)); END IF; RETURN NEW; END; $$;
CREATE TRIGGER d_trg_a_touch BEFORE UPDATE ON d_trg_posts FOR EACH ROW EXECUTE FUNCTION d_trg_touch();
CREATE TRIGGER d_trg_b_bump BEFORE UPDATE OF title, body ON d_trg_posts FOR EACH ROW EXECUTE PROCEDURE d_trg_bump();
CREATE TRIGGER d_trg_c_status BEFORE INSERT OR UPDATE ON d_trg_posts FOR EACH ROW EXECUTE FUNCTION d_trg_status();
INSERT INTO d_trg_posts (title) VALUES ('a'), ('draft one'), ('skip'), ('c');
CREATE TABLE d_trg_kv (k int PRIMARY KEY, v text, n int NOT NULL DEFAULT 0, note text);
CREATE FUNCTION d_trg_kv_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF TG_OP = 'UPDATE' THEN NEW.n := OLD.n + 1; IF NEW.v = 'keep' THEN RETURN NULL; END IF; END IF; NEW.note := TG_OP || ' ' || NEW.v; RETURN NEW; END $$;
CREATE TRIGGER d_trg_kv_t BEFORE INSERT OR UPDATE ON d_trg_kv FOR EACH ROW EXECUTE FUNCTION d_trg_kv_f();
INSERT INTO d_trg_kv (k, v) VALUES (1, 'a'), (2, 'b');
-- @query insert_trigger_rows
SELECT id, title, status, version, updated_at FROM d_trg_posts ORDER BY id;
-- @query update_fires_in_name_order
UPDATE d_trg_posts SET title = 'a2' WHERE id = 1 RETURNING id, title, status, version, updated_at;
-- @query update_of_other_column_skips_bump
UPDATE d_trg_posts SET status = 'x' WHERE id = 2 RETURNING id, status, version, updated_at;
-- @query update_return_null_skips_row
UPDATE d_trg_posts SET title = 'skip' WHERE id = 4;
-- @query update_skipped_row_unchanged
SELECT id, title, status, version, updated_at FROM d_trg_posts ORDER BY id;
-- @query insert_select_fires
INSERT INTO d_trg_posts (title, status) SELECT 'from select', 'given' UNION ALL SELECT 'skip', NULL;
-- @query insert_returning_sees_trigger
INSERT INTO d_trg_posts (title) VALUES ('draft two') RETURNING title, status, version;
-- @query rows_after_inserts
SELECT title, status, version, updated_at FROM d_trg_posts ORDER BY id;
-- @query disable_trigger
ALTER TABLE d_trg_posts DISABLE TRIGGER d_trg_a_touch;
-- @query disabled_not_fired
UPDATE d_trg_posts SET body = 'b' WHERE title = 'c' RETURNING version, updated_at;
-- @query catalog_triggers
SELECT t.tgname, t.tgenabled, t.tgtype, t.tgisinternal, c.relname, p.proname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid WHERE c.relname = 'd_trg_posts' ORDER BY t.tgname;
-- @query triggerdef
SELECT pg_get_triggerdef(t.oid, true) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relname = 'd_trg_posts' ORDER BY t.tgname;
-- @query trigger_function_catalog
SELECT p.proname, l.lanname, p.prorettype::regtype::text, p.pronargs FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.proname = 'd_trg_bump';
-- @query enable_trigger
ALTER TABLE d_trg_posts ENABLE TRIGGER d_trg_a_touch;
-- @query drop_trigger
DROP TRIGGER d_trg_b_bump ON d_trg_posts;
-- @query drop_missing_trigger error
DROP TRIGGER d_trg_b_bump ON d_trg_posts;
-- @query drop_missing_trigger_if_exists
DROP TRIGGER IF EXISTS d_trg_b_bump ON d_trg_posts;
-- @query duplicate_trigger error
CREATE TRIGGER d_trg_a_touch BEFORE UPDATE ON d_trg_posts FOR EACH ROW EXECUTE FUNCTION d_trg_touch();
-- @query trigger_on_missing_function error
CREATE TRIGGER d_trg_z BEFORE UPDATE ON d_trg_posts FOR EACH ROW EXECUTE FUNCTION d_trg_nope();
-- @query drop_function_in_use error
DROP FUNCTION d_trg_touch();
-- @query after_drop_trigger_no_bump
UPDATE d_trg_posts SET title = 'a3' WHERE id = 1 RETURNING version, updated_at;
-- @query rename_keeps_triggers
ALTER TABLE d_trg_posts RENAME TO d_trg_posts2;
-- @query renamed_fires
UPDATE d_trg_posts2 SET updated_at = '2001-01-01 00:00:00+00', title = 'draft x' WHERE id = 1 RETURNING title, status, updated_at;
-- @query drop_function_cascade
DROP FUNCTION d_trg_touch() CASCADE;
-- @query left_after_cascade
SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relname = 'd_trg_posts2' ORDER BY 1;
-- @query upsert_runs_insert_then_update_triggers
INSERT INTO d_trg_kv (k, v) VALUES (1, 'a2'), (3, 'c'), (2, 'keep') ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v RETURNING k, v, n, note;
-- @query upsert_rows
SELECT k, v, n, note FROM d_trg_kv ORDER BY k;
-- @query upsert_do_nothing
INSERT INTO d_trg_kv (k, v) VALUES (3, 'z'), (4, 'd') ON CONFLICT DO NOTHING RETURNING k, note;
-- @query update_params_free_where
UPDATE d_trg_kv SET v = v || '!' WHERE k > 2 RETURNING k, v, n, note;
