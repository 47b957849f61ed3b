SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_name LIKE 'doc%' ORDER BY 1
-- transpiled:
SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_name LIKE 'doc%' ORDER BY 1
-- rows:
["docs"]
