-- setval with a computed sequence name and value: Django's sequence reset after loaddata.
-- @setup
CREATE TABLE d_setval_c (id bigserial PRIMARY KEY, v int);
CREATE TABLE d_setval_e (id serial PRIMARY KEY, v int);
INSERT INTO d_setval_c (id, v) VALUES (1, 1), (2, 2), (40, 3);
-- @query reset_to_max
SELECT setval(pg_get_serial_sequence('"d_setval_c"','id'), coalesce(max("id"), 1), max("id") IS NOT null) FROM "d_setval_c"
-- @query next_after_max
INSERT INTO d_setval_c (v) VALUES (4) RETURNING id
-- @query reset_empty_table
SELECT setval(pg_get_serial_sequence('"d_setval_e"','id'), coalesce(max("id"), 1), max("id") IS NOT null) FROM "d_setval_e"
-- @query next_on_empty_table
INSERT INTO d_setval_e (v) VALUES (1) RETURNING id
-- @query reset_none_matched
SELECT setval(pg_get_serial_sequence('d_setval_c', 'id'), 500) FROM d_setval_c WHERE false
-- @query next_unchanged
INSERT INTO d_setval_c (v) VALUES (5) RETURNING id
