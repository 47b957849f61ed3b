-- Subqueries, CTEs (including recursive), IN / EXISTS / ANY / ALL.
-- @setup
CREATE TABLE d_items (id int PRIMARY KEY, cat text, price int);
CREATE TABLE d_tree (id int PRIMARY KEY, parent int, label text);
INSERT INTO d_items VALUES (1, 'a', 10), (2, 'a', 20), (3, 'b', 5), (4, 'c', NULL), (5, 'b', 15);
INSERT INTO d_tree VALUES (1, NULL, 'root'), (2, 1, 'child1'), (3, 1, 'child2'), (4, 2, 'grandchild'), (5, 4, 'leaf');
-- @query scalar_subquery
SELECT id, price, (SELECT max(price) FROM d_items) AS mx FROM d_items
-- @query correlated_subquery
SELECT id FROM d_items i WHERE price > (SELECT avg(price) FROM d_items j WHERE j.cat = i.cat)
-- @query derived_table
SELECT cat, total FROM (SELECT cat, sum(price)::bigint AS total FROM d_items GROUP BY cat) s WHERE total > 10
-- @query in_subquery
SELECT id FROM d_items WHERE cat IN (SELECT cat FROM d_items WHERE price > 12)
-- @query not_in_subquery
SELECT id FROM d_items WHERE cat NOT IN (SELECT cat FROM d_items WHERE price < 12)
-- @query not_in_with_null
SELECT id FROM d_items WHERE price NOT IN (SELECT price FROM d_items WHERE cat = 'c')
-- @query in_list
SELECT id FROM d_items WHERE id IN (1, 3, 99)
-- @query in_list_with_null
SELECT 1 IN (1, NULL), 2 IN (1, NULL), 2 NOT IN (1, NULL)
-- @query exists
SELECT id FROM d_items i WHERE EXISTS (SELECT 1 FROM d_items j WHERE j.cat = i.cat AND j.id <> i.id)
-- @query not_exists
SELECT id FROM d_items i WHERE NOT EXISTS (SELECT 1 FROM d_items j WHERE j.price > i.price)
-- @query any_array
SELECT id FROM d_items WHERE id = ANY(ARRAY[2, 4])
-- @query any_subquery
SELECT id FROM d_items WHERE price > ANY (SELECT price FROM d_items WHERE cat = 'b')
-- @query all_subquery
SELECT id FROM d_items WHERE price >= ALL (SELECT price FROM d_items WHERE price IS NOT NULL)
-- @query cte_simple
WITH c AS (SELECT cat, count(*) AS n FROM d_items GROUP BY cat) SELECT cat, n FROM c WHERE n > 1
-- @query cte_chained
WITH a AS (SELECT id, price FROM d_items WHERE price IS NOT NULL), b AS (SELECT sum(price)::bigint AS s FROM a) SELECT s FROM b
-- @query recursive_counter
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT sum(n)::bigint FROM r
-- @query recursive_tree
WITH RECURSIVE t AS (SELECT id, label, 0 AS depth FROM d_tree WHERE parent IS NULL UNION ALL SELECT c.id, c.label, t.depth + 1 FROM d_tree c JOIN t ON c.parent = t.id) SELECT id, label, depth FROM t ORDER BY id
-- @query recursive_path
WITH RECURSIVE p AS (SELECT id, label::text AS path FROM d_tree WHERE id = 1 UNION ALL SELECT c.id, p.path || '/' || c.label FROM d_tree c JOIN p ON c.parent = p.id) SELECT path FROM p
-- @query scalar_subquery_multiple_rows error
SELECT (SELECT id FROM d_items)
