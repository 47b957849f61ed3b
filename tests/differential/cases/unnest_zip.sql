-- Multi-argument UNNEST in FROM zips its arrays (Django's bulk_create inserts with it).
-- @setup
CREATE TABLE d_uz (id serial PRIMARY KEY, n int, label text);
-- @query zip_two
SELECT * FROM unnest(ARRAY[1, 2, 3], ARRAY['a', 'b', 'c'])
-- @query zip_pads_shorter
SELECT * FROM unnest(ARRAY[1, 2, 3], ARRAY['a'])
-- @query zip_alias_columns
SELECT x + 1, y FROM unnest(ARRAY[1, 2], ARRAY['p', 'q']) AS u(x, y) ORDER BY x
-- @query zip_typed_casts
SELECT * FROM unnest('{4,5}'::int[], '{d,e}'::text[])
-- @query zip_join
SELECT d.label, u.w FROM (SELECT 'a' AS label) d JOIN unnest(ARRAY['a', 'b'], ARRAY[10, 20]) AS u(l, w) ON u.l = d.label
-- @query bulk_insert_returning
INSERT INTO d_uz (n, label) SELECT * FROM unnest(ARRAY[7, 8, 9], ARRAY['x', 'y', 'z']) RETURNING d_uz.id, d_uz.label
-- @query bulk_insert_result
SELECT n, label FROM d_uz ORDER BY id
-- @query single_unnest_from
SELECT * FROM unnest(ARRAY[3, 1])
-- @query array_text_casts_client_side_binding
SELECT * FROM unnest(( E'{bob,"c\\"y",NULL}')::varchar(100)[], ('{"2026-11-26 11:24:18.179886+00:00"}'::timestamptz[])::timestamp with time zone[], ('{1,2}'::int2[])::integer[])
-- @query array_text_cast_quoted
SELECT ('{"a b","c,d",NULL}')::text[], '{}'::int[]
