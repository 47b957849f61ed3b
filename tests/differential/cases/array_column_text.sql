-- Untyped array text ('{1,2}') written to an array column takes the column's type, as
-- '{1,2}'::int[] does; text and jsonb columns keep the text as it is.
-- @setup
CREATE TABLE d_arrtext (id int PRIMARY KEY, a integer[], b text[], f float8[], j jsonb, t text);
-- @query insert_array_text
INSERT INTO d_arrtext (id, a, b, f, j, t) VALUES (1, '{1,2}', '{x,"y z",NULL}', '{1.5,2}', '{"a":1}', '{1,2}')
-- @query insert_without_column_list
INSERT INTO d_arrtext VALUES (2, '{}', '{"a,b"}', '{}', '{"b":[1]}', '{x}')
-- @query update_set_array_text
UPDATE d_arrtext SET a = '{3}', b = '{q}' WHERE id = 2
-- @query upsert_array_text
INSERT INTO d_arrtext (id, a) VALUES (1, '{7}') ON CONFLICT (id) DO UPDATE SET a = '{7,8}'
-- @query read_back
SELECT id, a, b, f, j, t FROM d_arrtext ORDER BY id
-- @query element_types
SELECT id, a[1] + 1 AS a1, b[2] AS b2 FROM d_arrtext ORDER BY id
-- @query bad_array_text_errors error
INSERT INTO d_arrtext (id, a) VALUES (3, '{x}')
