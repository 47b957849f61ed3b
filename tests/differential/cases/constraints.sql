-- ALTER TABLE ADD / DROP CONSTRAINT, foreign key actions and violations (what Django,
-- langchain-postgres and pg_dump restores send). Runs in order.
-- @setup
CREATE TABLE d_con_parent (id int PRIMARY KEY, code text);
CREATE TABLE d_con_child (id int PRIMARY KEY, parent_id int, qty int, tag text);
CREATE TABLE d_con_cascade (id int PRIMARY KEY, parent_id int REFERENCES d_con_parent (id) ON DELETE CASCADE);
CREATE TABLE d_con_setnull (id int PRIMARY KEY, parent_id int REFERENCES d_con_parent ON DELETE SET NULL);
CREATE TABLE d_con_grand (id int PRIMARY KEY, cascade_id int REFERENCES d_con_cascade (id) ON DELETE CASCADE);
INSERT INTO d_con_parent VALUES (1, 'a'), (2, 'b'), (3, 'c');
INSERT INTO d_con_child VALUES (1, 1, 5, 'x'), (2, 2, 6, 'y');
INSERT INTO d_con_cascade VALUES (10, 1), (11, 1), (12, 2);
INSERT INTO d_con_setnull VALUES (20, 1), (21, 2);
INSERT INTO d_con_grand VALUES (30, 10), (31, 12);
-- @query add_unique
ALTER TABLE d_con_parent ADD CONSTRAINT d_con_parent_code_uniq UNIQUE (code)
-- @query unique_violation error
INSERT INTO d_con_parent VALUES (4, 'a')
-- @query add_fk_deferrable
ALTER TABLE d_con_child ADD CONSTRAINT d_con_child_parent_fk FOREIGN KEY (parent_id) REFERENCES d_con_parent (id) DEFERRABLE INITIALLY DEFERRED
-- @query add_check
ALTER TABLE d_con_child ADD CONSTRAINT d_con_child_qty_positive CHECK (qty > 0)
-- @query check_violation error
INSERT INTO d_con_child VALUES (3, 1, 0, 'z')
-- @query fk_violation error
INSERT INTO d_con_child VALUES (4, 99, 1, 'z')
-- @query add_check_violated_by_rows error
ALTER TABLE d_con_child ADD CONSTRAINT d_con_child_qty_big CHECK (qty > 5)
-- @query add_fk_violated_by_rows error
ALTER TABLE d_con_child ADD CONSTRAINT d_con_child_tag_fk FOREIGN KEY (tag) REFERENCES d_con_parent (code)
-- @query constraints_listed
SELECT conname, contype FROM pg_constraint WHERE conrelid = 'd_con_child'::regclass ORDER BY conname
-- @query fk_actions_listed
SELECT conname, confdeltype, condeferrable, condeferred FROM pg_constraint WHERE contype = 'f' AND conrelid IN ('d_con_child'::regclass, 'd_con_cascade'::regclass, 'd_con_setnull'::regclass) ORDER BY conname
-- @query fk_def
SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'd_con_setnull_parent_id_fkey'
-- @query information_schema_constraints
SELECT constraint_name, constraint_type FROM information_schema.table_constraints WHERE table_name = 'd_con_child' AND constraint_name NOT LIKE '%not_null' ORDER BY constraint_name
-- @query delete_cascades
DELETE FROM d_con_parent WHERE id = 3
-- @query delete_referenced_no_action error
DELETE FROM d_con_parent WHERE id = 2
-- @query delete_child_then_parent_cascade
DELETE FROM d_con_child WHERE parent_id = 1
-- @query delete_parent_cascade_set_null
DELETE FROM d_con_parent WHERE id = 1
-- @query after_cascade
SELECT 'cascade' AS t, id, parent_id FROM d_con_cascade UNION ALL SELECT 'setnull', id, parent_id FROM d_con_setnull UNION ALL SELECT 'grand', id, cascade_id FROM d_con_grand ORDER BY 1, 2
-- @query drop_check
ALTER TABLE d_con_child DROP CONSTRAINT d_con_child_qty_positive
-- @query check_gone
INSERT INTO d_con_child VALUES (5, 2, 0, 'w')
-- @query drop_unique
ALTER TABLE d_con_parent DROP CONSTRAINT d_con_parent_code_uniq
-- @query unique_gone
INSERT INTO d_con_parent VALUES (5, 'b')
-- @query drop_missing error
ALTER TABLE d_con_child DROP CONSTRAINT d_con_no_such
-- @query drop_missing_if_exists
ALTER TABLE d_con_child DROP CONSTRAINT IF EXISTS d_con_no_such
-- @query drop_fk
ALTER TABLE d_con_child DROP CONSTRAINT d_con_child_parent_fk
-- @query fk_gone
INSERT INTO d_con_child VALUES (6, 98, 1, 'v')
-- @query drop_primary_key
ALTER TABLE d_con_setnull DROP CONSTRAINT d_con_setnull_pkey
-- @query primary_key_gone
INSERT INTO d_con_setnull VALUES (21, NULL)
-- @query final_rows
SELECT id, parent_id, qty, tag FROM d_con_child ORDER BY id
