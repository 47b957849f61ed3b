-- Read-only transactions (BEGIN READ ONLY, SET TRANSACTION READ ONLY,
-- default_transaction_read_only): writes to tables that are not temporary and all DDL
-- are 25006, as PostgreSQL refuses them. Runs in order on one connection.
-- @setup
CREATE TABLE d_ro (id int);
CREATE TEMP TABLE d_ro_tmp (id int);
-- @query ro_01
BEGIN READ ONLY
-- @query ro_02
SHOW transaction_read_only
-- @query ro_03
SELECT count(*) FROM d_ro
-- @query ro_04 error
INSERT INTO d_ro VALUES (1)
-- @query ro_05
ROLLBACK
-- @query ro_06
BEGIN TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY
-- @query ro_07 error
UPDATE d_ro SET id = 2
-- @query ro_08
ROLLBACK
-- @query ro_09
START TRANSACTION READ ONLY
-- @query ro_10 error
CREATE TEMP TABLE d_ro_t2 (id int)
-- @query ro_11
ROLLBACK
-- @query ro_12
START TRANSACTION READ ONLY
-- @query ro_13 error
DELETE FROM d_ro
-- @query ro_14
ROLLBACK
-- @query ro_15
BEGIN
-- @query ro_16
SET TRANSACTION READ ONLY
-- @query ro_17 error
CREATE TABLE d_ro_t3 (id int)
-- @query ro_18
ROLLBACK
-- @query ro_19
BEGIN
-- @query ro_20
SET TRANSACTION READ ONLY
-- @query ro_21 error
TRUNCATE d_ro
-- @query ro_22
ROLLBACK
-- @query ro_23
SET default_transaction_read_only = on
-- @query ro_24 error
INSERT INTO d_ro VALUES (3)
-- @query ro_25
BEGIN
-- @query ro_26 error
INSERT INTO d_ro VALUES (4)
-- @query ro_27
ROLLBACK
-- @query ro_28
BEGIN READ WRITE
-- @query ro_29
INSERT INTO d_ro VALUES (5)
-- @query ro_30
COMMIT
-- @query ro_31
SET default_transaction_read_only = off
-- @query ro_32
BEGIN READ ONLY
-- @query ro_33
ROLLBACK
-- @query ro_34
BEGIN READ ONLY
-- @query ro_35
INSERT INTO d_ro_tmp VALUES (1)
-- @query ro_36 error
DROP TABLE d_ro
-- @query ro_37 error
COMMENT ON TABLE d_ro IS 'x'
-- @query ro_38
ROLLBACK
-- @query ro_39
SELECT count(*) FROM d_ro
