-- Foreign keys through the DDL around them: a renamed table or column keeps its keys,
-- a dropped column takes its keys, TRUNCATE and DROP TABLE of a referenced table are
-- refused unless the children go too (or CASCADE). Runs in order.
-- @setup
CREATE TABLE d_fkd_parent (id int PRIMARY KEY, v text);
CREATE TABLE d_fkd_child (id int PRIMARY KEY, pid int REFERENCES d_fkd_parent (id) ON DELETE CASCADE, note text);
CREATE INDEX d_fkd_child_pid ON d_fkd_child (pid);
CREATE TABLE d_fkd_grand (id int PRIMARY KEY, cid int REFERENCES d_fkd_child (id));
INSERT INTO d_fkd_parent VALUES (1, 'a'), (2, 'b'), (3, 'c');
INSERT INTO d_fkd_child VALUES (10, 1, 'x'), (11, 2, 'y');
INSERT INTO d_fkd_grand VALUES (100, 10);
-- @query truncate_referenced error
TRUNCATE d_fkd_parent
-- @query truncate_middle error
TRUNCATE d_fkd_child, d_fkd_parent
-- @query rows_kept
SELECT (SELECT count(*) FROM d_fkd_parent), (SELECT count(*) FROM d_fkd_child), (SELECT count(*) FROM d_fkd_grand)
-- @query rename_parent
ALTER TABLE d_fkd_parent RENAME TO d_fkd_parent2
-- @query rename_child_column
ALTER TABLE d_fkd_child RENAME COLUMN pid TO parent_id
-- @query rename_parent_column
ALTER TABLE d_fkd_parent2 RENAME COLUMN id TO pk
-- @query keys_follow
SELECT conname, conrelid::regclass::text, confrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f' AND conname LIKE 'd_fkd%' ORDER BY conname
-- @query orphan_after_rename error
INSERT INTO d_fkd_child VALUES (12, 99, 'z')
-- @query cascade_after_rename
DELETE FROM d_fkd_parent2 WHERE pk = 2
-- @query rename_child_table
ALTER TABLE d_fkd_child RENAME TO d_fkd_child2
-- @query orphan_after_child_rename error
INSERT INTO d_fkd_child2 VALUES (13, 98, 'z')
-- @query grand_orphan_after_rename error
INSERT INTO d_fkd_grand VALUES (101, 55)
-- @query drop_referenced error
DROP TABLE d_fkd_parent2
-- @query truncate_cascade
TRUNCATE d_fkd_parent2 CASCADE
-- @query all_empty
SELECT (SELECT count(*) FROM d_fkd_parent2), (SELECT count(*) FROM d_fkd_child2), (SELECT count(*) FROM d_fkd_grand)
-- @query truncate_all_listed
TRUNCATE d_fkd_grand, d_fkd_child2, d_fkd_parent2
-- @query drop_child_column
ALTER TABLE d_fkd_child2 DROP COLUMN parent_id
-- @query key_gone_with_column
SELECT conname FROM pg_constraint WHERE contype = 'f' AND conname LIKE 'd_fkd%' ORDER BY conname
-- @query drop_parent_now
DROP TABLE d_fkd_parent2
-- @query fk_other_schema_setup
CREATE SCHEMA d_fkd_app
-- @query fk_other_schema_parent
CREATE TABLE d_fkd_items (id int PRIMARY KEY)
-- @query fk_unqualified_reference_follows_search_path
CREATE TABLE d_fkd_app.orders (id int PRIMARY KEY, item int REFERENCES d_fkd_items (id))
-- @query fk_unqualified_reference_keys
SELECT conname, conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint WHERE contype = 'f' AND conname = 'orders_item_fkey'
-- @query fk_unqualified_reference_enforced error
INSERT INTO d_fkd_app.orders VALUES (1, 5)
