-- Inner, left, right, full, cross and self joins.
-- @setup
CREATE TABLE d_dept (id int PRIMARY KEY, name text);
CREATE TABLE d_emp (id int PRIMARY KEY, name text, dept_id int, manager_id int, salary int);
INSERT INTO d_dept VALUES (1, 'eng'), (2, 'ops'), (3, 'empty');
INSERT INTO d_emp VALUES (1, 'ann', 1, NULL, 100), (2, 'bob', 1, 1, 80), (3, 'cid', 2, 1, 70), (4, 'dee', NULL, 2, 60), (5, 'eve', 9, 2, 90);
-- @query inner_join
SELECT e.name, d.name FROM d_emp e JOIN d_dept d ON e.dept_id = d.id
-- @query left_join
SELECT e.name, d.name FROM d_emp e LEFT JOIN d_dept d ON e.dept_id = d.id
-- @query right_join
SELECT e.name, d.name FROM d_emp e RIGHT JOIN d_dept d ON e.dept_id = d.id
-- @query full_join
SELECT e.name, d.name FROM d_emp e FULL JOIN d_dept d ON e.dept_id = d.id
-- @query cross_join_count
SELECT count(*) FROM d_emp CROSS JOIN d_dept
-- @query self_join
SELECT e.name, m.name AS manager FROM d_emp e LEFT JOIN d_emp m ON e.manager_id = m.id
-- @query join_using
SELECT id, e.name FROM d_emp e JOIN d_dept USING (id)
-- @query join_with_aggregate
SELECT d.name, count(e.id), coalesce(sum(e.salary), 0)::bigint FROM d_dept d LEFT JOIN d_emp e ON e.dept_id = d.id GROUP BY d.name
-- @query anti_join_left_null
SELECT d.name FROM d_dept d LEFT JOIN d_emp e ON e.dept_id = d.id WHERE e.id IS NULL
-- @query join_extra_condition
SELECT e.name FROM d_emp e JOIN d_dept d ON e.dept_id = d.id AND e.salary > 75
-- @query comma_join
SELECT e.name, d.name FROM d_emp e, d_dept d WHERE e.dept_id = d.id AND d.name = 'eng'
-- @query full_join_ordered
SELECT coalesce(e.name, '-'), coalesce(d.name, '-') FROM d_emp e FULL OUTER JOIN d_dept d ON e.dept_id = d.id ORDER BY 1, 2
-- @query lateral_join
SELECT d.name, top.name FROM d_dept d CROSS JOIN LATERAL (SELECT name FROM d_emp e WHERE e.dept_id = d.id ORDER BY salary DESC LIMIT 1) top
-- @query ambiguous_column error
SELECT name FROM d_emp JOIN d_dept ON d_emp.dept_id = d_dept.id
