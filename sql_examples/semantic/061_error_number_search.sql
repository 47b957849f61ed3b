SELECT semantic_rank(embedding, 42) FROM docs
-- error: 42883
