-- SQL translation gaps: PostgreSQL semantics the transpiler does not (yet) map
-- onto DuckDB. Each test asserts the results STILL differ; when one starts to
-- match, move it to a regular case file. Format: see ../cases.py; every query
-- carries a one-line '-- @reason'.
-- @setup
CREATE TABLE d_kd_own (id serial PRIMARY KEY);
ALTER SEQUENCE d_kd_own_id_seq RENAME TO d_kd_own_seq2;
DROP TABLE d_kd_own;
CREATE TABLE d_kd (id int PRIMARY KEY, grp text, n int, amount numeric(12,4), day date);
INSERT INTO d_kd VALUES (1, 'a', 10, 1.5000, '2024-01-15'), (2, 'a', 20, 2.2500, '2024-02-29'), (3, 'b', 5, NULL, '2023-12-31');
CREATE TABLE d_kd_vc (id int, name varchar(50));
CREATE VIEW d_kd_vc_v AS SELECT id, name FROM d_kd_vc;
CREATE TABLE d_kd_tmod (id int, vc varchar(5), v varchar, c char(3), tz timestamptz(0), t time(2));
INSERT INTO d_kd_tmod (id, vc) VALUES (0, 'a');
-- @query avg_int_is_numeric
SELECT avg(n) FROM d_kd
-- @reason avg(int) is numeric in PG (Decimal('11.6666666666666667')), DOUBLE in DuckDB
-- @query avg_numeric_is_numeric
SELECT avg(amount) FROM d_kd
-- @reason avg(numeric) is numeric in PG (Decimal('1.8750000000000000')), DOUBLE in DuckDB
-- @query numeric_division_scale
SELECT 1 / 3::numeric, 7.50 / 7, 100000.0 / 3
-- @reason PG's numeric quotient scale depends on the values (20, 20, 12 here); hatiproxy's is always 16
-- @query sign_numeric
SELECT sign(-3.0), sign(-3.0::float8)
-- @reason sign() keeps its argument type in PG (Decimal('-1'), -1.0); DuckDB returns TINYINT -1
-- @query date_trunc_on_date
SELECT date_trunc('month', day) FROM d_kd WHERE id = 2
-- @reason PG casts the date to timestamptz (2024-02-01 00:00+00); DuckDB returns a plain timestamp
-- @query upper_sharp_s
SELECT upper('straße')
-- @reason PG keeps ß ('STRAßE'); DuckDB maps it to capital sharp s ('STRAẞE')
-- @setup
CREATE TABLE d_vlen_known (id int, name varchar(3));
ALTER TABLE d_vlen_known ADD COLUMN added varchar(5);
-- @query varchar_trailing_spaces_rejected
INSERT INTO d_vlen_known VALUES (1, 'abc   ')
-- @reason PG cuts excess trailing spaces off a too-long varchar(n) value and stores 'abc'; hatiproxy's length CHECK rejects it (22001)
-- CREATE INDEX forms DuckDB cannot honour (see transpiler/create_index.py): refused with
-- 0A000 where PostgreSQL accepts them, since dropping them would change what is enforced.
-- @setup
CREATE TABLE d_kd_idx (id int, a int, b int);
INSERT INTO d_kd_idx VALUES (1, 1, 1), (2, NULL, 2);
-- @query unique_nulls_not_distinct
CREATE UNIQUE INDEX d_kd_idx_b_nnd ON d_kd_idx (b) NULLS NOT DISTINCT
-- @reason DuckDB unique indexes treat NULLs as distinct: 0A000
-- @query bare_numeric_beyond_28_digits
SELECT '123456789012345678901234567890123'::numeric
-- @reason a bare numeric is DECIMAL(38,10) (transpiler/numeric_type.py): 28 integer digits at most, PG has no limit
-- @query bare_numeric_beyond_10_decimals
SELECT '0.123456789012345'::numeric
-- @reason a bare numeric is DECIMAL(38,10): decimals past the 10th round, PG keeps them
-- @query json_each_value_text
SELECT key, value::text FROM json_each('{"b": 1, "a": [1, 2]}') ORDER BY key
-- @reason json_each's values keep their text as written in PG; DuckDB's json_extract minifies them ([1,2])
-- @query to_json_numeric_scale
SELECT to_json(1.50)::text
-- @reason DuckDB's to_json / json_object print a DECIMAL without its trailing zeros (1.5); PostgreSQL keeps numeric's scale (1.50)
-- @query set_config_time_units
select set_config('lock_timeout', '3600000', true) as config_val
-- @reason set_config answers the value as given ('3600000'); PostgreSQL shows a time setting in its largest exact unit ('1h'). Kysely's migration lock ignores the answer
-- @query pg_typeof_varchar_n_column
SELECT pg_typeof(vc) FROM d_kd_tmod
-- @reason pg_typeof of a varchar(n) column is text here (DuckDB's VARCHAR; the length lives in a CHECK), character varying in PG; RowDescription and the catalog say varchar
-- @setup
CREATE TABLE d_kd_chr (id int, c char(3));
INSERT INTO d_kd_chr VALUES (1, 'ab '), (2, 'xyz   ');
-- @query char_n_written_blanks_kept
SELECT id, length(c), c || '|', c = 'ab' FROM d_kd_chr ORDER BY id
-- @reason a char(n) value is stored as written (COPY FROM excepted: its blanks are cut) and padded / cut to n on output only; PG stores it padded and ignores trailing blanks in length(), || and =: (2, 'ab|', true), (3, 'xyz|') there, (3, 'ab |', false), (6, 'xyz   |') here
-- @query varchar_n_trailing_blanks_cut
INSERT INTO d_kd_tmod (id, vc) VALUES (2, 'abcde   ') RETURNING vc
-- @reason PG cuts blanks beyond n silently; here they count: 22001
-- @query char_cast_padding_in_subquery
SELECT x FROM (SELECT 'ab'::char(4) AS x) s
-- @reason a cast to char(n) is padded to n only where it is a result column itself (transpiler/cast_types.py); read through a subquery it is 'ab' here, 'ab  ' in PG
-- @query timestamptz_time_precision
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'd_kd_tmod'::regclass AND attname IN ('tz', 't') ORDER BY attnum
-- @reason timestamptz(p) and time(p) lose p here (DuckDB has no such types): values keep microseconds; timestamp(3) / timestamp(0) keep it (TIMESTAMP_MS / _S)
-- @query renamed_serial_sequence_outlives_its_table
SELECT sequencename FROM pg_sequences WHERE sequencename LIKE 'd\_kd\_own%'
-- @reason hatiproxy knows a serial's sequence as its table's by its name (<table>_<column>_seq): renamed otherwise, DROP TABLE leaves it (PG drops what the column OWNS)
-- @setup
CREATE TABLE d_kd_dc (n int);
INSERT INTO d_kd_dc VALUES (1), (2);
-- @query dml_cte_reads_modified_table
WITH d AS (DELETE FROM d_kd_dc WHERE n = 1 RETURNING n) SELECT count(*) FROM d_kd_dc
-- @reason the main statement reads a table a DML CTE modified: PostgreSQL shows it as before the statement; hatiproxy runs the parts one after another and refuses (0A000) rather than answer differently
-- @setup
CREATE TABLE d_kd_ups (id serial PRIMARY KEY, k text UNIQUE);
-- @query upsert_several_null_keys
INSERT INTO d_kd_ups (k) VALUES (NULL), (NULL) ON CONFLICT (k) DO NOTHING
-- @reason PG inserts every row whose conflict key is NULL (NULLs never conflict); DuckDB would keep one of them, so hatiproxy refuses the statement (0A000) rather than drop rows (transpiler/upsert_guard.py)
-- @query upsert_skipped_duplicate_draws_no_serial
INSERT INTO d_kd_ups (k) VALUES ('a'), ('a'), ('b') ON CONFLICT (k) DO NOTHING RETURNING id, k
-- @reason PG draws a serial value for every proposed row, also a duplicate it then skips (b gets 3); hatiproxy leaves the duplicate out before the INSERT draws (b gets 2)
-- @query upsert_returning_xmax
INSERT INTO d_kd_ups (k) VALUES ('c') ON CONFLICT (k) DO UPDATE SET k = EXCLUDED.k RETURNING (xmax = 0) AS inserted
-- @reason the `xmax = 0` idiom (was the row inserted?) needs a system column DuckDB has not: 42703
