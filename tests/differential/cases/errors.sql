-- Statements that fail in PostgreSQL must fail in hatiproxy with the same SQLSTATE class.
-- @setup
CREATE TABLE d_err (id int PRIMARY KEY, name text NOT NULL);
-- @query syntax_error error
SELEC 1
-- @query syntax_error_trailing error
SELECT 1 +
-- @query undefined_table error
SELECT * FROM d_no_such_table
-- @query undefined_column error
SELECT no_such_column FROM d_err
-- @query undefined_function error
SELECT no_such_function(1)
-- @query wrong_arg_type error
SELECT length(1, 2, 3)
-- @query create_existing_table error
CREATE TABLE d_err (id int)
-- @query drop_missing_table error
DROP TABLE d_missing_table
-- @query text_plus_int error
SELECT 'a'::text + 1
-- @query invalid_boolean error
SELECT 'maybe'::boolean
-- @query cast_overflow_bigint error
SELECT 99999999999999999999::bigint
-- @query insert_null_not_null error
INSERT INTO d_err VALUES (1, NULL)
-- @query insert_too_many_values error
INSERT INTO d_err VALUES (1, 'a', 'b')
-- @query insert_column_list_longer_than_values error
INSERT INTO d_err (id, name) VALUES (1)
-- @query drop_if_exists_ok
DROP TABLE IF EXISTS d_missing_table
-- @query sqrt_negative error
SELECT sqrt(-1::float8)
