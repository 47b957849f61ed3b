-- Catalog queries sqlalchemy-psycopg2 sends, captured from a PostgreSQL 15 log (log_statement=all).
-- One query per entry; entries end with a line '-- ===='. '{{oid:NAME}}' is the pg_class
-- oid of public.NAME; '-- params:' is a JSON list bound to $1, $2, ...

-- query: sqlalchemy-psycopg2 #1 connect: hstore oid
SELECT t.oid, typarray
	FROM pg_type t JOIN pg_namespace ns
	    ON typnamespace = ns.oid
	WHERE typname = 'hstore';
-- ====
-- query: sqlalchemy-psycopg2 #2 connect: version()
select pg_catalog.version();
-- ====
-- query: sqlalchemy-psycopg2 #3 connect: current_schema()
select current_schema();
-- ====
