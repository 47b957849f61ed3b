-- LISTEN / UNLISTEN / NOTIFY on one connection (delivery between connections:
-- tests/test_notify_server.py): what pg_listening_channels() shows, PostgreSQL's errors.
-- @query listen_plain
LISTEN dn_a
-- @query listen_quoted
LISTEN "Dn B"
-- @query listening_after_listen
SELECT pg_listening_channels() AS ch ORDER BY ch
-- @query listening_in_from
SELECT * FROM pg_listening_channels() ORDER BY 1
-- @query unlisten_one
UNLISTEN dn_a
-- @query listening_after_unlisten
SELECT pg_listening_channels()
-- @query unlisten_all
UNLISTEN *
-- @query listening_none
SELECT count(*) FROM pg_listening_channels()
-- @query unlisten_not_listened
UNLISTEN dn_nothing
-- @query notify_unheard
NOTIFY dn_x, 'p'
-- @query pg_notify_void
SELECT pg_notify('dn_x', 'y') AS r
-- @query pg_notify_null_payload
SELECT pg_notify('dn_x', NULL) AS r
-- @query pg_notify_null_channel error
SELECT pg_notify(NULL, 'x')
-- @query pg_notify_long_channel error
SELECT pg_notify(repeat('c', 64), 'x')
-- @query payload_too_long error
SELECT pg_notify('dn_x', repeat('x', 8000))
-- @query notify_without_comma error
NOTIFY dn_x 'y'
-- @query notify_alone error
NOTIFY
