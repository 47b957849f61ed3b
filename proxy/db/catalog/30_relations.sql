-- Relations (tables, views, sequences, indexes) and their columns.

-- The server's own relations in the user's schema (agent identity views, the embedding
-- cache, embedded-column registry: `_hatidata_*`; `__hati*` helpers) are system
-- relations: readable by name, never listed (like Postgres' catalogs), and neither are
-- their indexes. (Everything in hatidata_internal is left out with its schema: __hati_ns.)
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_internal_rel(schema_name, rel_name) AS
    schema_name = 'main' AND (rel_name LIKE '\_hatidata\_%' ESCAPE '\'
                              OR rel_name LIKE '\_\_hati%' ESCAPE '\');

-- A stored expression or view query as PostgreSQL reads it: the transpiler's division
-- macros back to `/` and `%`, function stand-ins to PostgreSQL's names
-- (transpiler/stored_text.py; pg_dump's output must restore into PostgreSQL).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_text(t) AS
    CASE WHEN contains(t, '__hati_') OR contains(t, 'uuid()') OR contains(t, '[])') THEN __hati_pg_sql(t) ELSE t END;

-- HNSW indexes (DuckDB's vss extension) and their metric: {{hnsw_info}} reads
-- pragma_hnsw_index_info() when vss is loaded, else it is empty (install.py).
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_hnsw AS {{hnsw_info}};

-- Indexes: DuckDB's CREATE INDEX ones plus one per PRIMARY KEY / UNIQUE constraint
-- (DuckDB keeps those internal). Synthetic OIDs: 2^30 + table_oid*1024 + 2*i (index),
-- +1 (constraint); they stay below 2^31 so int4-reading clients are safe.
-- amname: hnsw for DuckDB's HNSW indexes (pgvector's access method of that name, the
-- metric as pgvector's operator class: opclass), btree for the others (DuckDB's ART).
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_index_list AS
WITH created0 AS (
    SELECT i.index_oid::BIGINT AS indexrelid, i.table_oid::BIGINT AS indrelid,
           i.index_name, i.database_name, i.schema_name, i.table_name, i.is_unique,
           FALSE AS is_primary, NULL::BIGINT AS conoid, NULL::VARCHAR AS contype,
           list_transform(
               regexp_extract_all(i.expressions,
                   '''(?:[^'']|'''')*''|"(?:[^"]|"")*"|[^,\[\] ][^,\]]*'),
               e -> CASE WHEN e LIKE '''%''' THEN replace(e[2:-2], '''''', '''')
                         ELSE trim(e) END) AS elements,
           CASE WHEN regexp_matches(i.sql, '\sUSING\s+HNSW\s', 'i') THEN 'hnsw' ELSE 'btree' END
               AS amname,
           CASE WHEN regexp_matches(i.sql, '\sUSING\s+HNSW\s', 'i') THEN
               CASE (SELECT min(h.metric) FROM __hati_catalog.pg.__hati_hnsw h
                     WHERE h.database_name = i.database_name AND h.schema_name = i.schema_name
                       AND h.index_name = i.index_name)
                    WHEN 'cosine' THEN 'vector_cosine_ops' WHEN 'ip' THEN 'vector_ip_ops'
                    ELSE 'vector_l2_ops' END
           END AS opclass
    FROM duckdb_indexes() i
    WHERE (i.database_name = {{duck_db}} OR i.database_name = 'temp')
      AND NOT __hati_catalog.pg.__hati_internal_rel(i.schema_name, i.table_name)
), created AS (
    SELECT * REPLACE (list_transform(elements, e -> CASE WHEN regexp_full_match(e, '"(?:[^"]|"")*"')
        THEN replace(e[2:-2], '""', '"') ELSE e END) AS elements)
    FROM created0
), fromcon AS (
    SELECT (1073741824 + c.table_oid * 1024 + 2 * c.constraint_index)::BIGINT,
           c.table_oid::BIGINT,
           -- a PRIMARY KEY's name as declared or renamed: the registry's one 'p' row
           CASE WHEN c.constraint_type = 'PRIMARY KEY' THEN
                coalesce((SELECT min(r.conname) FROM {{duck_db_ident}}.main.__hati_constraints r
                          WHERE r.contype = 'p' AND r.schema_name = c.schema_name
                            AND r.table_name = c.table_name), c.table_name || '_pkey')
                ELSE coalesce((SELECT min(r.conname)
                               FROM {{duck_db_ident}}.main.__hati_constraints r
                               WHERE r.contype = 'u' AND r.schema_name = c.schema_name
                                 AND r.table_name = c.table_name
                                 AND r.expression = c.constraint_text), c.constraint_name) END,
           c.database_name, c.schema_name, c.table_name, TRUE,
           c.constraint_type = 'PRIMARY KEY',
           (1073741824 + c.table_oid * 1024 + 2 * c.constraint_index + 1)::BIGINT,
           CASE WHEN c.constraint_type = 'PRIMARY KEY' THEN 'p' ELSE 'u' END,
           c.constraint_column_names, 'btree', NULL
    FROM duckdb_constraints() c
    WHERE c.constraint_type IN ('PRIMARY KEY', 'UNIQUE')
      AND (c.database_name = {{duck_db}} OR c.database_name = 'temp')
      AND NOT __hati_catalog.pg.__hati_internal_rel(c.schema_name, c.table_name)
)
SELECT * FROM created UNION ALL SELECT * FROM fromcon;

-- __hati_index_list with each element's column number (pg_class lists indexes from
-- __hati_index_list alone: it needs no column numbers, which cost a duckdb_columns() scan)
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_index AS
WITH allidx AS (SELECT * FROM __hati_catalog.pg.__hati_index_list),
-- element -> column number (0 = an expression), keeping the element order
elems AS (
    SELECT x.indexrelid, x.indrelid, unnest(x.elements) AS element,
           generate_subscripts(x.elements, 1) AS pos
    FROM allidx x
), nums AS (
    SELECT e.indexrelid,
           list(coalesce(col.column_index, 0)::SMALLINT ORDER BY e.pos) AS attnums
    FROM elems e
    LEFT JOIN duckdb_columns() col ON col.table_oid = e.indrelid AND col.column_name = e.element
    GROUP BY e.indexrelid
)
SELECT x.*, coalesce(nums.attnums, []::SMALLINT[]) AS attnums,
       n.oid AS relnamespace, n.nspname
FROM allidx x
LEFT JOIN nums ON nums.indexrelid = x.indexrelid
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = x.database_name AND n.duck_schema = x.schema_name;

-- relchecks leaves out varchar(n) lengths (see __hati_length_limit below) and domain columns'
-- CHECKs (10_types.sql), counted in
-- DuckDB's DDL text: a second duckdb_constraints() scan would cost every pg_class query more.
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_rel AS
SELECT coalesce(co.oid, t.table_oid)::BIGINT AS oid, t.table_name AS relname, n.oid AS relnamespace,
       CASE WHEN mv.name IS NULL THEN 'r' ELSE 'm' END AS relkind, t.column_count AS relnatts,
       t.check_constraint_count - len(regexp_extract_all(t.sql,
           'CHECK\(\(length\((?:rtrim\()?(?:"(?:[^"]|"")*"|[^()"\s]+)(?:, '' ''\))?\) (?:<= \d+|>= 0)\)\)'))
       -- and a domain column's CHECK (pg_constraint lists it with the domain)
       - len(regexp_extract_all(t.sql, '''hati_domain:')) AS relchecks,
       (t.index_count > 0 OR t.has_primary_key) AS relhasindex,
       t.estimated_size AS reltuples, t.temporary, t.comment, mv.definition AS viewdef,
       n.nspname, 2::BIGINT AS relam, NULL::VARCHAR AS ownerrel,
       coalesce(mv.populated, TRUE) AS ispopulated
FROM duckdb_tables() t
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = t.database_name AND n.duck_schema = t.schema_name
-- a materialized view: a table with a row in the registry (proxy/pgserver/matviews.py)
LEFT JOIN {{duck_db_ident}}.main.__hati_matviews mv
  ON t.database_name = {{duck_db}} AND mv.schema_name = t.schema_name AND mv.name = t.table_name
-- a system catalog has PostgreSQL's OID (install.py CATALOG_OIDS): 'pg_class'::regclass = 1259
LEFT JOIN __hati_catalog.pg.__hati_catalog_oid co
  ON t.database_name = '__hati_catalog' AND t.schema_name = 'pg' AND co.relname = t.table_name
WHERE NOT (t.database_name = '__hati_catalog' AND t.table_name LIKE '\_\_hati%' ESCAPE '\')
  AND NOT __hati_catalog.pg.__hati_internal_rel(t.schema_name, t.table_name)
  -- this connection's catalog snapshots (snapshot.py) are not its temp tables
  AND NOT (t.database_name = 'temp' AND t.table_name IN ({{snapshot_names}}))
UNION ALL
SELECT coalesce(co.oid, v.view_oid), v.view_name, n.oid,
       CASE WHEN co.oid IS NULL THEN 'v' ELSE 'r' END,  -- a catalog is a table in PostgreSQL
       v.column_count, 0, FALSE, 0, v.temporary, v.comment,
       -- pg_get_viewdef: the query, without DuckDB's CREATE VIEW ... AS (pg_dump, \d+)
       __hati_catalog.pg.__hati_pg_text(coalesce(nullif(regexp_extract(v.sql,
           '(?is)^\s*CREATE\s.*?\bVIEW\s.*?\sAS\s+((SELECT|WITH|VALUES|FROM|TABLE|\().*)$', 1),
           ''), v.sql)), n.nspname, 0, NULL, TRUE
FROM duckdb_views() v
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = v.database_name AND n.duck_schema = v.schema_name
LEFT JOIN __hati_catalog.pg.__hati_catalog_oid co
  ON v.database_name = '__hati_catalog' AND v.schema_name = 'pg' AND co.relname = v.view_name
WHERE (NOT v.internal OR v.database_name = '__hati_catalog')
  -- this package's own helper views (__hati_ns, __hati_rel, ...) are not pg_catalog's
  AND NOT (v.database_name = '__hati_catalog' AND v.view_name LIKE '\_\_hati%' ESCAPE '\')
  AND NOT __hati_catalog.pg.__hati_internal_rel(v.schema_name, v.view_name)
UNION ALL
SELECT s.sequence_oid, s.sequence_name, n.oid, 'S', 3, 0, FALSE, 1, s.temporary, s.comment,
       NULL, n.nspname, 0, NULL, TRUE
FROM duckdb_sequences() s
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = s.database_name AND n.duck_schema = s.schema_name
WHERE NOT __hati_catalog.pg.__hati_internal_rel(s.schema_name, s.sequence_name)
UNION ALL
SELECT i.indexrelid, i.index_name, n.oid, 'i', len(i.elements), 0, FALSE, 0,
       FALSE, NULL, NULL, n.nspname, CASE i.amname WHEN 'hnsw' THEN 13581 ELSE 403 END,
       i.table_name,  -- an index is owned by its table's owner, as in PostgreSQL
       TRUE
FROM __hati_catalog.pg.__hati_index_list i
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = i.database_name AND n.duck_schema = i.schema_name;

-- Tables on either side of a FOREIGN KEY (DuckDB's or the server's): PostgreSQL carries
-- foreign keys out with triggers, so relhastriggers is true on both, and psql's and
-- pgcli's \d show "Foreign-key constraints" / "Referenced by" only when it is.
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_fk_rel AS
SELECT database_name AS duck_db, schema_name AS duck_schema, table_name
FROM duckdb_constraints() WHERE constraint_type = 'FOREIGN KEY'
UNION
SELECT database_name, schema_name, referenced_table
FROM duckdb_constraints() WHERE constraint_type = 'FOREIGN KEY'
UNION
SELECT {{duck_db}}, schema_name, table_name FROM {{duck_db_ident}}.main.__hati_constraints
WHERE contype = 'f'
UNION
SELECT {{duck_db}}, ref_schema, ref_table FROM {{duck_db_ident}}.main.__hati_constraints
WHERE contype = 'f';

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_class AS
SELECT r.oid, r.relname, r.relnamespace, 0::BIGINT AS reltype, 0::BIGINT AS reloftype,
       coalesce(ow.owner_oid, 10)::BIGINT AS relowner,
       r.relam,
       r.oid AS relfilenode, 0::BIGINT AS reltablespace, 0::INTEGER AS relpages,
       CAST(r.reltuples AS REAL) AS reltuples, 0::INTEGER AS relallvisible,
       0::BIGINT AS reltoastrelid, r.relhasindex, FALSE AS relisshared,
       CASE WHEN r.temporary THEN 't' ELSE 'p' END AS relpersistence, r.relkind,
       r.relnatts::SMALLINT AS relnatts, r.relchecks::SMALLINT AS relchecks,
       FALSE AS relhasrules,
       (r.relkind = 'r' AND EXISTS (
           SELECT 1 FROM __hati_catalog.pg.__hati_fk_rel f
           JOIN __hati_catalog.pg.__hati_ns fn
             ON fn.duck_db = f.duck_db AND fn.duck_schema = f.duck_schema
           WHERE fn.oid = r.relnamespace AND f.table_name = r.relname)
        OR EXISTS (SELECT 1 FROM {{duck_db_ident}}.main.__hati_triggers tr JOIN __hati_catalog.pg.__hati_ns
                   tn ON tn.duck_db = {{duck_db}} AND tn.duck_schema = tr.schema_name
                   WHERE tn.oid = r.relnamespace AND tr.table_name = r.relname)) AS relhastriggers,
       FALSE AS relhassubclass,
       FALSE AS relrowsecurity, FALSE AS relforcerowsecurity, r.ispopulated AS relispopulated,
       'd' AS relreplident, FALSE AS relispartition, 0::BIGINT AS relrewrite,
       0::BIGINT AS relfrozenxid, 0::BIGINT AS relminmxid, NULL::VARCHAR[] AS relacl,
       NULL::VARCHAR[] AS reloptions, NULL::VARCHAR AS relpartbound
FROM __hati_catalog.pg.__hati_rel r
LEFT JOIN __hati_catalog.pg.__hati_owners ow
  ON ow.nspname = r.nspname AND ow.name = lower(coalesce(r.ownerrel, r.relname))
 AND ow.class = CASE r.relkind WHEN 'S' THEN 'sequence' ELSE 'relation' END;

-- varchar(n): the transpiler creates such a column as VARCHAR CHECK (length(col) <= n)
-- (transpiler/varchar_length.py); DuckDB keeps, copies and enforces that constraint, and
-- the length is read back from it. char(n) is VARCHAR CHECK (length(rtrim(col, ' ')) <= n),
-- an unsized varchar VARCHAR CHECK (length(col) >= 0) (it records the word only).
-- __hati_length_limit: n when `expr` (a CHECK's duckdb_constraints().expression) is exactly
-- one of those forms on column `col` (0: the unsized varchar), else NULL.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_length_limit(expr, col) AS
    CASE WHEN lower(regexp_extract(
                  expr, '^\(length\((?:rtrim\((.+), '' ''\)|(.+))\) (?:<= \d+|>= 0)\)$', ['a', 'b']).a
                  || regexp_extract(
                  expr, '^\(length\((?:rtrim\((.+), '' ''\)|(.+))\) (?:<= \d+|>= 0)\)$', ['a', 'b']).b)
              IN (lower(col), lower('"' || replace(col, '"', '""') || '"'))
              AND (expr LIKE '(length(rtrim(%) <= %' OR expr NOT LIKE '(length(rtrim(%')
         THEN coalesce(TRY_CAST(regexp_extract(expr, ' <= (\d+)\)$', 1) AS INTEGER), 0) END;

-- One row per such constraint: table, attnum, n, the type (1043 varchar, 1042 bpchar) and
-- its typmod (the column's type is not checked here: pg_attribute applies it to VARCHAR
-- columns only).
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_varchar_len AS
SELECT k.table_oid, k.attnum, k.n,
       CASE WHEN k.expression LIKE '(length(rtrim(%' THEN 1042 ELSE 1043 END::BIGINT AS typid,
       CASE WHEN k.n = 0 THEN -1 ELSE k.n + 4 END::INTEGER AS typmod
FROM (SELECT c.table_oid::BIGINT AS table_oid,
             (c.constraint_column_indexes[1] + 1)::BIGINT AS attnum, c.expression,
             __hati_catalog.pg.__hati_length_limit(c.expression, c.constraint_column_names[1])
                 AS n
      FROM duckdb_constraints() c
      WHERE c.constraint_type = 'CHECK' AND len(c.constraint_column_indexes) = 1
        AND c.expression LIKE '(length(%') k
WHERE k.n IS NOT NULL;

-- A table column's declared character type: (type oid, typmod) of its least one; a view's
-- column read plainly from such a column: the registry's (proxy/pgserver/view_types.py),
-- while the view keeps the SQL it was recorded with.
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_char_cols AS
SELECT table_oid, attnum, arg_min(typid, n) AS typid, arg_min(typmod, n) AS typmod,
       min(n) AS n
FROM __hati_catalog.pg.__hati_varchar_len GROUP BY table_oid, attnum
UNION ALL
SELECT v.view_oid::BIGINT, r.attnum, r.typid,
       CASE WHEN r.n = 0 THEN -1 ELSE r.n + 4 END::INTEGER, r.n
FROM {{duck_db_ident}}.main.__hati_view_types r
JOIN duckdb_views() v ON v.database_name = {{duck_db}} AND v.schema_name = r.schema_name
 AND v.view_name = r.view_name AND v.sql = r.view_sql;

-- `DEFAULT NULL` (Piccolo writes it for a nullable column): PostgreSQL stores no default.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_null_default(expr) AS
    expr = 'NULL' OR regexp_full_match(expr, 'CAST\(NULL AS [A-Z0-9_ ]+(\([0-9, ]+\))?(\[\])*\)');

-- A column default as PostgreSQL shows it: DuckDB keeps a serial column's default as
-- nextval('t_id_seq'); PostgreSQL says nextval('t_id_seq'::regclass) (SQLAlchemy and
-- pg_dump read it so; a sequence in public, DuckDB's main, unqualified as there); the boolean constants DuckDB keeps as CAST('t' AS BOOLEAN) are
-- true / false (drizzle-kit compares them with its schema's defaults); a string constant
-- is coerced to the column's type, named `shown` ('{}'::jsonb, 'x'::character varying:
-- __hati_type_shown), where ActiveRecord reads a default's value from ('x' alone is no
-- constant to it); none for a NULL.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_default(expr, shown) AS
    CASE WHEN __hati_catalog.pg.__hati_null_default(expr) THEN NULL
         WHEN expr = 'CAST(''t'' AS BOOLEAN)' THEN 'true'
         WHEN expr = 'CAST(''f'' AS BOOLEAN)' THEN 'false'
         WHEN shown IS NOT NULL AND regexp_full_match(expr, '''(?:[^'']|'''')*''')
             THEN expr || '::' || shown
         -- '{}'::jsonb, kept by DuckDB as CAST('{}' AS "JSON") (arrays: __hati_pg_text)
         WHEN shown IS NOT NULL AND regexp_full_match(expr, 'CAST\(''(?:[^'']|'''')*'' AS [\w" ]+\)')
             THEN regexp_extract(expr, '^CAST\((''.*'') AS [\w" ]+\)$', 1) || '::' || shown
         ELSE __hati_catalog.pg.__hati_pg_text(
                  regexp_replace(expr, '^nextval\(''(?:main\.)?([^'']*)''\)$', 'nextval(''\1''::regclass)'))
    END;

-- A table column's type oid: a JSON column is jsonb, as its values are in results
-- (proxy/pgserver/result_shape.py; DuckDB does not keep which of json / jsonb it was
-- declared as, and jsonb is what ORMs and vector stores declare).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_column_type_oid(dt) AS
    CASE dt WHEN 'JSON' THEN 3802 WHEN 'JSON[]' THEN 3807
            ELSE __hati_catalog.pg.__hati_type_oid(dt) END;

-- An enum column's default as PostgreSQL shows it too: 'draft'::mood, 'draft'::app.status.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_column_default(expr, shown, dt) AS
    __hati_catalog.pg.__hati_pg_default(expr, coalesce(shown, CASE WHEN dt LIKE 'ENUM(%'
        THEN __hati_catalog.pg.format_type(__hati_catalog.pg.__hati_column_type_oid(dt), NULL) END));

-- A generated column (`GENERATED ALWAYS AS (...) STORED`, virtual in DuckDB): DuckDB lists
-- its expression as the column's default and tells them apart only in the table's SQL,
-- `name TYPE GENERATED ALWAYS AS(...)`.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_is_generated(table_sql, col) AS
    regexp_matches(table_sql, '[(,] ?"?' || regexp_escape(replace(col, '"', '""'))
                   || '"? [A-Z][A-Z0-9_ ]*(\([0-9, ]+\))?(\[[0-9]*\])* GENERATED ALWAYS AS\(', 'i');

-- Identity columns, 'a' ALWAYS / 'd' BY DEFAULT: the server's registry
-- (proxy/pgserver/identity_ddl.py); `start` is the START WITH when the sequence was made
-- again from another value (SET INCREMENT BY), else NULL.
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_identity_cols AS
SELECT schema_name, table_name, columns[1] AS column_name, expression AS kind,
       on_delete AS start
FROM {{duck_db_ident}}.main.__hati_constraints WHERE contype = 'i';

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_attribute AS
SELECT c.table_oid::BIGINT AS attrelid, c.column_name AS attname,
       CASE WHEN dom.oid IS NOT NULL THEN dom.oid WHEN vl.n IS NOT NULL THEN vl.typid
            ELSE __hati_catalog.pg.__hati_column_type_oid(c.data_type) END::BIGINT AS atttypid,
       -1::INTEGER AS attstattarget,
       coalesce((SELECT t.typlen FROM __hati_catalog.pg.pg_type t
                 WHERE t.oid = __hati_catalog.pg.__hati_column_type_oid(c.data_type)), -1)::SMALLINT
           AS attlen,
       c.column_index::SMALLINT AS attnum,
       __hati_catalog.pg.__hati_type_ndims(c.data_type)::INTEGER AS attndims,
       -1::INTEGER AS attcacheoff,
       CASE WHEN dom.oid IS NOT NULL THEN -1
            ELSE CASE WHEN vl.n IS NOT NULL THEN vl.typmod ELSE __hati_catalog.pg.__hati_type_mod(c.data_type) END END::INTEGER
           AS atttypmod,
       FALSE AS attbyval, 'i' AS attalign,
       -- the type's own storage: pg_dump writes SET STORAGE for any other
       coalesce((SELECT t.typstorage FROM __hati_catalog.pg.pg_type t
                 WHERE t.oid = CASE WHEN vl.n IS NOT NULL THEN vl.typid
                                    ELSE __hati_catalog.pg.__hati_column_type_oid(c.data_type) END),
                'p') AS attstorage, '' AS attcompression,
       -- an identity column's default is its sequence, not a default (no pg_attrdef row)
       NOT c.is_nullable AS attnotnull,
       c.column_default IS NOT NULL AND NOT __hati_catalog.pg.__hati_null_default(c.column_default)
           AND idn.kind IS NULL AND c.column_default IS DISTINCT FROM dom.default_duck
           AS atthasdef,
       FALSE AS atthasmissing, coalesce(idn.kind, '') AS attidentity,
       CASE WHEN g.sql IS NOT NULL AND c.column_default IS NOT NULL
                 AND __hati_catalog.pg.__hati_is_generated(g.sql, c.column_name)
            THEN 's' ELSE '' END AS attgenerated,
       FALSE AS attisdropped, TRUE AS attislocal, 0::INTEGER AS attinhcount,
       CASE WHEN vl.n IS NOT NULL OR __hati_catalog.pg.__hati_column_type_oid(c.data_type) IN (25, 1009)
            THEN 100 ELSE 0 END::BIGINT AS attcollation,
       NULL::VARCHAR[] AS attacl, NULL::VARCHAR[] AS attoptions,
       NULL::VARCHAR[] AS attfdwoptions, NULL::VARCHAR AS attmissingval,
       c.data_type AS __hati_duck_type,
       -- (an identity column's too: information_schema finds its sequence by it)
       -- (a domain's default, which a column of it got, is the domain's: none here)
       CASE WHEN c.column_default IS DISTINCT FROM dom.default_duck
            THEN __hati_catalog.pg.__hati_column_default(c.column_default, ts.shown, c.data_type) END
           AS __hati_default,
       c.comment AS __hati_comment, idn.start AS __hati_identity_start
FROM duckdb_columns() c
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = c.database_name AND n.duck_schema = c.schema_name
LEFT JOIN __hati_catalog.pg.__hati_char_cols vl
  ON vl.table_oid = c.table_oid AND vl.attnum = c.column_index AND c.data_type = 'VARCHAR'
LEFT JOIN __hati_catalog.pg.__hati_type_shown ts
  ON ts.oid = CASE WHEN vl.n IS NOT NULL THEN vl.typid
                   ELSE __hati_catalog.pg.__hati_column_type_oid(c.data_type) END
LEFT JOIN __hati_catalog.pg.__hati_domain_cols dom
  ON dom.table_oid = c.table_oid AND dom.column_name = c.column_name
LEFT JOIN (SELECT table_oid, sql FROM duckdb_tables() WHERE sql LIKE '%GENERATED ALWAYS AS(%') g
  ON g.table_oid = c.table_oid
LEFT JOIN __hati_catalog.pg.__hati_identity_cols idn
  ON c.database_name = {{duck_db}} AND idn.schema_name = c.schema_name
 AND idn.table_name = c.table_name AND idn.column_name = c.column_name
WHERE NOT (c.database_name = 'temp' AND c.table_name IN ({{snapshot_names}}))
UNION ALL
-- index columns (psql \d on an index, SQLAlchemy get_indexes), typmod as the table's column
SELECT i.indexrelid, coalesce(a.column_name, i.element),
       coalesce(__hati_catalog.pg.__hati_column_type_oid(a.data_type), 25), -1, -1, i.k::SMALLINT, 0,
       -1, coalesce(__hati_catalog.pg.__hati_type_mod(a.data_type), -1), FALSE, 'i', 'p', '', FALSE, FALSE, FALSE, '', '', FALSE, TRUE, 0, 0,
       NULL, NULL, NULL, NULL, a.data_type, NULL, NULL, NULL
FROM (SELECT indexrelid, indrelid, unnest(elements) AS element, unnest(attnums) AS attnum,
             generate_subscripts(elements, 1) AS k
      FROM __hati_catalog.pg.__hati_index) i
LEFT JOIN duckdb_columns() a ON a.table_oid = i.indrelid AND a.column_index = i.attnum;

-- Straight from duckdb_columns(): the rows of pg_attribute with a default, without the
-- type lookups pg_attribute makes for every column (but varchar(n)'s, for a string's cast).
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_attrdef AS
SELECT (1610612736 + c.table_oid * 1024 + c.column_index)::BIGINT AS oid,
       c.table_oid::BIGINT AS adrelid, c.column_index::SMALLINT AS adnum,
       __hati_catalog.pg.__hati_column_default(c.column_default, ts.shown, c.data_type) AS adbin
FROM duckdb_columns() c
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = c.database_name AND n.duck_schema = c.schema_name
LEFT JOIN __hati_catalog.pg.__hati_char_cols vl
  ON vl.table_oid = c.table_oid AND vl.attnum = c.column_index AND c.data_type = 'VARCHAR'
LEFT JOIN __hati_catalog.pg.__hati_type_shown ts
  ON ts.oid = CASE WHEN vl.n IS NOT NULL THEN vl.typid
                   ELSE __hati_catalog.pg.__hati_column_type_oid(c.data_type) END
WHERE c.column_default IS NOT NULL AND NOT __hati_catalog.pg.__hati_null_default(c.column_default)
  AND NOT EXISTS (SELECT 1 FROM __hati_catalog.pg.__hati_identity_cols idn
                  WHERE c.database_name = {{duck_db}} AND idn.schema_name = c.schema_name
                    AND idn.table_name = c.table_name AND idn.column_name = c.column_name)
  AND NOT EXISTS (SELECT 1 FROM __hati_catalog.pg.__hati_domain_cols d
                  WHERE d.table_oid = c.table_oid AND d.column_name = c.column_name
                    AND d.default_duck = c.column_default);

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_index AS
SELECT indexrelid, indrelid, len(attnums)::SMALLINT AS indnatts,
       len(attnums)::SMALLINT AS indnkeyatts, is_unique AS indisunique,
       FALSE AS indnullsnotdistinct, is_primary AS indisprimary, FALSE AS indisexclusion,
       TRUE AS indimmediate, FALSE AS indisclustered, TRUE AS indisvalid,
       FALSE AS indcheckxmin, TRUE AS indisready, TRUE AS indislive,
       -- int2vector as USMALLINT[], oidvector as UINTEGER[] (proxy/wire/oidvectors.py): lists
       -- here (unnest, ANY, generate_subscripts), PostgreSQL's '1 3' text on the wire,
       -- which pg_dump parses and SQLAlchemy splits (indoption).
       FALSE AS indisreplident, attnums::USMALLINT[] AS indkey,
       list_transform(attnums, a -> 0)::UINTEGER[] AS indcollation,
       -- each key column's default operator class (pg_opclass: 2^28 + the type's oid)
       coalesce(cl.classes, list_transform(attnums, a -> 0))::UINTEGER[] AS indclass,
       list_transform(attnums, a -> 0)::USMALLINT[] AS indoption,
       CASE WHEN list_contains(attnums, 0)
            THEN array_to_string(list_filter(elements, (e, k) -> attnums[k] = 0), ', ')
       END AS indexprs,
       NULL::VARCHAR AS indpred
FROM __hati_catalog.pg.__hati_index
LEFT JOIN (SELECT k.indexrelid,
                  list(268435456 + coalesce(__hati_catalog.pg.__hati_column_type_oid(c.data_type), 25)
                       ORDER BY k.pos) AS classes
           FROM (SELECT indexrelid, indrelid, unnest(attnums) AS attnum,
                        generate_subscripts(attnums, 1) AS pos
                 FROM __hati_catalog.pg.__hati_index) k
           LEFT JOIN duckdb_columns() c
             ON c.table_oid = k.indrelid AND c.column_index = k.attnum
           GROUP BY k.indexrelid) cl USING (indexrelid);
