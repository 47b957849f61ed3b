-- The catalog and lock queries postgres.js 3 and Kysely 0.28 send (captured from the
-- server's log_statement = all while tests/tools/test_postgresjs.py and test_kysely.py ran
-- them; Kysely's $n parameters written in as literals, and both narrowed to this file's
-- types and tables): postgres.js's array types read on connect, Kysely's
-- introspection.getTables() (pg_get_serial_sequence over quote_ident, col_description,
-- has_schema_privilege, `!~`) and its migration lock (pg_advisory_lock; its set_config is in
-- known_differences.sql).
-- @setup
CREATE TABLE d_ky_person (id serial PRIMARY KEY, first_name varchar(100) NOT NULL, nick text, created_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE d_ky_pet (id serial PRIMARY KEY, name varchar(50) NOT NULL UNIQUE, owner_id integer NOT NULL REFERENCES d_ky_person (id) ON DELETE CASCADE, weight numeric(6, 2), tags text[]);
ALTER TABLE d_ky_pet ADD COLUMN age integer NOT NULL DEFAULT 0;
CREATE INDEX d_ky_pet_owner_idx ON d_ky_pet (owner_id);
COMMENT ON COLUMN d_ky_pet.name IS 'unique name';
-- @query postgresjs_array_types
select b.oid, b.typarray from pg_catalog.pg_type a left join pg_catalog.pg_type b on b.oid = a.typelem where a.typcategory = 'A' and b.typname in ('bool', 'int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'text', 'varchar', 'bpchar', 'date', 'timestamp', 'timestamptz', 'uuid', 'json', 'jsonb', 'bytea', 'interval', 'time') group by b.oid, b.typarray order by b.oid
-- @query kysely_get_tables
select "a"."attname" as "column", "a"."attnotnull" as "not_null", "a"."atthasdef" as "has_default", "c"."relname" as "table", "c"."relkind" as "table_type", "ns"."nspname" as "schema", "typ"."typname" as "type", "dtns"."nspname" as "type_schema", col_description(a.attrelid, a.attnum) as "column_description", pg_get_serial_sequence(quote_ident(ns.nspname) || '.' || quote_ident(c.relname), a.attname) as "auto_incrementing" from "pg_catalog"."pg_attribute" as "a" inner join "pg_catalog"."pg_class" as "c" on "a"."attrelid" = "c"."oid" inner join "pg_catalog"."pg_namespace" as "ns" on "c"."relnamespace" = "ns"."oid" inner join "pg_catalog"."pg_type" as "typ" on "a"."atttypid" = "typ"."oid" inner join "pg_catalog"."pg_namespace" as "dtns" on "typ"."typnamespace" = "dtns"."oid" where "c"."relkind" in ('r', 'v', 'p') and "ns"."nspname" !~ '^pg_' and "ns"."nspname" != 'information_schema' and "ns"."nspname" != 'crdb_internal' and has_schema_privilege(ns.nspname, 'USAGE') and "a"."attnum" >= 0 and "a"."attisdropped" != true and "c"."relname" like 'd\_ky\_%' order by "ns"."nspname", "c"."relname", "a"."attnum"
-- @query kysely_get_schemas
select "nspname" from "pg_catalog"."pg_namespace" where nspname in ('public', 'pg_catalog', 'information_schema') order by 1
-- @query kysely_advisory_lock
select pg_advisory_lock(3853314791062309107)
-- @query kysely_advisory_unlock
select pg_advisory_unlock(3853314791062309107)
