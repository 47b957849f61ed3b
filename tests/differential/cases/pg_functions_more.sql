-- Built-ins that answered wrong (silently) or not at all: compared with PostgreSQL 15.
-- @setup
CREATE TABLE d_pfm (id int PRIMARY KEY, f float8, n numeric(10, 2), b bytea, j jsonb);
INSERT INTO d_pfm VALUES (1, 2.5, 2.50, '\x616263', '[1, 2, 3]'), (2, -2.5, -2.50, '\x00ff', '{"a": 1, "b": 2}'), (3, 3.5, 3.49, '\x', '["a", "b", 1]');
-- @query sha2_family
SELECT encode(sha224('abc'::bytea), 'hex'), encode(sha256('abc'::bytea), 'hex'), encode(sha384('abc'::bytea), 'hex'), encode(sha512('abc'::bytea), 'hex')
-- @query sha512_column
SELECT id, encode(sha512(b), 'hex') FROM d_pfm ORDER BY id
-- @query jsonb_minus_index
SELECT '[1,2,3]'::jsonb - 1, '[1,2,3]'::jsonb - -1, '[1,2,3]'::jsonb - 5, '["a","b"]'::jsonb - 'a'
-- @query jsonb_minus_index_column
SELECT id, j::jsonb - 0, j::jsonb - -1 FROM d_pfm WHERE id IN (1, 3) ORDER BY id
-- @query jsonb_minus_index_object error
SELECT '{"a":1}'::jsonb - 0
-- @query jsonb_minus_text_array
SELECT '{"a":1,"b":2,"c":3}'::jsonb - ARRAY['a','c'], '["a","b",1]'::jsonb - '{a,b}'::text[]
-- @query round_float8_half_even
SELECT id, round(f), round(n), round(f * 2) FROM d_pfm ORDER BY id
-- @query round_literals
SELECT round(2.5::float8), round(-0.5::float8), round(1.5::float8), round(2.5), round(-2.5), round(0.5::real)
-- @query div_numeric
SELECT div(7, 2), div(-7, 2), div(7.5, 2), div(9, 3)
-- @query div_by_zero error
SELECT div(1, 0)
-- @query concat_variadic
SELECT concat(VARIADIC ARRAY['a', NULL, 'b']), concat_ws('-', VARIADIC ARRAY['x', 'y', NULL, 'z'])
-- @query array_ndims
SELECT array_ndims(ARRAY[1,2]), array_ndims(ARRAY[[1],[2]]), array_ndims('{}'::int[])
-- @query array_dims_fill
SELECT array_dims(ARRAY[1,2,3]), array_dims('{}'::int[]), array_fill(7, ARRAY[3]), array_fill('x'::text, ARRAY[2])
-- @query string_to_table
SELECT string_to_table('a,b,,c', ',')
-- @query get_set_byte
SELECT get_byte('abc'::bytea, 0), get_byte('\x00ff'::bytea, 1), set_byte('abc'::bytea, 0, 65)
-- @query get_byte_range error
SELECT get_byte('abc'::bytea, 3)
-- @query pg_column_size
SELECT pg_column_size(1), pg_column_size(1::bigint), pg_column_size(1::smallint), pg_column_size(true), pg_column_size(1.5::float8), pg_column_size(date '2024-01-01')
-- @query pg_column_size_text_column
SELECT id, pg_column_size(b) FROM d_pfm ORDER BY id
-- @query has_sequence_privilege_unknown error
SELECT has_sequence_privilege('d_pfm_nosuch_seq', 'USAGE')
-- @query server_functions
SELECT pg_reload_conf(), pg_rotate_logfile(), pg_last_xact_replay_timestamp() IS NULL, row_security_active('pg_class'), pg_try_advisory_xact_lock(1), pg_try_advisory_xact_lock(1, 2)
-- @query to_char_day_month_names
SELECT to_char(timestamp '2024-01-06 10:00', 'Day'), to_char(timestamp '2024-01-06 10:00', 'DAY|day|Dy|DY|dy'), to_char(date '2024-05-01', 'Month'), to_char(date '2024-05-01', 'MONTH month Mon MON mon')
-- @query to_char_fm_names
SELECT to_char(timestamp '2024-01-06 10:00', 'FMDay, DD FMMonth YYYY'), to_char(date '2024-09-04', 'Day Month'), to_char(date '2024-05-01', 'FMDay Month YYYY')
-- @query cardinality_dimensions
SELECT cardinality(ARRAY[[1,2],[3,4]]), cardinality(ARRAY[[1,NULL,3]]), cardinality(ARRAY[1,2,3]), cardinality('{}'::int[]), cardinality(NULL::int[])
-- @query pg_database_size
SELECT pg_database_size(current_database()) > 0, pg_size_pretty(pg_database_size(current_database())) IS NOT NULL
-- @query pg_database_size_unknown error
SELECT pg_database_size('d_pfm_no_such_db')
-- @query array_text_concat_element
SELECT '{1,2}'::int[] || 3, 0 || '{1,2}'::int[], '{a}'::text[] || 'b'::text
-- @query bit_string_to_int
SELECT x'1F'::int, x'FFFFFFFF'::int, x'7FFFFFFF'::int, x'FF'::bigint
-- @query bytea_substring
SELECT substring('abc'::bytea from 2), substring('abcd'::bytea from 0 for 3), substring('abcd'::bytea from 2 for 1), substring('abcd'::bytea from 9), substring('abc'::bytea, 2, 1)
-- @query bytea_substring_negative error
SELECT substring('abc'::bytea from 2 for -1)
-- @query extract_julian_date
SELECT extract(julian from date '2024-01-07'), extract(julian from d), date_part('julian', date '2024-01-07') FROM (VALUES (date '2000-02-29')) v(d)
-- @query unistr
SELECT unistr('\0041'), unistr('d\0061t\+000061'), unistr('\u00e9\U0001F600'), unistr('a\\b'), unistr('\D83D\DE00'), unistr(NULL)
-- @query unistr_invalid error
SELECT unistr('\q')
-- @query unistr_lone_surrogate error
SELECT unistr('\D83D')
-- @query jsonb_path_simple
SELECT jsonb_path_query_first('{"a":[1,2]}', '$.a[1]'), jsonb_path_exists('{"a":1}', '$.a'), jsonb_path_exists('{"a":1}', '$.b'), jsonb_path_query_array('{"a":[1,2]}', '$.a[*]'), jsonb_path_query_first('{"a":[1,2,3]}', '$.a[last]'), jsonb_path_query_first('{"a":1}', '$.b')
-- @query jsonb_path_lax
SELECT jsonb_path_query_array('{"a":[{"b":1},{"b":2},{"c":3}]}', '$.a.b'), jsonb_path_query_array('{"a":5}', '$.a[0]'), jsonb_path_query_array('{"a":5}', '$.a[*]'), jsonb_path_query_array('{"a":[1]}', '$.a[3]'), jsonb_path_query_array('{"a b":1}', '$."a b"')
-- @query jsonb_path_filters
SELECT jsonb_path_query_array('{"a":[1,2,3]}', '$.a[*] ? (@ > 1)'), jsonb_path_query_array('[{"x":1},{"x":5},{"x":"5"}]', '$[*] ? (@.x >= 2).x'), jsonb_path_query_array('[1,"a",null,true]', '$[*] ? (@ == null)'), jsonb_path_query_array('[1,"a","b"]', '$[*] ? (@ != "a")'), jsonb_path_query_array('{"a":1.5}', '$ ? (@.a == 1.50)'), jsonb_path_query_array('[1,2,3]', '$ ? (@ > 1)')
-- @query jsonb_path_query_rows
SELECT jsonb_path_query('{"a":[1,2,3]}', '$.a[*] ? (@ >= 2)')
-- @query jsonb_path_column
SELECT id, jsonb_path_query_first(j, '$[0]'), jsonb_path_exists(j, '$.a') FROM d_pfm ORDER BY id
