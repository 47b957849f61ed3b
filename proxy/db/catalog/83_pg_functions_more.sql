-- More PostgreSQL built-ins DuckDB lacks or answers differently (transpiler/
-- pg_functions_more.py; the MISSING names of that module call __hati_<name>).

-- sha224 / sha384 / sha512 (bytea -> bytea): Python's hashlib (proxy/db/pg_udfs.py).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_sha224(b) AS __hati_udf_sha224(b::BLOB);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_sha384(b) AS __hati_udf_sha384(b::BLOB);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_sha512(b) AS __hati_udf_sha512(b::BLOB);

-- unistr(text): PostgreSQL's Unicode escapes (pg_udfs.py).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_unistr(s) AS __hati_udf_unistr(s::VARCHAR);

-- round(double precision) rounds half to even (the C library's rint); round(numeric)
-- half away from zero, as DuckDB's round. The correction keeps round(x)'s type.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_round(x) AS
    round(x) - CASE WHEN typeof(x) IN ('DOUBLE', 'FLOAT') AND abs(x - trunc(x)) = 0.5
                         AND round(x) % 2 <> 0 THEN sign(x) ELSE 0 END;

-- extract(julian FROM x): numeric; of a date a whole number (DuckDB's julian is double; a
-- timestamp's keeps it: its fraction).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_extract_julian(x DATE) AS
    CAST(julian(x) AS DECIMAL(38, 0)),
    (x TIMESTAMP) AS julian(x), (x TIMESTAMPTZ) AS julian(x);

-- div(a, b): the integral quotient, truncated toward zero, numeric of scale 0.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_div_numeric(a, b) AS
    CASE WHEN b = 0 THEN error('division by zero')
         ELSE CAST(round((a - a % b) / b) AS DECIMAL(38, 0)) END;

-- pg_column_size(v): the bytes PostgreSQL stores the value in (fixed-length types by
-- type; text-like values with their 1-byte short header, 4 bytes past 126).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_column_size(v) AS
    CASE WHEN v IS NULL THEN NULL
         WHEN typeof(v) IN ('BOOLEAN', 'TINYINT') THEN 1
         WHEN typeof(v) = 'SMALLINT' THEN 2
         WHEN typeof(v) IN ('INTEGER', 'FLOAT', 'DATE') THEN 4
         WHEN typeof(v) IN ('BIGINT', 'DOUBLE', 'TIMESTAMP', 'TIMESTAMP WITH TIME ZONE', 'TIME')
             THEN 8
         WHEN typeof(v) IN ('UUID', 'INTERVAL') THEN 16
         ELSE octet_length(CASE WHEN typeof(v) = 'BLOB' THEN v::BLOB ELSE encode(v::VARCHAR) END)
              + CASE WHEN octet_length(CASE WHEN typeof(v) = 'BLOB' THEN v::BLOB
                                            ELSE encode(v::VARCHAR) END) < 127 THEN 1 ELSE 4 END
    END::INTEGER;

-- pg_database_size(name | oid): the bytes of the database file and its WAL on disk (the
-- catalog's own file left out); of an in-memory database the memory DuckDB holds. Another
-- name is 3D000 as PostgreSQL.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_database_size(d) AS
    CASE WHEN d IS NULL THEN NULL
         WHEN d::VARCHAR NOT IN ({{database_name}}, '{{database_oid}}')
             THEN error('database "' || d::VARCHAR || '" does not exist')::BIGINT
         ELSE (SELECT CASE WHEN count(path) > 0 THEN sum(__hati_udf_file_bytes(path))
                           ELSE (SELECT sum(memory_usage_bytes) FROM duckdb_memory()) END
               FROM duckdb_databases()
               WHERE NOT internal AND database_name <> '__hati_catalog')::BIGINT
    END;

-- has_sequence_privilege: the owner holds every privilege; an unknown name is 42P01.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_has_sequence_privilege(s, p) AS
    __hati_catalog.pg.__hati_regclass(s) IS NOT NULL,
    (u, s, p) AS __hati_catalog.pg.__hati_regclass(s) IS NOT NULL;

-- array_ndims(a): the dimensions of the list type (NULL for an empty array, as PostgreSQL).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_array_ndims(a) AS
    CASE WHEN len(a) > 0
         THEN ((strlen(typeof(a)) - strlen(regexp_replace(typeof(a), '(\[\])+$', ''))) // 2)::INTEGER
    END;

-- cardinality(a): every element of every dimension (0 for '{}'); the nested lists of a
-- multidimensional array counted through their JSON form (flatten() binds only to T[][]).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_cardinality(a) AS
    CASE WHEN typeof(a) LIKE '%[][][]' THEN len(json_extract(to_json(a), '$[*][*][*]'))
         WHEN typeof(a) LIKE '%[][]' THEN len(json_extract(to_json(a), '$[*][*]'))
         ELSE len(a) END::INTEGER;

-- array_dims(a) of a one-dimensional array: '[1:n]'; NULL when empty.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_array_dims(a) AS
    CASE WHEN typeof(a) LIKE '%[][]'
             THEN error('array_dims of a multidimensional array is not supported by hatiproxy')
         WHEN len(a) > 0 THEN '[1:' || len(a) || ']' END;

-- array_fill(value, dims [, lower bounds]) of one dimension (lower bound 1).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_array_fill(v, d) AS
    CASE WHEN len(d) <> 1 THEN error('array_fill of more than one dimension is not supported by hatiproxy')
         WHEN d[1] < 0 THEN error('array size exceeds the maximum allowed (134217727)')
         ELSE list_transform(range(d[1]), i -> v) END,
    (v, d, lb) AS CASE WHEN lb <> [1] THEN error('array_fill lower bounds other than 1 are not supported by hatiproxy')
                       WHEN len(d) <> 1 THEN error('array_fill of more than one dimension is not supported by hatiproxy')
                       WHEN d[1] < 0 THEN error('array size exceeds the maximum allowed (134217727)')
                       ELSE list_transform(range(d[1]), i -> v) END;

-- string_to_table(s, delimiter [, null_string]): set-returning, one row per element.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_string_to_table(s, d) AS
    unnest(__hati_catalog.pg.__hati_string_to_array(s, d)),
    (s, d, n) AS unnest(__hati_catalog.pg.__hati_string_to_array(s, d, n));

-- substring(bytea FROM s [FOR n]) (DuckDB's substring is for text): by the hex digits.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_bytea_substring(b, s) AS
    unhex(substr(hex(b::BLOB), 2 * greatest(s, 1) - 1)),
    (b, s, n) AS CASE WHEN n < 0 THEN error('negative substring length not allowed')::BLOB
                      ELSE unhex(substr(hex(b::BLOB), 2 * greatest(s, 1) - 1,
                                        2 * greatest(s + n - greatest(s, 1), 0))) END;

-- get_byte / set_byte (bytea, 0-based offset).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_get_byte(b, n) AS
    CASE WHEN n < 0 OR n >= octet_length(b::BLOB)
             THEN error('index ' || n || ' out of valid range, 0..' || (octet_length(b::BLOB) - 1))
         ELSE ('0x' || substr(hex(b::BLOB), 2 * n + 1, 2))::INTEGER END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_set_byte(b, n, v) AS
    CASE WHEN n < 0 OR n >= octet_length(b::BLOB)
             THEN error('index ' || n || ' out of valid range, 0..' || (octet_length(b::BLOB) - 1))
         ELSE unhex(substr(hex(b::BLOB), 1, 2 * n) || lpad(upper(to_hex(v::INTEGER & 255)), 2, '0')
                    || substr(hex(b::BLOB), 2 * n + 3)) END;

-- Server functions with nothing to do in one embedded process (no JIT, no log file, no
-- replica, no row security policies, no statistics counters), answering as PostgreSQL's
-- do in that situation.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_jit_available() AS FALSE;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_reload_conf() AS TRUE;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_rotate_logfile() AS FALSE;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_last_xact_replay_timestamp() AS
    NULL::TIMESTAMPTZ;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_row_security_active(t) AS
    CASE WHEN __hati_catalog.pg.__hati_regclass(t) IS NOT NULL THEN FALSE END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_stat_reset() AS '';
-- The xact lock is held to the transaction's end in PostgreSQL; alone here, always had.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_pg_try_advisory_xact_lock(k) AS TRUE,
    (k1, k2) AS TRUE;

-- jsonb_path_query / _array / _first / _exists (j, path): the items the path selects
-- (proxy/core/pg_jsonpath.py: the subset it evaluates; anything else 0A000).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_jsonb_path_query_array(j, p) AS
    __hati_jsonb_path_items(j::VARCHAR, p::VARCHAR);
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_jsonb_path_query_first(j, p) AS
    json_extract(__hati_jsonb_path_items(j::VARCHAR, p::VARCHAR), '$[0]');
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_jsonb_path_exists(j, p) AS
    json_array_length(__hati_jsonb_path_items(j::VARCHAR, p::VARCHAR)) > 0;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_jsonb_path_query(j, p) AS
    unnest(CAST(__hati_jsonb_path_items(j::VARCHAR, p::VARCHAR) AS JSON[]));
