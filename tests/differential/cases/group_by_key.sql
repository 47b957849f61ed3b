-- GROUP BY a primary key selects the table's other columns (functional dependency;
-- Django's annotate(Count(...)) sends this).
-- @setup
CREATE TABLE d_gk_author (id serial PRIMARY KEY, name text, born int);
CREATE TABLE d_gk_book (id serial PRIMARY KEY, author_id int, title text, pages int);
CREATE TABLE d_gk_pair (a int, b int, label text, PRIMARY KEY (a, b));
INSERT INTO d_gk_author (name, born) VALUES ('ann', 1970), ('bob', 1980), ('cy', 1990);
INSERT INTO d_gk_book (author_id, title, pages) VALUES (1, 'x', 100), (1, 'y', 200), (2, 'z', 50);
INSERT INTO d_gk_pair VALUES (1, 1, 'p'), (1, 2, 'q');
-- @query count_per_author
SELECT d_gk_author.id, d_gk_author.name, d_gk_author.born, COUNT(d_gk_book.id) AS n FROM d_gk_author LEFT OUTER JOIN d_gk_book ON d_gk_author.id = d_gk_book.author_id GROUP BY d_gk_author.id ORDER BY d_gk_author.id
-- @query django_positional
SELECT "d_gk_author"."id", "d_gk_author"."name", COUNT("d_gk_book"."id") AS "book__count" FROM "d_gk_author" LEFT OUTER JOIN "d_gk_book" ON ("d_gk_author"."id" = "d_gk_book"."author_id") GROUP BY 1 ORDER BY 1
-- @query aliased_table
SELECT a.name, max(b.pages) FROM d_gk_author a JOIN d_gk_book b ON b.author_id = a.id GROUP BY a.id ORDER BY a.name
-- @query unqualified_having
SELECT name, count(*) FROM d_gk_author JOIN d_gk_book ON author_id = d_gk_author.id GROUP BY d_gk_author.id HAVING count(*) > 1 AND name <> ''
-- @query order_by_dependent
SELECT a.id, max(b.pages) FROM d_gk_author a JOIN d_gk_book b ON b.author_id = a.id GROUP BY a.id ORDER BY a.born DESC
-- @query composite_key
SELECT a, b, label, count(*) FROM d_gk_pair GROUP BY a, b ORDER BY b
-- @query composite_key_partial error
SELECT a, label, count(*) FROM d_gk_pair GROUP BY a
-- @query not_a_key error
SELECT d_gk_book.author_id, d_gk_book.title, count(*) FROM d_gk_book GROUP BY d_gk_book.author_id
