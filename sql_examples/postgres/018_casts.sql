SELECT '42'::int + 1 AS n, 'a' || 'b' AS s, 3 / 2 AS d
-- transpiled:
SELECT CAST('42' AS INT) + 1 AS n, 'a' || 'b' AS s, __hati_catalog.pg.__hati_div(3, 2) AS d
-- rows:
[43, "ab", 1]
