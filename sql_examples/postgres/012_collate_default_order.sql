SELECT title FROM docs WHERE category = 'billing' ORDER BY title COLLATE pg_catalog.default
-- transpiled:
SELECT title FROM docs WHERE category = 'billing' ORDER BY title
-- rows:
["Billing FAQ"]
["Refund policy"]
