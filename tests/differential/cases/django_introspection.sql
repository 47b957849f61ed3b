-- What Django 5.2 sends for inspectdb and its migrations' introspection
-- (DatabaseIntrospection.get_constraints), and PostgreSQL's multi-argument unnest.
-- @setup
CREATE TABLE d_dj_author (id bigint PRIMARY KEY, name varchar(100) NOT NULL);
CREATE TABLE d_dj_book (id bigint PRIMARY KEY, author_id bigint NOT NULL, title varchar(200) NOT NULL, pages integer NOT NULL, CONSTRAINT d_dj_book_pages_positive CHECK (pages > 0));
ALTER TABLE d_dj_book ADD CONSTRAINT d_dj_book_author_id_title_uniq UNIQUE (author_id, title);
ALTER TABLE d_dj_book ADD CONSTRAINT d_dj_book_author_id_fk_d_dj_author_id FOREIGN KEY (author_id) REFERENCES d_dj_author (id) DEFERRABLE INITIALLY DEFERRED;
CREATE INDEX d_dj_book_author_id_idx ON d_dj_book (author_id);
-- @query unnest_two_arrays
SELECT * FROM unnest(ARRAY[1, 2, 3], ARRAY['a', 'b']) AS t(x, y)
-- @query unnest_two_arrays_ordinality
SELECT * FROM unnest(ARRAY[10, 20], ARRAY['a', 'b', 'c']) WITH ORDINALITY AS t(x, y, n) ORDER BY n
-- @query get_constraints_constraints
SELECT c.conname, array(SELECT attname FROM unnest(c.conkey) WITH ORDINALITY cols(colid, arridx) JOIN pg_attribute AS ca ON cols.colid = ca.attnum WHERE ca.attrelid = c.conrelid ORDER BY cols.arridx), c.contype, (SELECT fkc.relname || '.' || fka.attname FROM pg_attribute AS fka JOIN pg_class AS fkc ON fka.attrelid = fkc.oid WHERE fka.attrelid = c.confrelid AND fka.attnum = c.confkey[1]), cl.reloptions FROM pg_constraint AS c JOIN pg_class AS cl ON c.conrelid = cl.oid WHERE cl.relname = 'd_dj_book' AND pg_catalog.pg_table_is_visible(cl.oid) AND c.contype <> 'n'
-- @query get_constraints_indexes
SELECT indexname, array_agg(attname ORDER BY arridx), indisunique, indisprimary, array_agg(ordering ORDER BY arridx), amname, exprdef, s2.attoptions FROM (SELECT c2.relname as indexname, idx.*, attr.attname, am.amname, CASE WHEN idx.indexprs IS NOT NULL THEN pg_get_indexdef(idx.indexrelid) END AS exprdef, CASE am.amname WHEN 'btree' THEN CASE (option & 1) WHEN 1 THEN 'DESC' ELSE 'ASC' END END as ordering, c2.reloptions as attoptions FROM (SELECT * FROM pg_index i, unnest(i.indkey, i.indoption) WITH ORDINALITY koi(key, option, arridx)) idx LEFT JOIN pg_class c ON idx.indrelid = c.oid LEFT JOIN pg_class c2 ON idx.indexrelid = c2.oid LEFT JOIN pg_am am ON c2.relam = am.oid LEFT JOIN pg_attribute attr ON attr.attrelid = c.oid AND attr.attnum = idx.key WHERE c.relname = 'd_dj_book' AND pg_catalog.pg_table_is_visible(c.oid)) s2 GROUP BY indexname, indisunique, indisprimary, amname, exprdef, attoptions
-- @query drop_named_check
ALTER TABLE d_dj_book DROP CONSTRAINT d_dj_book_pages_positive
-- @query drop_unique_together
ALTER TABLE d_dj_book DROP CONSTRAINT d_dj_book_author_id_title_uniq
-- @query drop_fk
ALTER TABLE d_dj_book DROP CONSTRAINT d_dj_book_author_id_fk_d_dj_author_id
-- @query add_field_not_null_varchar
ALTER TABLE d_dj_book ADD COLUMN isbn varchar(20) DEFAULT 'x' NOT NULL
-- @query add_field_keeps_its_length
SELECT format_type(atttypid, atttypmod), attnotnull FROM pg_attribute WHERE attrelid = 'd_dj_book'::regclass AND attname = 'isbn'
-- @query add_field_length_enforced error
INSERT INTO d_dj_book VALUES (9, 1, 't', 1, '123456789012345678901')
-- @query drop_not_null_on_indexed_table
ALTER TABLE d_dj_book ALTER COLUMN isbn DROP NOT NULL
-- @query drop_column_on_indexed_table
ALTER TABLE d_dj_book DROP COLUMN isbn CASCADE
-- @query after_drops
SELECT conname, contype FROM pg_constraint WHERE conrelid = 'd_dj_book'::regclass AND contype <> 'n' ORDER BY conname
