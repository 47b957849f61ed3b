SELECT count(*) AS n FROM "hatidata"."public"."docs"
-- transpiled:
SELECT COUNT(*) AS n FROM "main"."docs"
-- rows:
[5]
