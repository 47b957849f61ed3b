-- jsonb columns, operators and functions (Django JSONField, langchain/LlamaIndex metadata).
-- @setup
CREATE TABLE d_jb (id int PRIMARY KEY, doc jsonb);
INSERT INTO d_jb VALUES (1, '{"name": "ann", "age": 31, "tags": ["a", "b"], "addr": {"city": "Oslo", "zip": "0150"}}'), (2, '{"name": "bob", "age": 40, "tags": ["b"]}'), (3, '["x", "y", 3]'), (4, NULL);
-- @query contains_object
SELECT id FROM d_jb WHERE doc @> '{"tags": ["b"]}'::jsonb ORDER BY id
-- @query contains_nested
SELECT id FROM d_jb WHERE doc @> '{"addr": {"city": "Oslo"}}' ORDER BY id
-- @query contains_array_element
SELECT id FROM d_jb WHERE doc @> '["y"]' ORDER BY id
-- @query contained_by
SELECT id FROM d_jb WHERE '{"age": 40}'::jsonb <@ doc ORDER BY id
-- @query has_key
SELECT id FROM d_jb WHERE doc ? 'age' ORDER BY id
-- @query has_key_array_string
SELECT id FROM d_jb WHERE doc ? 'x' ORDER BY id
-- @query has_any_key
SELECT id FROM d_jb WHERE doc ?| array['addr', 'zzz'] ORDER BY id
-- @query has_all_keys
SELECT id FROM d_jb WHERE doc ?& array['name', 'tags'] ORDER BY id
-- @query arrow_text
SELECT id, doc ->> 'name' FROM d_jb ORDER BY id
-- @query arrow_json
SELECT id, doc -> 'addr' FROM d_jb ORDER BY id
-- @query arrow_index
SELECT doc -> 1, doc ->> 2 FROM d_jb WHERE id = 3
-- @query path_json
SELECT doc #> '{addr,city}', doc #> '{tags,1}' FROM d_jb WHERE id = 1
-- @query path_text
SELECT doc #>> '{addr,zip}', doc #>> '{tags,0}' FROM d_jb WHERE id = 1
-- @query key_filter_cast
SELECT id FROM d_jb WHERE (doc ->> 'age')::int > 35
-- @query concat_objects
SELECT '{"a": 1, "b": 2}'::jsonb || '{"b": 3, "c": 4}'::jsonb
-- @query concat_arrays
SELECT '[1, 2]'::jsonb || '[3]'::jsonb
-- @query delete_key
SELECT doc::jsonb - 'tags' - 'addr' FROM d_jb WHERE id = 1
-- @query build_object
SELECT jsonb_build_object('id', id, 'name', doc ->> 'name') FROM d_jb WHERE id <= 2 ORDER BY id
-- @query agg
SELECT jsonb_agg(id ORDER BY id) FROM d_jb
-- @query typeof
SELECT id, jsonb_typeof(doc), jsonb_typeof(doc -> 'age'), jsonb_typeof(doc -> 'tags') FROM d_jb ORDER BY id
-- @query array_elements_from
SELECT value FROM jsonb_array_elements('[1, "two", {"three": 3}]'::jsonb)
-- @query array_elements_text
SELECT jsonb_array_elements_text(doc -> 'tags') FROM d_jb WHERE id = 1
-- @query object_keys
SELECT jsonb_object_keys(doc -> 'addr') FROM d_jb WHERE id = 1
-- @query to_jsonb
SELECT to_jsonb(42), to_jsonb('text'::text)
-- @query array_length
SELECT jsonb_array_length(doc -> 'tags') FROM d_jb WHERE id = 1
-- @query null_doc
SELECT doc, doc -> 'a', doc ? 'a' FROM d_jb WHERE id = 4
-- @query path_match_eq
SELECT id FROM d_jb WHERE jsonb_path_match(doc, '$.name == $value'::jsonpath, '{"value": "bob"}'::jsonb)
-- @query path_match_gte
SELECT id FROM d_jb WHERE jsonb_path_match(doc, CAST('$.age >= $value' AS JSONPATH), CAST('{"value": 35}' AS JSONB)) ORDER BY id
-- @query path_match_ne
SELECT id FROM d_jb WHERE jsonb_path_match(doc, '$.name != $value', '{"value": "bob"}') ORDER BY id
-- @query path_match_kinds_differ
SELECT id FROM d_jb WHERE jsonb_path_match(doc, '$.age == $value', '{"value": "31"}')
-- @query django_key_exact
SELECT id FROM d_jb WHERE (doc -> 'age') = '40'::jsonb
-- @query django_key_gt_numeric
SELECT id FROM d_jb WHERE (doc -> 'age') > '100'::jsonb OR (doc -> 'age') > '35'::jsonb ORDER BY id
-- @query key_lt_numeric_not_text
SELECT id FROM d_jb WHERE (doc -> 'age') < '100'::jsonb ORDER BY id
-- @query key_string_eq
SELECT id FROM d_jb WHERE doc -> 'name' = '"ann"'::jsonb
-- @query update_set_jsonb
UPDATE d_jb SET doc = '{"name": "dee", "age": 5}'::jsonb WHERE id = 4 RETURNING id, doc
-- @query update_set_jsonb_where_jsonb
UPDATE d_jb SET doc = '{}' WHERE doc = '{"name": "dee", "age": 5}'::jsonb RETURNING id, doc
-- @query upsert_set_jsonb
INSERT INTO d_jb VALUES (4, '{"k": 1}') ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc RETURNING id, doc
-- @query after_updates
SELECT id, doc FROM d_jb WHERE id = 4
-- @query object_eq_ne
SELECT id, doc = '{"name": "bob", "age": 40, "tags": ["b"]}'::jsonb, doc <> '["x", "y", 3]'::jsonb, doc = '5'::jsonb FROM d_jb ORDER BY id
