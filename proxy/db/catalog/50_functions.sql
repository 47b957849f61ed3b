-- Functions clients call in catalog queries, as DuckDB macros. Each qualifies every
-- table it reads, so a user table named like a catalog never changes its answer.

-- format_type: 10_types.sql (column defaults in 30_relations.sql read it).

-- hatiproxy's own SQL functions, which DuckDB does not know as functions (the transpiler
-- and the server answer them): semantic SQL and hatiproxy_embed_column
-- (85_server_functions.sql) and the agent functions (proxy.db.catalog.functions, from the
-- registry). As declared: types are DuckDB type names ('ANY': anyelement), a default is
-- a SQL literal; result_names NULL: a scalar function of result_types[1].
CREATE OR REPLACE TABLE __hati_catalog.pg.__hati_function_decl (
    name VARCHAR, arg_names VARCHAR[], arg_types VARCHAR[], arg_defaults VARCHAR[],
    result_names VARCHAR[], result_types VARCHAR[], returns_set BOOLEAN, description VARCHAR);

-- Each declared argument and result column with its Postgres type (oid, spelling).
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_function_parts AS
WITH d AS (
    SELECT row_number() OVER (ORDER BY name, len(arg_names), arg_types) AS k, *
    FROM __hati_catalog.pg.__hati_function_decl
), parts AS (
    SELECT k, 'i' AS mode, unnest(arg_names) AS pname, unnest(arg_types) AS ptype,
           unnest(arg_defaults) AS pdefault, generate_subscripts(arg_names, 1) AS pos
    FROM d
    UNION ALL
    SELECT k, 't', unnest(result_names), unnest(result_types), NULL,
           generate_subscripts(result_names, 1)
    FROM d WHERE result_names IS NOT NULL
), typed AS (
    SELECT *, CASE WHEN ptype = 'ANY' THEN 2283
                   ELSE __hati_catalog.pg.__hati_type_oid(ptype) END::BIGINT AS typoid
    FROM parts
)
SELECT *, __hati_catalog.pg.format_type(typoid, __hati_catalog.pg.__hati_type_mod(ptype)) AS shown
FROM typed;

-- As pg_proc lists them: 1.75 * 2^30 + k, far from DuckDB's function oids. Defaults as
-- Postgres prints them: DEFAULT 5, DEFAULT ''::text, DEFAULT NULL::json.
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_function_view AS
WITH d AS (
    SELECT row_number() OVER (ORDER BY name, len(arg_names), arg_types) AS k, *
    FROM __hati_catalog.pg.__hati_function_decl
), ins AS (
    SELECT k, list(typoid ORDER BY pos) AS types, list(pname ORDER BY pos) AS names,
           count(pdefault) AS ndefaults,
           string_agg(pname || ' ' || shown
                      || CASE WHEN pdefault IS NULL THEN ''
                              WHEN pdefault = 'NULL' OR pdefault LIKE '''%'
                                  THEN ' DEFAULT ' || pdefault || '::' || shown
                              ELSE ' DEFAULT ' || pdefault END, ', ' ORDER BY pos) AS text
    FROM __hati_catalog.pg.__hati_function_parts WHERE mode = 'i' GROUP BY k
), outs AS (
    SELECT k, list(typoid ORDER BY pos) AS types, list(pname ORDER BY pos) AS names,
           string_agg(pname || ' ' || shown, ', ' ORDER BY pos) AS text
    FROM __hati_catalog.pg.__hati_function_parts WHERE mode = 't' GROUP BY k
)
SELECT (1879048192 + d.k)::BIGINT AS oid, d.name AS proname, d.returns_set AS proretset,
       CASE WHEN d.returns_set THEN 2249
            ELSE __hati_catalog.pg.__hati_type_oid(d.result_types[1]) END::BIGINT AS prorettype,
       len(d.arg_names)::SMALLINT AS pronargs,
       coalesce(ins.ndefaults, 0)::SMALLINT AS pronargdefaults,
       coalesce(ins.types, []::BIGINT[]) AS proargtypes,
       CASE WHEN outs.k IS NOT NULL THEN coalesce(ins.types, []::BIGINT[]) || outs.types
       END AS proallargtypes,
       CASE WHEN outs.k IS NOT NULL
            THEN list_transform(coalesce(ins.types, []::BIGINT[]), t -> 'i')
                 || list_transform(outs.types, t -> 't') END AS proargmodes,
       coalesce(ins.names, []::VARCHAR[]) || coalesce(outs.names, []::VARCHAR[]) AS proargnames,
       CASE WHEN outs.k IS NOT NULL THEN 'TABLE(' || outs.text || ')'
            WHEN d.returns_set THEN 'SETOF record'
            ELSE __hati_catalog.pg.format_type(
                     __hati_catalog.pg.__hati_type_oid(d.result_types[1]),
                     __hati_catalog.pg.__hati_type_mod(d.result_types[1])) END AS result_text,
       coalesce(ins.text, '') AS arguments_text, d.description
FROM d LEFT JOIN ins ON ins.k = d.k LEFT JOIN outs ON outs.k = d.k;

-- __hati_function_view computed once per change of the declarations (refresh() in
-- proxy/db/catalog/functions.py): pg_proc is read often, declared functions change at start.
-- Made empty here: install() fills it once every declaration is in (85_server_functions.sql
-- adds more); computing it here too cost a quarter second of every start.
CREATE OR REPLACE TABLE __hati_catalog.pg.__hati_functions AS
SELECT * FROM __hati_catalog.pg.__hati_function_view LIMIT 0;

-- Expressions are stored as DuckDB SQL text already: pg_get_expr is the identity.
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_get_expr(expr, relid) AS expr::VARCHAR,
    (expr, relid, pretty) AS expr::VARCHAR;

-- An index as Postgres prints it; an HNSW index names its operator class, as pgvector's
-- (which have no default) always do: USING hnsw (embedding vector_cosine_ops).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_indexdef(is_unique, index_name, nspname,
                                                         table_name, amname, elements, opclass) AS
    'CREATE ' || CASE WHEN is_unique THEN 'UNIQUE ' ELSE '' END || 'INDEX '
    || index_name || ' ON ' || nspname || '.' || table_name || ' USING ' || amname || ' ('
    || array_to_string(CASE WHEN opclass IS NULL THEN elements
                            ELSE list_transform(elements, e -> e || ' ' || opclass) END, ', ')
    || ')';

CREATE OR REPLACE MACRO __hati_catalog.pg.pg_get_indexdef(index_oid) AS (
    SELECT __hati_catalog.pg.__hati_indexdef(__h_i.is_unique, __h_i.index_name, __h_i.nspname,
               __h_i.table_name, __h_i.amname, __h_i.elements, __h_i.opclass)
    FROM __hati_catalog.pg.__hati_index __h_i WHERE __h_i.indexrelid = index_oid),
    (index_oid, colno, pretty) AS (
    SELECT CASE WHEN colno = 0
                THEN __hati_catalog.pg.__hati_indexdef(__h_i.is_unique, __h_i.index_name,
                         __h_i.nspname, __h_i.table_name, __h_i.amname, __h_i.elements,
                         __h_i.opclass)
           ELSE __h_i.elements[colno] END
    FROM __hati_catalog.pg.__hati_index __h_i WHERE __h_i.indexrelid = index_oid);

-- Pretty (psql's \d, SQLAlchemy's reflection): PostgreSQL drops the parentheses around a
-- CHECK's whole expression (`CHECK (a >= 0)`, not `CHECK ((a >= 0))`); inner ones stay here.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pretty_check(d) AS
    CASE WHEN d LIKE 'CHECK ((%))' AND list_min(list_transform(range(1, length(d) - 8),
             __h_i -> length(replace(d[8:7 + __h_i], ')', ''))
                      - length(replace(d[8:7 + __h_i], '(', '')))) >= 1
         THEN 'CHECK ' || d[8:length(d) - 1] ELSE d END;
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_get_constraintdef(con_oid) AS (
    SELECT __h_c.__hati_def FROM __hati_catalog.pg.pg_constraint __h_c WHERE __h_c.oid = con_oid),
    (con_oid, pretty) AS (
    SELECT CASE WHEN CAST(pretty AS BOOLEAN)
                THEN __hati_catalog.pg.__hati_pretty_check(__h_c.__hati_def)
                ELSE __h_c.__hati_def END
    FROM __hati_catalog.pg.pg_constraint __h_c WHERE __h_c.oid = con_oid);

CREATE OR REPLACE MACRO __hati_catalog.pg.pg_get_viewdef(view_ref) AS (
    SELECT __h_r.viewdef FROM __hati_catalog.pg.__hati_rel __h_r
    WHERE __h_r.relkind IN ('v', 'm') AND __h_r.oid = __hati_catalog.pg.__hati_regclass(view_ref)),
    (view_ref, pretty) AS (
    SELECT __h_r.viewdef FROM __hati_catalog.pg.__hati_rel __h_r
    WHERE __h_r.relkind IN ('v', 'm') AND __h_r.oid = __hati_catalog.pg.__hati_regclass(view_ref));

-- Visible = reachable through the search path: pg_catalog, public and the temp schema.
-- pg_table_is_visible, col_description and obj_description read pg_class / pg_description
-- unqualified: the connection's catalog snapshot when it has one (snapshot.py makes it
-- current before a statement calling them), else the view.
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_table_is_visible(rel_oid) AS coalesce((
    SELECT __h_r.relnamespace IN (2200, 11) OR __h_r.relnamespace IN (
        SELECT __h_n.oid FROM __hati_catalog.pg.__hati_ns __h_n WHERE __h_n.nspname = 'pg_temp_1')
    FROM pg_class __h_r WHERE __h_r.oid = rel_oid), FALSE);
-- The session's temp schema (pg_temp_1), 0 until it holds something, as PostgreSQL assigns
-- it on the first temp object; Ibis looks temp tables and views up through it.
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_my_temp_schema() AS coalesce((
    SELECT __h_n.oid FROM __hati_catalog.pg.__hati_ns __h_n WHERE __h_n.nspname = 'pg_temp_1'
      AND EXISTS (SELECT 1 FROM duckdb_tables() WHERE database_name = 'temp'
                  UNION ALL SELECT 1 FROM duckdb_views() WHERE database_name = 'temp'
                                                            AND NOT internal)), 0)::BIGINT;
-- Visible types are pg_catalog's and public's (the search path): not information_schema's
-- domains, nor an enum of another schema (psql's \dT lists it only by a qualified pattern).
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_type_is_visible(typ) AS coalesce((
    SELECT min(__h_t.typnamespace) IN (11, 2200) FROM __hati_catalog.pg.pg_type __h_t
    WHERE __h_t.oid = typ), FALSE);
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_function_is_visible(fn_oid) AS TRUE;
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_collation_is_visible(coll_oid) AS TRUE;

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_description AS
SELECT r.oid AS objoid, __hati_catalog.pg.__hati_regclass('pg_class') AS classoid,
       0::INTEGER AS objsubid, r.comment AS description
FROM __hati_catalog.pg.__hati_rel r WHERE r.comment IS NOT NULL AND r.comment <> ''
UNION ALL
-- column comments straight from duckdb_columns() (pg_attribute's rows, without its type
-- lookups)
SELECT c.table_oid::BIGINT, __hati_catalog.pg.__hati_regclass('pg_class'),
       c.column_index::SMALLINT, c.comment
FROM duckdb_columns() c
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = c.database_name AND n.duck_schema = c.schema_name
WHERE c.comment IS NOT NULL AND c.comment <> ''
UNION ALL
-- index comments (COMMENT ON INDEX), under the index's pg_class oid (__hati_index_list)
SELECT i.index_oid::BIGINT, __hati_catalog.pg.__hati_regclass('pg_class'), 0, i.comment
FROM duckdb_indexes() i
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = i.database_name AND n.duck_schema = i.schema_name
WHERE i.comment IS NOT NULL AND i.comment <> ''
UNION ALL
-- COMMENT ON SCHEMA / CONSTRAINT: the server's registry (proxy/pgserver/object_comments.py)
SELECT n.oid, __hati_catalog.pg.__hati_regclass('pg_namespace'), 0, c.description
FROM {{duck_db_ident}}.main.__hati_comments c
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = {{duck_db}} AND n.duck_schema = c.schema_name
WHERE c.kind = 'n' AND c.description IS NOT NULL
UNION ALL
SELECT k.oid, __hati_catalog.pg.__hati_regclass('pg_constraint'), 0, c.description
FROM {{duck_db_ident}}.main.__hati_comments c
JOIN duckdb_tables() t ON t.database_name = {{duck_db}} AND t.schema_name = c.schema_name
                      AND t.table_name = c.table_name
JOIN __hati_catalog.pg.pg_constraint k ON k.conrelid = t.table_oid AND k.conname = c.name
WHERE c.kind = 'c'
UNION ALL
-- COMMENT ON FUNCTION of a SQL function (a DuckDB macro), by schema and name
SELECT f.function_oid, 1255, 0, c.description
FROM {{duck_db_ident}}.main.__hati_comments c
JOIN duckdb_functions() f ON f.database_name = {{duck_db}} AND f.schema_name = c.schema_name
                         AND f.function_name = c.name
WHERE c.kind = 'f' AND c.description IS NOT NULL
UNION ALL
-- PostgreSQL's comment on public (pg_dump leaves this default out of dumps), until a
-- COMMENT ON SCHEMA public replaces or removes it
SELECT 2200, 2615, 0, 'standard public schema'
WHERE NOT EXISTS (SELECT 1 FROM {{duck_db_ident}}.main.__hati_comments c
                  WHERE c.kind = 'n' AND c.schema_name = 'main')
UNION ALL
-- what hatiproxy's own functions do (\df+)
SELECT h.oid, __hati_catalog.pg.__hati_regclass('pg_proc'), 0, h.description
FROM __hati_catalog.pg.__hati_functions h WHERE h.description IS NOT NULL
UNION ALL
-- PostgreSQL's own of its built-in types, functions, operators, ... (42_pg_builtins.sql)
SELECT * FROM __hati_catalog.pg.__hati_builtin_description
UNION ALL
-- COMMENT ON TYPE of a user's enum, which DuckDB keeps
SELECT t.type_oid AS objoid, 1247, 0, t.comment FROM duckdb_types() t
WHERE t.logical_type = 'ENUM' AND NOT t.internal AND t.database_name = {{duck_db}}
  AND t.comment IS NOT NULL AND t.comment <> ''
UNION ALL
-- plpgsql's (its oid is hatiproxy's own, so not in the generated rows)
SELECT 13576, 2612, 0, 'PL/pgSQL procedural language'
UNION ALL
-- the built-in extensions' (\dx)
SELECT e.oid, 3079, 0, a.comment
FROM __hati_catalog.pg.pg_extension e
JOIN __hati_catalog.pg.pg_available_extensions a ON a.name = e.extname;

CREATE OR REPLACE MACRO __hati_catalog.pg.obj_description(obj_oid) AS (
    SELECT min(__h_d.description) FROM pg_description __h_d
    WHERE __h_d.objoid = obj_oid AND __h_d.objsubid = 0),
    (obj_oid, catalog_relation) AS (
    SELECT min(__h_d.description) FROM pg_description __h_d
    WHERE __h_d.objoid = obj_oid AND __h_d.objsubid = 0);
CREATE OR REPLACE MACRO __hati_catalog.pg.col_description(rel_oid, col) AS (
    SELECT min(__h_d.description) FROM pg_description __h_d
    WHERE __h_d.objoid = rel_oid AND __h_d.objsubid = col);
CREATE OR REPLACE MACRO __hati_catalog.pg.shobj_description(obj_oid, catalog_relation) AS
    (SELECT min(description) FROM __hati_catalog.pg.pg_shdescription WHERE objoid = obj_oid);

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_proc AS
-- A SQL function's declaration (r: transpiler/sql_functions.py) over its macro's untyped
-- parameters: argument and result types, volatility, STRICT, the body as written.
SELECT f.function_oid::BIGINT AS oid, f.function_name AS proname, n.oid AS pronamespace,
       coalesce(ow.owner_oid, 10)::BIGINT AS proowner,
       CASE WHEN r.result_oid = 2279 THEN 13576  -- trigger: PL/pgSQL (plpgsql_trigger.py)
            WHEN f.function_type IN ('macro', 'table_macro') THEN 14 ELSE 12 END::BIGINT
           AS prolang,
       100::REAL AS procost,
       CASE WHEN f.function_type = 'table_macro' THEN 1000 ELSE 0 END::REAL AS prorows,
       0::BIGINT AS provariadic, '-' AS prosupport,
       CASE WHEN f.function_type = 'aggregate' THEN 'a' ELSE 'f' END AS prokind,
       FALSE AS prosecdef, FALSE AS proleakproof, coalesce(r.strict, FALSE) AS proisstrict,
       coalesce(r.retset, f.function_type = 'table_macro') AS proretset,
       coalesce(r.volatility, 'v') AS provolatile, 'u' AS proparallel,
       len(f.parameters)::SMALLINT AS pronargs,
       coalesce(r.ndefaults, 0)::SMALLINT AS pronargdefaults,
       coalesce(r.result_oid,
                CASE WHEN f.function_type = 'table_macro' THEN 2249 ELSE 2283 END)::BIGINT
           AS prorettype,
       -- oidvector (UINTEGER[], proxy/wire/oidvectors.py): on the wire the oids separated by
       -- spaces ('25 20'), which pg_dump and pgjdbc split; an array's '{25,20}' they cannot.
       coalesce(r.arg_oids, list_transform(f.parameters, p -> 2283))::UINTEGER[] AS proargtypes,
       NULL::BIGINT[] AS proallargtypes, NULL::VARCHAR[] AS proargmodes,
       f.parameters AS proargnames, NULL::VARCHAR AS proargdefaults,
       NULL::BIGINT[] AS protrftypes,
       -- a LANGUAGE sql body: a scalar macro's expression is SELECTed (pg_dump writes it
       -- back as CREATE FUNCTION ... AS $$SELECT ...$$, which becomes a macro again)
       coalesce(r.body, CASE WHEN f.function_type = 'macro' THEN 'SELECT ' || f.macro_definition
                             ELSE f.macro_definition END) AS prosrc, NULL::VARCHAR AS probin,
       NULL::VARCHAR AS prosqlbody, NULL::VARCHAR[] AS proconfig, NULL::VARCHAR[] AS proacl,
       coalesce(r.result, CASE WHEN f.function_type = 'table_macro' THEN 'SETOF record'
                               ELSE 'anyelement' END) AS __hati_result,
       coalesce(r.arguments,
                array_to_string(list_transform(f.parameters, a -> a || ' anyelement'), ', '))
           AS __hati_arguments,
       coalesce(r.identity_arguments,
                array_to_string(list_transform(f.parameters, a -> a || ' anyelement'), ', '))
           AS __hati_identity_arguments
FROM duckdb_functions() f
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = f.database_name AND n.duck_schema = f.schema_name
LEFT JOIN __hati_catalog.pg.__hati_owners ow
  ON ow.class = 'function' AND ow.nspname = n.nspname AND ow.name = lower(f.function_name)
 AND f.database_name <> '__hati_catalog'
LEFT JOIN {{duck_db_ident}}.main.__hati_routines r
  ON f.database_name = {{duck_db}} AND r.schema_name = f.schema_name
 AND lower(r.name) = lower(f.function_name) AND r.nargs = len(f.parameters)
WHERE (f.database_name <> '__hati_catalog' OR f.function_name NOT LIKE '\_\_hati%' ESCAPE '\')
  -- a domain's cast (proxy/pgserver/domain_casts.py) is the domain's, not a function
  AND f.function_name NOT LIKE '\_\_hati\_domain\_%' ESCAPE '\'
UNION ALL
-- hatiproxy's own functions, in public (where CREATE EXTENSION would put them)
SELECT h.oid, h.proname, 2200, 10, 12, 1, CASE WHEN h.proretset THEN 1000 ELSE 0 END, 0, '-',
       'f', FALSE, FALSE, FALSE, h.proretset, 'v', 'u', h.pronargs, h.pronargdefaults,
       h.prorettype, h.proargtypes::UINTEGER[], h.proallargtypes, h.proargmodes, h.proargnames, NULL, NULL,
       h.proname, NULL, NULL, NULL, NULL, h.result_text, h.arguments_text,
       regexp_replace(h.arguments_text, ' DEFAULT [^,]*', '', 'g')
FROM __hati_catalog.pg.__hati_functions h
UNION ALL
-- PostgreSQL's built-in functions its casts and aggregates name (42_pg_builtins.sql)
SELECT b.oid, b.proname, 11, 10, b.prolang, 1, 0, 0, '-', b.prokind, FALSE, FALSE,
       b.proisstrict, b.proretset, b.provolatile, b.proparallel, b.pronargs, 0, b.prorettype,
       b.proargtypes::UINTEGER[], NULL, NULL, NULL, NULL, NULL, b.prosrc, NULL, NULL, NULL, NULL,
       b.result_text, b.arguments_text, b.identity_text
FROM __hati_catalog.pg.__hati_builtin_proc b;

-- Triggers (proxy/pgserver/triggers.py), from the server's registry; with
-- the text pg_get_triggerdef gives, plain (table qualified) and pretty (80_hati_functions).
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_triggers AS
SELECT (1610612736 + hash(tr.schema_name || '.' || tr.table_name || '.' || tr.name)
        % 268435456)::BIGINT AS oid,
       t.table_oid::BIGINT AS tgrelid, tr.name AS tgname, f.function_oid::BIGINT AS tgfoid,
       tr.tgtype::SMALLINT AS tgtype, tr.enabled AS tgenabled,
       (SELECT coalesce(list(dc.column_index::SMALLINT
                             ORDER BY list_position(tr.columns, dc.column_name)), [])
        FROM duckdb_columns() dc
        WHERE dc.table_oid = t.table_oid AND list_contains(tr.columns, dc.column_name))
           AS tgattr,
       tr.when_text,
       'CREATE TRIGGER ' || tr.name
       || CASE WHEN tr.tgtype & 2 <> 0 THEN ' BEFORE ' ELSE ' AFTER ' END
       || concat_ws(' OR ', CASE WHEN tr.tgtype & 4 <> 0 THEN 'INSERT' END,
                    CASE WHEN tr.tgtype & 8 <> 0 THEN 'DELETE' END,
                    CASE WHEN tr.tgtype & 16 <> 0 THEN 'UPDATE' END)
       || CASE WHEN len(tr.columns) > 0 THEN ' OF ' || array_to_string(tr.columns, ', ')
               ELSE '' END AS head,
       CASE WHEN tr.tgtype & 1 <> 0 THEN ' FOR EACH ROW ' ELSE ' FOR EACH STATEMENT ' END
       || CASE WHEN tr.when_text IS NOT NULL THEN 'WHEN (' || tr.when_text || ') ' ELSE '' END
       || 'EXECUTE FUNCTION ' AS tail,
       CASE WHEN tr.function_schema = 'main' THEN 'public' ELSE tr.function_schema END
           AS function_schema,
       tr.function_name,
       n.nspname, tr.table_name
FROM {{duck_db_ident}}.main.__hati_triggers tr
JOIN duckdb_tables() t ON t.database_name = {{duck_db}} AND t.schema_name = tr.schema_name
 AND t.table_name = tr.table_name
JOIN __hati_catalog.pg.__hati_ns n ON n.duck_db = t.database_name AND n.duck_schema = t.schema_name
LEFT JOIN duckdb_functions() f ON f.database_name = {{duck_db}}
 AND f.schema_name = tr.function_schema AND f.function_name = tr.function_name;

CREATE OR REPLACE VIEW __hati_catalog.pg.pg_trigger AS
SELECT oid, tgrelid, 0::BIGINT AS tgparentid, tgname, tgfoid, tgtype, tgenabled,
       FALSE AS tgisinternal, 0::BIGINT AS tgconstrrelid, 0::BIGINT AS tgconstrindid,
       0::BIGINT AS tgconstraint, FALSE AS tgdeferrable, FALSE AS tginitdeferred,
       0::SMALLINT AS tgnargs, tgattr, ''::BLOB AS tgargs, when_text AS tgqual,
       NULL::VARCHAR AS tgoldtable, NULL::VARCHAR AS tgnewtable
FROM __hati_catalog.pg.__hati_triggers;

CREATE OR REPLACE MACRO __hati_catalog.pg.pg_get_function_result(fn_oid) AS (
    SELECT __h_p.__hati_result FROM __hati_catalog.pg.pg_proc __h_p WHERE __h_p.oid = fn_oid
    LIMIT 1);
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_get_function_arguments(fn_oid) AS (
    SELECT __h_p.__hati_arguments FROM __hati_catalog.pg.pg_proc __h_p WHERE __h_p.oid = fn_oid
    LIMIT 1);
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_get_function_identity_arguments(fn_oid) AS (
    SELECT __h_p.__hati_identity_arguments FROM __hati_catalog.pg.pg_proc __h_p
    WHERE __h_p.oid = fn_oid LIMIT 1);
-- No function here has a SQL-standard body (prosqlbody): \df+ shows prosrc.
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_get_function_sqlbody(fn_oid) AS NULL::VARCHAR;

-- The sequence a serial / identity column draws from (transpiler/serial_columns.py), read
-- off its nextval default; tbl may be schema-qualified ('public' is DuckDB's main).
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_get_serial_sequence(tbl, col) AS (
    SELECT CASE WHEN starts_with(seq, 'main.') THEN 'public' || seq[5:]
                WHEN contains(seq, '.') THEN seq
                ELSE (CASE c_schema WHEN 'main' THEN 'public' ELSE c_schema END) || '.' || seq END
    FROM (SELECT c.schema_name AS c_schema,
                 regexp_extract(c.column_default, '^nextval\(''([^'']*)''\)$', 1) AS seq
          FROM duckdb_columns() c
          WHERE lower(c.table_name) = lower(replace(string_split(tbl, '.')[-1], '"', ''))
            AND lower(c.column_name) = lower(replace(col, '"', ''))
            AND (NOT contains(tbl, '.')
                 OR lower(c.schema_name) = CASE lower(replace(string_split(tbl, '.')[1], '"', ''))
                                               WHEN 'public' THEN 'main'
                                               ELSE lower(replace(string_split(tbl, '.')[1], '"', ''))
                                           END)
          ORDER BY c.schema_name <> 'main', c.schema_name
          LIMIT 1)
    WHERE seq <> '');
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_relation_is_publishable(rel) AS FALSE;
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_get_statisticsobjdef_columns(stx) AS NULL::VARCHAR;
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_get_partkeydef(rel) AS NULL::VARCHAR;
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_is_in_recovery() AS FALSE;
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_tablespace_location(ts) AS '';

CREATE OR REPLACE MACRO __hati_catalog.pg.pg_table_size(rel) AS 0::BIGINT;
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_total_relation_size(rel) AS 0::BIGINT;
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_indexes_size(rel) AS 0::BIGINT;
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_relation_size(rel) AS 0::BIGINT,
    (rel, fork) AS 0::BIGINT;
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_database_size(db) AS 0::BIGINT;

CREATE OR REPLACE MACRO __hati_catalog.pg.array_upper(arr, dim) AS
    CASE WHEN dim = 1 AND len(arr) > 0 THEN len(arr) END;
CREATE OR REPLACE MACRO __hati_catalog.pg.array_lower(arr, dim) AS
    CASE WHEN dim = 1 AND len(arr) > 0 THEN 1 END;

CREATE OR REPLACE MACRO __hati_catalog.pg.json_build_object(k1, v1) AS json_object(k1::VARCHAR, v1),
    (k1, v1, k2, v2) AS json_object(k1::VARCHAR, v1, k2::VARCHAR, v2),
    (k1, v1, k2, v2, k3, v3) AS json_object(k1::VARCHAR, v1, k2::VARCHAR, v2, k3::VARCHAR, v3),
    (k1, v1, k2, v2, k3, v3, k4, v4) AS json_object(k1::VARCHAR, v1, k2::VARCHAR, v2, k3::VARCHAR, v3, k4::VARCHAR, v4),
    (k1, v1, k2, v2, k3, v3, k4, v4, k5, v5)
        AS json_object(k1::VARCHAR, v1, k2::VARCHAR, v2, k3::VARCHAR, v3, k4::VARCHAR, v4, k5::VARCHAR, v5),
    (k1, v1, k2, v2, k3, v3, k4, v4, k5, v5, k6, v6)
        AS json_object(k1::VARCHAR, v1, k2::VARCHAR, v2, k3::VARCHAR, v3, k4::VARCHAR, v4, k5::VARCHAR, v5, k6::VARCHAR, v6),
    (k1, v1, k2, v2, k3, v3, k4, v4, k5, v5, k6, v6, k7, v7)
        AS json_object(k1::VARCHAR, v1, k2::VARCHAR, v2, k3::VARCHAR, v3, k4::VARCHAR, v4, k5::VARCHAR, v5, k6::VARCHAR, v6, k7::VARCHAR, v7);

-- pg_get_keywords(): DuckDB's own keyword list, in Postgres' shape.
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_get_keywords() AS TABLE
SELECT keyword_name AS word,
       CASE keyword_category WHEN 'reserved' THEN 'R' WHEN 'unreserved' THEN 'U'
            WHEN 'type_function' THEN 'T' ELSE 'C' END AS catcode,
       keyword_category <> 'reserved' AS barelabel,
       CASE keyword_category WHEN 'reserved' THEN 'reserved'
            WHEN 'unreserved' THEN 'unreserved'
            WHEN 'type_function' THEN 'reserved (can be function or type name)'
            ELSE 'unreserved (cannot be function or type name)' END AS catdesc,
       CASE WHEN keyword_category <> 'reserved' THEN 'can be bare label'
            ELSE 'requires AS' END AS baredesc
FROM duckdb_keywords();

-- acldefault(kind, owner): the privileges an object of that kind has while its ACL is NULL
-- (aclitem[] as text, as PostgreSQL 15 prints them); pg_dump compares an object's ACL with it.
CREATE OR REPLACE MACRO __hati_catalog.pg.acldefault(kind, owner_oid) AS (
    SELECT CASE kind
        WHEN 'c' THEN []::VARCHAR[]
        WHEN 'r' THEN [__h_o.o || '=arwdDxt/' || __h_o.o]
        WHEN 's' THEN [__h_o.o || '=rwU/' || __h_o.o]
        WHEN 'd' THEN ['=Tc/' || __h_o.o, __h_o.o || '=CTc/' || __h_o.o]
        WHEN 'f' THEN ['=X/' || __h_o.o, __h_o.o || '=X/' || __h_o.o]
        WHEN 'l' THEN ['=U/' || __h_o.o, __h_o.o || '=U/' || __h_o.o]
        WHEN 'L' THEN [__h_o.o || '=rw/' || __h_o.o]
        WHEN 'n' THEN [__h_o.o || '=UC/' || __h_o.o]
        WHEN 't' THEN [__h_o.o || '=C/' || __h_o.o]
        WHEN 'F' THEN [__h_o.o || '=U/' || __h_o.o]
        WHEN 'S' THEN [__h_o.o || '=U/' || __h_o.o]
        WHEN 'T' THEN ['=U/' || __h_o.o, __h_o.o || '=U/' || __h_o.o]
        WHEN 'p' THEN []::VARCHAR[]
        ELSE error('unrecognized object type abbreviation: ' || kind) END
    FROM (SELECT __hati_catalog.pg.pg_get_userbyid(owner_oid) AS o) __h_o);

-- setval(seq, value [, is_called]): DuckDB cannot set a sequence, so it is moved forward by
-- drawing values until nextval gives what PostgreSQL's would (pg_dump's restores call it
-- on fresh sequences). Moving a sequence back needs the sequence made again, which the
-- server does first (proxy/pgserver/sequence_restart.py); here it is refused.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_setval(seq, v, called) AS (
    WITH __h_s AS (
        SELECT coalesce(last_value + increment_by, start_value) AS nxt, increment_by AS inc
        FROM duckdb_sequences()
        WHERE sequence_name = replace(string_split(seq, '.')[-1], '"', '')
          AND (NOT contains(seq, '.')
               OR schema_name = CASE replace(string_split(seq, '.')[1], '"', '')
                                    WHEN 'public' THEN 'main'
                                    ELSE replace(string_split(seq, '.')[1], '"', '') END)
        ORDER BY schema_name <> 'main' LIMIT 1),
    __h_n AS (SELECT ((v - nxt) // inc + CASE WHEN called THEN 1 ELSE 0 END)::BIGINT AS draws
              FROM __h_s)
    SELECT CASE
        WHEN draws IS NULL THEN error('relation "' || seq || '" does not exist')
        WHEN draws < 0 THEN error('setval: hatiproxy cannot move sequence "' || seq
                                  || '" back to ' || v || ' (DuckDB sequences only move forward)')
        ELSE (SELECT v::BIGINT + 0 * count(nextval(regexp_replace(seq, '^(public|"public")\.', 'main.')))
              FROM range((SELECT draws FROM __h_n))) END
    FROM __h_n RIGHT JOIN (SELECT 1) ON TRUE);
-- The start value of a sequence named as setval takes it (ALTER SEQUENCE ... RESTART).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_sequence_start(seq) AS (
    SELECT start_value FROM duckdb_sequences()
    WHERE sequence_name = replace(string_split(seq, '.')[-1], '"', '')
      AND (NOT contains(seq, '.')
           OR schema_name = CASE replace(string_split(seq, '.')[1], '"', '')
                                WHEN 'public' THEN 'main'
                                ELSE replace(string_split(seq, '.')[1], '"', '') END)
    ORDER BY schema_name <> 'main' LIMIT 1);
CREATE OR REPLACE MACRO __hati_catalog.pg.setval(seq, v) AS
    __hati_catalog.pg.__hati_setval(seq, v, TRUE),
    (seq, v, called) AS __hati_catalog.pg.__hati_setval(seq, v, called);

-- pg_partition_ancestors(rel): a partition and the tables above it; PostgreSQL lists
-- nothing for a table that is not a partition, and there are no partitions here. psql's
-- \d "Referenced by" asks `confrelid IN (SELECT pg_partition_ancestors(t) UNION ALL
-- VALUES (t))` (in FROM: transpiler/pgcompat.py's _SRF_AS_SUBQUERY; in a select list:
-- this macro, NULL for no row).
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_partition_ancestors(rel) AS NULL::BIGINT;
