SELECT t.id, f.value::STRING AS tag FROM tickets t, LATERAL FLATTEN(input => PARSE_JSON(t.payload):tags) f ORDER BY t.id, tag
-- transpiled:
SELECT t.id, CAST(f.value AS TEXT) AS tag FROM tickets AS t CROSS JOIN LATERAL (SELECT CAST(UNNEST(CAST(JSON(t.payload) -> '$.tags' AS JSON[])) AS VARIANT) AS value, UNNEST(RANGE(0, LENGTH(CAST(JSON(t.payload) -> '$.tags' AS JSON[])))) AS index) AS f ORDER BY t.id, tag
-- rows:
[10, "billing"]
[10, "urgent"]
[11, "account"]
