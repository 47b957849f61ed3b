-- CREATE EXTENSION of an extension both sides have, and of one neither has.
-- @query create_extension_uuid_ossp
CREATE EXTENSION IF NOT EXISTS "uuid-ossp"
-- @query create_extension_again_if_not_exists
CREATE EXTENSION IF NOT EXISTS "uuid-ossp" WITH SCHEMA public
-- @query uuid_generate_v4_is_a_random_uuid
SELECT length(uuid_generate_v4()::text), uuid_generate_v4() <> uuid_generate_v4()
-- @query create_unknown_extension error
CREATE EXTENSION no_such_extension_anywhere
-- @query create_extension_pgcrypto
CREATE EXTENSION IF NOT EXISTS pgcrypto
-- @query pgcrypto_digest
SELECT encode(digest('abc', 'sha256'), 'hex'), encode(digest('abc', 'md5'), 'hex'), encode(digest('abc', 'SHA1'), 'hex'), length(gen_random_uuid()::text)
-- @query pgcrypto_unknown_hash error
SELECT digest('abc', 'nosuch')
-- @query available_extensions
SELECT name, default_version IS NOT NULL FROM pg_available_extensions WHERE name IN ('pgcrypto', 'plpgsql', 'uuid-ossp') ORDER BY name
-- @query activerecord_extension_enabled
SELECT installed_version IS NOT NULL FROM pg_available_extensions WHERE name = 'plpgsql'
-- @query drop_unknown_extension error
DROP EXTENSION no_such_extension_anywhere
-- @query drop_unknown_extension_if_exists
DROP EXTENSION IF EXISTS no_such_extension_anywhere CASCADE
