-- What the agent frameworks' Postgres backends send (tests/tools/test_langgraph.py,
-- test_chat_history.py, test_pg8000.py): LangGraph's checkpoint migration (ADD COLUMN IF
-- NOT EXISTS ... NOT NULL DEFAULT, run twice), its checkpoint read (jsonb_each_text of
-- `col -> 'key'` joined in a correlated subquery, convert_to), its store's namespace
-- regexes (`\Z`), its TTL refresh (a data-modifying WITH whose UPDATE sets a column the
-- main statement does not read), and its vector migration's DO block with IF.
-- @setup
CREATE TABLE d_af_ckpt (thread_id text, checkpoint jsonb NOT NULL, PRIMARY KEY (thread_id));
CREATE TABLE d_af_blobs (thread_id text, channel text, version text, blob bytea, PRIMARY KEY (thread_id, channel, version));
INSERT INTO d_af_ckpt VALUES ('t1', '{"channel_versions": {"log": "2", "count": "1"}}'), ('t2', '{"channel_versions": {}}');
INSERT INTO d_af_blobs VALUES ('t1', 'log', '2', '\x6c6f67'), ('t1', 'count', '1', '\x01'), ('t1', 'log', '1', '\x00');
CREATE TABLE d_af_store (prefix text, key text, value jsonb, ttl_minutes int, expires_at timestamptz, PRIMARY KEY (prefix, key));
INSERT INTO d_af_store VALUES ('users.u1.prefs', 'theme', '{"c": 1}', 60, NULL), ('users.u2.prefs', 'theme', '{"c": 2}', NULL, NULL), ('users', 'x', '{}', NULL, NULL), ('usersx.a', 'y', '{}', NULL, NULL);
-- @query af_add_column_if_not_exists_not_null
ALTER TABLE d_af_blobs ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT '';
-- @query af_add_column_if_not_exists_again
ALTER TABLE d_af_blobs ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT '';
-- @query af_added_column_filled
SELECT thread_id, channel, version, task_path FROM d_af_blobs ORDER BY channel, version;
-- @query af_added_column_not_null error
INSERT INTO d_af_blobs (thread_id, channel, version, task_path) VALUES ('t9', 'c', '1', NULL);
-- @query af_two_add_columns_if_not_exists
ALTER TABLE d_af_store ADD COLUMN IF NOT EXISTS expires_at timestamptz, ADD COLUMN IF NOT EXISTS note text;
-- @query af_add_serial_if_not_exists_keeps_its_sequence
ALTER TABLE d_af_store ADD COLUMN IF NOT EXISTS n serial; ALTER TABLE d_af_store ADD COLUMN IF NOT EXISTS n serial; INSERT INTO d_af_store (prefix, key, value) VALUES ('seq', 'k', '{}');
-- @query af_serial_kept_counting
SELECT key, n FROM d_af_store ORDER BY n;
-- @query af_checkpoint_channel_values
SELECT thread_id, (SELECT array_agg(array[bl.channel::bytea, bl.blob] ORDER BY bl.channel) FROM jsonb_each_text(checkpoint -> 'channel_versions') INNER JOIN d_af_blobs bl ON bl.thread_id = d_af_ckpt.thread_id AND bl.channel = jsonb_each_text.key AND bl.version = jsonb_each_text.value) AS channel_values FROM d_af_ckpt ORDER BY thread_id;
-- @query af_convert_to
SELECT convert_to('héllo', 'UTF8') AS a, convert_to(task_path, 'UTF8') AS b, convert_from('\x68c3a9'::bytea, 'utf-8') AS c FROM d_af_blobs ORDER BY channel, version LIMIT 1;
-- @query af_namespace_prefix_regex
SELECT prefix FROM d_af_store WHERE prefix ~ '^users(\.|\Z)' ORDER BY prefix;
-- @query af_namespace_suffix_regex
SELECT prefix FROM d_af_store WHERE prefix ~ '(^|\.)prefs\Z' ORDER BY prefix;
-- @query af_word_boundaries
SELECT regexp_replace('the cat sat', '\yc', 'K', 'g') AS a, 'word' ~ 'or\Y' AS b, 'the cat' ~* 'CAT\Z' AS c;
-- @query af_ttl_refresh_with_update
WITH passed_in AS (SELECT unnest(ARRAY['theme']) AS key), updated AS (UPDATE d_af_store s SET expires_at = now() + (s.ttl_minutes || ' minutes')::interval FROM passed_in p WHERE s.prefix = 'users.u1.prefs' AND s.key = p.key AND s.ttl_minutes IS NOT NULL RETURNING s.key) SELECT s.key, s.value FROM d_af_store s JOIN passed_in p ON s.key = p.key WHERE s.prefix = 'users.u1.prefs';
-- @query af_ttl_refreshed
SELECT prefix, expires_at IS NOT NULL AS has_expiry FROM d_af_store ORDER BY prefix;
-- @query af_do_if_not_exists
DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_name = 'd_af_made') THEN CREATE TABLE d_af_made (n int); INSERT INTO d_af_made VALUES (1); END IF; END $$;
-- @query af_do_if_again
DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM information_schema.tables WHERE table_name = 'd_af_made') THEN CREATE TABLE d_af_made (n int); ELSIF (SELECT count(*) FROM d_af_made) = 1 THEN INSERT INTO d_af_made VALUES (2); IF NULL THEN INSERT INTO d_af_made VALUES (99); ELSE INSERT INTO d_af_made VALUES (3); END IF; ELSE INSERT INTO d_af_made VALUES (98); END IF; END $$;
-- @query af_do_if_rows
SELECT n FROM d_af_made ORDER BY n;
-- @query af_do_if_condition_error_handled
DO $$ BEGIN IF 1 / 0 = 1 THEN NULL; END IF; EXCEPTION WHEN division_by_zero THEN INSERT INTO d_af_made VALUES (4); END $$;
-- @query af_do_if_condition_error error
DO $$ BEGIN IF (SELECT n FROM d_af_made) = 1 THEN NULL; END IF; END $$;
-- @query af_do_if_final_rows
SELECT n FROM d_af_made ORDER BY n;
-- @query af_add_int_not_null_if_not_exists_with_rows
ALTER TABLE d_af_made ADD COLUMN IF NOT EXISTS n2 int NOT NULL DEFAULT 0;
-- @query af_add_serial_not_null_empty_table
CREATE TABLE d_af_ser (a int); ALTER TABLE d_af_ser ADD COLUMN s serial NOT NULL; INSERT INTO d_af_ser (a) VALUES (5);
-- @query af_add_serial_rows
SELECT a, s FROM d_af_ser ORDER BY a;
