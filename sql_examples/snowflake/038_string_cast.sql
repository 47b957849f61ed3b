SELECT id::STRING AS s FROM tickets ORDER BY id
-- transpiled:
SELECT CAST(id AS TEXT) AS s FROM tickets ORDER BY id
-- rows:
["10"]
["11"]
["12"]
