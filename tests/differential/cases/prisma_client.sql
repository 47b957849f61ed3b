-- What Prisma's client sends (tests/tools/test_prisma.py): RETURNING columns named as a
-- select list names them (an enum read back as "t"."role"::text is "role"), a push onto
-- an array column that is NULL, and a JSON path filter on a schema-qualified column.
-- @setup
CREATE TYPE d_prisma_role AS ENUM ('READER', 'WRITER');
CREATE TABLE d_prisma (id serial PRIMARY KEY, role d_prisma_role NOT NULL DEFAULT 'READER', tags text[], profile jsonb);
-- @query insert_returning_names
INSERT INTO "public"."d_prisma" (role, profile) VALUES (CAST('WRITER'::text AS "public"."d_prisma_role"), '{"born": 1929}') RETURNING "public"."d_prisma"."id", "public"."d_prisma"."role"::text, id * 2, upper(role::text)
-- @query update_push_onto_null_array
UPDATE "public"."d_prisma" SET "tags" = "public"."d_prisma"."tags" || '{culture}' WHERE id = 1 RETURNING "public"."d_prisma"."tags", role::text
-- @query update_push_onto_array
UPDATE d_prisma SET tags = tags || '{"a b",c}' WHERE id = 1 RETURNING tags
-- @query delete_returning_names
DELETE FROM d_prisma WHERE id = 2 RETURNING d_prisma.role::text
-- @query json_path_filter_qualified
SELECT "public"."d_prisma"."id" FROM "public"."d_prisma" WHERE ("public"."d_prisma"."profile"#>ARRAY['born']::text[])::jsonb::jsonb = '1929'
-- @query array_contains
SELECT id FROM "public"."d_prisma" WHERE "public"."d_prisma"."tags" @> '{culture}'
