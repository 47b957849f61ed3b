SELECT '42'::int + 1 AS n, 'a' || 'b' AS s, 3 / 2 AS d
-- transpiled:
SELECT CAST('42' AS INT) + 1 AS n, 'a' || 'b' AS s, __HATI_DIV(3, 2) AS d
-- rows:
[43, "ab", 1]
