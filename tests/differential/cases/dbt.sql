-- What dbt-postgres 1.10 sends (captured from its logs of tests/tools/test_dbt.py's project):
-- a view built under a temporary name and renamed into place, a view replaced by a table
-- through a backup name and DROP ... CASCADE, and its catalog queries. (Its view-dependency
-- query finds nothing here: see pg_depend in proxy/db/catalog/50_functions.sql.)
-- @setup
CREATE SCHEMA IF NOT EXISTS "d_dbt";
CREATE TABLE "d_dbt"."d_dbt_src" (id integer, kind text);
INSERT INTO "d_dbt"."d_dbt_src" VALUES (1, 'tool'), (2, 'paper'), (3, 'tool');
CREATE VIEW "d_dbt"."d_dbt_stg__dbt_tmp" AS (select id, kind from "d_dbt"."d_dbt_src");
ALTER TABLE "d_dbt"."d_dbt_stg__dbt_tmp" RENAME TO "d_dbt_stg";
CREATE VIEW "d_dbt"."d_dbt_switch__dbt_tmp" AS (select id from "d_dbt"."d_dbt_stg");
ALTER TABLE "d_dbt"."d_dbt_switch__dbt_tmp" RENAME TO "d_dbt_switch";
CREATE TABLE "d_dbt"."d_dbt_switch__dbt_tmp" AS (select id, upper(kind) AS kind from "d_dbt"."d_dbt_stg");
ALTER TABLE "d_dbt"."d_dbt_switch" RENAME TO "d_dbt_switch__dbt_backup";
ALTER TABLE "d_dbt"."d_dbt_switch__dbt_tmp" RENAME TO "d_dbt_switch";
DROP VIEW IF EXISTS "d_dbt"."d_dbt_switch__dbt_backup" CASCADE;
-- @query list_relations
select 'hatidata' as database, tablename as name, schemaname as schema, 'table' as type from pg_tables where schemaname ilike 'd_dbt' union all select 'hatidata' as database, viewname as name, schemaname as schema, 'view' as type from pg_views where schemaname ilike 'd_dbt' union all select 'hatidata' as database, matviewname as name, schemaname as schema, 'materialized_view' as type from pg_matviews where schemaname ilike 'd_dbt'
-- @query docs_catalog
select sch.nspname as table_schema, tbl.relname as table_name, case tbl.relkind when 'v' then 'VIEW' when 'm' then 'MATERIALIZED VIEW' else 'BASE TABLE' end as table_type, tbl_desc.description as table_comment, col.attname as column_name, col.attnum as column_index, pg_catalog.format_type(col.atttypid, col.atttypmod) as column_type, col_desc.description as column_comment from pg_catalog.pg_namespace sch join pg_catalog.pg_class tbl on tbl.relnamespace = sch.oid join pg_catalog.pg_attribute col on col.attrelid = tbl.oid left outer join pg_catalog.pg_description tbl_desc on (tbl_desc.objoid = tbl.oid and tbl_desc.objsubid = 0) left outer join pg_catalog.pg_description col_desc on (col_desc.objoid = tbl.oid and col_desc.objsubid = col.attnum) where upper(sch.nspname) = upper('d_dbt') and not pg_is_other_temp_schema(sch.oid) and tbl.relpersistence in ('p', 'u') and tbl.relkind in ('r', 'v', 'f', 'p', 'm') and col.attnum > 0 and not col.attisdropped order by sch.nspname, tbl.relname, col.attnum
-- @query switched_table_rows
SELECT id, kind FROM "d_dbt"."d_dbt_switch" ORDER BY id
