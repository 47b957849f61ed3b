-- PostgreSQL built-ins DuckDB lacks or answers differently: the stand-ins the transpiler
-- calls (transpiler/pg_functions.py, and pgcompat.MISSING_PG_FUNCTIONS -> __hati_<name>).

-- pg_typeof: PostgreSQL's type name (regtype's text), not DuckDB's.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_typeof(x) AS
    __hati_catalog.pg.format_type(__hati_catalog.pg.__hati_type_oid(typeof(x)), NULL);

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

-- octet_length / bit_length of text (DuckDB's are for BLOB and BIT; a string literal was ambiguous).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_octet_length(x) AS
    CASE WHEN typeof(x) = 'BLOB' THEN octet_length(x::BLOB) ELSE strlen(x::VARCHAR) END;
