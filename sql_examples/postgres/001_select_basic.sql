SELECT id, title FROM docs WHERE id <= 2 ORDER BY id
-- transpiled:
SELECT id, title FROM docs WHERE id <= 2 ORDER BY id
-- rows:
[1, "Billing FAQ"]
[2, "Login help"]
