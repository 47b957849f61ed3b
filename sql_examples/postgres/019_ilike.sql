SELECT title FROM docs WHERE content ILIKE '%REFUND%' ORDER BY id
-- transpiled:
SELECT title FROM docs WHERE content ILIKE '%REFUND%' ORDER BY id
-- rows:
["Billing FAQ"]
["Refund policy"]
