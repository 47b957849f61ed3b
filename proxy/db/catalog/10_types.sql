-- pg_type and the DuckDB type -> Postgres type mapping.
-- {{pg_type_rows}} and {{duck_kind_rows}} come from proxy/db/catalog/types.py, which
-- reads the wire layer's OID table: RowDescription and pg_type always agree.

CREATE OR REPLACE TABLE __hati_catalog.pg.__hati_pg_type_static (
    oid BIGINT, typname VARCHAR, typlen SMALLINT, typbyval BOOLEAN, typtype VARCHAR,
    typcategory VARCHAR, typispreferred BOOLEAN, typdelim VARCHAR, typelem BIGINT,
    typarray BIGINT, typinput VARCHAR, typoutput VARCHAR, typreceive VARCHAR,
    typsend VARCHAR, typalign VARCHAR, typstorage VARCHAR, typcollation BIGINT,
    typnamespace BIGINT DEFAULT 11, typowner BIGINT DEFAULT 10,
    typisdefined BOOLEAN DEFAULT TRUE, typrelid BIGINT DEFAULT 0,
    typsubscript VARCHAR DEFAULT NULL, typmodin VARCHAR DEFAULT NULL,
    typmodout VARCHAR DEFAULT NULL, typanalyze VARCHAR DEFAULT NULL,
    typnotnull BOOLEAN DEFAULT FALSE, typbasetype BIGINT DEFAULT 0,
    typtypmod INTEGER DEFAULT -1, typndims INTEGER DEFAULT 0,
    typdefaultbin VARCHAR DEFAULT NULL, typdefault VARCHAR DEFAULT NULL,
    typacl VARCHAR[] DEFAULT NULL
);
INSERT INTO __hati_catalog.pg.__hati_pg_type_static (oid, typname, typlen, typbyval, typtype, typcategory,
    typispreferred, typdelim, typelem, typarray, typinput, typoutput, typreceive, typsend,
    typalign, typstorage, typcollation)
VALUES {{pg_type_rows}};

-- pgvector's types (the extension is built in: pg_extension in 40_system.sql), in public as
-- CREATE EXTENSION vector puts them. `vector(n)` creates a DuckDB FLOAT[n] column (a fixed
-- size array of float; `real[n]` does too), so the catalog shows every FLOAT[n] column as
-- vector(n): atttypid 16400, atttypmod n, as pgvector keeps it. Its values travel as vector
-- too (proxy.wire.vector: text '[1,2]', binary vector_send), so pgvector's client adapters
-- (register_vector for psycopg / asyncpg, SQLAlchemy's Vector) read them.
INSERT INTO __hati_catalog.pg.__hati_pg_type_static (oid, typname, typlen, typbyval, typtype, typcategory,
    typispreferred, typdelim, typelem, typarray, typinput, typoutput, typreceive, typsend,
    typalign, typstorage, typcollation, typnamespace, typmodin, typmodout)
VALUES (16400, 'vector', -1, FALSE, 'b', 'U', FALSE, ',', 0, 16405, 'vector_in', 'vector_out',
        'vector_recv', 'vector_send', 'i', 'e', 0, 2200, 'vector_typmod_in', NULL),
       (16405, '_vector', -1, FALSE, 'b', 'A', FALSE, ',', 16400, 0, 'array_in', 'array_out',
        'array_recv', 'array_send', 'i', 'x', 0, 2200, 'array_typmod_in', 'array_typmod_out');

-- information_schema's domains (and their array types), as in PostgreSQL 15: SQLAlchemy's
-- domain reflection lists them. Their CHECKs are in pg_constraint (35_constraints.sql).
INSERT INTO __hati_catalog.pg.__hati_pg_type_static (oid, typname, typlen, typbyval, typtype, typcategory,
    typispreferred, typdelim, typelem, typarray, typinput, typoutput, typreceive, typsend,
    typalign, typstorage, typcollation, typnamespace, typbasetype, typtypmod, typdefault)
VALUES (13221, 'cardinal_number', 4, TRUE, 'd', 'N', FALSE, ',', 0, 13220, 'domain_in',
        'int4out', 'domain_recv', 'int4send', 'i', 'p', 0, 13000, 23, -1, NULL),
       (13224, 'character_data', -1, FALSE, 'd', 'S', FALSE, ',', 0, 13223, 'domain_in',
        'varcharout', 'domain_recv', 'varcharsend', 'i', 'x', 950, 13000, 1043, -1, NULL),
       (13226, 'sql_identifier', 64, FALSE, 'd', 'S', FALSE, ',', 0, 13225, 'domain_in',
        'nameout', 'domain_recv', 'namesend', 'c', 'p', 950, 13000, 19, -1, NULL),
       (13232, 'time_stamp', 8, TRUE, 'd', 'D', FALSE, ',', 0, 13231, 'domain_in',
        'timestamptz_out', 'domain_recv', 'timestamptz_send', 'd', 'p', 0, 13000, 1184, 2,
        'CURRENT_TIMESTAMP(2)'),
       (13234, 'yes_or_no', -1, FALSE, 'd', 'S', FALSE, ',', 0, 13233, 'domain_in',
        'varcharout', 'domain_recv', 'varcharsend', 'i', 'x', 950, 13000, 1043, 7, NULL);
INSERT INTO __hati_catalog.pg.__hati_pg_type_static (oid, typname, typlen, typbyval, typtype, typcategory,
    typispreferred, typdelim, typelem, typarray, typinput, typoutput, typreceive, typsend,
    typalign, typstorage, typcollation, typnamespace, typsubscript)
SELECT typarray, '_' || typname, -1, FALSE, 'b', 'A', FALSE, ',', oid, 0, 'array_in',
       'array_out', 'array_recv', 'array_send', CASE WHEN typalign = 'd' THEN 'd' ELSE 'i' END,
       'x', typcollation, 13000, 'array_subscript_handler'
FROM __hati_catalog.pg.__hati_pg_type_static WHERE typtype = 'd';

-- Domains (CREATE DOMAIN: proxy/pgserver/domains.py): the registry's rows, with the oid of
-- the DuckDB type alias each is; their CHECKs; and the columns of a domain type, which
-- DuckDB knows by the base type, found by the table CHECK naming the domain
-- (transpiler/domains.py column_check).
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_domain_list AS
SELECT y.type_oid::BIGINT AS oid, d.*,
       CASE WHEN d.schema_name = 'main' THEN 2200 ELSE y.schema_oid END::BIGINT AS nsoid,
       CASE WHEN d.schema_name = 'main' THEN 'public' ELSE d.schema_name END AS pg_schema
FROM {{duck_db_ident}}.main.__hati_domains d
JOIN duckdb_types() y ON y.database_name = {{duck_db}} AND y.schema_name = d.schema_name
 AND y.type_name = d.name AND NOT y.internal;
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_domain_constraints AS
SELECT (805306368 + d.oid * 64 + row_number() OVER (PARTITION BY d.oid ORDER BY k.conname))::BIGINT
           AS oid, k.conname, d.nsoid, 'c', FALSE, FALSE, k.validated, 0::BIGINT, d.oid,
       0::BIGINT, 0::BIGINT, 0::BIGINT, ' ', ' ', ' ', TRUE, 0::INTEGER, FALSE, NULL::SMALLINT[],
       NULL::SMALLINT[], NULL::BIGINT[], NULL::BIGINT[], NULL::BIGINT[], NULL::BIGINT[],
       NULL::BIGINT[], k.expr_duck, k.expr_pg
FROM __hati_catalog.pg.__hati_domain_list d
JOIN {{duck_db_ident}}.main.__hati_domain_checks k
  ON k.schema_name = d.schema_name AND k.domain_name = d.name;
CREATE OR REPLACE VIEW __hati_catalog.pg.__hati_domain_cols AS
SELECT c.table_oid, c.constraint_column_names[1] AS column_name, d.oid, d.name,
       d.schema_name, d.default_duck
FROM duckdb_constraints() c
JOIN __hati_catalog.pg.__hati_domain_list d
  ON regexp_extract(c.expression, '^CASE  WHEN \(\(''hati_domain:([^'']+)''', 1)
     = d.schema_name || '.' || d.name
WHERE c.constraint_type = 'CHECK' AND starts_with(c.expression, 'CASE  WHEN ((''hati_domain:');
-- Who owns what (proxy/access/ownership.py fills it): class is relation, sequence, index,
-- function, schema or type; nspname as clients see it (public for main); no row: oid 10.
-- owner_org: the owning key's organisation, '' for a server user (org_scope.py filters by it).
CREATE OR REPLACE TABLE __hati_catalog.pg.__hati_owners
    (class VARCHAR, nspname VARCHAR, name VARCHAR, owner_oid BIGINT, owner_org VARCHAR);

-- pg_type: the built-in rows above, and each user ENUM type (CREATE TYPE ... AS ENUM) with
-- typtype 'e', as PostgreSQL shows it (psql \dT, SQLAlchemy's enum reflection); its labels
-- are in pg_enum (40_system.sql).
CREATE OR REPLACE VIEW __hati_catalog.pg.pg_type AS
SELECT * FROM __hati_catalog.pg.__hati_pg_type_static
UNION ALL
SELECT type_oid::BIGINT, type_name, 4::SMALLINT, TRUE, 'e', 'E', FALSE, ',', 0::BIGINT,
       (536870912 + type_oid)::BIGINT, 'enum_in', 'enum_out', 'enum_recv', 'enum_send', 'i',
       'p', 0::BIGINT,
       CASE WHEN schema_name = 'main' THEN 2200 ELSE schema_oid END::BIGINT,
       coalesce(ow.owner_oid, 10)::BIGINT,
       TRUE, 0::BIGINT, NULL, NULL, NULL, NULL, FALSE, 0::BIGINT, -1, 0, NULL, NULL,
       NULL::VARCHAR[]
FROM duckdb_types() t
-- its creator (proxy/access/ownership.py), as psql's \dT+ Owner shows
LEFT JOIN __hati_catalog.pg.__hati_owners ow
  ON ow.class = 'type' AND ow.name = lower(t.type_name)
 AND ow.nspname = CASE WHEN t.schema_name = 'main' THEN 'public' ELSE t.schema_name END
WHERE logical_type = 'ENUM' AND NOT internal AND database_name = {{duck_db}}
UNION ALL
-- each enum's array type (_mood), oid 2^29 + the enum's oid (DuckDB has no array types of
-- its own; its small catalog oids leave that range free)
SELECT (536870912 + type_oid)::BIGINT, '_' || type_name, -1::SMALLINT, FALSE, 'b', 'A',
       FALSE, ',', type_oid::BIGINT, 0::BIGINT, 'array_in', 'array_out', 'array_recv',
       'array_send', 'i', 'x', 0::BIGINT,
       CASE WHEN schema_name = 'main' THEN 2200 ELSE schema_oid END::BIGINT, 10::BIGINT,
       TRUE, 0::BIGINT, 'array_subscript_handler', NULL, NULL, 'array_typanalyze', FALSE,
       0::BIGINT, -1, 0, NULL, NULL, NULL::VARCHAR[]
FROM duckdb_types()
WHERE logical_type = 'ENUM' AND NOT internal AND database_name = {{duck_db}}
UNION ALL
-- each domain (typtype 'd': the base type's storage, typbasetype, typnotnull, typdefault)
SELECT d.oid, d.name, coalesce(b.typlen, -1), coalesce(b.typbyval, FALSE), 'd',
       coalesce(b.typcategory, 'U'), FALSE, ',', 0::BIGINT, (536870912 + d.oid)::BIGINT,
       'domain_in', coalesce(b.typoutput, 'textout'), 'domain_recv',
       coalesce(b.typsend, 'textsend'), coalesce(b.typalign, 'i'), coalesce(b.typstorage, 'x'),
       coalesce(b.typcollation, 0)::BIGINT, d.nsoid, 10::BIGINT, TRUE, 0::BIGINT, NULL, NULL,
       NULL, NULL, d.not_null, d.base_oid, d.base_typmod, 0, d.default_pg, d.default_pg,
       NULL::VARCHAR[]
FROM __hati_catalog.pg.__hati_domain_list d
LEFT JOIN __hati_catalog.pg.__hati_pg_type_static b ON b.oid = d.base_oid
UNION ALL
SELECT (536870912 + d.oid)::BIGINT, '_' || d.name, -1::SMALLINT, FALSE, 'b', 'A', FALSE, ',',
       d.oid, 0::BIGINT, 'array_in', 'array_out', 'array_recv', 'array_send',
       coalesce(b.typalign, 'i'), 'x', coalesce(b.typcollation, 0)::BIGINT, d.nsoid, 10::BIGINT,
       TRUE, 0::BIGINT, 'array_subscript_handler', NULL, NULL, 'array_typanalyze', FALSE,
       0::BIGINT, -1, 0, NULL, NULL, NULL::VARCHAR[]
FROM __hati_catalog.pg.__hati_domain_list d
LEFT JOIN __hati_catalog.pg.__hati_pg_type_static b ON b.oid = d.base_oid;

-- The oid of the user ENUM type a column type string names (DuckDB's column types say
-- ENUM('a', 'b'), without the type's name): the one enum with exactly those labels, in
-- order (its array type for ENUM(...)[]). Two enums with the same labels cannot be told
-- apart: NULL then, and the column shows as text, as before.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_enum_oid(dt) AS
    CASE WHEN dt LIKE '%)[]' THEN 536870912 ELSE 0 END + (
    SELECT CASE WHEN count(*) = 1 THEN min(type_oid) END
    FROM duckdb_types()
    WHERE logical_type = 'ENUM' AND NOT internal AND database_name = {{duck_db}}
      AND 'ENUM(' || array_to_string(list_transform(labels,
              l -> '''' || replace(l, '''', '''''') || ''''), ', ') || ')'
          = regexp_replace(dt, '\[\]$', '')
);

-- n of a DuckDB FLOAT[n] column type (a pgvector vector(n)), else NULL.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_vector_dims(dt) AS
    CASE WHEN regexp_full_match(dt, 'FLOAT\[\d+\]')
         THEN CAST(regexp_extract(dt, '\[(\d+)\]', 1) AS INTEGER) END;

-- DuckDB base type name (upper case, no parameters) -> Postgres scalar type name.
CREATE OR REPLACE TABLE __hati_catalog.pg.__hati_duck_kind (duck_name VARCHAR, kind VARCHAR);
INSERT INTO __hati_catalog.pg.__hati_duck_kind VALUES {{duck_kind_rows}};

-- Postgres' SQL spelling of a type (format_type, information_schema.data_type).
CREATE OR REPLACE TABLE __hati_catalog.pg.__hati_sql_name (typname VARCHAR, sql_name VARCHAR);
INSERT INTO __hati_catalog.pg.__hati_sql_name VALUES
    ('bool', 'boolean'), ('int2', 'smallint'), ('int4', 'integer'), ('int8', 'bigint'),
    ('float4', 'real'), ('float8', 'double precision'), ('varchar', 'character varying'),
    ('bpchar', 'character'), ('timestamp', 'timestamp without time zone'),
    ('timestamptz', 'timestamp with time zone'), ('time', 'time without time zone'),
    ('timetz', 'time with time zone'), ('varbit', 'bit varying'), ('char', '"char"');

CREATE OR REPLACE TABLE __hati_catalog.pg.pg_range AS
SELECT * FROM (VALUES
    (3904::BIGINT, 23::BIGINT, 4451::BIGINT), (3906, 1700, 4532), (3908, 1114, 4533),
    (3910, 1184, 4534), (3912, 1082, 4535), (3926, 20, 4536)
) v(rngtypid, rngsubtype, rngmultitypid),
LATERAL (SELECT 0::BIGINT AS rngcollation, 0::BIGINT AS rngsubopc,
                '-'::VARCHAR AS rngcanonical, '-'::VARCHAR AS rngsubdiff);

-- One DuckDB column type string -> (atttypid, atttypmod, attndims), mapped exactly like
-- proxy.wire.types.pg_type_for (arrays of a scalar kind -> _kind, STRUCT/MAP/ENUM... -> text),
-- but for FLOAT[n]: vector(n), see above.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_type_parts(dt) AS
    regexp_extract(dt, '^(.*?)\s*((?:\[\d*\])*)$', ['base', 'dims']);

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_type_kind(dt) AS (
    SELECT coalesce(__h_k.kind, 'duck') FROM __hati_catalog.pg.__hati_duck_kind __h_k
    WHERE __h_k.duck_name = upper(trim(regexp_replace(
        __hati_catalog.pg.__hati_type_parts(dt).base, '\(.*$', '', 's')))
);

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_type_oid(dt) AS coalesce(
    CASE WHEN __hati_catalog.pg.__hati_vector_dims(dt) IS NOT NULL THEN 16400 END,
    CASE WHEN dt LIKE 'ENUM(%' THEN __hati_catalog.pg.__hati_enum_oid(dt) END, (
    WITH __h_p AS (SELECT coalesce(__hati_catalog.pg.__hati_type_kind(dt), 'duck') AS kind,
                      __hati_catalog.pg.__hati_type_parts(dt).dims <> '' AS is_array)
    SELECT CASE WHEN __h_p.kind = 'duck' THEN 25
                WHEN __h_p.is_array THEN __h_t.typarray ELSE __h_t.oid END
    FROM __h_p LEFT JOIN __hati_catalog.pg.pg_type __h_t ON __h_t.typname = __h_p.kind
));

-- DECIMAL(38,10) is PostgreSQL's bare numeric (transpiler/numeric_type.py): typmod -1.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_type_mod(dt) AS
    CASE WHEN replace(upper(__hati_catalog.pg.__hati_type_parts(dt).base), ' ', '')
              = {{bare_numeric}} THEN -1
         WHEN upper(dt) SIMILAR TO '(DECIMAL|NUMERIC)\(\d+,\s*\d+\).*'
         THEN ((CAST(regexp_extract(dt, '\((\d+)', 1) AS INTEGER) << 16)
               | CAST(regexp_extract(dt, ',\s*(\d+)\)', 1) AS INTEGER)) + 4
         -- timestamp(3) / timestamp(0) are DuckDB's TIMESTAMP_MS / TIMESTAMP_S
         WHEN dt = 'TIMESTAMP_MS' THEN 3 WHEN dt = 'TIMESTAMP_S' THEN 0
         ELSE coalesce(__hati_catalog.pg.__hati_vector_dims(dt), -1) END;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_type_ndims(dt) AS
    CASE WHEN coalesce(__hati_catalog.pg.__hati_type_kind(dt), 'duck') = 'duck'
              OR __hati_catalog.pg.__hati_vector_dims(dt) IS NOT NULL THEN 0
         ELSE length(regexp_extract_all(__hati_catalog.pg.__hati_type_parts(dt).dims, '\[')) END;

-- Postgres' name of a type with its modifier, as format_type(oid, typmod) prints it.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_format_base(name, typmod) AS
    CASE WHEN name = 'numeric' AND typmod >= 4
             THEN 'numeric(' || ((typmod - 4) >> 16) || ',' || ((typmod - 4) & 65535) || ')'
         WHEN name = 'vector' AND typmod >= 0 THEN 'vector(' || typmod || ')'
         WHEN name IN ('timestamp', 'timestamptz', 'time', 'timetz') AND typmod >= 0
             THEN (SELECT regexp_replace(__h_s.sql_name, '^(\w+)', '\1(' || typmod || ')')
                   FROM __hati_catalog.pg.__hati_sql_name __h_s WHERE __h_s.typname = name)
         WHEN name IN ('varchar', 'bpchar') AND typmod >= 4
             THEN (SELECT __h_s.sql_name FROM __hati_catalog.pg.__hati_sql_name __h_s
                   WHERE __h_s.typname = name) || '(' || (typmod - 4) || ')'
         ELSE coalesce((SELECT __h_s.sql_name FROM __hati_catalog.pg.__hati_sql_name __h_s
                        WHERE __h_s.typname = name), name) END;

-- A type of a schema off the search path (an enum of schema app, information_schema's
-- domains) is qualified, as PostgreSQL's format_type does: app.status, app.status[].
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_type_qualifier(nsp) AS
    CASE WHEN nsp IN (11, 2200) THEN ''
         WHEN nsp = 13000 THEN 'information_schema.'
         ELSE coalesce((SELECT min(__h_s.schema_name) || '.' FROM duckdb_schemas() __h_s
                        WHERE __h_s.oid = nsp), '') END;

CREATE OR REPLACE MACRO __hati_catalog.pg.format_type(type_oid, typmod) AS
    CASE WHEN type_oid IS NULL THEN NULL ELSE coalesce(
        -- a domain: schema-qualified when off the session's search_path (mirrored when a
        -- statement calls format_type: statement_start.py), as PostgreSQL shows it
        (SELECT CASE WHEN list_contains(string_split(replace(replace(
                    coalesce(getvariable('pg:search_path'), 'public'), '"', ''), ' ', ''), ','),
                    __h_d.pg_schema) THEN __h_d.name ELSE __h_d.pg_schema || '.' || __h_d.name END
         FROM __hati_catalog.pg.__hati_domain_list __h_d WHERE __h_d.oid = type_oid), (
        SELECT __hati_catalog.pg.__hati_type_qualifier(
                   CASE WHEN __h_t.typcategory = 'A' AND __h_e.oid IS NOT NULL
                        THEN __h_e.typnamespace ELSE __h_t.typnamespace END)
            || CASE WHEN __h_t.typcategory = 'A' AND __h_e.oid IS NOT NULL
                    THEN __hati_catalog.pg.__hati_format_base(__h_e.typname, coalesce(typmod, -1)) || '[]'
                    ELSE __hati_catalog.pg.__hati_format_base(__h_t.typname, coalesce(typmod, -1)) END
        FROM __hati_catalog.pg.pg_type __h_t
        LEFT JOIN __hati_catalog.pg.pg_type __h_e ON __h_e.oid = __h_t.typelem
        WHERE __h_t.oid = type_oid), '???') END;

-- The built-in types' names, as format_type(oid, NULL) prints them, read once: what a column
-- default's string constant is cast to (30_relations.sql __hati_pg_default), in one join.
CREATE OR REPLACE TABLE __hati_catalog.pg.__hati_type_shown AS
SELECT oid, __hati_catalog.pg.format_type(oid, NULL) AS shown FROM __hati_catalog.pg.pg_type;
