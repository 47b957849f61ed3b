// Prisma ORM 7 client (prisma-client-js generator, the query compiler wasm) over
// @prisma/adapter-pg (node-postgres), run by tests/tools/test_prisma.py against hatiproxy
// and PostgreSQL 15: nested writes, relations, filters, upsert, cascade, both kinds of
// $transaction, raw SQL with parameters, P2002 / P2003, createMany, aggregate / groupBy /
// count. Prints one JSON line of results.
const { PrismaClient, Prisma } = require(process.argv[2]);
const { PrismaPg } = require(require.resolve("@prisma/adapter-pg", { paths: [process.argv[2]] }));

async function code(p) {
  try { await p; return null; } catch (e) { return e.code || String(e.message).slice(0, 200); }
}

async function main() {
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: process.argv[3] }) });
  const out = {};
  const ursula = await prisma.author.create({
    data: {
      email: "ursula@earthsea.org", name: "Ursula", tags: ["sf", "fantasy"],
      profile: { born: 1929, langs: ["en"] },
      posts: { create: [{ title: "Earthsea", slug: "earthsea", price: "9.99" },
                        { title: "Lathe", slug: "lathe" }] },
    },
    include: { posts: { orderBy: { id: "asc" } } },
  });
  out.created = {
    id: ursula.id, active: ursula.active, role: ursula.role, tags: ursula.tags,
    profile: ursula.profile, dates: ursula.createdAt instanceof Date && ursula.updatedAt instanceof Date,
    posts: ursula.posts.map((p) => [p.title, p.price.toString()]),
  };
  const iain = await prisma.author.create({ data: { email: "iain@culture.org", name: "Iain", role: "WRITER", active: false } });
  await prisma.post.create({ data: { title: "Excession", slug: "excession", price: new Prisma.Decimal("12.50"), author: { connect: { id: iain.id } } } });
  const found = await prisma.author.findMany({
    where: { posts: { some: { title: { startsWith: "E" } } } },
    include: { posts: { select: { title: true }, orderBy: { title: "desc" } } },
    orderBy: { name: "asc" }, take: 5,
  });
  out.found = found.map((a) => [a.name, a.posts.map((p) => p.title)]);
  out.filtered = (await prisma.post.findMany({
    where: { OR: [{ price: { gt: 10 } }, { title: { contains: "ath" } }], author: { active: true } },
    select: { title: true }, orderBy: { title: "asc" },
  })).map((p) => p.title);
  out.byTag = (await prisma.author.findMany({ where: { tags: { has: "sf" } }, select: { name: true } })).map((a) => a.name);
  out.byJson = (await prisma.author.findMany({ where: { profile: { path: ["born"], equals: 1929 } }, select: { name: true } })).map((a) => a.name);
  const upd = await prisma.author.update({ where: { email: "iain@culture.org" }, data: { active: true, tags: { push: "culture" } } });
  out.updated = [upd.active, upd.tags, upd.updatedAt >= upd.createdAt];
  const up1 = await prisma.author.upsert({ where: { email: "ann@leckie.org" }, create: { email: "ann@leckie.org", name: "Ann" }, update: { name: "x" } });
  const up2 = await prisma.author.upsert({ where: { email: "ann@leckie.org" }, create: { email: "ann@leckie.org", name: "y" }, update: { name: "Ann L" } });
  out.upsert = [up1.name, up2.name, up1.id === up2.id];
  out.createMany = (await prisma.post.createMany({ data: [
    { title: "Ancillary Justice", slug: "aj", authorId: up1.id, price: "15.00" },
    { title: "Ancillary Sword", slug: "as", authorId: up1.id, price: "16.00" },
  ] })).count;
  out.count = await prisma.post.count();
  const agg = await prisma.post.aggregate({ _sum: { price: true }, _max: { price: true }, _avg: { price: true }, _count: { _all: true } });
  out.aggregate = [agg._sum.price.toString(), agg._max.price.toString(), agg._avg.price.toFixed(2), agg._count._all];
  const groups = await prisma.post.groupBy({ by: ["authorId"], _count: { _all: true }, _sum: { price: true }, orderBy: { authorId: "asc" } });
  out.groupBy = groups.map((g) => [g.authorId, g._count._all, g._sum.price.toString()]);
  out.p2002 = await code(prisma.author.create({ data: { email: "ursula@earthsea.org", name: "dup" } }));
  out.p2002compound = await code(prisma.post.create({ data: { title: "t", slug: "lathe", authorId: ursula.id } }));
  out.p2003 = await code(prisma.post.create({ data: { title: "orphan", slug: "o", authorId: 9999 } }));
  const [a1, n1] = await prisma.$transaction([
    prisma.author.create({ data: { email: "t1@x.org", name: "T1" } }),
    prisma.author.count(),
  ]);
  out.txArray = [a1.name, n1];
  out.txRollback = await code(prisma.$transaction(async (tx) => {
    await tx.author.create({ data: { email: "ghost@x.org", name: "Ghost" } });
    throw Object.assign(new Error("roll back"), { code: "ROLLBACK" });
  }));
  out.ghosts = await prisma.author.count({ where: { email: "ghost@x.org" } });
  out.txInteractive = await prisma.$transaction(async (tx) => {
    const a = await tx.author.update({ where: { email: "t1@x.org" }, data: { name: "T1b" } });
    return (await tx.author.findUnique({ where: { id: a.id } })).name;
  });
  const minPrice = 10;
  const raw = await prisma.$queryRaw`SELECT title, price FROM "Post" WHERE price > ${minPrice} ORDER BY title`;
  out.queryRaw = raw.map((r) => [r.title, r.price.toString()]);
  out.executeRaw = await prisma.$executeRaw`UPDATE "Post" SET price = price + ${1} WHERE slug = ${"lathe"}`;
  out.queryRawUnsafe = await prisma.$queryRawUnsafe('SELECT count(*)::int AS n FROM "Author" WHERE role = $1::"Role"', "WRITER");
  await prisma.author.delete({ where: { id: ursula.id } });
  out.postsLeft = (await prisma.post.findMany({ select: { title: true }, orderBy: { title: "asc" } })).map((p) => p.title);
  out.deleteMany = (await prisma.author.deleteMany({ where: { email: { endsWith: "x.org" } } })).count;
  await prisma.$disconnect();
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
