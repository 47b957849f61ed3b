CREATE TABLE pv (id bigserial PRIMARY KEY, embedding vector(3))
-- transpiled:
CREATE TABLE pv (id BIGSERIAL PRIMARY KEY, embedding REAL[3])
