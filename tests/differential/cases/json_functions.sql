-- PostgreSQL's JSON functions and jsonb's text form: text results (::text, text and
-- binary result formats) are compared as text, so key order, spacing and numbers count.
-- @setup
CREATE TABLE d_jf (id int PRIMARY KEY, doc jsonb, note text);
INSERT INTO d_jf VALUES (1, '{"bb": 1, "a": [1, 2.50, 1e2], "c": {"y": null, "x": "é\n"}, "a": [3]}', 'dup'), (2, '{"name": "bob", "age": 40, "tags": ["b", null]}', 'x'), (3, '[1, {"z": 1, "y": 2}]', 'arr'), (4, '"str"', 'scalar');
-- @query column_text
SELECT id, doc::text FROM d_jf ORDER BY id
-- @query column_text_explicit_cast
SELECT CAST(doc AS text) FROM d_jf WHERE id = 2
-- @query string_agg_text
SELECT string_agg(doc::text, ' | ' ORDER BY id) FROM d_jf
-- @query literal_text
SELECT '{"b": 1, "a": 2, "aa": {"d": 1.0, "c": -0}}'::jsonb::text
-- @query numbers_text
SELECT '[1.50, 1e2, 1.5E-3, -0, 0.10, 12345678901234567890]'::jsonb::text
-- @query json_keeps_text
SELECT '{"b":1,  "a":2}'::json::text
-- @query arrow_text
SELECT (doc -> 'c')::text FROM d_jf WHERE id = 1
-- @query jsonb_set
SELECT jsonb_set(doc, '{age}', '41')::text FROM d_jf WHERE id = 2
-- @query jsonb_set_new_key
SELECT jsonb_set(doc, '{city}', '"Oslo"')::text FROM d_jf WHERE id = 2
-- @query jsonb_set_no_create
SELECT jsonb_set(doc, '{city}', '"Oslo"', false)::text FROM d_jf WHERE id = 2
-- @query jsonb_set_array_index
SELECT jsonb_set(doc, '{tags,0}', '"a"')::text, jsonb_set(doc, '{tags,-1}', '"z"')::text FROM d_jf WHERE id = 2
-- @query jsonb_set_array_append_prepend
SELECT jsonb_set('[1,2]', '{5}', '9')::text, jsonb_set('[1,2]', '{-5}', '9')::text
-- @query jsonb_set_nested_missing
SELECT jsonb_set('{"a": {}}', '{b,c}', '1')::text, jsonb_set('{"a": {}}', '{a,c}', '1')::text
-- @query jsonb_set_scalar error
SELECT jsonb_set('"x"', '{a}', '1')
-- @query jsonb_set_not_integer error
SELECT jsonb_set('[1]', '{a}', '1')
-- @query jsonb_set_null_new
SELECT jsonb_set('{"a":1}', '{a}', NULL) IS NULL
-- @query jsonb_set_update
UPDATE d_jf SET doc = jsonb_set(doc, '{age}', to_jsonb(41)) WHERE id = 2 RETURNING doc::text
-- @query jsonb_insert
SELECT jsonb_insert('{"a": [0, 1, 2]}', '{a, 1}', '"new"')::text, jsonb_insert('{"a": [0, 1, 2]}', '{a, 1}', '"new"', true)::text
-- @query jsonb_insert_key
SELECT jsonb_insert('{"a": 1}', '{b}', '2')::text
-- @query jsonb_insert_existing_key error
SELECT jsonb_insert('{"a": 1}', '{a}', '2')
-- @query delete_path
SELECT ('{"a": [1, 2, 3], "b": {"c": 1, "d": 2}}'::jsonb #- '{a,1}')::text, ('{"a": [1, 2, 3], "b": {"c": 1, "d": 2}}'::jsonb #- '{b,c}')::text
-- @query delete_path_column
SELECT (doc #- '{tags}')::text FROM d_jf WHERE id = 2
-- @query delete_path_scalar error
SELECT '1'::jsonb #- '{a}'
-- @query pretty
SELECT jsonb_pretty('{"b": [1, {"c": 2}], "a": {}, "aa": []}')
-- @query strip_nulls
SELECT jsonb_strip_nulls('{"a": null, "b": [null, {"c": null, "d": 1}]}')::text
-- @query json_strip_nulls
SELECT json_strip_nulls('{"b": 1, "a": null, "c": {"x": null}}')::text
-- @query each
SELECT key, value::text FROM jsonb_each('{"b": 1, "a": {"x": [1, 2]}, "cc": null}') ORDER BY key
-- @query each_text
SELECT key, value FROM jsonb_each_text('{"b": 1, "a": {"x": [1, 2]}, "cc": null, "s": "str"}') ORDER BY key
-- @query each_star
SELECT * FROM jsonb_each('{"b": 1, "a": 2}') ORDER BY 1
-- @query each_alias_columns
SELECT e.k, e.v FROM jsonb_each('{"b": 1, "a": 2}') AS e(k, v) ORDER BY e.k
-- @query json_each
SELECT key, value::text FROM json_each('{"b": 1, "a": "x", "c": null}') ORDER BY key
-- @query json_each_text
SELECT * FROM json_each_text('{"b": 1, "a": "x"}') ORDER BY key
-- @query each_lateral
SELECT d.id, e.key, e.value::text FROM d_jf d, jsonb_each(d.doc) e WHERE d.id = 2 ORDER BY e.key
-- @query each_lateral_join
SELECT d.id, e.key FROM d_jf d CROSS JOIN LATERAL jsonb_each_text(d.doc) AS e WHERE d.id = 1 ORDER BY e.key
-- @query each_array error
SELECT * FROM jsonb_each('[1, 2]')
-- @query object_keys_lateral
SELECT jsonb_object_keys(doc) AS k FROM d_jf WHERE id = 2 ORDER BY k
-- @query json_object_keys
SELECT json_object_keys('{"b": 1, "a": 2}') AS k ORDER BY k
-- @query object_keys_jsonb_order
SELECT string_agg(k, ',') FROM (SELECT jsonb_object_keys('{"bb": 1, "a": 2, "c": 3}') AS k) s
-- @query object_keys_of_array error
SELECT jsonb_object_keys('[1]')
-- @query json_object_keys_of_scalar error
SELECT * FROM json_object_keys('1')
-- @query to_record
SELECT * FROM jsonb_to_record('{"a": 1, "b": "x", "c": {"d": true}, "e": null}') AS r(a int, b text, c jsonb, e text, missing int)
-- @query to_record_text_of_object
SELECT r.c FROM jsonb_to_record('{"c": {"d": true}}') AS r(c text)
-- @query json_to_record
SELECT * FROM json_to_record('{"a": 2, "b": false}') AS r(a bigint, b boolean)
-- @query to_recordset
SELECT * FROM jsonb_to_recordset('[{"a": 1, "b": "x"}, {"a": 2}]') AS r(a int, b text) ORDER BY a
-- @query json_to_recordset
SELECT * FROM json_to_recordset('[{"a": 1.5}, {"a": 2}]') AS r(a numeric) ORDER BY a
-- @query to_recordset_object error
SELECT * FROM jsonb_to_recordset('{"a": 1}') AS r(a int)
-- @query row_to_json
SELECT row_to_json(t)::text FROM (SELECT 1 AS a, 'x' AS b) t
-- @query typeof
SELECT json_typeof('{}'), json_typeof('[1]'), json_typeof('1.5'), json_typeof('"s"'), json_typeof('null'), json_typeof('true')
-- @query to_record_array error
SELECT * FROM jsonb_to_record('[1]') AS r(a int)
-- @query to_record_scalar error
SELECT * FROM json_to_record('1') AS r(a int)
-- @query json_to_recordset_object error
SELECT * FROM json_to_recordset('{"a": 1}') AS r(a int)
-- @query to_recordset_scalar error
SELECT * FROM json_to_recordset('1') AS r(a int)
-- @query array_elements_text_of_scalar error
SELECT jsonb_array_elements_text('1')
-- @query array_elements_null
SELECT count(*) FROM jsonb_array_elements(NULL)
-- @query array_elements_of_object error
SELECT jsonb_array_elements('{"a": 1}')
-- @query array_elements_from_object error
SELECT * FROM jsonb_array_elements('{"a": 1}')
-- @query build_object_text
SELECT jsonb_build_object('b', 1, 'a', 'x')::text
-- @query agg_text
SELECT jsonb_agg(id ORDER BY id)::text FROM d_jf
-- @query concat_text
SELECT ('{"b": 1}'::jsonb || '{"a": 2}'::jsonb)::text
-- @query json_build_object_text
SELECT json_build_object('a', 1, 'b', 'x', 'c', NULL)::text
-- @query json_build_array_text
SELECT json_build_array(1, 'x', NULL)::text
-- @query json_agg_text
SELECT json_agg(id ORDER BY id)::text FROM d_jf
-- @query json_object_agg_text
SELECT json_object_agg(note, id ORDER BY id)::text FROM d_jf
-- @query to_json_text
SELECT to_json('x'::text)::text, to_json(15)::text
-- @query json_agg_rows_text
SELECT json_agg(t ORDER BY t.a)::text FROM (SELECT id AS a, note AS b FROM d_jf WHERE id < 3) t
-- @query json_agg_none
SELECT json_agg(id) IS NULL, json_object_agg(note, id) IS NULL FROM d_jf WHERE id > 10
-- @query json_agg_filter
SELECT json_agg(id) FILTER (WHERE id > 2) FROM d_jf
-- @query json_agg_nulls_text
SELECT json_agg(x)::text FROM (VALUES (1), (NULL)) v(x)
-- @query jsonb_object_agg_text
SELECT jsonb_object_agg(note, id)::text FROM d_jf
-- @query json_object_keys_from
SELECT * FROM json_object_keys('{"b": 1, "a": 2}') ORDER BY 1
-- @query jsonb_set_keeps_number_scale
SELECT jsonb_set('{"a": 1.50, "c": [1e2]}', '{b}', '2.0')::text
-- @query binary_and_text_agree
SELECT doc FROM d_jf WHERE id = 1
-- @query extended_string_agg
SELECT string_agg(k || '=' || v::text, '; ' ORDER BY k) FROM jsonb_each('{"x": {"b": 1, "a": 2}, "y": [1, 2]}') AS e(k, v)
