SELECT c.oid::regclass AS rel, t.oid::regtype FROM pg_catalog.pg_class c, pg_catalog.pg_type t LIMIT 1
-- transpiled:
SELECT __HATI_REGCLASS_NAME(c.oid) AS rel, __HATI_REGTYPE_NAME(t.oid) FROM pg_class AS c, pg_type AS t LIMIT 1
