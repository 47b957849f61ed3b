-- PostgreSQL built-ins DuckDB lacks or answers differently (transpiler/pg_functions.py,
-- proxy/db/catalog/82_pg_functions.sql, proxy/db/number_format.py).
-- @setup
CREATE TABLE d_pgfn (id int PRIMARY KEY, s text, n numeric(10,3), b bytea);
INSERT INTO d_pgfn VALUES (1, 'foo123bar45', 1234.5, '\x00ff'), (2, 'a%c', -12.5, '\x616263'), (3, NULL, NULL, NULL), (4, 'abc', 0.5, '\x');
-- @query to_char_number_patterns
SELECT to_char(1234.5, '9999.99'), to_char(0.5, 'FM990.00'), to_char(1234567, 'FM9,999,999'), to_char(-5, '9999'), to_char(0, '9999'), to_char(0.5, '9999.99')
-- @query to_char_number_signs_and_overflow
SELECT to_char(12345.678, '99,999.9'), to_char(-12.5, 'S999.99'), to_char(-12.5, '999.99MI'), to_char(12.5, '999.99MI'), to_char(-12.5, '999.99PR'), to_char(5, 'FM9.99'), to_char(123456, '999'), to_char(7, '000')
-- @query to_char_number_d_g_and_float
SELECT to_char(1.5::float8, '0.000'), to_char(1234.5::numeric, 'FM9G999D99'), to_char(-0.004, '9.99'), to_char(99.999, '99.99')
-- @query to_char_number_column
SELECT id, to_char(n, 'FM999,990.00') FROM d_pgfn ORDER BY id
-- @query to_char_month_names
SELECT to_char(date '2024-03-05', 'Mon DD, YYYY'), to_char(timestamp '2024-03-05 14:07:09', 'Dy HH:MI AM')
-- @query to_date_month_name
SELECT to_date('05 Mar 2024', 'DD Mon YYYY'), make_interval(days => 3)
-- @query pg_typeof_names
SELECT pg_typeof(1), pg_typeof(1.0), pg_typeof('a'::text), pg_typeof(now()), pg_typeof(ARRAY[1]), pg_typeof(1.5::numeric(10,2)), pg_typeof(true), pg_typeof(n) FROM d_pgfn WHERE id = 1
-- @query quote_nullable_width_bucket
SELECT quote_nullable(NULL), quote_nullable('it''s'), quote_nullable(5), width_bucket(5, 0, 10, 4), width_bucket(-1, 0, 10, 4), width_bucket(10, 0, 10, 4), width_bucket(5.5, 10, 0, 5)
-- @query regexp_substr
SELECT regexp_substr('abc123', '[0-9]+'), regexp_substr('abc', '[0-9]+'), regexp_substr('a1b2', '[0-9]', 3)
-- @query overlaps
SELECT (date '2024-01-01', date '2024-02-01') OVERLAPS (date '2024-01-15', date '2024-03-01'), (date '2024-01-01', date '2024-02-01') OVERLAPS (date '2024-02-01', date '2024-03-01'), (date '2024-02-01', date '2024-01-01') OVERLAPS (date '2024-01-15', date '2024-01-16')
-- @query encode_decode
SELECT encode('abc'::bytea, 'hex'), encode('\x00ff'::bytea, 'base64'), decode('YWJj', 'base64'), decode('616263', 'hex'), encode(decode('00ff', 'hex'), 'hex')
-- @query encode_base64_lines
SELECT encode(repeat('x', 100)::bytea, 'base64')
-- @query encode_column
SELECT id, encode(b, 'hex'), encode(b, 'base64') FROM d_pgfn ORDER BY id
-- @query octet_length_text
SELECT octet_length('ÄB'), octet_length('ÄB'::text), octet_length('\x0102'::bytea), length('ÄB'), octet_length(s) FROM d_pgfn WHERE id = 1
-- @query num_nulls
SELECT num_nonnulls(1, NULL, 2), num_nulls(1, NULL), num_nulls(NULL, NULL, NULL), num_nulls(s, n) FROM d_pgfn ORDER BY id
-- @query format_specs
SELECT format('%s is %L and %I', 'x', 'it''s', 'Col Name'), format('%s-%s', 1, NULL), format('%2$s %1$s', 'a', 'b'), format('100%%'), format('%L', NULL), format('%I', 'simple')
-- @query format_columns
SELECT id, format('%s: %L', id, s) FROM d_pgfn ORDER BY id
-- @query substring_regex
SELECT substring('abc' from 'b.'), substring('foobar' from 'o(.)b'), substring('abc' from 'z'), substring('abc', '2'), substring('abcdef' from 2 for 3)
-- @query similar_to
SELECT 'abc' SIMILAR TO 'a%', 'abc' SIMILAR TO '(a|b)%', 'abc' NOT SIMILAR TO '_b_', 'a.c' SIMILAR TO 'a.c', 'abc' SIMILAR TO 'a.c', 'a%c' SIMILAR TO 'a\%c', 'a%c' SIMILAR TO 'a#%c' ESCAPE '#', 'abbb' SIMILAR TO 'ab+', 'ab' SIMILAR TO '[a-c]{2}'
-- @query similar_to_column
SELECT id FROM d_pgfn WHERE s SIMILAR TO '%[0-9]+%' ORDER BY id
-- @query regexp_matches_global
SELECT regexp_matches('foo123bar45', '[0-9]+', 'g')
-- @query regexp_matches_groups
SELECT regexp_matches('foo123bar45', '([a-z]+)([0-9]+)', 'g')
-- @query regexp_matches_first
SELECT regexp_matches('foo123bar45', '([a-z]+)([0-9]+)')
-- @query regexp_matches_flags
SELECT regexp_matches('ABC', 'b', 'i'), 1 AS x
-- @query regexp_matches_no_match_no_row
SELECT count(*) FROM (SELECT regexp_matches('xyz', '[0-9]', 'g')) s
-- @query regexp_matches_column
SELECT id, regexp_matches(s, '[0-9]+', 'g') FROM d_pgfn
-- @query to_timestamp_is_timestamptz
SELECT to_timestamp('2024-03-05 10:00', 'YYYY-MM-DD HH24:MI'), pg_typeof(to_timestamp('2024', 'YYYY'))
-- @query array_append_element
SELECT ARRAY[1,2] || 3, 0 || ARRAY[1,2], ARRAY['a'] || 'b'::text, 'a' || 'b', ARRAY[1] || ARRAY[2]
-- @query like_any_all_arrays
SELECT 'abc' ILIKE ANY (ARRAY['A%', 'z%']), 'abc' LIKE ALL (ARRAY['a%', '%c']), 'abc' NOT LIKE ALL (ARRAY['x%', '%y']), 'a_c' LIKE ANY (ARRAY['a\_c'])
-- @query like_any_column
SELECT id FROM d_pgfn WHERE s LIKE ANY (ARRAY['foo%', 'abc']) ORDER BY id
-- @query justify_intervals
SELECT justify_days(interval '35 days'), justify_hours(interval '27 hours'), justify_interval(interval '1 mon -1 day'), justify_days(interval '-35 days'), justify_hours(interval '-27 hours 30 minutes'), justify_interval(interval '1 mon 27 hours -1 day')
-- @query length_bytea_string_to_array_positions
SELECT length('\x0102'::bytea), length('héllo'), length(NULL::text), string_to_array('a,b,,c', ',', ''), string_to_array('a,b', ','), array_positions(ARRAY[1,2,1], 1)
-- @query length_columns
SELECT id, length(s), octet_length(b) FROM d_pgfn ORDER BY id
-- @query pg_size_pretty_units
SELECT pg_size_pretty(123456789::bigint), pg_size_pretty(10239::bigint), pg_size_pretty(10240::bigint), pg_size_pretty(20971519::bigint), pg_size_pretty(-123456::bigint), pg_size_pretty(1099511627776000::bigint), pg_size_pretty(0::bigint)
-- @query clock_and_statement_timestamps
SELECT clock_timestamp() >= now(), statement_timestamp() = now(), transaction_timestamp() = now(), length(timeofday()) > 20
-- @query special_datetime_strings
SELECT 'today'::date = current_date, date 'tomorrow' - date 'yesterday', 'epoch'::timestamp, 'epoch'::timestamptz, 'allballs'::time, 'now'::timestamptz <= now()
-- @query bytea_escape_format_cast
SELECT 'a\000b'::bytea, '\x'::bytea, 'abc'::bytea, 'a\\b'::bytea
-- @query regexp_split_to_table_in_from
SELECT * FROM regexp_split_to_table('a b  c', '\s+')
-- @query regexp_split_to_table_alias
SELECT w FROM regexp_split_to_table('x,y', ',') AS t(w) ORDER BY w
-- @query array_replace_remove
SELECT array_remove(ARRAY[1,2,1], 1), array_replace(ARRAY[1,2,NULL], 2, 9), array_replace(ARRAY[1,NULL], NULL, 0)
-- @query to_number_formats
SELECT to_number('1,234.5', '9,999.9'), to_number('-12.50', 'S99.99'), to_number('<5>', '9PR'), to_number('12,454.8-', '99G999D9S')
-- @query extract_seconds_keep_the_fraction
SELECT extract(second from timestamp '2024-01-01 12:00:01.5'), extract(milliseconds from timestamp '2024-02-29 23:59:59.999999'), extract(microseconds from timestamp '2024-01-01 12:00:01.5'), extract(second from time '10:00:05.25'), extract(second from interval '90.25 seconds'), extract(second from timestamptz '2024-01-01 10:00:07.125+00')
-- @query date_part_seconds_keep_the_fraction
SELECT date_part('second', timestamp '2024-01-01 12:00:01.5'), date_part('milliseconds', timestamp '2024-01-01 12:00:01.5'), date_part('year', date '2024-03-01')
-- @query percentile_cont_of_numeric_is_not_rounded
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY n), percentile_cont(0.25) WITHIN GROUP (ORDER BY n DESC), percentile_disc(0.5) WITHIN GROUP (ORDER BY n), percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM d_pgfn, (VALUES (1.25::numeric(10,2)), (2.00)) v(x) WHERE n IS NOT NULL
-- @query to_hex_lower_case
SELECT to_hex(255), to_hex(4096), to_hex(0), to_hex(id * 1000) FROM d_pgfn ORDER BY id
-- @query overlay
SELECT overlay('hello' placing 'XX' from 2 for 3), overlay('hello' placing 'XX' from 2), overlay('Txxxxas' placing 'hom' from 2 for 4), overlay(s placing '-' from 1 for 1) FROM d_pgfn ORDER BY id
-- @query regexp_match
SELECT regexp_match('abc123', '([a-z]+)(\d+)'), regexp_match('abc', 'z'), regexp_match('foobar', 'o+'), regexp_match('ABC', 'b', 'i'), (regexp_match('key=val', '(\w+)=(\w+)'))[2], regexp_match(s, '\d+') FROM d_pgfn ORDER BY id
-- @query timestamps_without_seconds_before_a_zone
SELECT timestamptz '2024-01-01 10:00+02', '2024-06-01 08:30 UTC'::timestamptz, '2024-06-01 08:30 Europe/Paris'::timestamptz, timestamp '2024-01-01 10:00+02', '2024-01-01T10:00Z'::timestamptz, '2024-01-01 10:00 -03'::timestamptz
-- @query extract_is_numeric_date_part_double
SELECT extract(year FROM date '2024-07-04'), extract(dow FROM timestamp '2024-01-01'), extract(epoch FROM TIMESTAMP '2024-01-01 00:00:00'), extract(epoch FROM timestamptz '2024-01-01 10:00:07.123456+00'), extract(epoch FROM interval '1 day 90.5 seconds'), date_part('year', DATE '2024-07-04'), date_part('epoch', timestamp '2024-01-01 00:00:01.5')
-- @query pg_size_bytes_units
SELECT pg_size_bytes('10 MB'), pg_size_bytes('1.5GB'), pg_size_bytes('100'), pg_size_bytes('2 bytes'), pg_size_bytes('1e3 kB'), pg_size_bytes(' 7 kb '), pg_size_bytes(NULL)
-- @query pg_size_bytes_invalid error
SELECT pg_size_bytes('ten')
-- @query server_start_time_is_past
SELECT pg_postmaster_start_time() < now(), pg_conf_load_time() <= now(), pg_postmaster_start_time() = pg_postmaster_start_time()
