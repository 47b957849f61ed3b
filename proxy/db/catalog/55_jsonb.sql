-- PostgreSQL's jsonb operators DuckDB's JSON functions lack, as macros the transpiler's
-- rewrites call (transpiler/jsonb_ops.py). DuckDB's json_type names: OBJECT, ARRAY,
-- VARCHAR, BOOLEAN, NULL, and number types.

-- The elements of a JSON array, or the value itself as a one-element list.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_json_list(j) AS
    CASE WHEN json_type(j) = 'ARRAY' THEN CAST(j AS JSON[]) ELSE [CAST(j AS JSON)] END;

-- j ? k: a top-level key of an object, or a string element of an array.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_jsonb_exists(j, k) AS
    CASE WHEN j IS NULL OR k IS NULL THEN NULL ELSE CASE json_type(j)
        WHEN 'OBJECT' THEN list_contains(json_keys(j), k)
        WHEN 'ARRAY' THEN list_contains(
            list_transform(list_filter(CAST(j AS JSON[]), e -> json_type(e) = 'VARCHAR'),
                           e -> json_extract_string(e, '$')), k)
        WHEN 'VARCHAR' THEN json_extract_string(j, '$') = k
        ELSE false END END;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_jsonb_exists_any(j, ks) AS
    CASE WHEN j IS NULL THEN NULL ELSE len(list_filter(ks, k -> __hati_catalog.pg.__hati_jsonb_exists(j, k))) > 0 END;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_jsonb_exists_all(j, ks) AS
    CASE WHEN j IS NULL THEN NULL ELSE len(list_filter(ks, k -> NOT __hati_catalog.pg.__hati_jsonb_exists(j, k))) = 0 END;

-- a || b: objects merge at the top level (b wins); anything else concatenates as arrays.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_jsonb_concat(a, b) AS
    CASE WHEN a IS NULL OR b IS NULL THEN NULL
         WHEN json_type(a) = 'OBJECT' AND json_type(b) = 'OBJECT'
             THEN to_json(map_concat(CAST(CAST(a AS JSON) AS MAP(VARCHAR, JSON)), CAST(CAST(b AS JSON) AS MAP(VARCHAR, JSON))))
         ELSE to_json(list_concat(__hati_catalog.pg.__hati_json_list(a),
                                  __hati_catalog.pg.__hati_json_list(b))) END;

-- j - k: without key k (object) or without the string elements equal to k (array);
-- an integer k deletes by array index, a text[] k every key in it (json_functions.py).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_jsonb_delete_key(j, k) AS
    CASE json_type(j)
        WHEN 'OBJECT' THEN to_json(map_from_entries(
            list_filter(map_entries(CAST(CAST(j AS JSON) AS MAP(VARCHAR, JSON))), e -> e.key <> k)))
        WHEN 'ARRAY' THEN to_json(list_filter(CAST(j AS JSON[]),
            e -> NOT (json_type(e) = 'VARCHAR' AND json_extract_string(e, '$') = k)))
        ELSE j END;
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_jsonb_delete(j, k) AS
    CASE WHEN typeof(k) IN ('TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT')
             THEN __hati_jsonb_delete_index(j::VARCHAR, TRY_CAST(k AS BIGINT))
         WHEN typeof(k) LIKE '%[]' THEN __hati_jsonb_delete_keys(j::VARCHAR, TRY_CAST(k AS VARCHAR[]))
         ELSE __hati_catalog.pg.__hati_jsonb_delete_key(j, TRY_CAST(k AS VARCHAR)) END;

-- A text[] path ('{a,0}') as a JSON pointer ('/a/0'): a number selects an array element
-- and an object member alike, as #> does.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_json_pointer(path) AS
    '/' || array_to_string(list_transform(CAST(path AS VARCHAR[]),
                                          s -> replace(replace(s, '~', '~0'), '/', '~1')), '/');

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_jsonb_typeof(j) AS
    CASE json_type(j)
        WHEN 'OBJECT' THEN 'object' WHEN 'ARRAY' THEN 'array' WHEN 'VARCHAR' THEN 'string'
        WHEN 'BOOLEAN' THEN 'boolean' WHEN 'NULL' THEN 'null'
        ELSE CASE WHEN j IS NULL THEN NULL ELSE 'number' END END;

-- jsonb_path_match(j, path, vars) for the comparisons langchain-postgres filters send:
-- `$.key OP $var` with OP one of == != <> < <= > >=. Numbers compare as numbers, strings
-- as strings; a missing key or values of different kinds do not match (NULL), as in
-- PostgreSQL's jsonpath. Any other path is an error (22023).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_json_cmp(a, b, op) AS
    CASE WHEN a IS NULL OR b IS NULL THEN NULL
         WHEN json_type(a) IN ('UBIGINT', 'BIGINT', 'DOUBLE') AND json_type(b) IN ('UBIGINT', 'BIGINT', 'DOUBLE') THEN
             CASE op WHEN '==' THEN CAST(a AS DOUBLE) = CAST(b AS DOUBLE)
                     WHEN '!=' THEN CAST(a AS DOUBLE) <> CAST(b AS DOUBLE)
                     WHEN '<>' THEN CAST(a AS DOUBLE) <> CAST(b AS DOUBLE)
                     WHEN '<' THEN CAST(a AS DOUBLE) < CAST(b AS DOUBLE)
                     WHEN '<=' THEN CAST(a AS DOUBLE) <= CAST(b AS DOUBLE)
                     WHEN '>' THEN CAST(a AS DOUBLE) > CAST(b AS DOUBLE)
                     WHEN '>=' THEN CAST(a AS DOUBLE) >= CAST(b AS DOUBLE) END
         WHEN json_type(a) = json_type(b) AND json_type(a) IN ('VARCHAR', 'BOOLEAN') THEN
             CASE op WHEN '==' THEN json_extract_string(a, '$') = json_extract_string(b, '$')
                     WHEN '!=' THEN json_extract_string(a, '$') <> json_extract_string(b, '$')
                     WHEN '<>' THEN json_extract_string(a, '$') <> json_extract_string(b, '$')
                     WHEN '<' THEN json_extract_string(a, '$') < json_extract_string(b, '$')
                     WHEN '<=' THEN json_extract_string(a, '$') <= json_extract_string(b, '$')
                     WHEN '>' THEN json_extract_string(a, '$') > json_extract_string(b, '$')
                     WHEN '>=' THEN json_extract_string(a, '$') >= json_extract_string(b, '$') END
         WHEN json_type(a) = 'NULL' AND json_type(b) = 'NULL' THEN op = '=='
         -- Objects and arrays: (in)equality of the minified text, key order counting
         -- (PostgreSQL sorts jsonb keys), and no ordering
         WHEN json_type(a) = json_type(b) AND json_type(a) IN ('OBJECT', 'ARRAY') THEN
             CASE op WHEN '==' THEN json(a) = json(b)
                     WHEN '!=' THEN json(a) <> json(b)
                     WHEN '<>' THEN json(a) <> json(b) END
         WHEN json_type(a) <> json_type(b) AND op IN ('==', '!=', '<>') THEN op <> '=='
         ELSE NULL END;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_jsonb_path_match(j, path, vars) AS
    CASE WHEN NOT regexp_matches(path, '^\s*\$\.[A-Za-z_][A-Za-z0-9_]*\s*(==|!=|<>|<=|>=|<|>)\s*\$[A-Za-z_][A-Za-z0-9_]*\s*$')
             THEN error('jsonb_path_match: only `$.key OP $variable` paths are supported, not ' || path)
         ELSE __hati_catalog.pg.__hati_json_cmp(
             json_extract(j, '$.' || regexp_extract(path, '^\s*\$\.([A-Za-z_][A-Za-z0-9_]*)', 1)),
             json_extract(vars, '$.' || regexp_extract(path, '\$([A-Za-z_][A-Za-z0-9_]*)\s*$', 1)),
             regexp_extract(path, '(==|!=|<>|<=|>=|<|>)', 1)) END;
