SELECT id FROM docs WHERE semantic_match(embedding, 'refund', 1.5)
-- error: 22023
