SELECT semantic_match(embedding, 'x' FROM docs
-- error: 42601
