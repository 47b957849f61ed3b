INSERT INTO items (id, name, embedding) VALUES (9, 'nine', '[0.5,0.5,0.5]'::vector) RETURNING id
-- transpiled:
INSERT INTO items (id, name, embedding) VALUES (9, 'nine', CAST('[0.5,0.5,0.5]' AS REAL[3])) RETURNING id
-- rows:
[9]
