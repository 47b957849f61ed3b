SELECT CURRENT_DATE() >= DATE '2024-01-01' AS ok
-- transpiled:
SELECT CURRENT_DATE >= CAST('2024-01-01' AS DATE) AS ok
-- rows:
[true]
