-- Guard triggers (transpiler/trigger_row.py): RAISE EXCEPTION with PostgreSQL's %
-- formatting and USING ERRCODE, RETURN OLD, BEFORE DELETE triggers (RETURN NULL / NEW
-- skip the delete, RETURN OLD keeps it), WHEN on OLD, the catalog rows of DELETE triggers.
-- @setup
CREATE TABLE d_tg_items (id serial PRIMARY KEY, name text, qty int NOT NULL DEFAULT 0, locked boolean NOT NULL DEFAULT false, price numeric(10,2));
CREATE FUNCTION d_tg_guard() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.qty < 0 THEN RAISE EXCEPTION 'qty must be >= 0 (got %)', NEW.qty; END IF; IF NEW.name = 'bad' THEN RAISE 'bad name % %% %', NEW.name, NEW.price USING ERRCODE = 'check_violation'; END IF; RETURN NEW; END $$;
CREATE TRIGGER d_tg_guard_t BEFORE INSERT OR UPDATE ON d_tg_items FOR EACH ROW EXECUTE FUNCTION d_tg_guard();
CREATE FUNCTION d_tg_nodel() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF OLD.locked THEN RAISE EXCEPTION 'item % is locked', OLD.id USING ERRCODE = '55000'; END IF; IF OLD.name = 'keep' THEN RETURN NULL; END IF; RETURN OLD; END $$;
CREATE TRIGGER d_tg_nodel_t BEFORE DELETE ON d_tg_items FOR EACH ROW EXECUTE FUNCTION d_tg_nodel();
INSERT INTO d_tg_items (name, qty, price) VALUES ('a', 1, 1.5), ('b', 2, NULL), ('keep', 3, 2), ('lock', 4, 3), ('e', 5, 4), ('f', 6, 5);
-- @query raise_in_multirow_insert error
INSERT INTO d_tg_items (name, qty) VALUES ('x', 1), ('y', -2);
-- @query raise_with_errcode_name error
INSERT INTO d_tg_items (name) VALUES ('bad');
-- @query raise_in_update error
UPDATE d_tg_items SET qty = qty - 3 WHERE name = 'a';
-- @query update_guard_passes
UPDATE d_tg_items SET qty = qty - 1 WHERE name = 'a' RETURNING id, name, qty;
-- @query lock_one
UPDATE d_tg_items SET locked = true WHERE name = 'lock';
-- @query delete_skips_return_null
DELETE FROM d_tg_items WHERE name IN ('b', 'keep') RETURNING id, name;
-- @query delete_raises error
DELETE FROM d_tg_items WHERE name = 'lock';
-- @query delete_where_misses_no_raise
DELETE FROM d_tg_items WHERE id > 100;
-- @query rows_after_guards
SELECT id, name, qty, locked, price FROM d_tg_items ORDER BY id;
-- @query delete_trigger_catalog
SELECT t.tgname, t.tgtype, t.tgenabled FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relname = 'd_tg_items' ORDER BY t.tgname;
-- @query delete_triggerdef
SELECT pg_get_triggerdef(t.oid, true) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relname = 'd_tg_items' ORDER BY t.tgname;
-- @query no_deletes_function
CREATE FUNCTION d_tg_nodel2() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no deletes on %.% (%)', TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_OP; END $$;
-- @query no_deletes_when_old
CREATE TRIGGER d_tg_nodel2_t BEFORE DELETE ON d_tg_items FOR EACH ROW WHEN (OLD.qty > 5) EXECUTE FUNCTION d_tg_nodel2();
-- @query when_old_raises error
DELETE FROM d_tg_items WHERE name = 'f';
-- @query when_old_false_deletes
DELETE FROM d_tg_items WHERE name = 'e' RETURNING id, name;
-- @query return_old_function
CREATE FUNCTION d_tg_old() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF OLD.name = 'a' THEN RETURN OLD; END IF; RETURN NEW; END $$;
-- @query return_old_trigger
CREATE TRIGGER d_tg_old_t BEFORE UPDATE ON d_tg_items FOR EACH ROW EXECUTE FUNCTION d_tg_old();
-- @query update_return_old_keeps_old_row
UPDATE d_tg_items SET qty = 9 RETURNING id, name, qty;
-- @query return_new_in_delete_skips
CREATE OR REPLACE FUNCTION d_tg_nodel() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
-- @query delete_raise_fires_before_the_skip error
DELETE FROM d_tg_items WHERE NOT locked;
-- @query drop_no_deletes
DROP TRIGGER d_tg_nodel2_t ON d_tg_items;
-- @query delete_all_skipped
DELETE FROM d_tg_items WHERE NOT locked;
-- @query rows_at_end
SELECT id, name, qty, locked FROM d_tg_items ORDER BY id;
-- @query too_few_raise_parameters error
CREATE FUNCTION d_tg_bad1() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'a % b %', NEW.id; END $$;
-- @query too_many_raise_parameters error
CREATE FUNCTION d_tg_bad2() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'a', NEW.id; END $$;
-- @query raise_show_table
CREATE TABLE d_tg_show (id int, f boolean, d date);
-- @query raise_show_function
CREATE FUNCTION d_tg_show_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'f=% d=% id=%', NEW.f, NEW.d, NEW.id; END $$;
-- @query raise_show_trigger
CREATE TRIGGER d_tg_show_t BEFORE INSERT ON d_tg_show FOR EACH ROW EXECUTE FUNCTION d_tg_show_f();
-- @query raise_show_error error
INSERT INTO d_tg_show VALUES (1, true, NULL);
-- @query upsert_table
CREATE TABLE d_tg_kv (k int PRIMARY KEY, v text);
-- @query upsert_function
CREATE FUNCTION d_tg_kv_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF TG_OP = 'UPDATE' AND OLD.v = 'frozen' THEN RAISE EXCEPTION 'frozen %', OLD.k; END IF; RETURN NEW; END $$;
-- @query upsert_trigger
CREATE TRIGGER d_tg_kv_t BEFORE INSERT OR UPDATE ON d_tg_kv FOR EACH ROW EXECUTE FUNCTION d_tg_kv_f();
-- @query upsert_rows
INSERT INTO d_tg_kv VALUES (1, 'frozen'), (2, 'b');
-- @query upsert_where_keeps_raise_off_filtered_rows
INSERT INTO d_tg_kv VALUES (1, 'x'), (2, 'y') ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v WHERE d_tg_kv.v <> 'frozen' RETURNING k, v;
-- @query upsert_raises error
INSERT INTO d_tg_kv VALUES (1, 'x') ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v;
-- @query upsert_rows_after
SELECT k, v FROM d_tg_kv ORDER BY k;
