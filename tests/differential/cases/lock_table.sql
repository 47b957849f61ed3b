-- LOCK TABLE: hatiproxy checks what PostgreSQL checks (a transaction block, the tables
-- exist) and locks nothing (DuckDB's transactions read one snapshot; pg_dump locks so).
-- @setup
CREATE TABLE d_lock_t (id int);
-- @query lock_outside_a_transaction error
LOCK TABLE d_lock_t IN ACCESS SHARE MODE
-- @query begin
BEGIN
-- @query lock_in_a_transaction
LOCK TABLE public.d_lock_t, d_lock_t IN ACCESS SHARE MODE
-- @query read_after_lock
SELECT count(*) FROM d_lock_t
-- @query commit
COMMIT
-- @query begin_again
BEGIN
-- @query lock_missing_table error
LOCK TABLE d_lock_no_such_table
-- @query rollback
ROLLBACK
