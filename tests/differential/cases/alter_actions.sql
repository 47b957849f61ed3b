-- ALTER TABLE with several actions (Knex, Prisma Migrate, Rails' bulk change_table): one
-- statement per action, in order, all or nothing (transpiler/alter_actions.py). Runs in
-- order.
-- @setup
CREATE TABLE d_altact (id int PRIMARY KEY);
INSERT INTO d_altact VALUES (1), (2);
CREATE TABLE d_altact_child (id int PRIMARY KEY);
INSERT INTO d_altact_child VALUES (10);
-- @query add_three
ALTER TABLE d_altact ADD COLUMN a int, ADD COLUMN b text DEFAULT 'x,y', ADD COLUMN c numeric(10,2) DEFAULT 1.5
-- @query added
SELECT * FROM d_altact ORDER BY id
-- @query alter_three
ALTER TABLE d_altact ALTER COLUMN a SET DEFAULT 7, ALTER COLUMN b DROP DEFAULT, ALTER COLUMN c TYPE numeric(12,3)
-- @query insert_defaults
INSERT INTO d_altact (id) VALUES (3)
-- @query altered
SELECT * FROM d_altact ORDER BY id
-- @query array_default_and_check
ALTER TABLE ONLY public.d_altact ADD COLUMN d text[] DEFAULT ARRAY['p','q'], ADD CONSTRAINT d_altact_a_chk CHECK (a IN (1, 7))
-- @query check_enforced error
INSERT INTO d_altact (id, a) VALUES (4, 5)
-- @query second_fails error
ALTER TABLE d_altact ADD COLUMN e int, ADD COLUMN a int
-- @query first_rolled_back
SELECT column_name FROM information_schema.columns WHERE table_name = 'd_altact' ORDER BY ordinal_position
-- @query drop_two
ALTER TABLE d_altact DROP COLUMN b, DROP COLUMN c
-- @query after_drop
SELECT id, a, d FROM d_altact ORDER BY id
-- @query column_and_foreign_key
ALTER TABLE d_altact_child ADD COLUMN pid int, ADD CONSTRAINT d_altact_child_fk FOREIGN KEY (pid) REFERENCES d_altact (id)
-- @query orphan error
INSERT INTO d_altact_child VALUES (11, 99)
-- @query parent_ok
INSERT INTO d_altact_child VALUES (12, 1)
