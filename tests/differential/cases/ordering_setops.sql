-- ORDER BY with NULLS FIRST/LAST, LIMIT/OFFSET, DISTINCT (ON), set operations.
-- @setup
CREATE TABLE d_ord (id int PRIMARY KEY, grp text, v int);
CREATE TABLE d_ord2 (v int);
INSERT INTO d_ord VALUES (1, 'x', 3), (2, 'y', NULL), (3, 'x', 1), (4, 'z', 2), (5, 'y', 5), (6, 'x', NULL);
INSERT INTO d_ord2 VALUES (1), (2), (2), (7), (NULL);
-- @query order_asc_default_nulls_last
SELECT id, v FROM d_ord ORDER BY v, id
-- @query order_desc_default_nulls_first
SELECT id, v FROM d_ord ORDER BY v DESC, id
-- @query order_nulls_first
SELECT id, v FROM d_ord ORDER BY v NULLS FIRST, id
-- @query order_desc_nulls_last
SELECT id, v FROM d_ord ORDER BY v DESC NULLS LAST, id
-- @query order_by_expression
SELECT id FROM d_ord ORDER BY id % 3, id DESC
-- @query order_by_alias
SELECT id, coalesce(v, 0) * 10 AS tenfold FROM d_ord ORDER BY tenfold DESC, id
-- @query order_text
SELECT grp FROM d_ord ORDER BY grp DESC, id
-- @query limit
SELECT id FROM d_ord ORDER BY id LIMIT 3
-- @query limit_offset
SELECT id FROM d_ord ORDER BY id LIMIT 2 OFFSET 3
-- @query offset_only
SELECT id FROM d_ord ORDER BY id OFFSET 4
-- @query limit_zero
SELECT id FROM d_ord LIMIT 0
-- @query fetch_first
SELECT id FROM d_ord ORDER BY id FETCH FIRST 2 ROWS ONLY
-- @query distinct
SELECT DISTINCT grp FROM d_ord
-- @query distinct_nulls
SELECT DISTINCT v FROM d_ord2
-- @query distinct_on
SELECT DISTINCT ON (grp) grp, id, v FROM d_ord ORDER BY grp, id DESC
-- @query distinct_on_nulls
SELECT DISTINCT ON (grp) grp, v FROM d_ord ORDER BY grp, v NULLS FIRST
-- @query union
SELECT v FROM d_ord UNION SELECT v FROM d_ord2
-- @query union_all
SELECT v FROM d_ord UNION ALL SELECT v FROM d_ord2
-- @query intersect
SELECT v FROM d_ord INTERSECT SELECT v FROM d_ord2
-- @query except
SELECT v FROM d_ord EXCEPT SELECT v FROM d_ord2
-- @query intersect_all
SELECT v FROM d_ord2 INTERSECT ALL SELECT v FROM d_ord2 WHERE v = 2
-- @query except_all
SELECT v FROM d_ord2 EXCEPT ALL SELECT 2
-- @query union_ordered_limit
SELECT v FROM d_ord UNION SELECT v FROM d_ord2 ORDER BY v NULLS FIRST LIMIT 4
-- @query union_column_count_error error
SELECT 1, 2 UNION SELECT 1
-- @query negative_limit error
SELECT id FROM d_ord LIMIT -1
