-- Timestamp text PostgreSQL reads and DuckDB does not on its own (transpiler/timestamp_literals.py):
-- no seconds before an offset or a zone, a space before the offset.
-- @setup
CREATE TABLE d_tzin (id int PRIMARY KEY, tz timestamptz, note text);
INSERT INTO d_tzin VALUES (1, '2024-01-01 10:00+02', '2024-01-01 10:00+02'), (2, '2024-01-01 10:00 +02', 'x'), (3, '2024-01-01T10:00Z', 'y');
-- @query rows_written_without_seconds
SELECT id, tz, note FROM d_tzin ORDER BY id
-- @query compared_without_seconds
SELECT id FROM d_tzin WHERE tz = '2024-01-01 08:00+00' ORDER BY id
-- @query updated_without_seconds
UPDATE d_tzin SET tz = '2024-05-05 05:05 -03' WHERE id = 3 RETURNING tz
