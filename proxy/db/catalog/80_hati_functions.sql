-- Names the transpiler emits for Postgres functions DuckDB lacks:
-- `pg_catalog.f(...)` / `f(...)` -> `__hati_f(...)` for f in
-- transpiler.pgcompat.MISSING_PG_FUNCTIONS (tests/catalog checks every name is here).

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_get_userbyid(r) AS
    __hati_catalog.pg.pg_get_userbyid(r);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_encoding_to_char(e) AS
    __hati_catalog.pg.pg_encoding_to_char(e);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_client_encoding() AS 'UTF8';

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_get_indexdef(i) AS
    __hati_catalog.pg.pg_get_indexdef(i),
    (i, col, pretty) AS __hati_catalog.pg.pg_get_indexdef(i, col, pretty);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_get_function_arguments(f) AS
    __hati_catalog.pg.pg_get_function_arguments(f);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_get_function_identity_arguments(f) AS
    __hati_catalog.pg.pg_get_function_identity_arguments(f);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_get_function_result(f) AS
    __hati_catalog.pg.pg_get_function_result(f);
-- A function by name ('now', 'public.f') or signature ('f(int, text)'): its oid in
-- pg_proc, the first of its overloads (a signature picks by the number of arguments;
-- macros have no argument types to pick by). NULL when there is none.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_proc_oid(sig) AS (
    WITH __h_s AS (
        SELECT trim(regexp_extract(trim(sig), '^([^(]*)', 1)) AS qname,
               CASE WHEN NOT contains(sig, '(') THEN NULL
                    WHEN trim(regexp_extract(sig, '\((.*)\)\s*$', 1)) = '' THEN 0
                    ELSE len(string_split(regexp_extract(sig, '\((.*)\)\s*$', 1), ','))
               END AS nargs),
    __h_q AS (
        SELECT CASE WHEN contains(qname, '.')
                    THEN __hati_catalog.pg.__hati_ident(string_split(qname, '.')[1]) END AS nsp,
               __hati_catalog.pg.__hati_ident(string_split(qname, '.')[-1]) AS name, nargs
        FROM __h_s)
    SELECT min(__h_p.oid) FROM __hati_catalog.pg.pg_proc __h_p
    JOIN __hati_catalog.pg.pg_namespace __h_n ON __h_n.oid = __h_p.pronamespace, __h_q
    WHERE __h_p.proname = __h_q.name
      AND (__h_q.nsp IS NULL OR __h_n.nspname = __h_q.nsp
           OR (__h_q.nsp = 'main' AND __h_n.nspname = 'public'))
      AND (__h_q.nargs IS NULL OR __h_p.pronargs = __h_q.nargs));

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regprocedure(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) <> 'VARCHAR' OR regexp_full_match(x::VARCHAR, '\d+') THEN x::BIGINT
         ELSE coalesce(__hati_catalog.pg.__hati_proc_oid(x::VARCHAR),
                       error('function "' || x::VARCHAR || '" does not exist')::BIGINT) END;
-- As PostgreSQL prints a regprocedure: name(argument types), schema-qualified when the
-- schema is not on the search path.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regprocedure_name(x) AS
    CASE WHEN x IS NULL THEN NULL
         WHEN typeof(x) = 'VARCHAR' AND NOT regexp_full_match(x::VARCHAR, '\d+') THEN x::VARCHAR
         WHEN x::BIGINT = 0 THEN '-'
         ELSE coalesce((
             SELECT CASE WHEN __h_n.nspname IN ('public', 'pg_catalog') THEN ''
                         ELSE __h_n.nspname || '.' END
                    || __h_p.proname || '('
                    || coalesce((SELECT string_agg(__hati_catalog.pg.format_type(__h_a.t, NULL), ','
                                                   ORDER BY __h_a.i)
                                 FROM (SELECT unnest(__h_p.proargtypes) AS t,
                                              generate_subscripts(__h_p.proargtypes, 1) AS i) __h_a),
                                '') || ')'
             FROM __hati_catalog.pg.pg_proc __h_p
             JOIN __hati_catalog.pg.pg_namespace __h_n ON __h_n.oid = __h_p.pronamespace
             WHERE __h_p.oid = TRY_CAST(x AS BIGINT) LIMIT 1), x::VARCHAR) END;

-- As PostgreSQL's ruleutils prints a function (psql's \sf, DBeaver): the declaration
-- kept for a SQL function (50_functions.sql pg_proc), LANGUAGE internal for the rest.
-- `f` is an oid, or a name from a regproc cast (regproc values are names here).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_get_functiondef(f) AS (
    SELECT 'CREATE OR REPLACE FUNCTION ' || __h_n.nspname || '.' || __h_p.proname || '('
           || __h_p.__hati_arguments || ')' || chr(10) || ' RETURNS ' || __h_p.__hati_result
           || chr(10) || ' LANGUAGE ' || __h_l.lanname || chr(10)
           || CASE WHEN __h_p.provolatile = 'v' AND NOT __h_p.proisstrict THEN ''
                   ELSE CASE __h_p.provolatile WHEN 'i' THEN ' IMMUTABLE' WHEN 's' THEN ' STABLE'
                             ELSE '' END
                        || CASE WHEN __h_p.proisstrict THEN ' STRICT' ELSE '' END || chr(10) END
           || 'AS $function$' || coalesce(__h_p.prosrc, __h_p.proname) || '$function$' || chr(10)
    FROM __hati_catalog.pg.pg_proc __h_p
    JOIN __hati_catalog.pg.pg_namespace __h_n ON __h_n.oid = __h_p.pronamespace
    JOIN __hati_catalog.pg.pg_language __h_l ON __h_l.oid = __h_p.prolang
    WHERE __h_p.oid = CASE WHEN typeof(f) = 'VARCHAR'
                           THEN __hati_catalog.pg.__hati_proc_oid(f::VARCHAR)
                           ELSE TRY_CAST(f AS BIGINT) END
    LIMIT 1);
-- Plain: names qualified, as pg_dump (search_path '') gets them; pretty: as psql's \d
-- with the default search_path (hatiproxy does not follow the session's search_path here).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_get_triggerdef(t) AS (
    SELECT __h_t.head || ' ON ' || __h_t.nspname || '.' || __h_t.table_name || __h_t.tail
           || __h_t.function_schema || '.' || __h_t.function_name || '()'
    FROM __hati_catalog.pg.__hati_triggers __h_t WHERE __h_t.oid = t),
    (t, pretty) AS (
    SELECT __h_t.head || ' ON '
           || CASE WHEN pretty AND __h_t.nspname = 'public' THEN ''
                   ELSE __h_t.nspname || '.' END
           || __h_t.table_name || __h_t.tail
           || CASE WHEN pretty AND __h_t.function_schema = 'public' THEN ''
                   ELSE __h_t.function_schema || '.' END
           || __h_t.function_name || '()'
    FROM __hati_catalog.pg.__hati_triggers __h_t WHERE __h_t.oid = t);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_get_ruledef(r) AS NULL::VARCHAR,
    (r, pretty) AS NULL::VARCHAR;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_get_partkeydef(r) AS NULL::VARCHAR;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_get_partition_constraintdef(r) AS
    NULL::VARCHAR;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_get_serial_sequence(t, c) AS
    __hati_catalog.pg.pg_get_serial_sequence(t, c);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_uuid_generate_v4() AS gen_random_uuid();
-- pgcrypto's digest(data, type) -> bytea: md5, sha1, sha2 (sha224/384/512: pg_udfs.py;
-- gen_random_uuid() is DuckDB's own); crypt, hmac and the pgp_* functions are not there (42883).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_digest(data, algo) AS
    unhex(CASE lower(algo) WHEN 'md5' THEN md5(data) WHEN 'sha1' THEN sha1(data)
                           WHEN 'sha256' THEN sha256(data)
                           WHEN 'sha224' THEN hex(__hati_udf_sha224(data::BLOB))
                           WHEN 'sha384' THEN hex(__hati_udf_sha384(data::BLOB))
                           WHEN 'sha512' THEN hex(__hati_udf_sha512(data::BLOB))
          ELSE error('Cannot use "' || algo || '": No such hash algorithm') END);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_get_statisticsobjdef_columns(s) AS
    NULL::VARCHAR;

-- Sizes: DuckDB has no per-relation storage figures; 0 keeps \dt+ and DBeaver working.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_relation_size(r) AS 0::BIGINT,
    (r, fork) AS 0::BIGINT;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_total_relation_size(r) AS 0::BIGINT;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_table_size(r) AS 0::BIGINT;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_indexes_size(r) AS 0::BIGINT;
-- pg_database_size: 83_pg_functions_more.sql
-- pg_size_bytes('1.5 GB'): PostgreSQL's units (bytes, B, kB, MB, GB, TB, PB; any case).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_size_bytes(s) AS
    CASE WHEN s IS NULL THEN NULL
         WHEN NOT regexp_full_match(trim(s::VARCHAR),
                  '[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*(bytes|b|kb|mb|gb|tb|pb)?', 'i')
         THEN error('invalid size: "' || s::VARCHAR || '"')::BIGINT
         ELSE round(regexp_extract(trim(s::VARCHAR), '^[-+]?[0-9.]+([eE][-+]?[0-9]+)?')::DOUBLE
              * CASE lower(regexp_extract(trim(s::VARCHAR), '[a-zA-Z]*$'))
                    WHEN 'kb' THEN 1024 WHEN 'mb' THEN 1048576 WHEN 'gb' THEN 1073741824
                    WHEN 'tb' THEN 1099511627776 WHEN 'pb' THEN 1125899906842624 ELSE 1 END)::BIGINT
    END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_postmaster_start_time() AS {{started}}::TIMESTAMPTZ;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_conf_load_time() AS {{started}}::TIMESTAMPTZ;
-- pg_column_size: 83_pg_functions_more.sql
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_tablespace_location(t) AS '';
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_is_in_recovery() AS FALSE;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_current_xact_id() AS txid_current();
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_stat_get_numscans(r) AS 0::BIGINT;

-- Backends: the session's variable __hati_backend is '<pid>:<secret>' (set at login);
-- the signal function checks the secret (proxy/db/backend_functions.py).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_backend_pid() AS
    TRY_CAST(split_part(getvariable('__hati_backend'), ':', 1) AS INTEGER);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_cancel_backend(p) AS
    __hati_signal_backend(getvariable('__hati_backend'), p, 'cancel', 0);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_terminate_backend(p) AS
    __hati_signal_backend(getvariable('__hati_backend'), p, 'terminate', 0),
    (p, timeout) AS __hati_signal_backend(getvariable('__hati_backend'), p, 'terminate', timeout);

-- LISTEN / NOTIFY: the session's open transaction collects them (proxy/db/notify_functions.py).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_notify(c, p) AS
    __hati_notify(getvariable('__hati_backend'), c, p);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_listening_channels() AS
    unnest(__hati_listening_channels(getvariable('__hati_backend')));

-- The connection's addresses: session variables set at login (proxy/db/backend_functions.py
-- address_sql); NULL over a Unix socket, as in PostgreSQL. (Text: DuckDB has no inet type
-- without its inet extension.)
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_inet_server_addr() AS
    getvariable('__hati_server_addr')::VARCHAR;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_inet_server_port() AS
    TRY_CAST(getvariable('__hati_server_port') AS INTEGER);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_inet_client_addr() AS
    getvariable('__hati_client_addr')::VARCHAR;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_inet_client_port() AS
    TRY_CAST(getvariable('__hati_client_port') AS INTEGER);

-- Advisory locks: one embedded database, no other lock holders to coordinate with.
-- The void ones answer '' (a void value's text in PostgreSQL), not NULL.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_advisory_unlock_all() AS '';
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_advisory_lock(k) AS '',
    (k1, k2) AS '';
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_advisory_xact_lock(k) AS '',
    (k1, k2) AS '';
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_advisory_unlock(k) AS TRUE,
    (k1, k2) AS TRUE;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_try_advisory_lock(k) AS TRUE,
    (k1, k2) AS TRUE;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_get_keywords() AS TABLE
    SELECT * FROM __hati_catalog.pg.pg_get_keywords();

-- Settings inside larger queries (a bare `SHOW x` / `SET x` never reaches DuckDB).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_current_setting(setting_name) AS coalesce(
    (SELECT __h_s.setting FROM __hati_catalog.pg.pg_settings __h_s
     WHERE lower(__h_s.name) = lower(setting_name)),
    error('unrecognized configuration parameter "' || setting_name || '"')::VARCHAR),
    (setting_name, missing_ok) AS coalesce(
    (SELECT __h_s.setting FROM __hati_catalog.pg.pg_settings __h_s
     WHERE lower(__h_s.name) = lower(setting_name)),
    CASE WHEN missing_ok THEN NULL::VARCHAR
         ELSE error('unrecognized configuration parameter "' || setting_name || '"')::VARCHAR
    END);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_set_config(setting_name, new_value, is_local) AS
    new_value::VARCHAR;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_version() AS {{version_banner}};

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_quote_ident(s) AS
    CASE WHEN regexp_full_match(s, '[a-z_][a-z0-9_$]*')
              AND NOT EXISTS (SELECT 1 FROM duckdb_keywords() __h_k
                              WHERE __h_k.keyword_name = s AND __h_k.keyword_category = 'reserved')
         THEN s ELSE '"' || replace(s, '"', '""') || '"' END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_quote_literal(s) AS
    '''' || replace(s::VARCHAR, '''', '''''') || '''';

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_to_regclass(n) AS
    __hati_catalog.pg.to_regclass(n);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_to_regtype(n) AS
    __hati_catalog.pg.to_regtype(n);
-- regproc values are names here (45_reg.sql); regprocedure values oids
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_to_regproc(n) AS
    CASE WHEN __hati_catalog.pg.__hati_proc_oid(n::VARCHAR) IS NOT NULL
         THEN regexp_replace(n::VARCHAR, '^pg_catalog\.', '') END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_to_regprocedure(n) AS
    __hati_catalog.pg.__hati_proc_oid(n::VARCHAR);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_to_regnamespace(n) AS
    __hati_catalog.pg.to_regnamespace(n);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_to_regrole(n) AS (
    SELECT __h_r.oid FROM __hati_catalog.pg.__hati_roles __h_r
    WHERE __h_r.rolname = __hati_catalog.pg.__hati_ident(n::VARCHAR));

-- PostgreSQL's `/` and `%` (transpiler/division.py): `//` truncates two integers; a zero
-- divisor raises 22012 (duckdb_errors.py reads the message) unless the dividend is NULL.
-- __hati_div picks its overload by the operands' types: integers of each width truncate
-- (keeping the width, as int2 / int2 is int2), float4 and float8 raise 22003 on overflow
-- and underflow as float8_div does, numeric (DECIMAL, or an integer over one) is
-- __hati_ndiv's DECIMAL(38,16), and INTERVAL has its own (DuckDB has no `//` for it).
-- The untyped overload catches the rest (VARCHAR, NULL). DuckDB picks a typed overload
-- for an operand it cannot type yet (an aggregate, a window function, unnest: it may take
-- INTEGER for a sum), so those take __hati_idiv, which has none. The *_once forms bind a
-- divisor with side effects (nextval, random) once, through a one-element list lambda.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_idiv(a, b) AS
    CASE WHEN b = 0 THEN CASE WHEN a IS NOT NULL THEN error('division by zero') END
         ELSE a // b END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_fdiv(a, b) AS
    CASE WHEN b = 0 THEN CASE WHEN a IS NOT NULL THEN error('division by zero') END
         WHEN isinf(a / b) AND isfinite(a) THEN error('value out of range: overflow')
         WHEN a / b = 0 AND a <> 0 AND isfinite(b) THEN error('value out of range: underflow')
         ELSE a / b END;
-- numeric / numeric, a and b DECIMAL(38,10). PostgreSQL's result scale depends on the
-- values (select_div_scale: 16 significant digits, at least the inputs' scales: 16
-- decimals for a quotient in [1, 10000), 20 below 1); a column needs one type, so 16,
-- right for the commonest case. DuckDB divides DECIMALs as DOUBLEs (~16 significant
-- digits, too few) and HUGEINT division is ~30x slower than this: the float quotient
-- rounded to 6 decimals (hi) is exact in DECIMAL, and the rest (a - hi * b) / b is
-- below 1e-6, so a DOUBLE carries it to the 16th decimal; exact for quotients below
-- ~1e15, |a| below 1e22 (DECIMAL(38,16) holds 22 integer digits).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_ndiv_parts(a, b, hi) AS
    hi + ((a - hi * b)::DOUBLE / b::DOUBLE)::DECIMAL(38, 16);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_ndiv(a, b) AS
    CASE WHEN b = 0 THEN CASE WHEN a IS NOT NULL THEN error('division by zero') END
         ELSE __hati_catalog.pg.__hati_ndiv_parts(
             a, b, round(a::DOUBLE / b::DOUBLE, 6)::DECIMAL(38, 6)) END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_div(a, b) AS
    __hati_catalog.pg.__hati_idiv(a, b),
    (a SMALLINT, b SMALLINT) AS __hati_catalog.pg.__hati_idiv(a, b),
    (a INTEGER, b INTEGER) AS __hati_catalog.pg.__hati_idiv(a, b),
    (a BIGINT, b BIGINT) AS __hati_catalog.pg.__hati_idiv(a, b),
    (a HUGEINT, b HUGEINT) AS __hati_catalog.pg.__hati_idiv(a, b),
    (a FLOAT, b FLOAT) AS __hati_catalog.pg.__hati_fdiv(a, b),
    (a DOUBLE, b DOUBLE) AS __hati_catalog.pg.__hati_fdiv(a, b),
    (a DECIMAL(38, 10), b DECIMAL(38, 10)) AS __hati_catalog.pg.__hati_ndiv(a, b),
    (a INTERVAL, b DOUBLE) AS
    CASE WHEN b = 0 THEN CASE WHEN a IS NOT NULL THEN error('division by zero') END
         ELSE a / b END;
-- `%`: x % -1 is 0 for an integer x, also INT_MIN (whose DuckDB % -1 overflows).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_mod(a, b) AS
    CASE WHEN b = 0 THEN CASE WHEN a IS NOT NULL THEN error('division by zero') END
         WHEN b = -1 THEN a % -b
         ELSE a % b END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_div_once(a, b) AS
    list_transform([b], __h_b -> __hati_catalog.pg.__hati_idiv(a, __h_b))[1];
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_mod_once(a, b) AS
    list_transform([b], __h_b -> __hati_catalog.pg.__hati_mod(a, __h_b))[1];
