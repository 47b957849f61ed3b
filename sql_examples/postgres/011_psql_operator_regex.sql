SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^(docs)$' COLLATE pg_catalog.default ORDER BY 1
-- transpiled:
SELECT c.relname FROM pg_class AS c WHERE REGEXP_MATCHES(c.relname, '^(docs)$') ORDER BY 1
-- rows:
["docs"]
["docs"]
