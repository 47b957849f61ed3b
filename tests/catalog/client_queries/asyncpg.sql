-- Catalog queries asyncpg sends, captured from a PostgreSQL 15 log (log_statement=all).
-- One query per entry; entries end with a line '-- ===='. '{{oid:NAME}}' is the pg_class
-- oid of public.NAME; '-- params:' is a JSON list bound to $1, $2, ...

-- query: asyncpg #1 connect: jit off (pool reset)
SELECT
	                        current_setting('jit') AS cur,
	                        set_config('jit', 'off', false) AS new;
-- ====
-- query: asyncpg #3 jit restore
-- params: ["on"]
SELECT
	                    set_config('jit', $1, false);
-- ====
