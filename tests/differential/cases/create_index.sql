-- CREATE INDEX as PostgreSQL clients write it (Django, LlamaIndex, hand-written DDL):
-- the statement succeeds and the rows queries return afterwards are the same. btree and
-- hash become DuckDB ART indexes without their operator classes; gin / gist / brin and
-- indexes on JSON expressions create nothing (a NOTICE says so); a non-unique partial
-- index covers all rows. See transpiler/create_index.py.
-- @setup
CREATE TABLE d_cidx (id int PRIMARY KEY, name varchar(50), code text, metadata_ jsonb, n int);
INSERT INTO d_cidx VALUES (1, 'abc', 'A1', '{"ref_doc_id": "doc1"}', 10), (2, 'abd', 'B2', '{"ref_doc_id": "doc2"}', 20), (3, 'xyz', NULL, NULL, NULL), (4, NULL, 'D4', '{"ref_doc_id": "doc1"}', 10);
-- @query django_like_index
CREATE INDEX "d_cidx_name_like" ON "d_cidx" ("name" varchar_pattern_ops)
-- @query django_text_pattern_ops
CREATE INDEX "d_cidx_code_like" ON "d_cidx" USING btree ("code" text_pattern_ops)
-- @query llamaindex_json_key_index
CREATE INDEX d_cidx_ref_doc ON d_cidx USING btree ((metadata_ ->> 'ref_doc_id'))
-- @query unnamed_index
CREATE INDEX ON d_cidx (n)
-- @query unnamed_index_name
SELECT indexname FROM pg_indexes WHERE tablename = 'd_cidx' AND indexname = 'd_cidx_n_idx'
-- @query unnamed_index_name_taken
CREATE INDEX ON d_cidx (n); CREATE INDEX ON d_cidx (n)
-- @query unnamed_index_names_numbered
SELECT indexname FROM pg_indexes WHERE tablename = 'd_cidx' AND indexname LIKE 'd_cidx_n_idx%' ORDER BY 1
-- @query unnamed_index_name_taken_public_schema
CREATE INDEX ON public.d_cidx (n)
-- @query unnamed_index_name_taken_public_schema_numbered
SELECT indexname FROM pg_indexes WHERE tablename = 'd_cidx' AND indexname = 'd_cidx_n_idx3'
-- @query unnamed_index_name_of_a_table
CREATE TABLE d_cidx_code_idx (x int); CREATE INDEX ON d_cidx (code)
-- @query unnamed_index_name_of_a_table_numbered
SELECT indexname FROM pg_indexes WHERE tablename = 'd_cidx' AND indexname LIKE 'd_cidx_code_idx%' ORDER BY 1
-- @query unnamed_expression_index
CREATE INDEX ON d_cidx (lower(name))
-- @query unnamed_expression_index_name
SELECT indexname FROM pg_indexes WHERE tablename = 'd_cidx' AND indexname = 'd_cidx_lower_idx'
-- @query hash_index
CREATE INDEX d_cidx_code_hash ON d_cidx USING hash (code)
-- @query gin_index
CREATE INDEX d_cidx_meta_gin ON d_cidx USING gin (metadata_ jsonb_path_ops)
-- @query brin_index
CREATE INDEX d_cidx_n_brin ON d_cidx USING brin (n)
-- @query concurrently_if_not_exists
CREATE INDEX CONCURRENTLY IF NOT EXISTS d_cidx_multi ON d_cidx (n DESC NULLS LAST, name)
-- @query if_not_exists_again
CREATE INDEX IF NOT EXISTS d_cidx_multi ON d_cidx (n)
-- @query include_columns
CREATE INDEX d_cidx_incl ON d_cidx (code) INCLUDE (name, n)
-- @query partial_index
CREATE INDEX d_cidx_partial ON d_cidx (n) WHERE n > 10
-- @query unique_index
CREATE UNIQUE INDEX d_cidx_code_key ON d_cidx USING btree (code)
-- @query unique_index_refuses_duplicate error
INSERT INTO d_cidx VALUES (5, 'dup', 'A1', NULL, 1)
-- @query unique_index_allows_nulls
INSERT INTO d_cidx VALUES (6, 'n1', NULL, NULL, 30), (7, 'n2', NULL, NULL, 40)
-- @query unique_index_on_duplicates error
CREATE UNIQUE INDEX d_cidx_n_key ON d_cidx (n)
-- @query like_after_indexes
SELECT id, name FROM d_cidx WHERE name LIKE 'ab%' ORDER BY id
-- @query json_key_after_indexes
SELECT id FROM d_cidx WHERE metadata_ ->> 'ref_doc_id' = 'doc1' ORDER BY id
-- @query equality_after_indexes
SELECT id, n FROM d_cidx WHERE n = 10 ORDER BY id
-- @query range_after_partial_index
SELECT id FROM d_cidx WHERE n > 10 ORDER BY id
-- @query lower_after_expression_index
SELECT id FROM d_cidx WHERE lower(name) = 'xyz'
-- @query update_indexed_column
UPDATE d_cidx SET n = n + 1 WHERE id = 1
-- @query delete_indexed_row
DELETE FROM d_cidx WHERE id = 2
-- @query rows_after_writes
SELECT id, name, code, n FROM d_cidx ORDER BY id
-- @query drop_index
DROP INDEX d_cidx_name_like
-- @query drop_index_if_exists_gin
DROP INDEX IF EXISTS d_cidx_meta_gin
-- @query unique_hash_index error
CREATE UNIQUE INDEX d_cidx_hash_u ON d_cidx USING hash (id)
-- @query unique_gin_index error
CREATE UNIQUE INDEX d_cidx_gin_u ON d_cidx USING gin (metadata_)
-- @query unknown_access_method error
CREATE INDEX d_cidx_bad ON d_cidx USING nosuchmethod (n)
