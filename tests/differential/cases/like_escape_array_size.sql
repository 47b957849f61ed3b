-- LIKE / ILIKE escape with backslash by default (tools' catalog lookups send
-- LIKE 'pg\_%'); ESCAPE '' turns escaping off, ESCAPE '#' picks another character.
-- Array size functions of one-dimensional arrays: cardinality, array_length,
-- array_upper, array_lower, array_ndims (NULL, not 0, for an empty array).
-- @setup
CREATE TABLE d_likeesc (id int PRIMARY KEY, name text);
INSERT INTO d_likeesc VALUES (1, 'snap_1'), (2, 'snapx'), (3, 'pg_class'), (4, 'pgx'), (5, '50%'), (6, 'a\b'), (7, 'SNAP_2');
CREATE TABLE d_arrsize (id int PRIMARY KEY, a integer[]);
INSERT INTO d_arrsize VALUES (1, ARRAY[1,2,3]), (2, ARRAY[]::integer[]), (3, NULL), (4, ARRAY[7]);
-- @query like_backslash_escape
SELECT id FROM d_likeesc WHERE name LIKE 'snap\_%' ORDER BY id
-- @query not_like_backslash_escape
SELECT id FROM d_likeesc WHERE name NOT LIKE 'pg\_%' ORDER BY id
-- @query ilike_backslash_escape
SELECT id FROM d_likeesc WHERE name ILIKE 'snap\_%' ORDER BY id
-- @query tilde_operators_escape
SELECT id, name ~~ 'snap\_%' AS l, name !~~ 'snap\_%' AS nl, name ~~* 'SNAP\_%' AS il, name !~~* 'SNAP\_%' AS nil FROM d_likeesc ORDER BY id
-- @query like_escaped_percent
SELECT id FROM d_likeesc WHERE name LIKE '%\%' ORDER BY id
-- @query like_escaped_backslash
SELECT id FROM d_likeesc WHERE name LIKE 'a\\b' ORDER BY id
-- @query like_escape_string_constant
SELECT id FROM d_likeesc WHERE name LIKE E'snap\\_%' ORDER BY id
-- @query like_escape_off
SELECT id FROM d_likeesc WHERE name LIKE 'a\b' ESCAPE '' ORDER BY id
-- @query like_escape_other
SELECT id FROM d_likeesc WHERE name LIKE 'snap#_%' ESCAPE '#' ORDER BY id
-- @query like_pattern_from_column
SELECT l.id, r.id AS rid FROM d_likeesc l JOIN d_likeesc r ON l.name LIKE replace(r.name, '_', '\_') ORDER BY l.id, r.id
-- @query catalog_like_pg
SELECT count(*) > 0 AS some FROM pg_catalog.pg_class WHERE relname LIKE 'pg\_%'
-- @query array_size_functions
SELECT id, cardinality(a) AS card, array_length(a, 1) AS len, array_upper(a, 1) AS up, array_lower(a, 1) AS low, array_ndims(a) AS nd FROM d_arrsize ORDER BY id
-- @query cardinality_literals
SELECT cardinality(ARRAY[1,2]) AS two, cardinality(ARRAY[]::int[]) AS zero, cardinality(NULL::int[]) AS none
