SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name LIKE 'doc%' ORDER BY 1
-- transpiled:
SELECT table_name FROM __hati_catalog.info.tables WHERE table_schema = 'public' AND table_name LIKE 'doc%' ORDER BY 1
-- rows:
["docs"]
