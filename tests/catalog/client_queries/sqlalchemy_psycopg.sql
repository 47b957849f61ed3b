-- Catalog queries sqlalchemy-psycopg sends, captured from a PostgreSQL 15 log (log_statement=all).
-- One query per entry; entries end with a line '-- ===='. '{{oid:NAME}}' is the pg_class
-- oid of public.NAME; '-- params:' is a JSON list bound to $1, $2, ...

-- query: sqlalchemy-psycopg #1 connect: version()
select pg_catalog.version();
-- ====
-- query: sqlalchemy-psycopg #2 connect: current_schema()
select current_schema();
-- ====
-- query: sqlalchemy-psycopg #3 connect: hstore to_regtype
-- params: ["hstore"]
SELECT
	    typname AS name, oid, typarray AS array_oid,
	    oid::regtype::text AS regtype, typdelim AS delimiter
	FROM pg_type t
	WHERE t.oid = to_regtype($1)
	ORDER BY t.oid;
-- ====
