SELECT customer, id FROM tickets QUALIFY ROW_NUMBER() OVER (PARTITION BY customer ORDER BY created DESC) = 1 ORDER BY customer
-- transpiled:
SELECT customer, id FROM tickets QUALIFY ROW_NUMBER() OVER (PARTITION BY customer ORDER BY created DESC NULLS FIRST) = 1 ORDER BY customer
-- rows:
["acme", 12]
["globex", 11]
