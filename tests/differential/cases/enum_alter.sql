-- Enum types evolving as migrations change them: ALTER TYPE ... ADD VALUE [IF NOT EXISTS]
-- [BEFORE | AFTER], RENAME VALUE, RENAME TO, over columns (plain, indexed, array, with a
-- default) that keep their rows; DROP TYPE of a used enum refused, CASCADE drops the
-- columns. Runs in order.
-- @setup
CREATE TYPE d_mood AS ENUM ('sad', 'ok');
CREATE TABLE d_enum_t (id int PRIMARY KEY, m d_mood DEFAULT 'ok', ms d_mood[]);
CREATE INDEX d_enum_t_m ON d_enum_t (m);
INSERT INTO d_enum_t VALUES (1, 'sad', '{sad,ok}'), (2, 'ok', NULL);
-- @query add_value
ALTER TYPE d_mood ADD VALUE 'happy'
-- @query add_existing error
ALTER TYPE d_mood ADD VALUE 'happy'
-- @query add_if_not_exists
ALTER TYPE d_mood ADD VALUE IF NOT EXISTS 'happy'
-- @query add_before
ALTER TYPE d_mood ADD VALUE 'awful' BEFORE 'sad'
-- @query add_after
ALTER TYPE d_mood ADD VALUE 'meh' AFTER 'sad'
-- @query add_after_missing error
ALTER TYPE d_mood ADD VALUE 'x' AFTER 'nope'
-- @query labels
SELECT array_to_string(enum_range(NULL::d_mood), ',')
-- @query pg_enum
SELECT enumlabel FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid WHERE t.typname = 'd_mood' ORDER BY enumsortorder
-- @query rename_value
ALTER TYPE d_mood RENAME VALUE 'ok' TO 'fine'
-- @query rename_missing error
ALTER TYPE d_mood RENAME VALUE 'ok' TO 'fine'
-- @query rename_to_existing error
ALTER TYPE d_mood RENAME VALUE 'sad' TO 'happy'
-- @query rows_follow
SELECT id, m::text, ms::text FROM d_enum_t ORDER BY id
-- @query new_value_insert
INSERT INTO d_enum_t (id, m, ms) VALUES (3, 'happy', '{awful,meh}'), (4, DEFAULT, NULL) RETURNING id, m::text
-- @query old_label_gone error
INSERT INTO d_enum_t (id, m) VALUES (5, 'ok')
-- @query order_follows_labels
SELECT m::text AS label FROM d_enum_t ORDER BY m
-- @query index_still_used
SELECT id FROM d_enum_t WHERE m = 'happy'
-- @query rename_type
ALTER TYPE d_mood RENAME TO d_feeling
-- @query renamed_type_labels
SELECT array_to_string(enum_range(NULL::d_feeling), ',')
-- @query column_type_follows
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'd_enum_t'::regclass AND attname = 'm'
-- @query drop_used error
DROP TYPE d_feeling
-- @query drop_cascade
DROP TYPE d_feeling CASCADE
-- @query columns_after_cascade
SELECT column_name FROM information_schema.columns WHERE table_name = 'd_enum_t' ORDER BY ordinal_position
