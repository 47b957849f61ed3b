-- The user schema the corpus was captured against (same names as in PostgreSQL).
-- DuckDB SQL: tags is VARCHAR(20) as the transpiler creates it (transpiler/varchar_length.py).
CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price DECIMAL(10,2),
    tags VARCHAR CHECK (length(tags) <= 20), score DOUBLE, created TIMESTAMPTZ DEFAULT now(),
    emb FLOAT[384]);
CREATE VIEW v_items AS SELECT id, name FROM items;
CREATE INDEX items_name_idx ON items (name);
CREATE TABLE moods (m VARCHAR, r INTEGER[]);
