WITH src AS (SELECT 'c' AS k, 'v' AS v) INSERT INTO kv SELECT k, v FROM src RETURNING k
-- transpiled:
WITH src AS (SELECT 'c' AS k, 'v' AS v) INSERT INTO kv SELECT k, v FROM src RETURNING k
-- rows:
["c"]
