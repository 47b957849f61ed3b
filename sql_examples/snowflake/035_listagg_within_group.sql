SELECT LISTAGG(DISTINCT customer, ', ') WITHIN GROUP (ORDER BY customer) AS customers FROM tickets
-- transpiled:
SELECT LISTAGG(DISTINCT customer, ', ' ORDER BY customer) AS customers FROM tickets
-- rows:
["acme, globex"]
