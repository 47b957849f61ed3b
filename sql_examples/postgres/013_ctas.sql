CREATE TABLE "main"."main"."billing_docs" AS SELECT id, title FROM docs WHERE category = 'billing'
-- transpiled:
CREATE TABLE "main"."billing_docs" AS SELECT id, title FROM docs WHERE category = 'billing'
