-- Catalog queries Metabase's PostgreSQL driver sends when it connects and syncs
-- (besides pgJDBC's DatabaseMetaData calls, see pgjdbc.sql). Not captured here
-- (Metabase is not installed on these machines): written after the SQL Metabase
-- 0.4x/0.5x is known to send. Entry format as in psql.sql.

-- query: metabase #1 connect: version
SELECT version();
-- ====
-- query: metabase #2 sync: table privileges of the current user
with table_privileges as (
 select
   NULL as role,
   t.schemaname as schema,
   t.objectname as table,
   pg_catalog.has_table_privilege(current_user, '"' || t.schemaname || '"' || '.' || '"' || t.objectname || '"',  'UPDATE') as update,
   pg_catalog.has_table_privilege(current_user, '"' || t.schemaname || '"' || '.' || '"' || t.objectname || '"',  'SELECT') as select,
   pg_catalog.has_table_privilege(current_user, '"' || t.schemaname || '"' || '.' || '"' || t.objectname || '"',  'INSERT') as insert,
   pg_catalog.has_table_privilege(current_user, '"' || t.schemaname || '"' || '.' || '"' || t.objectname || '"',  'DELETE') as delete
 from (
   select schemaname, tablename as objectname from pg_catalog.pg_tables
   union
   select schemaname, viewname as objectname from pg_catalog.pg_views
   union
   select schemaname, matviewname as objectname from pg_catalog.pg_matviews
 ) t
 where t.schemaname !~ '^pg_'
   and t.schemaname <> 'information_schema'
   and pg_catalog.has_schema_privilege(current_user, t.schemaname, 'USAGE')
)
select t.*
from table_privileges t;
-- ====
-- query: metabase #3 sync: describe fields
SELECT c.column_name AS name,
  c.udt_name AS database_type,
  c.ordinal_position - 1 AS database_position,
  c.table_schema AS table_schema,
  c.table_name AS table_name,
  pk.column_name IS NOT NULL AS pk,
  COALESCE(col_description(('"' || c.table_schema || '"."' || c.table_name || '"')::regclass::oid, c.ordinal_position), '') AS field_comment,
  c.is_nullable = 'NO' AS database_required,
  c.column_default IS NOT NULL AS database_is_auto_increment_hint
FROM information_schema.columns c
LEFT JOIN (SELECT tc.table_schema, tc.table_name, kc.column_name
           FROM information_schema.table_constraints tc
           JOIN information_schema.key_column_usage kc
             ON tc.constraint_name = kc.constraint_name
            AND tc.table_schema = kc.table_schema
            AND tc.table_name = kc.table_name
           WHERE tc.constraint_type = 'PRIMARY KEY') pk
  ON c.table_schema = pk.table_schema AND c.table_name = pk.table_name AND c.column_name = pk.column_name
WHERE c.table_schema !~ '^information_schema|catalog_history|pg_'
  AND c.table_schema IN ('public')
ORDER BY table_schema, table_name, database_position;
-- ====
-- query: metabase #4 sync: table comments
SELECT n.nspname AS schema, c.relname AS name, obj_description(c.oid, 'pg_class') AS description
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname = 'public';
-- ====
