-- bytea text in INSERT / UPDATE without a cast: PostgreSQL reads it by the column's type
-- (hex '\x..' or the escape format); DuckDB's own VARCHAR -> BLOB cast read '\x00ff' as
-- 00 66 66 (transpiler/bytea_input.py).
-- @setup
CREATE TABLE d_bytea_in (id int PRIMARY KEY, b bytea, note text);
INSERT INTO d_bytea_in VALUES (1, '\x00ff', '\x00ff'), (2, '\x616263', 'hex'), (3, 'plain', 'escape'), (4, '\x', 'empty hex');
INSERT INTO d_bytea_in (note, id, b) VALUES ('octal and backslash', 5, 'a\000b\\c\377');
INSERT INTO d_bytea_in (id, b) SELECT 6, '\xDEADbeef';
-- @query bytea_literals_stored_as_postgresql_reads_them
SELECT id, b, octet_length(b), note FROM d_bytea_in ORDER BY id
-- @query bytea_update_literal
UPDATE d_bytea_in SET b = '\x0102' WHERE id = 3 RETURNING id, b
-- @query bytea_upsert_literal
INSERT INTO d_bytea_in (id, b) VALUES (1, '\x01') ON CONFLICT (id) DO UPDATE SET b = '\xff00' RETURNING id, b
-- @query bytea_bad_hex error
INSERT INTO d_bytea_in (id, b) VALUES (9, '\x0')
