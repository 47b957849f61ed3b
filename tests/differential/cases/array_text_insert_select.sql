-- Untyped array text in the select list of INSERT ... SELECT takes the target array
-- column's type, as in INSERT ... VALUES; text and jsonb columns keep the text.
-- @setup
CREATE TABLE d_arrsel (id int PRIMARY KEY, a integer[], b text[], j jsonb, t text);
-- @query insert_select_array_text
INSERT INTO d_arrsel (id, a, b, j, t) SELECT 1, '{1,2}', '{x,"y z",NULL}', '{"k":1}', '{1,2}'
-- @query insert_select_alias_no_column_list
INSERT INTO d_arrsel SELECT 2, '{}' AS a, '{q}' AS b, '[1]', '{x}'
-- @query read_back
SELECT id, a, b, j, t, a[1] AS a1 FROM d_arrsel ORDER BY id
-- @query compare_array_text
SELECT id FROM d_arrsel WHERE a = '{1,2}' ORDER BY id
-- @query contains_overlaps_array_text
SELECT id, a @> '{1}' AS c, a && '{2,3}' AS o, '{2}' <@ a AS cb, a <> '{}' AS ne, b @> '{x}' AS bc FROM d_arrsel ORDER BY id
