-- What `prisma migrate dev --name init` writes for schema.prisma (its native schema engine
-- cannot be downloaded here, so the test applies the migration as SQL).
CREATE TYPE "Role" AS ENUM ('READER', 'WRITER', 'ADMIN');

CREATE TABLE "Author" (
    "id" SERIAL NOT NULL,
    "email" VARCHAR(120) NOT NULL,
    "name" VARCHAR(80) NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "role" "Role" NOT NULL DEFAULT 'READER',
    "tags" TEXT[],
    "profile" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Author_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "Post" (
    "id" SERIAL NOT NULL,
    "title" VARCHAR(200) NOT NULL,
    "price" DECIMAL(10,2) NOT NULL DEFAULT 0,
    "authorId" INTEGER NOT NULL,
    "slug" VARCHAR(60) NOT NULL,

    CONSTRAINT "Post_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "Author_email_key" ON "Author"("email");

CREATE INDEX "Post_title_idx" ON "Post"("title");

CREATE UNIQUE INDEX "Post_authorId_slug_key" ON "Post"("authorId", "slug");

ALTER TABLE "Post" ADD CONSTRAINT "Post_authorId_fkey" FOREIGN KEY ("authorId") REFERENCES "Author"("id") ON DELETE CASCADE ON UPDATE CASCADE;
