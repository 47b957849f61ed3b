-- generate_series, json -> / ->>, arrays.
-- @setup
CREATE TABLE d_docs (id int PRIMARY KEY, doc json, tags text[], nums int[]);
INSERT INTO d_docs VALUES (1, '{"name": "ann", "age": 31, "tags": ["a", "b"], "addr": {"city": "Oslo"}}', ARRAY['x', 'y'], ARRAY[1, 2, 3]), (2, '{"name": "bob", "age": null}', ARRAY[]::text[], ARRAY[5]), (3, NULL, NULL, NULL);
-- @query series_int
SELECT * FROM generate_series(1, 5)
-- @query series_step
SELECT * FROM generate_series(10, 1, -3)
-- @query series_sum
SELECT sum(g)::bigint FROM generate_series(1, 100) AS t(g)
-- @query series_alias_names_column
SELECT sum(g)::bigint, max(g) FROM generate_series(1, 100) AS g
-- @query series_alias_star
SELECT x * 2 FROM generate_series(-2, 2) AS x WHERE x <> 0
-- @query series_in_select_from_alias
SELECT s.n * 2 FROM generate_series(1, 3) AS s(n)
-- @query series_dates
SELECT d::date FROM generate_series(TIMESTAMP '2024-01-30', TIMESTAMP '2024-02-02', INTERVAL '1 day') AS g(d)
-- @query json_arrow_text
SELECT id, doc ->> 'name' FROM d_docs
-- @query json_nested
SELECT doc -> 'addr' ->> 'city' FROM d_docs WHERE id = 1
-- @query json_array_index
SELECT doc -> 'tags' ->> 0 FROM d_docs WHERE id = 1
-- @query json_number_text
SELECT (doc ->> 'age')::int + 1 FROM d_docs WHERE id = 1
-- @query json_null_member
SELECT doc ->> 'age' IS NULL, doc ->> 'missing' IS NULL FROM d_docs WHERE id = 2
-- @query json_filter
SELECT id FROM d_docs WHERE doc ->> 'name' = 'bob'
-- @query json_literal_arrow
SELECT '{"a": {"b": 42}}'::json -> 'a' ->> 'b'
-- @query array_literal
SELECT ARRAY[1, 2, 3], ARRAY['a', 'b']
-- @query array_column
SELECT id, tags, nums FROM d_docs
-- @query array_index
SELECT id, nums[1], tags[2] FROM d_docs
-- @query array_length
SELECT id, array_length(nums, 1) FROM d_docs
-- @query array_contains_any
SELECT id FROM d_docs WHERE 2 = ANY(nums)
-- @query unnest
SELECT unnest(ARRAY[3, 1, 2])
-- @query unnest_column
SELECT id, unnest(nums) FROM d_docs
-- @query array_agg_roundtrip
SELECT array_agg(x ORDER BY x) FROM unnest(ARRAY[3, 1, 2]) AS t(x)
-- @query array_append_cat
SELECT array_append(ARRAY[1, 2], 3), array_cat(ARRAY[1], ARRAY[2, 3])
-- @query array_position
SELECT array_position(ARRAY['a', 'b', 'c'], 'b')
-- @query invalid_json error
SELECT '{"a": '::json
