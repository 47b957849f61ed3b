-- The system catalogs' own OIDs: pg_class lists them, each has the tableoid system column.
-- @query catalog_tableoid
SELECT (SELECT DISTINCT tableoid FROM pg_extension) AS ext, (SELECT DISTINCT tableoid FROM pg_namespace) AS nsp, (SELECT DISTINCT tableoid FROM pg_class) AS cls, (SELECT DISTINCT tableoid FROM pg_type) AS typ, (SELECT DISTINCT tableoid FROM pg_proc) AS proc
-- @query catalogs_in_pg_class
SELECT relname, oid::bigint, relkind FROM pg_class WHERE relname IN ('pg_class', 'pg_type', 'pg_namespace', 'pg_extension', 'pg_proc', 'pg_am', 'pg_attribute', 'pg_constraint', 'pg_description', 'pg_depend') AND relnamespace = 11 ORDER BY relname
-- @query acldefault_by_kind
SELECT k, replace(array_to_string(acldefault(k::"char", 10::oid)::text[], ','), pg_get_userbyid(10), 'OWNER') AS acl FROM (VALUES ('c'), ('r'), ('s'), ('d'), ('f'), ('l'), ('L'), ('n'), ('t'), ('F'), ('S'), ('T')) v(k) ORDER BY k
-- @query proargtypes_is_space_separated
SELECT proargtypes::text FROM pg_proc WHERE proname = 'no_such_function_here'
-- @query pg_dump_catalogs_are_empty
SELECT (SELECT count(*) FROM pg_transform) AS trf, (SELECT count(*) FROM pg_default_acl) AS defacl, (SELECT count(*) FROM pg_subscription) AS sub, (SELECT count(*) FROM pg_seclabel) AS seclabel, (SELECT count(*) FROM pg_largeobject_metadata) AS lo
