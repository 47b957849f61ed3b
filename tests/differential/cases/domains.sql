-- CREATE / ALTER / DROP DOMAIN (hand-written schemas, pg_dump output, PostgREST / Hasura
-- schemas): values checked on INSERT / UPDATE / casts with PostgreSQL's SQLSTATEs, the
-- domain's DEFAULT, and the catalog (pg_type, pg_constraint, information_schema, psql's
-- \dD query). Runs in order; every domain is dropped at the end (other files list all
-- domains). A CHECK is shown as written (in parentheses), not in PostgreSQL's deparsed
-- words (`VALUE ~ '@'` stays so; PostgreSQL shows `VALUE ~ '@'::text`): the ones here
-- are written as PostgreSQL shows them, as pg_dump writes them (docs/compatibility.md).
-- @setup
CREATE DOMAIN d_dm_email AS text CHECK (VALUE ~ '@'::text);
CREATE DOMAIN d_dm_posint AS integer NOT NULL DEFAULT 1 CONSTRAINT d_dm_pos CHECK (VALUE > 0);
CREATE DOMAIN d_dm_code AS varchar(5);
CREATE SCHEMA d_dm_app;
CREATE DOMAIN d_dm_app.d_dm_price AS numeric(10,2) DEFAULT 0 CHECK (VALUE >= (0)::numeric);
CREATE TABLE d_dm_users (id int PRIMARY KEY, e d_dm_email, p d_dm_posint, s d_dm_code, pr d_dm_app.d_dm_price);
INSERT INTO d_dm_users (id, e) VALUES (1, 'a@b');
-- @query defaults_from_domains
SELECT * FROM d_dm_users ORDER BY id
-- @query check_violation error
INSERT INTO d_dm_users (id, e) VALUES (2, 'ab')
-- @query named_check_violation error
INSERT INTO d_dm_users (id, e, p) VALUES (2, 'a@b', -1)
-- @query not_null_violation error
INSERT INTO d_dm_users (id, e, p) VALUES (2, 'a@b', NULL)
-- @query too_long error
INSERT INTO d_dm_users (id, e, s) VALUES (2, 'a@b', 'abcdefgh')
-- @query other_schema_violation error
INSERT INTO d_dm_users (id, e, pr) VALUES (2, 'a@b', -5)
-- @query update_violation error
UPDATE d_dm_users SET e = 'zz'
-- @query update_ok
UPDATE d_dm_users SET e = 'z@z', s = 'abc' RETURNING *
-- @query cast_ok
SELECT 'x@y'::d_dm_email AS e, '5'::d_dm_posint AS p, CAST(NULL AS d_dm_email) AS n, 'abcdefgh'::d_dm_code AS c, 3.456::d_dm_app.d_dm_price AS pr
-- @query cast_violation error
SELECT 'x'::d_dm_email
-- @query cast_null_violation error
SELECT NULL::d_dm_posint
-- @query cast_negative error
SELECT (-3)::d_dm_posint
-- @query pg_type_rows
SELECT t.typname, t.typtype, t.typbasetype::regtype, t.typnotnull, t.typdefault, t.typtypmod, n.nspname, t.typarray <> 0 AS has_array FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace WHERE t.typname LIKE 'd\_dm\_%' AND t.typtype = 'd' ORDER BY 1
-- @query pg_constraint_rows
SELECT c.conname, c.contypid::regtype::text, c.contype, c.conrelid = 0, pg_get_constraintdef(c.oid), c.convalidated FROM pg_constraint c WHERE c.conname LIKE 'd\_dm\_%' ORDER BY 1
-- @query column_types
SELECT attname, atttypid::regtype::text, format_type(atttypid, atttypmod), atthasdef FROM pg_attribute WHERE attrelid = 'd_dm_users'::regclass AND attnum > 0 ORDER BY attnum
-- @query table_constraints_without_domains
SELECT conname, contype FROM pg_constraint WHERE conrelid = 'd_dm_users'::regclass ORDER BY 1
-- @query information_schema_domains
SELECT domain_schema, domain_name, data_type, character_maximum_length, numeric_precision, numeric_scale, domain_default, udt_name FROM information_schema.domains WHERE domain_name LIKE 'd\_dm\_%' ORDER BY 2
-- @query information_schema_domain_constraints
SELECT constraint_schema, constraint_name, domain_schema, domain_name, is_deferrable FROM information_schema.domain_constraints WHERE domain_name LIKE 'd\_dm\_%' ORDER BY 2
-- @query information_schema_columns
SELECT column_name, data_type, character_maximum_length, domain_schema, domain_name, udt_name, column_default FROM information_schema.columns WHERE table_name = 'd_dm_users' ORDER BY ordinal_position
-- psql's \dD (captured from psql 15 with ECHO_HIDDEN)
-- @query psql_dD
SELECT n.nspname as "Schema", t.typname as "Name", pg_catalog.format_type(t.typbasetype, t.typtypmod) as "Type", (SELECT c.collname FROM pg_catalog.pg_collation c, pg_catalog.pg_type bt WHERE c.oid = t.typcollation AND bt.oid = t.typbasetype AND t.typcollation <> bt.typcollation) as "Collation", CASE WHEN t.typnotnull THEN 'not null' END as "Nullable", t.typdefault as "Default", pg_catalog.array_to_string(ARRAY(SELECT pg_catalog.pg_get_constraintdef(r.oid, true) FROM pg_catalog.pg_constraint r WHERE t.oid = r.contypid), ' ') as "Check" FROM pg_catalog.pg_type t LEFT JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace WHERE t.typtype = 'd' AND n.nspname <> 'pg_catalog' AND n.nspname <> 'information_schema' AND pg_catalog.pg_type_is_visible(t.oid) ORDER BY 1, 2
-- @query add_column_of_domain
ALTER TABLE d_dm_users ADD COLUMN p2 d_dm_posint
-- @query add_column_existing_rows_take_default
SELECT id, p2 FROM d_dm_users ORDER BY id
-- @query add_column_checked error
UPDATE d_dm_users SET p2 = 0
-- @query add_column_own_default
ALTER TABLE d_dm_users ADD COLUMN p3 d_dm_posint DEFAULT 5
-- @query add_column_types
SELECT attname, format_type(atttypid, atttypmod), atthasdef FROM pg_attribute WHERE attrelid = 'd_dm_users'::regclass AND attname IN ('p2', 'p3') ORDER BY 1
-- @query add_column_drop
ALTER TABLE d_dm_users DROP COLUMN p2
-- @query add_column_drop_own_default
ALTER TABLE d_dm_users DROP COLUMN p3
-- @query add_constraint_existing_rows error
ALTER DOMAIN d_dm_email ADD CONSTRAINT d_dm_long CHECK (length(VALUE) > 3)
-- @query add_constraint
ALTER DOMAIN d_dm_email ADD CONSTRAINT d_dm_long2 CHECK (length(VALUE) > 2)
-- @query added_constraint_enforced error
INSERT INTO d_dm_users (id, e) VALUES (3, 'a@')
-- @query drop_constraint
ALTER DOMAIN d_dm_email DROP CONSTRAINT d_dm_long2
-- @query drop_missing_constraint error
ALTER DOMAIN d_dm_email DROP CONSTRAINT d_dm_nope
-- @query drop_missing_constraint_if_exists
ALTER DOMAIN d_dm_email DROP CONSTRAINT IF EXISTS d_dm_nope
-- @query rename_constraint
ALTER DOMAIN d_dm_posint RENAME CONSTRAINT d_dm_pos TO d_dm_positive
-- @query renamed_constraint_named error
INSERT INTO d_dm_users (id, e, p) VALUES (3, 'a@b', 0)
-- @query set_default
ALTER DOMAIN d_dm_posint SET DEFAULT 9
-- @query default_followed
INSERT INTO d_dm_users (id, e) VALUES (3, 'n@w') RETURNING p
-- @query drop_not_null
ALTER DOMAIN d_dm_posint DROP NOT NULL
-- @query null_allowed
INSERT INTO d_dm_users (id, e, p) VALUES (4, 'n@w', NULL) RETURNING p
-- @query set_not_null_existing_null error
ALTER DOMAIN d_dm_posint SET NOT NULL
-- @query drop_default
ALTER DOMAIN d_dm_posint DROP DEFAULT
-- @query no_default
INSERT INTO d_dm_users (id, e) VALUES (5, 'n@w') RETURNING p
-- @query after_alters
SELECT typname, typnotnull, typdefault FROM pg_type WHERE typname = 'd_dm_posint'
-- @query rename_domain
ALTER DOMAIN d_dm_code RENAME TO d_dm_tiny
-- @query renamed_column_type
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'd_dm_users'::regclass AND attname = 's'
-- @query renamed_still_checked error
UPDATE d_dm_users SET s = 'abcdefgh'
-- @query drop_in_use error
DROP DOMAIN d_dm_email
-- @query drop_missing error
DROP DOMAIN d_dm_nope
-- @query drop_missing_if_exists
DROP DOMAIN IF EXISTS d_dm_nope
-- @query create_existing error
CREATE DOMAIN d_dm_email AS text
-- @query drop_cascade
DROP DOMAIN d_dm_email CASCADE
-- @query column_dropped
SELECT * FROM d_dm_users ORDER BY id
-- @query function_over_domain
CREATE FUNCTION d_dm_double(x d_dm_posint) RETURNS d_dm_posint LANGUAGE sql AS $$ SELECT x * 2 $$
-- @query function_call
SELECT d_dm_double(4)
-- @query cleanup_function
DROP FUNCTION d_dm_double(d_dm_posint)
-- @query cleanup_table
DROP TABLE d_dm_users
-- @query cleanup_domains
DROP DOMAIN d_dm_posint, d_dm_tiny, d_dm_app.d_dm_price
-- @query none_left
SELECT count(*) FROM pg_type WHERE typname LIKE 'd\_dm\_%'
