SELECT id FROM docs WHERE semantic_match(embedding)
-- error: 42883
