SELECT DISTINCT ON (category) category, title FROM docs ORDER BY category, id
-- transpiled:
SELECT DISTINCT ON (category) category, title FROM docs ORDER BY category, id
-- rows:
["account", "Login help"]
["billing", "Billing FAQ"]
["shipping", "Shipping times"]
