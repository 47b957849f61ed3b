-- hatiproxy's semantic SQL and embedded-column functions as pg_proc shows them (\df). DuckDB
-- knows none of them: the transpiler rewrites the semantic ones (README, "Semantic SQL
-- reference") and the wire server runs hatiproxy_embed_column
-- (proxy/pgserver/embed_columns.py). The agent functions are declared from the registry
-- (proxy/db/catalog/functions.py); see __hati_function_decl in 50_functions.sql.
INSERT INTO __hati_catalog.pg.__hati_function_decl VALUES
    ('semantic_match', ['col', 'search_text', 'threshold'], ['ANY', 'VARCHAR', 'DOUBLE'],
     [NULL, NULL, '0.7'], NULL, ['BOOLEAN'], FALSE,
     'Whether col (a vector, or text embedded per row) is at least threshold cosine-similar to the search text'),
    ('vector_match', ['col', 'search_text', 'threshold'], ['ANY', 'VARCHAR', 'DOUBLE'],
     [NULL, NULL, '0.7'], NULL, ['BOOLEAN'], FALSE, 'semantic_match under another name'),
    ('semantic_rank', ['col', 'search_text'], ['ANY', 'VARCHAR'], [NULL, NULL], NULL,
     ['FLOAT'], FALSE,
     'Cosine similarity of col (a vector, or text embedded per row) to the search text; ORDER BY it DESC LIMIT k uses an HNSW index'),
    ('hatiproxy_embed_column', ['table_name', 'column_name'], ['VARCHAR', 'VARCHAR'],
     [NULL, NULL], NULL, ['BIGINT'], FALSE,
     'Add <column>_embedding to the table, fill it, index it (HNSW) and keep it filled; returns the rows embedded'),
    ('hatidata_context', ['table_name', 'search_text', 'k'], ['VARCHAR', 'VARCHAR', 'INTEGER'],
     [NULL, NULL, '5'], NULL, NULL, TRUE,
     'The k rows of the table that best match the search text (BM25 full-text), with a score column'),
    ('hatidata_rag_context', ['table_name', 'column_name', 'query', 'k'],
     ['VARCHAR', 'VARCHAR', 'ANY', 'INTEGER'], [NULL, NULL, NULL, NULL], NULL, NULL, TRUE,
     'The k rows whose vector column is most similar to the query (a vector or a search text), with a similarity column');
