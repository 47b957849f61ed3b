ALTER TABLE "main"."kv" RENAME TO kv_old
-- transpiled:
ALTER TABLE "main"."kv" RENAME TO kv_old
