-- Catalog queries DBeaver (PostgreSQL driver) sends when it connects and opens the
-- navigator. Not captured here (DBeaver is not installed on these machines): written
-- after the SQL DBeaver 23.x/24.x is known to send, with its bind values inlined.
-- Entry format as in psql.sql.

-- query: dbeaver #1 connect: current schema and user
SELECT current_schema(),session_user;
-- ====
-- query: dbeaver #5 connect: in recovery
SELECT pg_catalog.pg_is_in_recovery();
-- ====
