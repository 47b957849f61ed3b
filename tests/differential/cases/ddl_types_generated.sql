-- Composite types (DuckDB STRUCTs) and GENERATED ALWAYS AS (...) STORED columns (DuckDB's
-- generated columns are virtual: the same values, computed when read).
-- @setup
CREATE TYPE d_pair AS (a int, b text);
CREATE TABLE d_tp (id int, p d_pair);
INSERT INTO d_tp VALUES (1, ROW(1, 'x')), (2, ROW(2, NULL));
CREATE TABLE d_gen (id int PRIMARY KEY, price numeric(10,2), qty int DEFAULT 1, total numeric(12,2) GENERATED ALWAYS AS (price * qty) STORED);
INSERT INTO d_gen (id, price, qty) VALUES (1, 1.50, 2), (2, 2.25, 3), (3, NULL, 1);
-- @query composite_fields
SELECT id, (p).a, (p).b FROM d_tp ORDER BY id
-- @query generated_values
SELECT id, total FROM d_gen ORDER BY id
-- @query generated_follows_update
UPDATE d_gen SET qty = 10 WHERE id = 1 RETURNING id, total
-- @query generated_insert_refused error
INSERT INTO d_gen (id, total) VALUES (9, 5)
-- @query generated_in_pg_attribute
SELECT attname, attgenerated = 's', atthasdef FROM pg_attribute WHERE attrelid = 'd_gen'::regclass AND attnum > 0 ORDER BY attnum
-- @query generated_in_information_schema
SELECT column_name, is_generated, generation_expression IS NOT NULL, column_default FROM information_schema.columns WHERE table_name = 'd_gen' ORDER BY ordinal_position
