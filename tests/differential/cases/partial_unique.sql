-- A partial unique index (Django's UniqueConstraint(condition=...)): unique among the rows
-- its WHERE holds for (transpiler/create_index.py keys each column as CASE WHEN ... END).
-- @setup
CREATE TABLE d_pu (id int PRIMARY KEY, email text, org int, deleted boolean DEFAULT false);
CREATE UNIQUE INDEX d_pu_live ON d_pu (email) WHERE NOT deleted;
CREATE UNIQUE INDEX d_pu_org ON d_pu (org, email) WHERE org > 1;
INSERT INTO d_pu VALUES (1, 'a', 1, true), (2, 'a', 1, true), (3, 'a', 1, false);
-- @query duplicates_outside_the_where_are_allowed
INSERT INTO d_pu VALUES (4, 'b', 1, true), (5, 'b', 1, true)
-- @query duplicate_inside_the_where_refused error
INSERT INTO d_pu VALUES (6, 'a', 1, false)
-- @query update_into_the_where_refused error
UPDATE d_pu SET deleted = false WHERE id = 1
-- @query two_column_partial_allows_outside
INSERT INTO d_pu VALUES (7, 'c', 1, true), (8, 'c', 1, true)
-- @query two_column_partial_refuses_inside error
INSERT INTO d_pu VALUES (9, 'c', 2, true), (10, 'c', 2, true)
-- @query null_keys_are_distinct
INSERT INTO d_pu VALUES (11, NULL, 3, false), (12, NULL, 3, false)
-- @query rows
SELECT id, email, org, deleted FROM d_pu ORDER BY id
