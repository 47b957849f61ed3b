SELECT DATEADD('day', 30, created) AS due FROM tickets WHERE id = 10
-- transpiled:
SELECT created + INTERVAL 30 DAY AS due FROM tickets WHERE id = 10
-- rows:
["2024-02-04T00:00:00"]
