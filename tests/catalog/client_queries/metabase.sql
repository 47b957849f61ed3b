-- Catalog queries Metabase's PostgreSQL driver sends when it connects and syncs
-- (besides pgJDBC's DatabaseMetaData calls, see pgjdbc.sql). Not captured here
-- (Metabase is not installed on these machines): written after the SQL Metabase
-- 0.4x/0.5x is known to send. Entry format as in psql.sql.

-- query: metabase #1 connect: version
SELECT version();
-- ====
