-- pg_constraint: DuckDB's constraints, the server's registries' (foreign keys, UNIQUEs
-- added by ALTER TABLE) and the domains' CHECKs (10_types.sql). (Split from
-- 30_relations.sql, whose relations it reads.)

-- A foreign key's conindid: the referenced table's unique index over exactly the
-- referenced columns (its primary key first), as PostgreSQL records it; pgJDBC's
-- getImportedKeys / getExportedKeys join pg_class on it for PK_NAME.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_key_index(rel, cols) AS
    coalesce((SELECT arg_min(x.indexrelid, (NOT x.is_primary, x.indexrelid))
              FROM __hati_catalog.pg.__hati_index_list x
              WHERE x.indrelid = rel AND x.is_unique
                AND list_sort(x.elements) = list_sort(cols)), 0);

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_constraint AS
WITH con AS (
    SELECT c.*, n.oid AS nsoid,
           (1073741824 + c.table_oid * 1024 + 2 * c.constraint_index)::BIGINT AS idxoid
    FROM duckdb_constraints() c
    JOIN __hati_catalog.pg.__hati_ns n
      ON n.duck_db = c.database_name AND n.duck_schema = c.schema_name
    WHERE c.constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY', 'CHECK')
      -- A varchar(n) / char(n) length (or varchar's word) is the column's type (atttypmod), not a constraint. (The
      -- column's type is not looked up here: a scan of duckdb_columns() would cost more
      -- than the rest; a CHECK of exactly this form on a list column is the price.)
      AND NOT (c.constraint_type = 'CHECK' AND len(c.constraint_column_indexes) = 1
               AND c.expression LIKE '(length(%)'
               AND __hati_catalog.pg.__hati_length_limit(c.expression,
                                                         c.constraint_column_names[1])
                   IS NOT NULL)
      -- a domain column's CHECK is its type's (10_types.sql __hati_domain_cols)
      AND NOT starts_with(coalesce(c.expression, ''), 'CASE  WHEN ((''hati_domain:')
)
SELECT idxoid + 1 AS oid,
       CASE WHEN constraint_type = 'PRIMARY KEY' THEN
                coalesce((SELECT min(r.conname) FROM {{duck_db_ident}}.main.__hati_constraints r
                          WHERE r.contype = 'p' AND r.schema_name = con.schema_name
                            AND r.table_name = con.table_name), table_name || '_pkey')
            -- a CHECK's name as declared: kept by the server (proxy/pgserver/constraint_ddl.py)
            ELSE coalesce((SELECT min(r.conname) FROM {{duck_db_ident}}.main.__hati_constraints r
                           WHERE r.contype IN ('c', 'u') AND r.schema_name = con.schema_name
                             AND r.table_name = con.table_name
                             AND r.expression = con.constraint_text
                             AND con.constraint_type IN ('CHECK', 'UNIQUE')),
                          constraint_name) END AS conname,
       nsoid AS connamespace,
       CASE constraint_type WHEN 'PRIMARY KEY' THEN 'p' WHEN 'UNIQUE' THEN 'u'
            WHEN 'FOREIGN KEY' THEN 'f' ELSE 'c' END AS contype,
       FALSE AS condeferrable, FALSE AS condeferred, TRUE AS convalidated,
       table_oid::BIGINT AS conrelid, 0::BIGINT AS contypid,
       CASE WHEN constraint_type IN ('PRIMARY KEY', 'UNIQUE') THEN idxoid
            WHEN constraint_type = 'FOREIGN KEY' THEN __hati_catalog.pg.__hati_key_index(
                (SELECT t.table_oid FROM duckdb_tables() t
                 WHERE t.database_name = con.database_name AND t.schema_name = con.schema_name
                   AND t.table_name = con.referenced_table), referenced_column_names)
            ELSE 0 END::BIGINT AS conindid,
       0::BIGINT AS conparentid,
       coalesce((SELECT t.table_oid FROM duckdb_tables() t
                 WHERE t.database_name = con.database_name AND t.schema_name = con.schema_name
                   AND t.table_name = con.referenced_table), 0)::BIGINT AS confrelid,
       -- a foreign key's actions; ' ' for the other kinds, as PostgreSQL has them
       CASE WHEN constraint_type = 'FOREIGN KEY' THEN 'a' ELSE ' ' END AS confupdtype,
       CASE WHEN constraint_type = 'FOREIGN KEY' THEN 'a' ELSE ' ' END AS confdeltype,
       CASE WHEN constraint_type = 'FOREIGN KEY' THEN 's' ELSE ' ' END AS confmatchtype,
       TRUE AS conislocal, 0::INTEGER AS coninhcount, TRUE AS connoinherit,
       list_transform(constraint_column_indexes, i -> (i + 1)::SMALLINT) AS conkey,
       (SELECT list(col.column_index::SMALLINT ORDER BY r.pos)
        FROM (SELECT unnest(con.referenced_column_names) AS name,
                     generate_subscripts(con.referenced_column_names, 1) AS pos) r
        JOIN duckdb_columns() col
          ON col.database_name = con.database_name AND col.schema_name = con.schema_name
         AND col.table_name = con.referenced_table AND col.column_name = r.name
        WHERE con.constraint_type = 'FOREIGN KEY') AS confkey,
       NULL::BIGINT[] AS conpfeqop, NULL::BIGINT[] AS conppeqop, NULL::BIGINT[] AS conffeqop,
       NULL::BIGINT[] AS confdelsetcols, NULL::BIGINT[] AS conexclop,
       expression AS conbin,
       CASE constraint_type
           WHEN 'PRIMARY KEY' THEN 'PRIMARY KEY (' || array_to_string(constraint_column_names, ', ') || ')'
           WHEN 'UNIQUE' THEN 'UNIQUE (' || array_to_string(constraint_column_names, ', ') || ')'
           WHEN 'FOREIGN KEY' THEN 'FOREIGN KEY (' || array_to_string(constraint_column_names, ', ')
               || ') REFERENCES ' || referenced_table || '('
               || array_to_string(referenced_column_names, ', ') || ')'
           ELSE 'CHECK (' || __hati_catalog.pg.__hati_pg_text(expression) || ')' END AS __hati_def
FROM con
UNION ALL
-- FOREIGN KEYs the server keeps and enforces (proxy/pgserver/foreign_keys.py). OIDs after
-- the table's DuckDB constraints: 2^30 + table_oid*1024 + 2*(256 + n) + 1.
SELECT (1073741824 + t.table_oid * 1024
        + 2 * (256 + row_number() OVER (PARTITION BY t.table_oid ORDER BY r.conname)) + 1)::BIGINT,
       r.conname, n.oid, 'f', r."deferrable", r.deferred, TRUE,
       t.table_oid::BIGINT, 0::BIGINT,
       __hati_catalog.pg.__hati_key_index(p.table_oid, r.ref_columns)::BIGINT, 0::BIGINT,
       p.table_oid::BIGINT, r.on_update, r.on_delete, 's', TRUE, 0::INTEGER, TRUE,
       (SELECT list(col.column_index::SMALLINT ORDER BY k.pos)
        FROM (SELECT unnest(r.columns) AS name, generate_subscripts(r.columns, 1) AS pos) k
        JOIN duckdb_columns() col ON col.table_oid = t.table_oid AND col.column_name = k.name),
       (SELECT list(col.column_index::SMALLINT ORDER BY k.pos)
        FROM (SELECT unnest(r.ref_columns) AS name, generate_subscripts(r.ref_columns, 1) AS pos) k
        JOIN duckdb_columns() col ON col.table_oid = p.table_oid AND col.column_name = k.name),
       NULL::BIGINT[], NULL::BIGINT[], NULL::BIGINT[], NULL::BIGINT[], NULL::BIGINT[], NULL,
       'FOREIGN KEY (' || array_to_string(r.columns, ', ') || ') REFERENCES '
           -- qualified outside the default schema, as pg_get_constraintdef does when the
           -- table is not on the search path
           || CASE WHEN r.ref_schema <> 'main' THEN r.ref_schema || '.' ELSE '' END
           || r.ref_table || '(' || array_to_string(r.ref_columns, ', ') || ')'
           || CASE r.on_update WHEN 'c' THEN ' ON UPDATE CASCADE' WHEN 'n' THEN ' ON UPDATE SET NULL'
                  WHEN 'd' THEN ' ON UPDATE SET DEFAULT' WHEN 'r' THEN ' ON UPDATE RESTRICT' ELSE '' END
           || CASE r.on_delete WHEN 'c' THEN ' ON DELETE CASCADE' WHEN 'n' THEN ' ON DELETE SET NULL'
                  WHEN 'd' THEN ' ON DELETE SET DEFAULT' WHEN 'r' THEN ' ON DELETE RESTRICT' ELSE '' END
           || CASE WHEN r.deferred THEN ' DEFERRABLE INITIALLY DEFERRED'
                   WHEN r."deferrable" THEN ' DEFERRABLE' ELSE '' END
FROM {{duck_db_ident}}.main.__hati_constraints r
JOIN duckdb_tables() t
  ON t.database_name = {{duck_db}} AND t.schema_name = r.schema_name AND t.table_name = r.table_name
JOIN duckdb_tables() p
  ON p.database_name = {{duck_db}} AND p.schema_name = r.ref_schema AND p.table_name = r.ref_table
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = t.database_name AND n.duck_schema = t.schema_name
WHERE r.contype = 'f'
UNION ALL
-- UNIQUE constraints added by ALTER TABLE: a unique index of the constraint's name.
SELECT (1073741824 + t.table_oid * 1024
        + 2 * (384 + row_number() OVER (PARTITION BY t.table_oid ORDER BY r.conname)) + 1)::BIGINT,
       r.conname, n.oid, 'u', FALSE, FALSE, TRUE,
       t.table_oid::BIGINT, 0::BIGINT, i.index_oid::BIGINT, 0::BIGINT, 0::BIGINT,
       ' ', ' ', ' ', TRUE, 0::INTEGER, TRUE,
       (SELECT list(col.column_index::SMALLINT ORDER BY k.pos)
        FROM (SELECT unnest(r.columns) AS name, generate_subscripts(r.columns, 1) AS pos) k
        JOIN duckdb_columns() col ON col.table_oid = t.table_oid AND col.column_name = k.name),
       NULL::SMALLINT[],
       NULL::BIGINT[], NULL::BIGINT[], NULL::BIGINT[], NULL::BIGINT[], NULL::BIGINT[], NULL,
       'UNIQUE (' || array_to_string(r.columns, ', ') || ')'
FROM {{duck_db_ident}}.main.__hati_constraints r
JOIN duckdb_tables() t
  ON t.database_name = {{duck_db}} AND t.schema_name = r.schema_name AND t.table_name = r.table_name
JOIN duckdb_indexes() i ON i.table_oid = t.table_oid AND i.index_name = r.conname
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = t.database_name AND n.duck_schema = t.schema_name
WHERE r.contype = 'u' AND r.expression IS NULL
UNION ALL
-- The CHECKs of information_schema's domains (10_types.sql), as in PostgreSQL 15.
SELECT oid, conname, 13000, 'c', FALSE, FALSE, TRUE, 0::BIGINT, contypid, 0::BIGINT,
       0::BIGINT, 0::BIGINT, ' ', ' ', ' ', TRUE, 0::INTEGER, FALSE, NULL::SMALLINT[],
       NULL::SMALLINT[], NULL::BIGINT[], NULL::BIGINT[], NULL::BIGINT[], NULL::BIGINT[],
       NULL::BIGINT[], NULL, def
FROM (VALUES (13222::BIGINT, 'cardinal_number_domain_check', 13221::BIGINT,
              'CHECK ((VALUE >= 0))'),
             (13235, 'yes_or_no_check', 13234,
              'CHECK ((VALUE::text = ANY (ARRAY[''YES''::character varying, '
              || '''NO''::character varying]::text[])))')) v(oid, conname, contypid, def)
UNION ALL
SELECT * FROM __hati_catalog.pg.__hati_domain_constraints;
