-- String functions common to PostgreSQL and DuckDB.
-- @setup
CREATE TABLE d_str (id int PRIMARY KEY, s text);
INSERT INTO d_str VALUES (1, 'Hello World'), (2, '  padded  '), (3, 'ÄÖü Ñandú'), (4, ''), (5, NULL), (6, 'a_b%c');
-- @query lower_upper
SELECT id, lower(s), upper(s) FROM d_str
-- @query length
SELECT id, length(s), char_length(s) FROM d_str
-- @query substring_from_for
SELECT substring('abcdef' FROM 2 FOR 3), substring('abcdef', 3), substr('abcdef', 2, 2)
-- @query substring_column
SELECT id, substring(s, 1, 5) FROM d_str
-- @query concat_operator
SELECT 'foo' || 'bar', 'x' || 1, id || ':' || s FROM d_str
-- @query concat_null
SELECT 'a' || NULL, concat('a', NULL, 'b'), concat_ws('-', 'a', NULL, 'c')
-- @query replace
SELECT replace('banana', 'an', 'AN'), replace(s, 'l', 'L') FROM d_str WHERE id = 1
-- @query trim_variants
SELECT trim('  x  '), ltrim('  x  '), rtrim('  x  '), trim(both 'x' from 'xxhixx')
-- @query trim_column
SELECT id, '[' || trim(s) || ']' FROM d_str
-- @query position
SELECT position('lo' IN 'hello'), position('z' IN 'hello'), strpos('hello', 'l')
-- @query like
SELECT id FROM d_str WHERE s LIKE 'H%'
-- @query like_underscore
SELECT 'abc' LIKE 'a_c', 'abc' LIKE 'a__d', 'ABC' LIKE 'abc'
-- @query ilike
SELECT id FROM d_str WHERE s ILIKE '%WORLD%'
-- @query not_like
SELECT id FROM d_str WHERE s NOT LIKE '%o%'
-- @query like_escape
SELECT id FROM d_str WHERE s LIKE 'a\_b%' ESCAPE '\'
-- @query left_right
SELECT left('abcdef', 2), right('abcdef', 3)
-- @query lpad_rpad
SELECT lpad('7', 3, '0'), rpad('ab', 5, '*')
-- @query repeat_reverse
SELECT repeat('ab', 3), reverse('hello')
-- @query split_part
SELECT split_part('a,b,c', ',', 2), split_part('a,b,c', ',', 5)
-- @query starts_with
SELECT starts_with('hatiproxy', 'hati'), starts_with('hatiproxy', 'proxy')
-- @query initcap_ascii
SELECT upper(left('word', 1)) || lower(substring('word', 2))
-- @query string_compare
SELECT 'abc' < 'abd', 'b' > 'abc', 'x' = 'x'
-- @query unicode_length
SELECT length('日本語'), upper('ñandú'), lower('ÉCOLE')
-- @query md5
SELECT md5('hello')
-- @query chr_ascii
SELECT chr(65), ascii('A')
-- @query string_agg_ordered
SELECT string_agg(s, ',' ORDER BY id) FROM d_str WHERE id <= 3
