CREATE TABLE people (id integer, name varchar(5));
INSERT INTO people VALUES (1, 'abcdefgh'::varchar(5)), (2, 'ann');
SELECT id, name, length(name) FROM people ORDER BY id
-- transpiled:
CREATE TABLE people (id INT, name TEXT CHECK (LENGTH(name) <= 5))
INSERT INTO people VALUES (1, LEFT(CAST('abcdefgh' AS TEXT), 5)), (2, 'ann')
SELECT id, name, CAST(LENGTH(name) AS INT) FROM people ORDER BY id
-- rows:
[1, "abcde", 5]
[2, "ann", 3]
