-- INSERT ... ON CONFLICT whose proposed rows share a conflict key (transpiler/upsert_guard.py):
-- DO NOTHING keeps the first, DO UPDATE is 21000; VALUES lists and INSERT ... SELECT alike,
-- with and without a conflict target. DuckDB alone would keep one row of each key silently.
-- (RETURNING order is not compared: DuckDB's ON CONFLICT returns its rows in another order.)
-- @setup
CREATE TABLE d_ups (id int PRIMARY KEY, u int UNIQUE, v text);
INSERT INTO d_ups VALUES (1, 10, 'a'), (2, 20, 'b');
CREATE TABLE d_ups_pair (a int, b text, c int, PRIMARY KEY (a, b));
CREATE TABLE d_ups_serial (id serial PRIMARY KEY, email text UNIQUE, n int DEFAULT 0);
INSERT INTO d_ups_serial (email) VALUES ('a@x'), ('b@x');
CREATE TABLE d_ups_idx (id int PRIMARY KEY, a int, b int);
ALTER TABLE d_ups_idx ADD CONSTRAINT d_ups_idx_ab UNIQUE (a, b);
CREATE TABLE d_ups_part (id int PRIMARY KEY, k text, live boolean);
CREATE UNIQUE INDEX d_ups_part_k ON d_ups_part (k) WHERE live;
CREATE TABLE d_ups_lower (id int PRIMARY KEY, name text);
CREATE UNIQUE INDEX d_ups_lower_name ON d_ups_lower (lower(name));
CREATE TABLE d_ups_ident (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k text UNIQUE, n int);
-- @query values_some_conflict_do_nothing
INSERT INTO d_ups VALUES (1, 11, 'x'), (3, 30, 'c') ON CONFLICT (id) DO NOTHING RETURNING *
-- @query values_excluded_in_an_expression
INSERT INTO d_ups VALUES (1, 11, 'x'), (4, 40, 'd') ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v || '!' RETURNING *
-- @query values_duplicate_keys_do_nothing_keep_the_first
INSERT INTO d_ups VALUES (5, 50, 'e'), (5, 51, 'f'), (6, 60, 'g') ON CONFLICT (id) DO NOTHING RETURNING *
-- @query values_duplicate_keys_do_update error
INSERT INTO d_ups VALUES (7, 70, 'e'), (7, 71, 'f') ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v
-- @query select_duplicate_keys_do_nothing_keep_the_first
INSERT INTO d_ups SELECT * FROM (VALUES (8, 80, 'g'), (8, 81, 'h')) s ON CONFLICT (id) DO NOTHING RETURNING id, u, v
-- @query select_duplicate_keys_do_update error
INSERT INTO d_ups SELECT * FROM (VALUES (9, 90, 'g'), (9, 91, 'h')) s ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v
-- @query select_series_duplicate_keys_do_update error
INSERT INTO d_ups (id, u, v) SELECT g % 2 + 100, g, 'g' FROM generate_series(1, 4) g ON CONFLICT (id) DO UPDATE SET v = 'upd'
-- @query select_series_distinct_keys_do_update
INSERT INTO d_ups (id, u, v) SELECT g, g * 10, 'g' FROM generate_series(1, 12) g ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v || d_ups.v RETURNING id, v
-- @query select_with_a_column_list_do_nothing
INSERT INTO d_ups (v, id) SELECT 'h' || g, g % 3 + 20 FROM generate_series(1, 6) g ON CONFLICT (id) DO NOTHING RETURNING id, v
-- @query duplicate_key_beside_an_existing_row_do_nothing
INSERT INTO d_ups VALUES (1, 10, 'dup1'), (1, 10, 'dup2'), (30, 300, 'new') ON CONFLICT (id) DO NOTHING RETURNING *
-- @query one_null_key_beside_others_do_update
INSERT INTO d_ups VALUES (31, NULL, 'n'), (32, 320, 'm') ON CONFLICT (u) DO UPDATE SET v = 'upd' RETURNING *
-- @query no_target_duplicate_other_key_do_nothing
INSERT INTO d_ups VALUES (40, 400, 'p'), (41, 400, 'q'), (40, 401, 'r'), (42, 420, 's') ON CONFLICT DO NOTHING RETURNING *
-- @query no_target_conflicts_with_existing_rows
INSERT INTO d_ups VALUES (1, 999, 'p'), (43, 10, 'q'), (44, 440, 's') ON CONFLICT DO NOTHING RETURNING *
-- @query no_target_do_update error
INSERT INTO d_ups VALUES (1, 10, 'z') ON CONFLICT DO UPDATE SET v = 'q'
-- @query no_unique_constraint_matches error
INSERT INTO d_ups VALUES (1, 10, 'z') ON CONFLICT (v) DO NOTHING
-- @query update_violates_another_unique_key error
INSERT INTO d_ups VALUES (1, 20, 'z') ON CONFLICT (id) DO UPDATE SET u = EXCLUDED.u
-- @query do_update_where
INSERT INTO d_ups VALUES (1, 10, 'w'), (2, 20, 'w') ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v WHERE d_ups.id = 1 RETURNING *
-- @query do_update_where_false_changes_nothing
INSERT INTO d_ups VALUES (1, 10, 'w2') ON CONFLICT (id) DO UPDATE SET v = d_ups.v WHERE false RETURNING *
-- @query table_alias_and_excluded
INSERT INTO d_ups AS t VALUES (2, 20, 'alias') ON CONFLICT (id) DO UPDATE SET v = t.v || EXCLUDED.v RETURNING t.*
-- @query rows
SELECT id, u, v FROM d_ups ORDER BY id
-- @query composite_duplicate_do_update error
INSERT INTO d_ups_pair VALUES (1, 'x', 1), (1, 'y', 2), (1, 'x', 3) ON CONFLICT (a, b) DO UPDATE SET c = EXCLUDED.c
-- @query composite_duplicate_do_nothing
INSERT INTO d_ups_pair VALUES (1, 'x', 1), (1, 'y', 2), (1, 'x', 3) ON CONFLICT (b, a) DO NOTHING RETURNING *
-- @query composite_do_update_reads_the_row
INSERT INTO d_ups_pair VALUES (1, 'x', 10), (2, 'y', 20) ON CONFLICT (b, a) DO UPDATE SET c = EXCLUDED.c + d_ups_pair.c RETURNING *
-- @query composite_rows
SELECT a, b, c FROM d_ups_pair ORDER BY a, b
-- @query serial_upsert_on_another_unique_column
INSERT INTO d_ups_serial (email, n) VALUES ('a@x', 5), ('c@x', 1) ON CONFLICT (email) DO UPDATE SET n = d_ups_serial.n + EXCLUDED.n RETURNING email, n
-- @query serial_duplicates_do_nothing
INSERT INTO d_ups_serial (email) SELECT e FROM (VALUES ('d@x'), ('d@x'), ('a@x')) s(e) ON CONFLICT (email) DO NOTHING RETURNING email, n
-- @query serial_rows
SELECT email, n FROM d_ups_serial ORDER BY email
-- @query on_constraint_primary_key
INSERT INTO d_ups VALUES (1, 10, 'z') ON CONFLICT ON CONSTRAINT d_ups_pkey DO UPDATE SET v = 'viaconstraint' RETURNING id, v
-- @query on_constraint_unique_column_several_rows
INSERT INTO d_ups VALUES (50, 20, 'z'), (51, 510, 'y'), (52, 510, 'x') ON CONFLICT ON CONSTRAINT d_ups_u_key DO NOTHING RETURNING *
-- @query on_constraint_composite
INSERT INTO d_ups_pair VALUES (1, 'x', 100) ON CONFLICT ON CONSTRAINT d_ups_pair_pkey DO UPDATE SET c = EXCLUDED.c RETURNING *
-- @query unknown_target_column error
INSERT INTO d_ups VALUES (1, 10, 'z') ON CONFLICT (nosuch) DO NOTHING
-- @query serial_no_target_do_nothing
INSERT INTO d_ups_serial (email) VALUES ('x@x'), ('y@x'), ('x@x'), ('a@x') ON CONFLICT DO NOTHING RETURNING email, n
-- @query identity_no_target_do_nothing
INSERT INTO d_ups_ident (k, n) VALUES ('a', 1), ('b', 2), ('a', 3) ON CONFLICT DO NOTHING RETURNING k, n
-- @query identity_target_do_update_select
INSERT INTO d_ups_ident (k, n) SELECT k, n FROM (VALUES ('c', 1), ('b', 20)) s(k, n) ON CONFLICT (k) DO UPDATE SET n = EXCLUDED.n RETURNING k, n
-- @query identity_rows
SELECT k, n FROM d_ups_ident ORDER BY k
-- @query unique_index_no_target_do_nothing
INSERT INTO d_ups_idx VALUES (1, 1, 1), (2, 1, 1), (1, 2, 2), (3, 1, NULL), (4, 1, 2) ON CONFLICT DO NOTHING RETURNING *
-- @query unique_index_target_do_update error
INSERT INTO d_ups_idx VALUES (5, 7, 7), (6, 7, 7) ON CONFLICT (a, b) DO UPDATE SET id = EXCLUDED.id
-- @query unique_index_rows
SELECT id, a, b FROM d_ups_idx ORDER BY id
-- @query partial_unique_index_no_target_do_nothing
INSERT INTO d_ups_part VALUES (1, 'a', true), (2, 'a', true), (3, 'b', false) ON CONFLICT DO NOTHING RETURNING *
-- @query expression_unique_index_no_target_do_nothing
INSERT INTO d_ups_lower VALUES (1, 'Bob'), (2, 'BOB'), (3, 'amy'), (1, 'x') ON CONFLICT DO NOTHING RETURNING *
-- @query expression_and_partial_rows
SELECT 'part' AS t, id, k FROM d_ups_part UNION ALL SELECT 'lower', id, name FROM d_ups_lower ORDER BY 1, 2
-- @query values_default_in_every_row
INSERT INTO d_ups_serial (id, email, n) VALUES (DEFAULT, 'q@x', 1), (DEFAULT, 'r@x', 2), (DEFAULT, 'q@x', 3) ON CONFLICT (email) DO NOTHING RETURNING email, n
-- @query values_default_in_some_rows
INSERT INTO d_ups_serial (email, n) VALUES ('s@x', DEFAULT), ('t@x', 2) ON CONFLICT (email) DO UPDATE SET n = EXCLUDED.n RETURNING email, n
-- @query fewer_values_than_columns error
INSERT INTO d_ups (id, u, v) SELECT 1, 2 ON CONFLICT (id) DO NOTHING
