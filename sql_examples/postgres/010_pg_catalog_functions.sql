SELECT pg_catalog.pg_get_userbyid(10), pg_catalog.format_type(23, NULL), pg_catalog.version()
-- transpiled:
SELECT __HATI_PG_GET_USERBYID(10), FORMAT_TYPE(23, NULL), __HATI_VERSION()
