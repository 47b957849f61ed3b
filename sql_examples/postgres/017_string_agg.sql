SELECT string_agg(title, ', ' ORDER BY id) AS titles FROM docs WHERE category = 'account'
-- transpiled:
SELECT LISTAGG(title, ', ' ORDER BY id) AS titles FROM docs WHERE category = 'account'
-- rows:
["Login help, Account security"]
