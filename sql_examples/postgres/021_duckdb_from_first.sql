FROM docs SELECT id WHERE id < 3 ORDER BY id
-- transpiled:
SELECT id FROM docs WHERE id < 3 ORDER BY id
-- rows:
[1]
[2]
