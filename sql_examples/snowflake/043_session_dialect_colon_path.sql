-- dialect: snowflake
SELECT payload:meta:priority AS p FROM tickets WHERE id = 11
-- transpiled:
SELECT payload -> '$.meta.priority' AS p FROM tickets WHERE id = 11
-- rows:
["2"]
