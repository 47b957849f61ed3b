-- information_schema over the pg_catalog views above, so both agree (public, not main).
-- Lives in __hati_catalog.info; the transpiler maps `information_schema.x` here.

CREATE OR REPLACE VIEW __hati_catalog.info.schemata AS
SELECT {{database_name}} AS catalog_name, n.nspname AS schema_name, {{owner}} AS schema_owner,
       NULL::VARCHAR AS default_character_set_catalog,
       NULL::VARCHAR AS default_character_set_schema,
       NULL::VARCHAR AS default_character_set_name, NULL::VARCHAR AS sql_path
FROM __hati_catalog.pg.pg_namespace n;

CREATE OR REPLACE VIEW __hati_catalog.info.tables AS
SELECT {{database_name}} AS table_catalog, r.nspname AS table_schema, r.relname AS table_name,
       CASE WHEN r.relkind = 'v' THEN 'VIEW' WHEN r.temporary THEN 'LOCAL TEMPORARY'
            ELSE 'BASE TABLE' END AS table_type,
       NULL::VARCHAR AS self_referencing_column_name, NULL::VARCHAR AS reference_generation,
       NULL::VARCHAR AS user_defined_type_catalog, NULL::VARCHAR AS user_defined_type_schema,
       NULL::VARCHAR AS user_defined_type_name,
       CASE WHEN r.relkind = 'r' THEN 'YES' ELSE 'NO' END AS is_insertable_into,
       'NO' AS is_typed, NULL::VARCHAR AS commit_action
FROM __hati_catalog.pg.__hati_rel r WHERE r.relkind IN ('r', 'v');

CREATE OR REPLACE VIEW __hati_catalog.info.views AS
SELECT {{database_name}} AS table_catalog, r.nspname AS table_schema, r.relname AS table_name,
       r.viewdef AS view_definition, 'NONE' AS check_option, 'NO' AS is_updatable,
       'NO' AS is_insertable_into, 'NO' AS is_trigger_updatable,
       'NO' AS is_trigger_deletable, 'NO' AS is_trigger_insertable_into
FROM __hati_catalog.pg.__hati_rel r WHERE r.relkind = 'v';

CREATE OR REPLACE VIEW __hati_catalog.info.columns AS
SELECT {{database_name}} AS table_catalog, r.nspname AS table_schema, r.relname AS table_name,
       a.attname AS column_name, a.attnum::INTEGER AS ordinal_position,
       CASE WHEN a.attgenerated = '' AND a.attidentity = '' THEN a.__hati_default END
           AS column_default,
       CASE WHEN a.attnotnull THEN 'NO' ELSE 'YES' END AS is_nullable,
       -- as Postgres: a type outside pg_catalog (pgvector's vector) is USER-DEFINED, named
       -- by udt_schema / udt_name
       CASE WHEN t.typcategory = 'A' THEN 'ARRAY'
            WHEN t.typnamespace <> 11 THEN 'USER-DEFINED'
            ELSE regexp_replace(__hati_catalog.pg.format_type(a.atttypid, -1), '\(.*$', '')
       END AS data_type,
       CASE WHEN a.atttypid IN (1043, 1042) AND a.atttypmod >= 4 THEN a.atttypmod - 4
       END::INTEGER AS character_maximum_length,
       -- UTF8: at most 4 bytes a character, as Postgres computes it
       CASE WHEN a.atttypid IN (1043, 1042) AND a.atttypmod >= 4 THEN (a.atttypmod - 4) * 4
            WHEN a.atttypid IN (25, 1043, 1042) THEN 1073741824 END::INTEGER
           AS character_octet_length,
       CASE a.atttypid WHEN 21 THEN 16 WHEN 23 THEN 32 WHEN 20 THEN 64 WHEN 700 THEN 24
            WHEN 701 THEN 53
            WHEN 1700 THEN CASE WHEN a.atttypmod >= 4 THEN (a.atttypmod - 4) >> 16 END
       END::INTEGER AS numeric_precision,
       CASE WHEN a.atttypid = 1700 THEN 10
            WHEN a.atttypid IN (21, 23, 20, 700, 701) THEN 2 END::INTEGER AS numeric_precision_radix,
       CASE WHEN a.atttypid IN (21, 23, 20) THEN 0
            WHEN a.atttypid = 1700 AND a.atttypmod >= 4 THEN (a.atttypmod - 4) & 65535
       END::INTEGER AS numeric_scale,
       CASE WHEN a.atttypid IN (1082) THEN 0
            WHEN a.atttypid IN (1083, 1114, 1184, 1266, 1186)
            THEN CASE WHEN a.atttypmod >= 0 THEN a.atttypmod ELSE 6 END END::INTEGER
           AS datetime_precision,
       NULL::VARCHAR AS interval_type, NULL::INTEGER AS interval_precision,
       NULL::VARCHAR AS character_set_catalog, NULL::VARCHAR AS character_set_schema,
       NULL::VARCHAR AS character_set_name, NULL::VARCHAR AS collation_catalog,
       NULL::VARCHAR AS collation_schema, NULL::VARCHAR AS collation_name,
       CASE WHEN a.__dom_name IS NOT NULL THEN {{database_name}} END AS domain_catalog,
       CASE a.__dom_schema WHEN 'main' THEN 'public' ELSE a.__dom_schema END AS domain_schema,
       a.__dom_name AS domain_name, {{database_name}} AS udt_catalog,
       CASE WHEN t.typnamespace = 2200 THEN 'public' ELSE 'pg_catalog' END AS udt_schema,
       t.typname AS udt_name,
       NULL::VARCHAR AS scope_catalog, NULL::VARCHAR AS scope_schema,
       NULL::VARCHAR AS scope_name, NULL::INTEGER AS maximum_cardinality,
       a.attnum::VARCHAR AS dtd_identifier, 'NO' AS is_self_referencing,
       CASE WHEN a.attidentity <> '' THEN 'YES' ELSE 'NO' END AS is_identity,
       CASE a.attidentity WHEN 'a' THEN 'ALWAYS' WHEN 'd' THEN 'BY DEFAULT' END
           AS identity_generation,
       coalesce(TRY_CAST(a.__hati_identity_start AS BIGINT), s.start_value)::VARCHAR
           AS identity_start, s.increment_by::VARCHAR AS identity_increment,
       s.max_value::VARCHAR AS identity_maximum, s.min_value::VARCHAR AS identity_minimum,
       CASE WHEN s.cycle THEN 'YES' ELSE 'NO' END AS identity_cycle,
       CASE WHEN a.attgenerated = 's' THEN 'ALWAYS' ELSE 'NEVER' END AS is_generated,
       CASE WHEN a.attgenerated = 's' THEN a.__hati_default END AS generation_expression,
       CASE WHEN r.relkind = 'r' THEN 'YES' ELSE 'NO' END AS is_updatable
-- a domain's column: its type is the domain's base type, as in PostgreSQL
FROM (SELECT a0.* REPLACE (coalesce(dl.base_oid, a0.atttypid) AS atttypid,
                           coalesce(dl.base_typmod, a0.atttypmod) AS atttypmod),
             dl.name AS __dom_name, dl.schema_name AS __dom_schema
      FROM __hati_catalog.pg.pg_attribute a0
      LEFT JOIN __hati_catalog.pg.__hati_domain_list dl ON dl.oid = a0.atttypid) a
JOIN __hati_catalog.pg.__hati_rel r ON r.oid = a.attrelid AND r.relkind IN ('r', 'v')
LEFT JOIN __hati_catalog.pg.pg_type t ON t.oid = a.atttypid
-- an identity column's sequence (proxy/pgserver/identity_ddl.py), named by its nextval
LEFT JOIN (SELECT database_name, schema_name, sequence_name, start_value, increment_by,
                  max_value, min_value, cycle FROM duckdb_sequences()) s
  ON a.attidentity <> '' AND s.database_name = {{duck_db}}
 AND s.sequence_name = regexp_extract(a.__hati_default,
         '^nextval\(''(?:"?[^''".]+"?\.)?"?([^''".]+)"?''', 1)
 AND (s.schema_name = CASE r.nspname WHEN 'public' THEN 'main' ELSE r.nspname END
      OR contains(regexp_extract(a.__hati_default, '^nextval\(''([^'']*)''', 1), '.'))
-- A query without ORDER BY gets a table's columns in attnum order, as from PostgreSQL
-- (Piccolo's `schema generate` and many model generators rely on it).
ORDER BY r.oid, a.attnum;

CREATE OR REPLACE VIEW __hati_catalog.info.table_constraints AS
SELECT {{database_name}} AS constraint_catalog, n.nspname AS constraint_schema,
       c.conname AS constraint_name, {{database_name}} AS table_catalog,
       n.nspname AS table_schema, r.relname AS table_name,
       CASE c.contype WHEN 'p' THEN 'PRIMARY KEY' WHEN 'u' THEN 'UNIQUE'
            WHEN 'f' THEN 'FOREIGN KEY' ELSE 'CHECK' END AS constraint_type,
       'NO' AS is_deferrable, 'NO' AS initially_deferred, 'YES' AS enforced,
       CASE WHEN c.contype IN ('p', 'u') THEN 'YES' END AS nulls_distinct
FROM __hati_catalog.pg.pg_constraint c
JOIN __hati_catalog.pg.__hati_rel r ON r.oid = c.conrelid
JOIN __hati_catalog.pg.pg_namespace n ON n.oid = c.connamespace;

CREATE OR REPLACE VIEW __hati_catalog.info.key_column_usage AS
SELECT {{database_name}} AS constraint_catalog, n.nspname AS constraint_schema,
       c.conname AS constraint_name, {{database_name}} AS table_catalog,
       n.nspname AS table_schema, r.relname AS table_name, a.attname AS column_name,
       k.pos::INTEGER AS ordinal_position,
       CASE WHEN c.contype = 'f' THEN k.pos END::INTEGER AS position_in_unique_constraint
FROM __hati_catalog.pg.pg_constraint c
JOIN __hati_catalog.pg.__hati_rel r ON r.oid = c.conrelid
JOIN __hati_catalog.pg.pg_namespace n ON n.oid = c.connamespace,
     (SELECT unnest(c.conkey) AS attnum, generate_subscripts(c.conkey, 1) AS pos) k
JOIN __hati_catalog.pg.pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
WHERE c.contype IN ('p', 'u', 'f');

-- The columns each constraint uses: its own table's for PRIMARY KEY / UNIQUE / CHECK, the
-- referenced table's for a FOREIGN KEY (drizzle-kit reads it on push / pull).
CREATE OR REPLACE VIEW __hati_catalog.info.constraint_column_usage AS
SELECT {{database_name}} AS table_catalog, tn.nspname AS table_schema, r.relname AS table_name,
       a.attname AS column_name, {{database_name}} AS constraint_catalog,
       n.nspname AS constraint_schema, c.conname AS constraint_name
FROM __hati_catalog.pg.pg_constraint c
JOIN __hati_catalog.pg.pg_namespace n ON n.oid = c.connamespace,
     (SELECT CASE WHEN c.contype = 'f' THEN c.confrelid ELSE c.conrelid END AS relid,
             unnest(CASE WHEN c.contype = 'f' THEN c.confkey ELSE c.conkey END) AS attnum) k
JOIN __hati_catalog.pg.__hati_rel r ON r.oid = k.relid
JOIN __hati_catalog.pg.pg_namespace tn ON tn.oid = r.relnamespace
JOIN __hati_catalog.pg.pg_attribute a ON a.attrelid = k.relid AND a.attnum = k.attnum;

CREATE OR REPLACE VIEW __hati_catalog.info.referential_constraints AS
SELECT {{database_name}} AS constraint_catalog, n.nspname AS constraint_schema,
       c.conname AS constraint_name, {{database_name}} AS unique_constraint_catalog,
       n.nspname AS unique_constraint_schema,
       (SELECT min(u.conname) FROM __hati_catalog.pg.pg_constraint u
        WHERE u.conrelid = c.confrelid AND u.contype IN ('p', 'u')) AS unique_constraint_name,
       'NONE' AS match_option,
       CASE c.confupdtype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL'
            WHEN 'd' THEN 'SET DEFAULT' WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END
           AS update_rule,
       CASE c.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL'
            WHEN 'd' THEN 'SET DEFAULT' WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END
           AS delete_rule
FROM __hati_catalog.pg.pg_constraint c
JOIN __hati_catalog.pg.pg_namespace n ON n.oid = c.connamespace
WHERE c.contype = 'f';

CREATE OR REPLACE VIEW __hati_catalog.info.sequences AS
SELECT {{database_name}} AS sequence_catalog, schemaname AS sequence_schema,
       sequencename AS sequence_name, 'bigint' AS data_type, 64 AS numeric_precision,
       2 AS numeric_precision_radix, 0 AS numeric_scale,
       start_value::VARCHAR AS start_value, min_value::VARCHAR AS minimum_value,
       max_value::VARCHAR AS maximum_value, increment_by::VARCHAR AS increment,
       CASE WHEN cycle THEN 'YES' ELSE 'NO' END AS cycle_option
FROM __hati_catalog.pg.pg_sequences s
-- as PostgreSQL's: not an identity column's sequence (its internal part, deptype 'i')
WHERE NOT EXISTS (SELECT 1 FROM __hati_catalog.pg.pg_depend d
                  JOIN __hati_catalog.pg.pg_class c ON c.oid = d.objid
                  JOIN __hati_catalog.pg.pg_namespace n ON n.oid = c.relnamespace
                  WHERE d.classid = 1259 AND d.deptype = 'i'
                    AND c.relname = s.sequencename AND n.nspname = s.schemaname);

CREATE OR REPLACE VIEW __hati_catalog.info.routines AS
SELECT {{database_name}} AS specific_catalog, n.nspname AS specific_schema,
       p.proname || '_' || p.oid AS specific_name, {{database_name}} AS routine_catalog,
       n.nspname AS routine_schema, p.proname AS routine_name, 'FUNCTION' AS routine_type,
       NULL::VARCHAR AS data_type, 'SQL' AS routine_body, p.prosrc AS routine_definition,
       'SQL' AS external_language
FROM __hati_catalog.pg.pg_proc p
JOIN __hati_catalog.pg.pg_namespace n ON n.oid = p.pronamespace;

-- No SQL triggers here (CREATE TRIGGER is refused): PostgreSQL 15's columns, no rows.
-- MikroORM's schema diff reads it for every table it compares.
CREATE OR REPLACE VIEW __hati_catalog.info.triggers AS
SELECT NULL::VARCHAR AS trigger_catalog, NULL::VARCHAR AS trigger_schema,
       NULL::VARCHAR AS trigger_name, NULL::VARCHAR AS event_manipulation,
       NULL::VARCHAR AS event_object_catalog, NULL::VARCHAR AS event_object_schema,
       NULL::VARCHAR AS event_object_table, NULL::INTEGER AS action_order,
       NULL::VARCHAR AS action_condition, NULL::VARCHAR AS action_statement,
       NULL::VARCHAR AS action_orientation, NULL::VARCHAR AS action_timing,
       NULL::VARCHAR AS action_reference_old_table, NULL::VARCHAR AS action_reference_new_table,
       NULL::VARCHAR AS action_reference_old_row, NULL::VARCHAR AS action_reference_new_row,
       NULL::TIMESTAMPTZ AS created
WHERE false;

-- pgJDBC getPrimaryKeys: (information_schema._pg_expandarray(arr)).x / .n
CREATE OR REPLACE MACRO __hati_catalog.info._pg_expandarray(arr) AS
    unnest(list_transform(generate_series(1, len(arr)), k -> {'x': arr[k], 'n': k}));

-- Domains (pg_type's typtype 'd': information_schema's own and CREATE DOMAIN's) and their
-- CHECK constraints, as PostgreSQL 15 lists them.
CREATE OR REPLACE VIEW __hati_catalog.info.domains AS
SELECT {{database_name}} AS domain_catalog, n.nspname AS domain_schema, t.typname AS domain_name,
       CASE WHEN b.typcategory = 'A' THEN 'ARRAY'
            WHEN b.typnamespace <> 11 THEN 'USER-DEFINED'
            ELSE regexp_replace(__hati_catalog.pg.format_type(t.typbasetype, -1), '\(.*$', '')
       END AS data_type,
       CASE WHEN t.typbasetype IN (1043, 1042) AND t.typtypmod >= 4 THEN t.typtypmod - 4
       END::INTEGER AS character_maximum_length,
       CASE WHEN t.typbasetype IN (1043, 1042) AND t.typtypmod >= 4 THEN (t.typtypmod - 4) * 4
            WHEN t.typbasetype IN (25, 1043, 1042) THEN 1073741824 END::INTEGER
           AS character_octet_length,
       NULL::VARCHAR AS character_set_catalog, NULL::VARCHAR AS character_set_schema,
       NULL::VARCHAR AS character_set_name,
       CASE WHEN t.typcollation <> 0 THEN {{database_name}} END AS collation_catalog,
       CASE WHEN t.typcollation <> 0 THEN 'pg_catalog' END AS collation_schema,
       CASE WHEN t.typcollation <> 0 THEN 'C' END AS collation_name,
       CASE t.typbasetype WHEN 21 THEN 16 WHEN 23 THEN 32 WHEN 20 THEN 64 WHEN 700 THEN 24
            WHEN 701 THEN 53
            WHEN 1700 THEN CASE WHEN t.typtypmod >= 4 THEN (t.typtypmod - 4) >> 16 END
       END::INTEGER AS numeric_precision,
       CASE WHEN t.typbasetype = 1700 THEN 10
            WHEN t.typbasetype IN (21, 23, 20, 700, 701) THEN 2 END::INTEGER
           AS numeric_precision_radix,
       CASE WHEN t.typbasetype IN (21, 23, 20) THEN 0
            WHEN t.typbasetype = 1700 AND t.typtypmod >= 4 THEN (t.typtypmod - 4) & 65535
       END::INTEGER AS numeric_scale,
       CASE WHEN t.typbasetype IN (1082) THEN 0
            WHEN t.typbasetype IN (1083, 1114, 1184, 1266, 1186)
            THEN CASE WHEN t.typtypmod >= 0 THEN t.typtypmod ELSE 6 END END::INTEGER
           AS datetime_precision,
       NULL::VARCHAR AS interval_type, NULL::INTEGER AS interval_precision,
       t.typdefault AS domain_default, {{database_name}} AS udt_catalog,
       bn.nspname AS udt_schema, b.typname AS udt_name,
       NULL::VARCHAR AS scope_catalog, NULL::VARCHAR AS scope_schema,
       NULL::VARCHAR AS scope_name, NULL::INTEGER AS maximum_cardinality,
       '1' AS dtd_identifier
FROM __hati_catalog.pg.pg_type t
JOIN __hati_catalog.pg.pg_namespace n ON n.oid = t.typnamespace
LEFT JOIN __hati_catalog.pg.pg_type b ON b.oid = t.typbasetype
LEFT JOIN __hati_catalog.pg.pg_namespace bn ON bn.oid = b.typnamespace
WHERE t.typtype = 'd';

CREATE OR REPLACE VIEW __hati_catalog.info.domain_constraints AS
SELECT {{database_name}} AS constraint_catalog, n.nspname AS constraint_schema,
       c.conname AS constraint_name, {{database_name}} AS domain_catalog,
       tn.nspname AS domain_schema, t.typname AS domain_name,
       CASE WHEN c.condeferrable THEN 'YES' ELSE 'NO' END AS is_deferrable,
       CASE WHEN c.condeferred THEN 'YES' ELSE 'NO' END AS initially_deferred
FROM __hati_catalog.pg.pg_constraint c
JOIN __hati_catalog.pg.pg_namespace n ON n.oid = c.connamespace
JOIN __hati_catalog.pg.pg_type t ON t.oid = c.contypid
JOIN __hati_catalog.pg.pg_namespace tn ON tn.oid = t.typnamespace
WHERE c.contypid <> 0;
