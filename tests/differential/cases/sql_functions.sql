-- SQL functions (macros here) show their declaration as PostgreSQL does: pg_proc, the
-- pg_get_function_* functions, pg_get_functiondef (psql's \sf); reg* values returned by
-- a query are names (transpiler/sql_functions.py, transpiler/reg_casts.py).
-- @setup
CREATE TABLE d_sfn_t (id int PRIMARY KEY, v text);
CREATE FUNCTION d_sfn_add(a int, b int) RETURNS int LANGUAGE sql AS 'SELECT a + b';
CREATE FUNCTION d_sfn_up(s text) RETURNS text LANGUAGE sql IMMUTABLE STRICT AS $$SELECT upper(s)$$;
CREATE FUNCTION d_sfn_def(x text DEFAULT 'a', n integer DEFAULT 2) RETURNS text LANGUAGE sql STABLE AS $$SELECT repeat(x, n)$$;
CREATE FUNCTION d_sfn_set(n int) RETURNS SETOF int LANGUAGE sql AS $$SELECT * FROM generate_series(1, n)$$;
CREATE FUNCTION d_sfn_tab(n int) RETURNS TABLE(i int, sq bigint) LANGUAGE sql AS $$SELECT i, i::bigint * i FROM generate_series(1, n) AS s(i)$$;
CREATE FUNCTION d_sfn_num(p numeric(10,2), q varchar(20)) RETURNS numeric LANGUAGE sql AS $$SELECT p * 2$$;
-- @query calls
SELECT d_sfn_add(1, 2), d_sfn_up('x'), d_sfn_def(), d_sfn_def('b'), d_sfn_def('c', 3), d_sfn_num(1.5, 'x')
-- @query setof_column_named_after_the_function
SELECT d_sfn_set FROM d_sfn_set(3) ORDER BY 1
-- @query table_columns_named_as_declared
SELECT i, sq FROM d_sfn_tab(3) ORDER BY i
-- @query pg_proc_declaration
SELECT proname, pronargs, pronargdefaults, proretset, provolatile, proisstrict, prorettype::regtype::text, proargtypes[0]::int AS first_arg, prosrc, l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE proname LIKE 'd\_sfn\_%' ORDER BY proname
-- @query function_text
SELECT proname, pg_get_function_arguments(oid), pg_get_function_result(oid), pg_get_function_identity_arguments(oid) FROM pg_proc WHERE proname LIKE 'd\_sfn\_%' ORDER BY proname
-- @query functiondef
SELECT pg_get_functiondef(oid) FROM pg_proc WHERE proname IN ('d_sfn_add', 'd_sfn_up', 'd_sfn_def', 'd_sfn_set', 'd_sfn_num') ORDER BY proname
-- @query regproc_to_oid
SELECT 'd_sfn_add'::regproc::oid = (SELECT oid FROM pg_proc WHERE proname = 'd_sfn_add'), pg_get_functiondef('d_sfn_up'::regproc) LIKE 'CREATE OR REPLACE FUNCTION public.d_sfn_up(s text)%'
-- @query regprocedure_names
SELECT 'd_sfn_add'::regproc, 'd_sfn_add(int,int)'::regprocedure, 'd_sfn_up(text)'::regprocedure, 'public.d_sfn_num(numeric, varchar)'::regprocedure
-- @query to_regproc
SELECT to_regproc('d_sfn_add'), to_regproc('d_sfn_nosuch') IS NULL, to_regprocedure('d_sfn_up(text)'), to_regprocedure('d_sfn_nosuch(int)') IS NULL
-- @query unknown_function error
SELECT 'd_sfn_nosuch'::regproc::oid
-- @query unknown_relation error
SELECT 'd_sfn_nosuch'::regclass
-- @query unknown_type error
SELECT 'd_sfn_nosuch'::regtype
-- @query reg_outputs_are_names
SELECT 'd_sfn_t'::regclass, 'int4'::regtype AS t, 'public'::regnamespace, 'character varying'::regtype, 'timestamp with time zone'::regtype, to_regclass('d_sfn_t'), to_regtype('text[]')
-- @query reg_values_compare_as_oids
SELECT relname FROM pg_class WHERE oid = 'd_sfn_t'::regclass
-- @query reg_in_union
SELECT 'd_sfn_t'::regclass UNION ALL SELECT 'pg_class'::regclass
-- @query replaced_function
CREATE OR REPLACE FUNCTION d_sfn_add(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT a + b + 0'
-- @query replaced_declaration
SELECT provolatile, prosrc FROM pg_proc WHERE proname = 'd_sfn_add'
-- @query dropped_function
DROP FUNCTION d_sfn_add
-- @query dropped_is_gone
SELECT count(*) FROM pg_proc WHERE proname = 'd_sfn_add'
