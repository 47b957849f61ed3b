SELECT DATEDIFF('day', created, DATE '2024-04-01') AS age FROM tickets ORDER BY id
-- transpiled:
SELECT DATE_DIFF('DAY', created, CAST('2024-04-01' AS DATE)) AS age FROM tickets ORDER BY id
-- rows:
[87]
[51]
[17]
