-- Targets of the transpiler's reg* cast rewrites (Postgres' regclass, regtype, ...
-- are OIDs that print as names; DuckDB has no such types):
--   'name'::regclass            -> __hati_regclass('name')       (BIGINT oid; error if absent)
--   expr::regclass (an oid column) -> __hati_regclass_name(expr)    (name, schema-qualified
--                                                                  when not visible)
--   'name'::regtype / ::regtype::text, ::regproc, ::regnamespace likewise.
-- A numeric argument is already an OID and is returned unchanged.

-- 'Foo' -> foo, '"Foo"' -> Foo (Postgres identifier folding)
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_ident(s) AS
    CASE WHEN s LIKE '"%"' THEN replace(s[2:-2], '""', '"') ELSE lower(trim(s)) END;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_relname_oid(qname) AS (
    -- [database.]schema.rel, any part quoted ("public"."T"; a dot inside quotes is the
    -- name's), spaces around the dots allowed (ADBC's '"public" . "t"')
    WITH __h_m AS (
        SELECT regexp_extract(qname, '^\s*(?:(?:"(?:[^"]|"")*"|[^."]+)\s*\.\s*)?'
                                     || '("(?:[^"]|"")*"|[^."]+?)\s*\.\s*("(?:[^"]|"")*"|[^."]+)\s*$',
                              ['nsp', 'rel']) AS m
    ), __h_parts AS (
        SELECT CASE WHEN __h_m.m.rel <> '' THEN __hati_catalog.pg.__hati_ident(__h_m.m.nsp) END
                   AS nsp,
               __hati_catalog.pg.__hati_ident(CASE WHEN __h_m.m.rel <> '' THEN __h_m.m.rel
                                                   ELSE trim(qname) END) AS rel
        FROM __h_m
    )
    -- pg_class unqualified: the connection's snapshot (proxy/db/catalog/snapshot.py)
    SELECT __h_r.oid
    FROM (SELECT __h_c.oid, __h_c.relname, __h_n.nspname FROM pg_class __h_c
          JOIN __hati_catalog.pg.__hati_ns __h_n ON __h_n.oid = __h_c.relnamespace) __h_r,
         __h_parts __h_p
    WHERE __h_r.relname = __h_p.rel
      AND (__h_r.nspname = __h_p.nsp OR (__h_p.nsp = 'main' AND __h_r.nspname = 'public')
           OR (__h_p.nsp IS NULL AND __h_r.nspname IN ('pg_temp_1', 'pg_catalog', 'public')))
    ORDER BY CASE __h_r.nspname WHEN 'pg_temp_1' THEN 0 WHEN 'pg_catalog' THEN 1 ELSE 2 END
    LIMIT 1);

CREATE OR REPLACE MACRO __hati_catalog.pg.to_regclass(qname) AS
    __hati_catalog.pg.__hati_relname_oid(qname::VARCHAR);

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regclass(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) <> 'VARCHAR' OR regexp_full_match(x::VARCHAR, '\d+') THEN x::BIGINT
         ELSE coalesce(__hati_catalog.pg.__hati_relname_oid(x::VARCHAR),
                       error('relation "' || x::VARCHAR || '" does not exist')::BIGINT) END;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regclass_name(x) AS
    CASE WHEN x IS NULL THEN NULL
         -- a name (pg_get_serial_sequence's 'public.s'): as PostgreSQL prints it, without
         -- the visible schema
         WHEN typeof(x) = 'VARCHAR' AND NOT regexp_full_match(x::VARCHAR, '\d+')
             THEN regexp_replace(x::VARCHAR, '^(public|"public")\.', '')
         WHEN TRY_CAST(x AS BIGINT) = 0 THEN '-'
         -- TRY_CAST: DuckDB runs the subquery for every row, names included
         ELSE coalesce((SELECT CASE WHEN __h_r.nspname IN ('public', 'pg_catalog', 'pg_temp_1')
                                    THEN __h_r.relname ELSE __h_r.nspname || '.' || __h_r.relname END
                        FROM (SELECT __h_c.oid, __h_c.relname, __h_n.nspname
                              FROM pg_class __h_c JOIN __hati_catalog.pg.__hati_ns __h_n
                                ON __h_n.oid = __h_c.relnamespace) __h_r
                        WHERE __h_r.oid = TRY_CAST(x AS BIGINT)),
                       x::VARCHAR) END;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_typname_oid(tname) AS (
    -- pg_catalog.int4, "pg_catalog"."int4", "int4": the type's name (quoted: as written)
    WITH __h_q AS (SELECT regexp_replace(trim(tname),
                                         '^(?:"pg_catalog"|pg_catalog|"public"|public)\s*\.\s*',
                                         '', 'i') AS t),
    __h_n AS (SELECT CASE WHEN regexp_full_match(t, '"(?:[^"]|"")*"(\[\])*')
                          THEN replace(regexp_replace(t, '^"(.*)"((?:\[\])*)$', '\1\2'), '""', '"')
                          ELSE lower(t) END AS tfull FROM __h_q),
    __h_b AS (SELECT regexp_replace(tfull, '(\[\])+$', '') AS base, tfull LIKE '%[]' AS is_array
          FROM __h_n),
    __h_t AS (SELECT coalesce(
              (SELECT __h_s.typname FROM __hati_catalog.pg.__hati_sql_name __h_s, __h_b
               WHERE __h_s.sql_name = __h_b.base),
              (SELECT CASE __h_b.base WHEN 'int' THEN 'int4' WHEN 'decimal' THEN 'numeric'
                      WHEN 'character varying' THEN 'varchar' WHEN 'float' THEN 'float8'
                      WHEN 'timestamp with time zone' THEN 'timestamptz'
                      ELSE regexp_replace(__h_b.base, '\(.*\)$', '') END FROM __h_b)) AS typname)
    SELECT CASE WHEN __h_b.is_array THEN __h_ty.typarray ELSE __h_ty.oid END
    FROM __hati_catalog.pg.pg_type __h_ty, __h_t, __h_b WHERE __h_ty.typname = __h_t.typname);

CREATE OR REPLACE MACRO __hati_catalog.pg.to_regtype(tname) AS
    __hati_catalog.pg.__hati_typname_oid(tname::VARCHAR);

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regtype(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) <> 'VARCHAR' OR regexp_full_match(x::VARCHAR, '\d+') THEN x::BIGINT
         ELSE coalesce(__hati_catalog.pg.__hati_typname_oid(x::VARCHAR),
                       error('type "' || x::VARCHAR || '" does not exist')::BIGINT) END;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regtype_name(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) = 'VARCHAR' AND NOT regexp_full_match(x::VARCHAR, '\d+')
             THEN x::VARCHAR
         WHEN x::BIGINT = 0 THEN '-'
         ELSE __hati_catalog.pg.format_type(x::BIGINT, NULL) END;

-- regproc values are compared with pg_type.typinput etc., which hold names here.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regproc(x) AS
    regexp_replace(x::VARCHAR, '^pg_catalog\.', '');
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regproc_name(x) AS x::VARCHAR;
-- A function's name from a regproc / regprocedure text ('array_in(cstring,oid,integer)',
-- ActiveRecord's type map query) to compare with the catalog's regproc columns, which
-- hold bare names here (transpiler/reg_casts.py).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_proc_name(x) AS
    regexp_replace(regexp_replace(x::VARCHAR, '\s*\(.*\)\s*$', ''), '^pg_catalog\.', '');

CREATE OR REPLACE MACRO __hati_catalog.pg.to_regnamespace(nsp) AS (
    SELECT __h_n.oid FROM __hati_catalog.pg.pg_namespace __h_n
    WHERE __h_n.nspname = __hati_catalog.pg.__hati_ident(nsp::VARCHAR)
       OR (__h_n.nspname = 'public' AND __hati_catalog.pg.__hati_ident(nsp::VARCHAR) = 'main'));
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regnamespace(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) <> 'VARCHAR' OR regexp_full_match(x::VARCHAR, '\d+') THEN x::BIGINT
         ELSE coalesce(__hati_catalog.pg.to_regnamespace(x),
                       error('schema "' || x::VARCHAR || '" does not exist')::BIGINT) END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regnamespace_name(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) = 'VARCHAR' AND NOT regexp_full_match(x::VARCHAR, '\d+')
             THEN x::VARCHAR
         ELSE coalesce((SELECT __h_n.nspname FROM __hati_catalog.pg.pg_namespace __h_n
                        WHERE __h_n.oid = x::BIGINT), x::VARCHAR) END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regrole_name(x) AS
    __hati_catalog.pg.pg_get_userbyid(x);

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regrole(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) <> 'VARCHAR' OR regexp_full_match(x::VARCHAR, '\d+') THEN x::BIGINT
         ELSE coalesce((SELECT __h_r.oid FROM __hati_catalog.pg.__hati_roles __h_r
                        WHERE __h_r.rolname = __hati_catalog.pg.__hati_ident(x::VARCHAR)),
                       error('role "' || x::VARCHAR || '" does not exist')::BIGINT) END;

-- Text search configurations by name ('english'::regconfig): names, as regproc's.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regconfig(x) AS
    regexp_replace(x::VARCHAR, '^pg_catalog\.', '');
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regconfig_name(x) AS x::VARCHAR;
