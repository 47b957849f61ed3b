-- PostgreSQL's JSON table functions over DuckDB's JSON (transpiler/json_functions.py
-- rewrites the calls into derived tables over these); jsonb_set & co. are Python UDFs
-- (proxy/db/json_functions.py). Errors as PostgreSQL 15 words them (22023).

-- The members of an object as a list of (key, value): jsonb_each in jsonb's key order
-- (duplicates gone) and its values in jsonb's text form, json_each in the order written.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_json_entries(j, fname) AS
    CASE WHEN j IS NULL THEN NULL
         WHEN json_type(j) <> 'OBJECT' THEN error('cannot call ' || fname || ' on a non-object')
         WHEN starts_with(fname, 'jsonb') THEN __hati_json_members(CAST(__hati_jsonb_text(j) AS JSON), true)
         ELSE __hati_json_members(CAST(j AS JSON), false) END;

CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_json_members(o, normal) AS
    list_transform(json_keys(o), k -> {'key': k, 'value': CASE WHEN normal
        THEN CAST(__hati_jsonb_text(json_extract(o, '/' || replace(replace(k, '~', '~0'), '/', '~1'))) AS JSON)
        ELSE json_extract(o, '/' || replace(replace(k, '~', '~0'), '/', '~1')) END});

-- A JSON value as the text ->> gives: strings unquoted, null as NULL, others as JSON.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_json_text_value(v) AS
    CASE json_type(v) WHEN 'NULL' THEN NULL WHEN 'VARCHAR' THEN json_extract_string(v, '$')
         WHEN 'OBJECT' THEN __hati_jsonb_text(v) WHEN 'ARRAY' THEN __hati_jsonb_text(v)
         ELSE CAST(v AS VARCHAR) END;

-- jsonb_to_record's argument: an object (PostgreSQL names its internal function).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_json_record(j, fname) AS
    CASE WHEN j IS NULL OR json_type(j) = 'OBJECT' THEN CAST(j AS JSON)
         WHEN json_type(j) = 'ARRAY' THEN error('cannot call populate_composite on an array')
         ELSE error('cannot call populate_composite on a scalar') END;

-- jsonb_to_recordset's argument: an array (json_to_recordset words it per kind).
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_json_records(j, fname) AS
    CASE WHEN j IS NULL THEN NULL
         WHEN json_type(j) = 'ARRAY' THEN CAST(j AS JSON[])
         WHEN starts_with(fname, 'jsonb') THEN error('cannot call ' || fname || ' on a non-array')
         WHEN json_type(j) = 'OBJECT' THEN error('cannot call ' || fname || ' on an object')
         ELSE error('cannot call ' || fname || ' on a scalar') END;

-- jsonb_array_elements[_text]'s argument: an array, else PostgreSQL's error.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_json_array(j) AS
    CASE WHEN j IS NULL OR json_type(j) = 'ARRAY' THEN CAST(j AS JSON)
         WHEN json_type(j) = 'OBJECT' THEN error('cannot extract elements from an object')
         ELSE error('cannot extract elements from a scalar') END;

-- jsonb_object_keys / json_object_keys' argument: an object (jsonb's in its key order),
-- else PostgreSQL's error.
CREATE OR REPLACE MACRO __hati_catalog.pg.__hati_json_object(j, fname) AS
    CASE WHEN j IS NULL THEN NULL
         WHEN json_type(j) = 'OBJECT' THEN CASE WHEN starts_with(fname, 'jsonb')
             THEN CAST(__hati_jsonb_text(j) AS JSON) ELSE CAST(j AS JSON) END
         WHEN json_type(j) = 'ARRAY' THEN error('cannot call ' || fname || ' on an array')
         ELSE error('cannot call ' || fname || ' on a scalar') END;
