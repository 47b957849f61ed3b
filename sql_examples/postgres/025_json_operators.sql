SELECT payload::json->'meta'->>'priority' AS p FROM tickets ORDER BY id
-- transpiled:
SELECT (CAST(payload AS JSON) -> '$.meta') ->> '$.priority' AS p FROM tickets ORDER BY id
-- rows:
["1"]
["2"]
["3"]
