CREATE TABLE pv (id bigserial PRIMARY KEY, embedding vector(3))
-- transpiled:
CREATE OR REPLACE SEQUENCE "pv_id_seq"; CREATE TABLE pv (id BIGINT DEFAULT NEXTVAL('pv_id_seq') NOT NULL PRIMARY KEY, embedding REAL[3])
