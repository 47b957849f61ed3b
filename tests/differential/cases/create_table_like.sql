-- CREATE TABLE t (LIKE src [INCLUDING ...]) and CREATE TABLE ... AS ... WITH NO DATA:
-- columns, types and NOT NULL always; defaults, CHECKs, indexes as the options say.
-- @setup
CREATE TABLE d_like_src (id serial PRIMARY KEY, name varchar(20) NOT NULL DEFAULT 'x', price numeric(10,2) CHECK (price > 0), note text UNIQUE);
CREATE INDEX d_like_src_name ON d_like_src (name);
INSERT INTO d_like_src (name, price, note) VALUES ('pen', 1.50, 'a'), ('ink', 2.00, 'b');
-- @query like_plain
CREATE TABLE d_like_plain (LIKE d_like_src)
-- @query like_plain_columns
SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.atthasdef FROM pg_attribute a WHERE a.attrelid = 'd_like_plain'::regclass AND a.attnum > 0 ORDER BY a.attnum
-- @query like_plain_no_constraints
SELECT count(*) FROM pg_constraint WHERE conrelid = 'd_like_plain'::regclass AND contype IN ('p', 'u', 'c')
-- @query like_plain_no_indexes
SELECT count(*) FROM pg_indexes WHERE tablename = 'd_like_plain'
-- @query like_plain_empty
SELECT count(*) FROM d_like_plain
-- @query like_plain_not_null error
INSERT INTO d_like_plain (id, name) VALUES (1, NULL)
-- @query like_plain_varchar_length error
INSERT INTO d_like_plain (id, name) VALUES (1, 'this name is far too long for it')
-- @query like_plain_no_check
INSERT INTO d_like_plain (id, name, price) VALUES (1, 'ok', -5)
-- @query like_plain_no_default error
INSERT INTO d_like_plain (name) VALUES ('no id')
-- @query like_defaults
CREATE TABLE d_like_defaults (LIKE d_like_src INCLUDING DEFAULTS, extra int DEFAULT 9)
-- @query like_defaults_share_the_sequence
INSERT INTO d_like_defaults (name) VALUES ('from the sequence') RETURNING id, name, extra
-- @query like_defaults_columns
SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.atthasdef FROM pg_attribute a WHERE a.attrelid = 'd_like_defaults'::regclass AND a.attnum > 0 ORDER BY a.attnum
-- @query like_constraints
CREATE TABLE d_like_constraints (LIKE d_like_src INCLUDING CONSTRAINTS)
-- @query like_constraints_check error
INSERT INTO d_like_constraints (id, name, price) VALUES (1, 'x', -1)
-- @query like_all
CREATE TABLE d_like_all (LIKE d_like_src INCLUDING ALL)
-- @query like_all_constraints
SELECT contype, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'd_like_all'::regclass AND contype IN ('p', 'u') ORDER BY contype
-- @query like_all_index_count
SELECT count(*) FROM pg_indexes WHERE tablename = 'd_like_all'
-- @query like_all_insert
INSERT INTO d_like_all (name, price, note) VALUES ('a', 1, 'n') RETURNING name, price, note
-- @query like_all_unique error
INSERT INTO d_like_all (name, price, note) VALUES ('b', 1, 'n')
-- @query like_all_excluding_indexes
CREATE TABLE d_like_noidx (LIKE d_like_src INCLUDING ALL EXCLUDING INDEXES, extra text)
-- @query like_all_excluding_indexes_count
SELECT count(*) FROM pg_indexes WHERE tablename = 'd_like_noidx'
-- @query like_all_excluding_columns
SELECT a.attname, a.attnotnull, a.atthasdef FROM pg_attribute a WHERE a.attrelid = 'd_like_noidx'::regclass AND a.attnum > 0 ORDER BY a.attnum
-- @query like_between_columns
CREATE TABLE d_like_mid (first int, LIKE d_like_src, last text)
-- @query like_between_columns_order
SELECT a.attname FROM pg_attribute a WHERE a.attrelid = 'd_like_mid'::regclass AND a.attnum > 0 ORDER BY a.attnum
-- @query like_missing error
CREATE TABLE d_like_bad (LIKE d_like_no_such_table)
-- @query ctas_no_data
CREATE TABLE d_like_ctas AS SELECT id, name, price, note FROM d_like_src WITH NO DATA
-- @query ctas_no_data_rows
SELECT count(*) FROM d_like_ctas
-- @query ctas_no_data_columns
SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a WHERE a.attrelid = 'd_like_ctas'::regclass AND a.attnum > 0 ORDER BY a.attnum
-- @query ctas_with_data
CREATE TABLE d_like_ctas2 AS SELECT id, note FROM d_like_src WITH DATA
-- @query ctas_with_data_varchar
CREATE TABLE d_like_ctas3 AS SELECT s.name AS label, upper(s.name) AS loud, s.id FROM d_like_src s WHERE s.id > 0
-- @query ctas_with_data_varchar_columns
SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a WHERE a.attrelid = 'd_like_ctas3'::regclass AND a.attnum > 0 ORDER BY a.attnum
-- @query ctas_with_data_varchar_rows
SELECT label, loud, id FROM d_like_ctas3 ORDER BY id
-- @query ctas_with_data_varchar_length error
INSERT INTO d_like_ctas3 (label) VALUES ('this name is far too long for it')
