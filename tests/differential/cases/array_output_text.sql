-- array::text is PostgreSQL's array output: braces, NULL, double quotes around elements
-- with spaces, commas, quotes, backslashes or braces, and around empty strings.
-- @setup
CREATE TYPE d_arrout_mood AS ENUM ('low', 'mid', 'top');
CREATE TABLE d_arrout (id int PRIMARY KEY, a integer[], b text[], m d_arrout_mood[]);
INSERT INTO d_arrout VALUES (1, ARRAY[1,2,NULL], ARRAY['a b', 'x,y', 'q"r', 'back\slash', '', 'NULL', NULL, '{c}', 'plain'], ARRAY['low','top']::d_arrout_mood[]);
INSERT INTO d_arrout VALUES (2, ARRAY[]::integer[], ARRAY[]::text[], ARRAY[]::d_arrout_mood[]);
INSERT INTO d_arrout VALUES (3, NULL, NULL, NULL);
-- @query array_columns_as_text
SELECT id, a::text, b::text, m::text FROM d_arrout ORDER BY id
-- @query array_cast_function_form
SELECT id, CAST(a AS text) AS a, CAST(m AS varchar) AS m FROM d_arrout ORDER BY id
-- @query array_constructor_as_text
SELECT ARRAY[1,2,3]::text AS ints, ARRAY['a b', NULL, 'c']::text AS texts
