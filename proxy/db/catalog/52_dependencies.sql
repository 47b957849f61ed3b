-- pg_rewrite and pg_depend: what pg_dump orders objects by.

-- A view's (or materialized view's) ON SELECT rule (_RETURN), as PostgreSQL keeps one per
-- view; pg_dump sorts a view after what its rule depends on (pg_depend below).
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_rewrite AS
SELECT (1342177280 + r.oid)::BIGINT AS oid, '_RETURN' AS rulename, r.oid AS ev_class,
       '1' AS ev_type, 'O' AS ev_enabled, TRUE AS is_instead, NULL::VARCHAR AS ev_qual,
       NULL::VARCHAR AS ev_action
FROM __hati_catalog.pg.__hati_rel r WHERE r.relkind IN ('v', 'm') AND r.relnamespace NOT IN (11, 13000);

-- Dependencies: the built-in extensions' members (deptype 'e'), so that pg_dump, which
-- leaves out extensions made at initdb, leaves out their types and functions as well:
-- pgvector's types belong to vector, hatiproxy's own functions to hatiproxy.
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_depend AS
SELECT * FROM (VALUES (1247::BIGINT, 16400::BIGINT, 0, 3079::BIGINT, 13578::BIGINT, 0, 'e'),
                      (1247, 16405, 0, 3079, 13578, 0, 'e'),
                      (2601, 13581, 0, 3079, 13578, 0, 'e'),
                      -- plpgsql: its language and handler functions (40_system.sql)
                      (1255, 13573, 0, 3079, 13577, 0, 'e'), (1255, 13574, 0, 3079, 13577, 0, 'e'),
                      (1255, 13575, 0, 3079, 13577, 0, 'e'), (2612, 13576, 0, 3079, 13577, 0, 'e'))
    v(classid, objid, objsubid, refclassid, refobjid, refobjsubid, deptype)
UNION ALL
SELECT 1255, h.oid, 0, 3079, 13580, 0, 'e' FROM __hati_catalog.pg.__hati_functions h
UNION ALL
-- A column default drawing from a sequence depends on it ('n'); a serial column's sequence
-- (<table>_<column>_seq, transpiler/serial_columns.py) is owned by the column ('a'), so
-- pg_dump creates the table, then the sequence OWNED BY the column, then the default. An
-- identity column's sequence is its internal part ('i', no default): pg_dump writes ALTER
-- TABLE ... ADD GENERATED ... AS IDENTITY for it.
SELECT * FROM (
    SELECT unnest([
        {'classid': 2604::BIGINT,
         'objid': (1610612736 + d.table_oid * 1024 + d.column_index)::BIGINT,
         'objsubid': 0, 'refclassid': 1259::BIGINT, 'refobjid': s.sequence_oid::BIGINT,
         'refobjsubid': 0, 'deptype': CASE WHEN idn.kind IS NULL THEN 'n' END},
        {'classid': 1259, 'objid': s.sequence_oid, 'objsubid': 0, 'refclassid': 1259,
         'refobjid': d.table_oid, 'refobjsubid': d.column_index,
         'deptype': CASE WHEN idn.kind IS NOT NULL THEN 'i'
                         WHEN lower(s.sequence_name)
                              = lower(d.table_name || '_' || d.column_name || '_seq')
                         THEN 'a' END}], recursive := true)
    FROM duckdb_columns() d
    LEFT JOIN __hati_catalog.pg.__hati_identity_cols idn
      ON d.database_name = {{duck_db}} AND idn.schema_name = d.schema_name
     AND idn.table_name = d.table_name AND idn.column_name = d.column_name
    JOIN duckdb_sequences() s
      ON s.database_name = d.database_name
     AND s.sequence_name = regexp_extract(d.column_default,
             '^nextval\(''(?:"?[^''".]+"?\.)?"?([^''".]+)"?''', 1)
     AND (s.schema_name = d.schema_name OR NOT contains(d.column_default, '.'))
    WHERE d.column_default LIKE 'nextval(%'
) WHERE deptype IS NOT NULL
UNION ALL
-- A view's rule depends on the relations its query reads ('n', from DuckDB's parse of the
-- query): pg_dump orders views after them. PostgreSQL's 'i' row (rule -> its view) is left
-- out on purpose: with it, dbt learns that DROP ... CASCADE of a view drops the views
-- reading it, which DuckDB does not do, and dbt's rename dance then collides.
SELECT 2618, (1342177280 + v.oid)::BIGINT, 0, 1259, t.oid, 0, 'n'
FROM (SELECT oid, relnamespace, unnest(regexp_extract_all(json_serialize_sql(viewdef),
                                          '"table_name":"([^"]*)"', 1)) AS ref
      FROM __hati_catalog.pg.__hati_rel
      WHERE relkind IN ('v', 'm') AND relnamespace NOT IN (11, 13000)) v
JOIN __hati_catalog.pg.__hati_rel t
  ON t.relname = v.ref AND t.relkind IN ('r', 'v', 'm') AND t.relnamespace NOT IN (11, 13000)
     AND t.oid <> v.oid;
