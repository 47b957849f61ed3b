-- The SET preamble pg_dump 15 and drivers send: every PostgreSQL setting is accepted and
-- SHOW prints it back; unknown names and server-only settings fail as in PostgreSQL.
-- @query set_statement_timeout
SET statement_timeout = 0
-- @query set_lock_timeout
SET lock_timeout = 0
-- @query set_idle_in_transaction_session_timeout
SET idle_in_transaction_session_timeout = 0
-- @query set_client_encoding
SET client_encoding = 'UTF8'
-- @query set_standard_conforming_strings
SET standard_conforming_strings = on
-- @query set_check_function_bodies
SET check_function_bodies = false
-- @query show_check_function_bodies
SHOW check_function_bodies
-- @query reset_check_function_bodies
RESET check_function_bodies
-- @query set_xmloption
SET xmloption = content
-- @query set_row_security
SET row_security = off
-- @query show_row_security
SHOW row_security
-- @query set_synchronize_seqscans
SET synchronize_seqscans = off
-- @query show_synchronize_seqscans
SHOW synchronize_seqscans
-- @query set_extra_float_digits
SET extra_float_digits TO 3
-- @query set_default_table_access_method
SET default_table_access_method = heap
-- @query set_default_tablespace
SET default_tablespace = ''
-- @query show_default_tablespace
SHOW default_tablespace
-- @query set_enable_seqscan_word
SET enable_seqscan TO 'false'
-- @query show_enable_seqscan
SHOW enable_seqscan
-- @query reset_enable_seqscan
RESET enable_seqscan
-- @query show_enable_seqscan_after_reset
SHOW enable_seqscan
-- @query set_work_mem
SET work_mem = '64MB'
-- @query show_work_mem
SHOW work_mem
-- @query show_unset_setting_default
SHOW synchronous_standby_names
-- @query set_session_characteristics
SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY
-- @query show_default_isolation
SHOW default_transaction_isolation
-- @query show_default_read_only
SHOW default_transaction_read_only
-- @query set_session_characteristics_back
SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE
-- @query show_default_read_only_back
SHOW default_transaction_read_only
-- @query set_unknown_setting error
SET no_such_setting_at_all = 1
-- @query show_unknown_setting error
SHOW no_such_setting_at_all
-- @query set_server_only_setting error
SET shared_buffers = '1MB'
-- @query set_bad_boolean error
SET enable_seqscan = maybe
