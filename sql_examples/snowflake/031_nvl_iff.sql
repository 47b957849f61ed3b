SELECT id, NVL(amount, 0) AS amount, IFF(amount > 100, 'big', 'small') AS size FROM tickets ORDER BY id
-- transpiled:
SELECT id, COALESCE(amount, 0) AS amount, CASE WHEN amount > 100 THEN 'big' ELSE 'small' END AS size FROM tickets ORDER BY id
-- rows:
[10, "120.50", "big"]
[11, "0.00", "small"]
[12, "35.00", "small"]
