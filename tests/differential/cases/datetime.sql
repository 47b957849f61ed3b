-- Date/time functions both engines support (literals only: no now()).
-- @setup
CREATE TABLE d_events (id int PRIMARY KEY, at timestamp, day date, atz timestamptz);
INSERT INTO d_events VALUES (1, '2024-01-15 10:30:00', '2024-01-15', '2024-01-15 10:30:00+00'), (2, '2024-02-29 23:59:59.5', '2024-02-29', '2024-03-01 02:00:00+02'), (3, '2023-12-31 00:00:00', '2023-12-31', NULL);
-- @query date_literal
SELECT DATE '2024-03-01', '2024-03-01'::date
-- @query timestamp_literal
SELECT TIMESTAMP '2024-03-01 12:34:56', '2024-03-01 12:34:56.789'::timestamp
-- @query timestamptz_literal
SELECT TIMESTAMPTZ '2024-03-01 12:00:00+05'
-- @query date_trunc_month
SELECT id, date_trunc('month', at) FROM d_events
-- @query date_trunc_day_hour
SELECT date_trunc('day', TIMESTAMP '2024-05-05 17:45:00'), date_trunc('hour', TIMESTAMP '2024-05-05 17:45:00')
-- @query date_trunc_year_week
SELECT date_trunc('year', TIMESTAMP '2024-05-05 17:45:00'), date_trunc('week', TIMESTAMP '2024-05-05 17:45:00')
-- @query extract_fields
SELECT id, extract(year FROM at)::int, extract(month FROM at)::int, extract(day FROM at)::int FROM d_events
-- @query extract_hour_minute
SELECT extract(hour FROM TIMESTAMP '2024-01-01 13:14:15')::int, extract(minute FROM TIMESTAMP '2024-01-01 13:14:15')::int
-- @query extract_dow_doy
SELECT extract(dow FROM DATE '2024-03-03')::int, extract(doy FROM DATE '2024-03-03')::int
-- @query extract_epoch
SELECT extract(epoch FROM TIMESTAMP '2024-01-01 00:00:00')::bigint
-- @query date_part
SELECT date_part('year', DATE '2024-07-04')::int, date_part('quarter', DATE '2024-07-04')::int
-- @query date_plus_int
SELECT DATE '2024-02-28' + 1, DATE '2024-03-01' - 1
-- @query date_minus_date
SELECT DATE '2024-03-01' - DATE '2024-02-01'
-- @query timestamp_plus_interval
SELECT TIMESTAMP '2024-01-31 10:00:00' + INTERVAL '1 day', TIMESTAMP '2024-01-31 10:00:00' + INTERVAL '2 hours'
-- @query timestamp_plus_month
SELECT TIMESTAMP '2024-01-31 00:00:00' + INTERVAL '1 month'
-- @query date_plus_interval
SELECT DATE '2024-01-31' + INTERVAL '1 month'
-- @query timestamp_minus_timestamp
SELECT TIMESTAMP '2024-03-01 12:00:00' - TIMESTAMP '2024-02-28 06:30:00'
-- @query interval_literals
SELECT INTERVAL '1 day', INTERVAL '3 hours 15 minutes', INTERVAL '2 months'
-- @query interval_arith
SELECT INTERVAL '1 day' * 3, INTERVAL '1 hour' + INTERVAL '30 minutes'
-- @query timestamp_compare
SELECT id FROM d_events WHERE at >= TIMESTAMP '2024-01-01' AND at < TIMESTAMP '2024-03-01'
-- @query date_between
SELECT id FROM d_events WHERE day BETWEEN DATE '2024-01-01' AND DATE '2024-12-31'
-- @query timestamptz_column
SELECT id, atz FROM d_events
-- @query timestamptz_to_timestamp_utc
SELECT id, atz::timestamp FROM d_events
-- @query cast_timestamp_to_date
SELECT id, at::date FROM d_events
-- @query date_group_by_month
SELECT date_trunc('month', day)::date AS m, count(*) FROM d_events GROUP BY 1
-- @query make_date
SELECT make_date(2024, 2, 29)
-- @query time_literal
SELECT TIME '13:45:30', '08:00'::time
-- @query to_char_not_needed_text_cast
SELECT CAST(DATE '2024-03-01' AS text), CAST(TIMESTAMP '2024-03-01 01:02:03' AS text)
-- @query age_years
SELECT extract(year FROM age(TIMESTAMP '2024-06-01', TIMESTAMP '2000-01-15'))::int
-- @query invalid_date error
SELECT '2023-02-29'::date
-- @query invalid_timestamp error
SELECT 'not a time'::timestamp
