-- What ActiveRecord 6.1 (tests/tools/test_activerecord.py) sends on connect, for its
-- schema cache, migrations and fixtures.
-- @setup
CREATE TABLE ar_authors (id bigserial primary key, name character varying(100) NOT NULL, email character varying, meta jsonb DEFAULT '{}', tags character varying[] DEFAULT '{}', kind text DEFAULT 'plain', born date DEFAULT '2000-01-02', n integer DEFAULT 0 NOT NULL, ok boolean DEFAULT true);
CREATE UNIQUE INDEX index_ar_authors_on_email ON ar_authors (email);
INSERT INTO ar_authors (name) VALUES ('a'), ('b');
-- @query type_map_regprocedure
SELECT t.typname, t.typinput, t.typtype FROM pg_type as t LEFT JOIN pg_range as r ON oid = rngtypid WHERE t.typname IN ('int4', 'text', 'jsonb', 'numeric') OR t.typinput = 'array_in(cstring,oid,integer)'::regprocedure AND t.typname IN ('_int4', '_text', '_jsonb') ORDER BY t.typname
-- @query primary_key_bare_srf_alias
SELECT a.attname FROM (SELECT indrelid, indkey, generate_subscripts(indkey, 1) idx FROM pg_index WHERE indrelid = '"ar_authors"'::regclass AND indisprimary) i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[i.idx] ORDER BY i.idx
-- @query column_defaults_as_postgresql_shows_them
SELECT a.attname, pg_get_expr(d.adbin, d.adrelid), a.attnotnull FROM pg_attribute a LEFT JOIN pg_attrdef d ON a.attrelid = d.adrelid AND a.attnum = d.adnum WHERE a.attrelid = '"ar_authors"'::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attname NOT IN ('email', 'tags') ORDER BY a.attnum
-- @query information_schema_column_default
SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'ar_authors' AND column_name IN ('name', 'meta', 'kind', 'born', 'n', 'ok') ORDER BY ordinal_position
-- @query interval_style_iso_8601
SET intervalstyle = iso_8601
-- @query interval_style_shown
SHOW IntervalStyle
-- @query interval_style_back
SET intervalstyle = postgres
-- @query interval_style_not_a_style error
SET intervalstyle = nope
-- @query counter_update
UPDATE ar_authors SET n = COALESCE(n, 0) + 2 WHERE id = 1
-- @query counter_read
SELECT id, n FROM ar_authors ORDER BY id
-- @query fixtures_disable_triggers
ALTER TABLE "ar_authors" DISABLE TRIGGER ALL
-- @query fixtures_enable_triggers
ALTER TABLE "ar_authors" ENABLE TRIGGER ALL
-- @query reset_pk_sequence_far_ahead
SELECT setval('"public"."ar_authors_id_seq"', 879889978, true)
-- @query sequence_after_far_setval
SELECT last_value, is_called FROM ar_authors_id_seq
-- @query insert_after_far_setval
INSERT INTO ar_authors (name) VALUES ('c') RETURNING id
-- @query setval_back_after_far
SELECT setval('ar_authors_id_seq', 3, false)
-- @query insert_after_setval_back
INSERT INTO ar_authors (name) VALUES ('d') RETURNING id
