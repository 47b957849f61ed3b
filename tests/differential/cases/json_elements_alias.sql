-- FROM jsonb_array_elements(j) AS e: a bare `e` is the element (transpiler/jsonb_ops.py
-- _value_references); `e->>'k'` was NULL (DuckDB read `e` as the row struct). And
-- `jsonb - 'key'` in a statement with no other PostgreSQL word.
-- @setup
CREATE TABLE d_jel (id int PRIMARY KEY, items jsonb, tags jsonb);
INSERT INTO d_jel VALUES (1, '[{"sku": "a", "n": 2}, {"sku": "b", "n": 1}]', '["x", "y"]'), (2, '[]', '["z"]');
-- @query elements_alias_arrow_text
SELECT d.id, item->>'sku' FROM d_jel d, jsonb_array_elements(d.items) AS item ORDER BY 2
-- @query elements_alias_in_where
SELECT d.id, item->'n' FROM d_jel d, jsonb_array_elements(d.items) item WHERE item->>'n' = '2'
-- @query lateral_elements_alias_and_value
SELECT d.id, item->>'sku', item.value->>'n' FROM d_jel d CROSS JOIN LATERAL jsonb_array_elements(d.items) AS item ORDER BY 2
-- @query left_join_lateral_elements
SELECT d.id, e FROM d_jel d LEFT JOIN LATERAL jsonb_array_elements(d.items) e ON true ORDER BY 1, e->>'sku'
-- @query elements_text_alias
SELECT t FROM d_jel d, jsonb_array_elements_text(d.tags) t WHERE t <> 'y' ORDER BY t
-- @query elements_text_alias_value
SELECT t.value FROM jsonb_array_elements_text('["a", "b"]') t ORDER BY 1
-- @query jsonb_minus_key
SELECT (items->0) - 'n' FROM d_jel WHERE id = 1
-- @query jsonb_minus_key_column
SELECT tags - 'x' FROM d_jel ORDER BY id
