-- PostgreSQL built-ins DuckDB lacks or answers differently: the stand-ins the transpiler
-- calls (transpiler/pg_functions.py, and pgcompat.MISSING_PG_FUNCTIONS -> __hati_<name>).

-- pg_typeof: PostgreSQL's type name (regtype's text), not DuckDB's.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_typeof(x) AS
    __hati_catalog.pg.format_type(__hati_catalog.pg.__hati_type_oid(typeof(x)), NULL);

-- lastval(): the wire server puts this session's value in its place before the statement
-- runs (proxy/pgserver/sequence_values.py); reached only where no session keeps one.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_lastval() AS
    error('lastval is not yet defined in this session')::BIGINT;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_quote_nullable(x) AS
    CASE WHEN x IS NULL THEN 'NULL' ELSE __hati_catalog.pg.__hati_quote_literal(x) END;

-- width_bucket(operand, low, high, count): 0 below the range, count + 1 at or above it.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_width_bucket(op, lo, hi, n) AS
    CASE WHEN n <= 0 THEN error('count must be greater than zero')
         WHEN lo = hi THEN error('lower bound cannot equal upper bound')
         WHEN op IS NULL OR lo IS NULL OR hi IS NULL OR n IS NULL THEN NULL
         WHEN lo < hi THEN CASE WHEN op < lo THEN 0 WHEN op >= hi THEN n + 1
              ELSE floor((op - lo)::DOUBLE * n / (hi - lo)::DOUBLE)::INTEGER + 1 END
         ELSE CASE WHEN op > lo THEN 0 WHEN op <= hi THEN n + 1
              ELSE floor((lo - op)::DOUBLE * n / (lo - hi)::DOUBLE)::INTEGER + 1 END
    END::INTEGER;

-- regexp_substr(s, pattern [, start]): NULL without a match (DuckDB's regexp_extract: '').
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_regexp_substr(s, p) AS
    CASE WHEN regexp_matches(s, p) THEN regexp_extract(s, p) END,
    (s, p, start) AS CASE WHEN regexp_matches(substr(s, start), p)
                          THEN regexp_extract(substr(s, start), p) END;

-- (s1, e1) OVERLAPS (s2, e2), as PostgreSQL's overlaps_timestamp: each pair in order, a
-- period [start, end), a zero-length one an instant.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_overlaps(s1, e1, s2, e2) AS
    CASE WHEN least(s1, e1) > least(s2, e2) THEN least(s1, e1) < greatest(s2, e2)
         WHEN least(s1, e1) < least(s2, e2) THEN least(s2, e2) < greatest(s1, e1)
         ELSE least(s1, e1) = least(s2, e2) END;

-- encode(bytea, 'hex' | 'base64') / decode(text, ...): PostgreSQL's (base64 in lines of 76).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_encode(b, f) AS
    CASE lower(f) WHEN 'hex' THEN lower(hex(b::BLOB))
         WHEN 'base64' THEN rtrim(regexp_replace(to_base64(b::BLOB), '(.{76})', '\1' || chr(10), 'g'), chr(10))
         ELSE error('encoding "' || f || '" is not supported here (hex, base64)') END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_decode(s, f) AS
    CASE lower(f) WHEN 'hex' THEN unhex(s)
         WHEN 'base64' THEN from_base64(replace(replace(s, chr(10), ''), chr(13), ''))
         ELSE error('encoding "' || f || '" is not supported here (hex, base64)') END;

-- convert_to(text, encoding) -> bytea / convert_from(bytea, encoding) -> text: the
-- server's encoding (UTF8) only; its bytes are DuckDB's encode / decode.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_utf8_name(enc) AS
    regexp_replace(lower(enc), '[^a-z0-9]', '', 'g') IN ('utf8', 'unicode', 'sqlascii');
CREATE OR REPLACE MACRO __hati_catalog.pg.convert_to(s, enc) AS
    CASE WHEN s IS NULL OR enc IS NULL THEN NULL WHEN __hati_utf8_name(enc) THEN encode(s)
         ELSE error('conversion to encoding "' || enc || '" is not supported here (UTF8)') END;
CREATE OR REPLACE MACRO __hati_catalog.pg.convert_from(b, enc) AS
    CASE WHEN b IS NULL OR enc IS NULL THEN NULL WHEN __hati_utf8_name(enc) THEN decode(b)
         ELSE error('conversion from encoding "' || enc || '" is not supported here (UTF8)') END;

-- A PostgreSQL regex pattern known when the statement runs, with the escapes RE2 lacks
-- as RE2 spells them: \Z -> \z, \y -> \b, \Y -> \B (transpiler/pg_regex.py are_pattern).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_are(p) AS
    CASE WHEN p IS NULL OR NOT contains(p, '\') THEN p
         ELSE regexp_replace(regexp_replace(regexp_replace(p,
             '((?:^|[^\\])(?:\\\\)*)\\Z', '\1\\z', 'g'),
             '((?:^|[^\\])(?:\\\\)*)\\y', '\1\\b', 'g'),
             '((?:^|[^\\])(?:\\\\)*)\\Y', '\1\\B', 'g') END;

-- octet_length / bit_length of text (DuckDB's are for BLOB and BIT; a string literal was ambiguous).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_octet_length(x) AS
    CASE WHEN typeof(x) = 'BLOB' THEN octet_length(x::BLOB) ELSE strlen(x::VARCHAR) END;

-- An interval's parts as PostgreSQL keeps them (months, days, microseconds), and back.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_iv_months(i) AS
    (datepart('year', i) * 12 + datepart('month', i))::BIGINT;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_iv_days(i) AS datepart('day', i)::BIGINT;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_iv_micros(i) AS
    (datepart('hour', i)::BIGINT * 3600000000 + datepart('minute', i)::BIGINT * 60000000
     + datepart('microseconds', i)::BIGINT);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_interval(m, d, t) AS
    to_months(m::INTEGER) + to_days(d::INTEGER) + to_microseconds(t::BIGINT);
-- justify_* as PostgreSQL's interval.c: whole 30-day months out of days, whole 24-hour
-- days out of the time, then the parts' signs made to agree.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_justify_md(m, d, t) AS
    CASE WHEN m > 0 AND (d < 0 OR (d = 0 AND t < 0)) THEN [m - 1, d + 30, t]
         WHEN m < 0 AND (d > 0 OR (d = 0 AND t > 0)) THEN [m + 1, d - 30, t]
         ELSE [m, d, t] END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_justify_dt(m, d, t) AS
    CASE WHEN d > 0 AND t < 0 THEN [m, d - 1, t + 86400000000]
         WHEN d < 0 AND t > 0 THEN [m, d + 1, t - 86400000000]
         ELSE [m, d, t] END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_justify_dt_list(p) AS
    __hati_catalog.pg.__hati_justify_dt(p[1], p[2], p[3]);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_from_parts(p) AS
    __hati_catalog.pg.__hati_interval(p[1], p[2], p[3]);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_justify_days(i) AS
    __hati_catalog.pg.__hati_from_parts(
        CASE WHEN __hati_catalog.pg.__hati_iv_months(i) + trunc(__hati_catalog.pg.__hati_iv_days(i) / 30) > 0
                  AND __hati_catalog.pg.__hati_iv_days(i) - 30 * trunc(__hati_catalog.pg.__hati_iv_days(i) / 30) < 0
             THEN [__hati_catalog.pg.__hati_iv_months(i) + trunc(__hati_catalog.pg.__hati_iv_days(i) / 30) - 1,
                   __hati_catalog.pg.__hati_iv_days(i) - 30 * trunc(__hati_catalog.pg.__hati_iv_days(i) / 30) + 30,
                   __hati_catalog.pg.__hati_iv_micros(i)]
             WHEN __hati_catalog.pg.__hati_iv_months(i) + trunc(__hati_catalog.pg.__hati_iv_days(i) / 30) < 0
                  AND __hati_catalog.pg.__hati_iv_days(i) - 30 * trunc(__hati_catalog.pg.__hati_iv_days(i) / 30) > 0
             THEN [__hati_catalog.pg.__hati_iv_months(i) + trunc(__hati_catalog.pg.__hati_iv_days(i) / 30) + 1,
                   __hati_catalog.pg.__hati_iv_days(i) - 30 * trunc(__hati_catalog.pg.__hati_iv_days(i) / 30) - 30,
                   __hati_catalog.pg.__hati_iv_micros(i)]
             ELSE [__hati_catalog.pg.__hati_iv_months(i) + trunc(__hati_catalog.pg.__hati_iv_days(i) / 30),
                   __hati_catalog.pg.__hati_iv_days(i) - 30 * trunc(__hati_catalog.pg.__hati_iv_days(i) / 30),
                   __hati_catalog.pg.__hati_iv_micros(i)] END);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_justify_hours(i) AS
    __hati_catalog.pg.__hati_from_parts(__hati_catalog.pg.__hati_justify_dt(
        __hati_catalog.pg.__hati_iv_months(i),
        __hati_catalog.pg.__hati_iv_days(i) + trunc(__hati_catalog.pg.__hati_iv_micros(i) / 86400000000),
        __hati_catalog.pg.__hati_iv_micros(i) - 86400000000 * trunc(__hati_catalog.pg.__hati_iv_micros(i) / 86400000000)));
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_justify_interval_parts(m, d, t) AS
    __hati_catalog.pg.__hati_from_parts(__hati_catalog.pg.__hati_justify_dt_list(
        __hati_catalog.pg.__hati_justify_md(m + trunc(d / 30), d - 30 * trunc(d / 30), t)));
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_justify_interval(i) AS
    __hati_catalog.pg.__hati_justify_interval_parts(
        __hati_catalog.pg.__hati_iv_months(i),
        __hati_catalog.pg.__hati_iv_days(i) + trunc(__hati_catalog.pg.__hati_iv_micros(i) / 86400000000),
        __hati_catalog.pg.__hati_iv_micros(i) - 86400000000 * trunc(__hati_catalog.pg.__hati_iv_micros(i) / 86400000000));

-- string_to_array(s, sep, null_string): elements equal to null_string are NULL.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_string_to_array(s, sep) AS
    CASE WHEN s = '' THEN []::VARCHAR[] WHEN sep IS NULL THEN regexp_split_to_array(s, '')
         ELSE string_split(s, sep) END,
    (s, sep, n) AS list_transform(
        CASE WHEN s = '' THEN []::VARCHAR[] WHEN sep IS NULL THEN regexp_split_to_array(s, '')
             ELSE string_split(s, sep) END,
        __e -> CASE WHEN __e = n THEN NULL ELSE __e END);

-- array_positions(a, x): every 1-based position of x.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_array_positions(a, x) AS
    list_filter(range(1, len(a) + 1), __i -> a[__i] IS NOT DISTINCT FROM x)::INTEGER[];

-- pg_size_pretty as PostgreSQL 15's dbsize.c: bytes under 10240, else the size in half
-- units (n / 512, then / 1024 a unit) shown half-rounded in the first unit under 20479.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_tdiv(n, d) AS
    CASE WHEN n >= 0 THEN n // d ELSE -((-n) // d) END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_half(s) AS
    CASE WHEN s >= 0 THEN (s + 1) // 2 ELSE -((-s + 1) // 2) END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_size_pretty(n) AS (
    SELECT CASE WHEN n IS NULL THEN NULL
                WHEN abs(n) < 10240 THEN n::HUGEINT::VARCHAR || ' bytes'
                ELSE (SELECT __hati_catalog.pg.__hati_half(
                                 __hati_catalog.pg.__hati_tdiv(n::HUGEINT, 512 * (1024::HUGEINT ** k)::HUGEINT))::VARCHAR
                             || ' ' || ['kB', 'MB', 'GB', 'TB', 'PB'][k + 1]
                      FROM range(0, 5) r(k)
                      WHERE k = 4 OR abs(__hati_catalog.pg.__hati_tdiv(n::HUGEINT, 512 * (1024::HUGEINT ** k)::HUGEINT)) < 20479
                      ORDER BY k LIMIT 1) END);

-- The wall clock (PostgreSQL's clock_timestamp; DuckDB's now() is the transaction's start):
-- a UDF of proxy/db/backend_functions.py.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_clock_timestamp() AS __hati_wall_clock();
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_statement_timestamp() AS now();
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_transaction_timestamp() AS now();
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_timeofday() AS
    strftime(__hati_clock_timestamp(), '%a %b %d %H:%M:%S.%f %Y %Z');

-- array_replace(a, from, to): every element equal to `from` (NULL too) becomes `to`.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_array_replace(a, x, y) AS
    list_transform(a, __e -> CASE WHEN __e IS NOT DISTINCT FROM x THEN y ELSE __e END);

-- to_number(text, format): the digits, point and sign the format reads (PostgreSQL's
-- NUM_processor, for the patterns to_char supports here: 9 0 . , D G S MI PL SG PR FM).
-- One argument is Snowflake's TO_NUMBER(x): NUMBER(38,0).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_to_number(s) AS CAST(s AS DECIMAL(38, 0)),
    (s, f) AS
    CAST(CASE WHEN (regexp_matches(f, 'PR', 'i') AND regexp_matches(s, '^\s*<.*>\s*$'))
                   OR regexp_matches(s, '-')
              THEN '-' ELSE '' END
         || regexp_replace(
                CASE WHEN regexp_matches(f, '[.D]') THEN s
                     ELSE regexp_replace(s, '\..*$', '') END,
                '[^0-9.]', '', 'g') AS DECIMAL(38, 10));

-- psql's \dO reads the database's encoding; \db+ a tablespace's size (DuckDB keeps none).
CREATE OR REPLACE MACRO __hati_catalog.pg.getdatabaseencoding() AS 'UTF8';
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_tablespace_size(ts) AS 0::BIGINT;

-- An object as PostgreSQL names it in messages and psql's \dx+ (its extension's members).
CREATE OR REPLACE MACRO __hati_catalog.pg.pg_describe_object(classid, objid, objsubid) AS
    CASE classid
        WHEN 1255 THEN 'function ' || __hati_catalog.pg.__hati_regprocedure_name(objid)
        WHEN 1247 THEN 'type ' || __hati_catalog.pg.format_type(objid, NULL)
        WHEN 2612 THEN 'language ' || (SELECT min(__h_l.lanname)
                                       FROM __hati_catalog.pg.pg_language __h_l
                                       WHERE __h_l.oid = objid)
        WHEN 2601 THEN 'access method ' || (SELECT min(__h_a.amname)
                                            FROM __hati_catalog.pg.pg_am __h_a
                                            WHERE __h_a.oid = objid)
        WHEN 2615 THEN 'schema ' || (SELECT min(__h_n.nspname)
                                     FROM __hati_catalog.pg.pg_namespace __h_n
                                     WHERE __h_n.oid = objid)
        WHEN 3079 THEN 'extension ' || (SELECT min(__h_e.extname)
                                        FROM __hati_catalog.pg.pg_extension __h_e
                                        WHERE __h_e.oid = objid)
    END;
