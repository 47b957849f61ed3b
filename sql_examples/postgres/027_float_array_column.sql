CREATE TABLE IF NOT EXISTS vecs (id TEXT PRIMARY KEY, content TEXT NOT NULL, metadata TEXT, embedding FLOAT[3])
-- transpiled:
CREATE TABLE IF NOT EXISTS vecs (id TEXT PRIMARY KEY, content TEXT NOT NULL, metadata TEXT, embedding REAL[3])
