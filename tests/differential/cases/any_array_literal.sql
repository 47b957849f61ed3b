-- x op ANY('{...}'): an untyped array literal takes the other operand's type.
-- @setup
CREATE TABLE d_anylit (id int, kind text, day date);
INSERT INTO d_anylit VALUES (1, 'r', '2024-01-01'), (2, 'p', '2024-02-01'), (3, 'v', '2024-03-01'), (4, NULL, NULL);
-- @query any_text_column
SELECT id FROM d_anylit WHERE kind = ANY('{r,p,f}')
-- @query any_int_column
SELECT id FROM d_anylit WHERE id = ANY('{1, 3, 7}')
-- @query any_date_column
SELECT id FROM d_anylit WHERE day = ANY('{2024-02-01,2024-03-01}')
-- @query any_quoted_elements
SELECT id FROM d_anylit WHERE kind = ANY('{"r", "v\\w", "a,b"}')
-- @query any_with_null_element
SELECT id, kind = ANY('{r,NULL}') AS hit FROM d_anylit ORDER BY id
-- @query any_less_than
SELECT id FROM d_anylit WHERE id < ANY('{2,3}')
-- @query any_not_equal
SELECT id FROM d_anylit WHERE kind <> ANY('{r}')
-- @query any_empty_array
SELECT count(*) FROM d_anylit WHERE id = ANY('{}')
-- @query any_in_select_list
SELECT 'p' = ANY('{r,p,f}'), 5 = ANY('{1,2}')
-- @query any_catalog_relkind
SELECT relname FROM pg_catalog.pg_class c WHERE c.relkind = ANY('{r,p,f}') AND c.relname = 'd_anylit'
