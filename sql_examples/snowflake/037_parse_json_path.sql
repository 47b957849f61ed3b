SELECT id, PARSE_JSON(payload):meta.priority::NUMBER AS priority FROM tickets ORDER BY id
-- transpiled:
SELECT id, CAST(JSON(payload) -> '$.meta.priority' AS DECIMAL(38, 0)) AS priority FROM tickets ORDER BY id
-- rows:
[10, "1"]
[11, "2"]
[12, "3"]
