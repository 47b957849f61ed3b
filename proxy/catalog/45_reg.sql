-- Targets of the transpiler's reg* cast rewrites (Postgres' regclass, regtype, ...
-- are OIDs that print as names; DuckDB has no such types):
--   'name'::regclass            -> __hati_regclass('name')       (BIGINT oid; error if absent)
--   expr::regclass::text         -> __hati_regclass_text(expr)    (name, schema-qualified
--                                                                  when not visible)
--   'name'::regtype / ::regtype::text, ::regproc, ::regnamespace likewise.
-- A numeric argument is already an OID and is returned unchanged.

-- 'Foo' -> foo, '"Foo"' -> Foo (Postgres identifier folding)
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_ident(s) AS
    CASE WHEN s LIKE '"%"' THEN replace(s[2:-2], '""', '"') ELSE lower(trim(s)) END;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_relname_oid(qname) AS (
    WITH parts AS (
        SELECT CASE WHEN qname LIKE '%.%' AND NOT qname LIKE '"%"'
                    THEN __hati_catalog.pg.__hati_ident(regexp_extract(qname, '^(.*?)\.', 1))
               END AS nsp,
               __hati_catalog.pg.__hati_ident(CASE WHEN qname LIKE '%.%' AND NOT qname LIKE '"%"'
                    THEN regexp_extract(qname, '^.*?\.(.*)$', 1) ELSE qname END) AS rel
    )
    SELECT r.oid FROM __hati_catalog.pg.__hati_rel r, parts p
    WHERE r.relname = p.rel
      AND (r.nspname = p.nsp OR (p.nsp = 'main' AND r.nspname = 'public')
           OR (p.nsp IS NULL AND r.nspname IN ('pg_temp_1', 'pg_catalog', 'public')))
    ORDER BY CASE r.nspname WHEN 'pg_temp_1' THEN 0 WHEN 'pg_catalog' THEN 1 ELSE 2 END
    LIMIT 1);

CREATE OR REPLACE MACRO __hati_catalog.pg.to_regclass(qname) AS
    __hati_catalog.pg.__hati_relname_oid(qname::VARCHAR);

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regclass(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) <> 'VARCHAR' OR regexp_full_match(x::VARCHAR, '\d+') THEN x::BIGINT
         ELSE coalesce(__hati_catalog.pg.__hati_relname_oid(x::VARCHAR),
                       error('relation "' || x::VARCHAR || '" does not exist')::BIGINT) END;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regclass_text(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) = 'VARCHAR' AND NOT regexp_full_match(x::VARCHAR, '\d+')
             THEN x::VARCHAR
         WHEN x::BIGINT = 0 THEN '-'
         ELSE coalesce((SELECT CASE WHEN r.nspname IN ('public', 'pg_catalog', 'pg_temp_1')
                                    THEN r.relname ELSE r.nspname || '.' || r.relname END
                        FROM __hati_catalog.pg.__hati_rel r WHERE r.oid = x::BIGINT),
                       x::VARCHAR) END;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_typname_oid(tname) AS (
    WITH n AS (SELECT regexp_replace(lower(trim(tname)), '^pg_catalog\.', '') AS tfull),
    b AS (SELECT regexp_replace(tfull, '(\[\])+$', '') AS base, tfull LIKE '%[]' AS is_array
          FROM n),
    t AS (SELECT coalesce(
              (SELECT s.typname FROM __hati_catalog.pg.__hati_sql_name s, b
               WHERE s.sql_name = b.base),
              (SELECT CASE b.base WHEN 'int' THEN 'int4' WHEN 'decimal' THEN 'numeric'
                      WHEN 'character varying' THEN 'varchar' WHEN 'float' THEN 'float8'
                      WHEN 'timestamp with time zone' THEN 'timestamptz'
                      ELSE regexp_replace(b.base, '\(.*\)$', '') END FROM b)) AS typname)
    SELECT CASE WHEN b.is_array THEN ty.typarray ELSE ty.oid END
    FROM __hati_catalog.pg.pg_type ty, t, b WHERE ty.typname = t.typname);

CREATE OR REPLACE MACRO __hati_catalog.pg.to_regtype(tname) AS
    __hati_catalog.pg.__hati_typname_oid(tname::VARCHAR);

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regtype(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) <> 'VARCHAR' OR regexp_full_match(x::VARCHAR, '\d+') THEN x::BIGINT
         ELSE coalesce(__hati_catalog.pg.__hati_typname_oid(x::VARCHAR),
                       error('type "' || x::VARCHAR || '" does not exist')::BIGINT) END;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regtype_text(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) = 'VARCHAR' AND NOT regexp_full_match(x::VARCHAR, '\d+')
             THEN x::VARCHAR
         WHEN x::BIGINT = 0 THEN '-'
         ELSE __hati_catalog.pg.format_type(x::BIGINT, NULL) END;

-- regproc values are compared with pg_type.typinput etc., which hold names here.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regproc(x) AS
    regexp_replace(x::VARCHAR, '^pg_catalog\.', '');
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regproc_text(x) AS x::VARCHAR;

CREATE OR REPLACE MACRO __hati_catalog.pg.to_regnamespace(nsp) AS (
    SELECT n.oid FROM __hati_catalog.pg.pg_namespace n
    WHERE n.nspname = __hati_catalog.pg.__hati_ident(nsp::VARCHAR)
       OR (n.nspname = 'public' AND __hati_catalog.pg.__hati_ident(nsp::VARCHAR) = 'main'));
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regnamespace(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) <> 'VARCHAR' OR regexp_full_match(x::VARCHAR, '\d+') THEN x::BIGINT
         ELSE coalesce(__hati_catalog.pg.to_regnamespace(x),
                       error('schema "' || x::VARCHAR || '" does not exist')::BIGINT) END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regnamespace_text(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) = 'VARCHAR' AND NOT regexp_full_match(x::VARCHAR, '\d+')
             THEN x::VARCHAR
         ELSE coalesce((SELECT n.nspname FROM __hati_catalog.pg.pg_namespace n
                        WHERE n.oid = x::BIGINT), x::VARCHAR) END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regrole_text(x) AS
    __hati_catalog.pg.pg_get_userbyid(x);
