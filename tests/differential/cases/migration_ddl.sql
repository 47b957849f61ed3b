-- DDL that migration tools send and DuckDB lacks (transpiler/maintenance.py,
-- proxy/pgserver/index_rename.py): ALTER INDEX ... RENAME (Django's RenameIndex), DROP
-- INDEX CONCURRENTLY, storage / statistics / trigger ALTERs (acknowledged), CREATE
-- SEQUENCE ... OWNED BY, COMMENT ON INDEX.
-- @setup
CREATE TABLE d_mig (id int PRIMARY KEY, email text, org int);
CREATE INDEX d_mig_email ON d_mig (email);
CREATE INDEX d_mig_org ON d_mig (org);
INSERT INTO d_mig VALUES (1, 'a@x', 1), (2, 'b@x', 2);
-- @query comment_on_index
COMMENT ON INDEX d_mig_email IS 'by email'
-- @query rename_index
ALTER INDEX d_mig_email RENAME TO d_mig_email2
-- @query renamed_index_listed_with_its_comment
SELECT indexname, indexdef, obj_description('d_mig_email2'::regclass, 'pg_class') FROM pg_indexes WHERE tablename = 'd_mig' AND indexname <> 'd_mig_pkey' ORDER BY 1
-- @query rename_index_if_exists_missing
ALTER INDEX IF EXISTS d_mig_nosuch RENAME TO d_mig_x
-- @query rename_missing_index error
ALTER INDEX d_mig_nosuch RENAME TO d_mig_x
-- @query drop_index_concurrently
DROP INDEX CONCURRENTLY IF EXISTS d_mig_org
-- @query drop_index_concurrently_missing
DROP INDEX CONCURRENTLY IF EXISTS d_mig_org
-- @query indexes_after_drop
SELECT indexname FROM pg_indexes WHERE tablename = 'd_mig' ORDER BY 1
-- @query set_statistics
ALTER TABLE d_mig ALTER COLUMN email SET STATISTICS 100
-- @query set_storage_options
ALTER TABLE d_mig SET (fillfactor = 70), ALTER COLUMN email SET STORAGE EXTERNAL
-- @query replica_identity
ALTER TABLE d_mig REPLICA IDENTITY FULL
-- @query storage_alter_missing_table error
ALTER TABLE d_mig_nosuch SET (fillfactor = 70)
-- @query storage_alter_if_exists_missing
ALTER TABLE IF EXISTS d_mig_nosuch SET (fillfactor = 70)
-- @query index_storage_option
ALTER INDEX d_mig_email2 SET (fillfactor = 50)
-- @query create_sequence_owned_by
CREATE SEQUENCE d_mig_seq START 5 OWNED BY d_mig.org
-- @query owned_sequence_starts_where_it_said
SELECT start_value, increment_by FROM pg_sequences WHERE sequencename = 'd_mig_seq'
-- @query rows_unchanged
SELECT id, email, org FROM d_mig ORDER BY id
-- @query schema_authorization
CREATE SCHEMA IF NOT EXISTS d_mig_auth AUTHORIZATION CURRENT_USER
-- @query schema_authorization_again
CREATE SCHEMA IF NOT EXISTS d_mig_auth AUTHORIZATION CURRENT_USER
-- @query schema_authorization_usable
CREATE TABLE d_mig_auth.t (id int)
-- @query schema_listed
SELECT nspname FROM pg_namespace WHERE nspname = 'd_mig_auth'
