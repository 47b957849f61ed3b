-- CREATE EXTENSION of an extension both sides have, and of one neither has.
-- @query create_extension_uuid_ossp
CREATE EXTENSION IF NOT EXISTS "uuid-ossp"
-- @query create_extension_again_if_not_exists
CREATE EXTENSION IF NOT EXISTS "uuid-ossp" WITH SCHEMA public
-- @query uuid_generate_v4_is_a_random_uuid
SELECT length(uuid_generate_v4()::text), uuid_generate_v4() <> uuid_generate_v4()
-- @query create_unknown_extension error
CREATE EXTENSION no_such_extension_anywhere
