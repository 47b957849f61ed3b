SELECT title FROM docs WHERE id = $1 AND category = $2 LIMIT $3
-- transpiled:
SELECT title FROM docs WHERE id = $1 AND category = $2 LIMIT $3
