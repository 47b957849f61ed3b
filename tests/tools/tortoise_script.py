"""Tortoise ORM (asyncpg) doing an app's first steps against the server at argv[1]
(host:port), user argv[2], database argv[3]; prints one JSON line that
tests/tools/test_tortoise.py compares with what PostgreSQL 15 gives. Each step records
its result, or the error's class and SQLSTATE, so one failing step does not hide the rest.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import sys
import traceback
import uuid
from collections.abc import Awaitable, Callable
from decimal import Decimal
from enum import IntEnum, StrEnum
from typing import Any

from tortoise import Tortoise, fields
from tortoise.contrib.postgres.fields import ArrayField
from tortoise.expressions import Case, F, Q, Subquery, When
from tortoise.functions import Avg, Coalesce, Count, Length, Lower, Max, Sum, Upper
from tortoise.models import Model
from tortoise.transactions import in_transaction

host, port = sys.argv[1].rsplit(":", 1)
USER, DATABASE = sys.argv[2], sys.argv[3]
out: dict[str, Any] = {}


class Status(IntEnum):
    DRAFT = 1
    PUBLISHED = 2


class Genre(StrEnum):
    FICTION = "fiction"
    SCIENCE = "science"


class Author(Model):
    id = fields.IntField(primary_key=True)
    name = fields.CharField(max_length=80, unique=True)
    joined = fields.DatetimeField(auto_now_add=True)
    profile = fields.JSONField(null=True)

    class Meta:
        table = "tt_author"


class Tag(Model):
    id = fields.IntField(primary_key=True)
    label = fields.CharField(max_length=30, unique=True)

    class Meta:
        table = "tt_tag"


class Book(Model):
    id = fields.IntField(primary_key=True)
    author: fields.ForeignKeyRelation[Author] = fields.ForeignKeyField(
        "models.Author", related_name="books", on_delete=fields.CASCADE
    )
    title = fields.CharField(max_length=100, index=True)
    price = fields.DecimalField(max_digits=8, decimal_places=2, null=True)
    status = fields.IntEnumField(Status, default=Status.DRAFT)
    genre = fields.CharEnumField(Genre, default=Genre.FICTION)
    pages = fields.IntField(default=0)
    tags: fields.ManyToManyRelation[Tag] = fields.ManyToManyField(
        "models.Tag", related_name="books", through="tt_book_tag"
    )

    class Meta:
        table = "tt_book"
        unique_together = (("author", "title"),)


class Kind(Model):
    """One column of each other field type, read back as the driver decodes it."""

    id = fields.UUIDField(primary_key=True)
    big = fields.BigIntField()
    small = fields.SmallIntField()
    text = fields.TextField()
    flag = fields.BooleanField(default=False)
    day = fields.DateField()
    at = fields.TimeField()
    span = fields.TimeDeltaField()
    ratio = fields.FloatField()
    blob = fields.BinaryField()
    stamp = fields.DatetimeField()
    items = fields.JSONField(default=list)
    numbers = ArrayField(element_type="int", null=True)

    class Meta:
        table = "tt_kind"


def error(exc: BaseException) -> list[Any]:
    """An error as the test compares it: its class and the SQLSTATE asyncpg carried."""
    cause: BaseException | None = exc
    while cause is not None and not hasattr(cause, "sqlstate"):
        cause = cause.__cause__ or cause.__context__
    return ["error", type(exc).__name__, getattr(cause, "sqlstate", None)]


async def step(name: str, run: Callable[[], Awaitable[Any]]) -> None:
    try:
        out[name] = await run()
    except Exception as exc:  # noqa: BLE001 (the step's failure is its result)
        out[name] = error(exc)
        traceback.print_exc()  # stderr: what the failure report shows


def money(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


async def schema() -> list[str]:
    await Tortoise.generate_schemas(safe=False)
    conn = Tortoise.get_connection("default")
    _, rows = await conn.execute_query(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = 'public' AND table_name LIKE 'tt_%' ORDER BY 1"
    )
    return [r["table_name"] for r in rows]


async def create() -> list[Any]:
    ann = await Author.create(name="Ann", profile={"langs": ["en", "fr"], "n": 1})
    bob = await Author.create(name="Bob")
    fresh = datetime.datetime.now(datetime.UTC) - ann.joined
    await Book.create(author=ann, title="One", price=Decimal("12.50"), pages=100)
    await Book.create(author=ann, title="Two", status=Status.PUBLISHED, pages=250)
    await Book.bulk_create(
        [
            Book(author=bob, title="Three", price=Decimal("0.99"), genre=Genre.SCIENCE),
            Book(author=bob, title="Four", price=Decimal("100.00"), pages=40),
        ]
    )
    return [ann.id, bob.id, abs(fresh.total_seconds()) < 60, await Book.all().count()]


async def tags() -> list[Any]:
    sci, old = await Tag.create(label="sci"), await Tag.create(label="old")
    one, three = await Book.get(title="One"), await Book.get(title="Three")
    await one.tags.add(sci, old)
    await three.tags.add(sci)
    await one.tags.remove(old)
    return [sorted(t.label for t in await one.tags.all()), await sci.books.all().count()]


async def read() -> dict[str, Any]:
    got = await Author.get(name="Ann")
    book = await Book.get(title="Three")
    return {
        "get": [got.name, got.profile, type(got.joined).__name__, got.joined.tzinfo is not None],
        "enums": [book.status.name, book.genre.value, money(book.price)],
        "q": await Book.filter(Q(price__gt=1) | Q(status=Status.PUBLISHED))
        .order_by("title")
        .values_list("title", flat=True),
        "q_not": await Book.filter(~Q(title__startswith="T"), pages__gte=40)
        .order_by("id")
        .values_list("title", "pages"),
        "f": await Book.filter(pages__gt=F("id") * 50)
        .order_by("id")
        .values_list("title", flat=True),
        "in_icontains": await Book.filter(title__in=["One", "Two"], title__icontains="o")
        .order_by("title")
        .values_list("title", flat=True),
        "isnull": await Book.filter(price__isnull=True).values_list("title", flat=True),
        "json_filter": await Author.filter(profile__contains={"n": 1}).values_list(
            "name", flat=True
        ),
        "values": await Book.filter(author__name="Bob")
        .order_by("title")
        .values("title", "author__name", "genre"),
        "exists": [await Book.filter(title="One").exists(), await Book.filter(title="X").exists()],
        "first": (await Book.all().order_by("-pages").first()).title,
        "distinct": await Book.all().distinct().order_by("genre").values_list("genre", flat=True),
        "limit_offset": await Book.all()
        .order_by("id")
        .offset(1)
        .limit(2)
        .values_list("title", flat=True),
    }


async def related() -> dict[str, Any]:
    authors = await Author.all().order_by("name").prefetch_related("books")
    books = await Book.all().order_by("id").select_related("author")
    tagged = await Book.filter(title="One").prefetch_related("tags")
    return {
        "prefetch": [[a.name, sorted(b.title for b in a.books)] for a in authors],
        "select_related": [[b.title, b.author.name] for b in books],
        "prefetch_m2m": [[t.label for t in b.tags] for b in tagged],
        "fetch_related": await fetch_related(),
    }


async def fetch_related() -> list[str]:
    bob = await Author.get(name="Bob")
    await bob.fetch_related("books")
    return sorted(b.title for b in bob.books)


async def aggregates() -> dict[str, Any]:
    counted = await Author.annotate(n=Count("books"), total=Sum("books__pages")).order_by("name")
    grouped = (
        await Book.annotate(n=Count("id"))
        .group_by("genre")
        .order_by("genre")
        .values_list("genre", "n")
    )
    return {
        "annotate": [[a.name, a.n, a.total] for a in counted],
        "group_by": grouped,
        "filter_annotated": await Author.annotate(n=Count("books"))
        .filter(n__gte=2)
        .order_by("name")
        .values_list("name", flat=True),
        "aggregate_sum": money(
            await Book.annotate(s=Sum("price")).first().values_list("s", flat=True)
        ),
    }


async def update() -> list[Any]:
    changed = await Book.filter(price__isnull=False).update(price=F("price") + 1)
    book = await Book.get(title="Two")
    book.pages = 260
    await book.save(update_fields=["pages"])
    rows = await Book.all().order_by("id").values_list("title", "price", "pages")
    return [changed, [[t, money(p), n] for t, p, n in rows]]


async def integrity() -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name, make in (
        ("unique", lambda: Author.create(name="Ann")),
        ("unique_together", lambda: Book.create(author_id=1, title="One")),
        ("foreign_key", lambda: Book.create(author_id=999, title="Orphan")),
    ):
        try:
            await make()
            results[name] = "no error"
        except Exception as exc:  # noqa: BLE001
            results[name] = error(exc)
    results["after"] = await Book.all().count()
    return results


async def transaction() -> list[Any]:
    try:
        async with in_transaction() as conn:
            await Author.create(name="Temp", using_db=conn)
            await Book.filter(title="One").using_db(conn).update(pages=1)
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    async with in_transaction() as conn:
        await Author.create(name="Kept", using_db=conn)
    try:
        async with in_transaction():
            await Author.create(name="Carl")
            await Author.create(name="Carl")
    except Exception as exc:  # noqa: BLE001
        failed = error(exc)
    return [
        await Author.filter(name="Temp").count(),
        (await Book.get(title="One")).pages,
        await Author.filter(name__in=["Kept", "Carl"]).values_list("name", flat=True),
        failed,
    ]


async def raw() -> dict[str, Any]:
    conn = Tortoise.get_connection("default")
    rows = await conn.execute_query_dict(
        "SELECT a.name, count(b.id) AS n FROM tt_author a LEFT JOIN tt_book b "
        "ON b.author_id = a.id WHERE a.name <> $1 GROUP BY a.name ORDER BY a.name",
        ["Kept"],
    )
    models = await Book.raw("SELECT * FROM tt_book WHERE pages > 50 ORDER BY id")
    return {"execute_query_dict": rows, "model_raw": [b.title for b in models]}


async def delete() -> list[Any]:
    await (await Author.get(name="Bob")).delete()
    deleted = await Book.filter(title="Two").delete()
    return [
        deleted,
        await Book.all().order_by("id").values_list("title", flat=True),
        await Tag.get(label="sci").values_list("label", flat=True),
        await Book.all().count(),
    ]


KIND_ID = uuid.UUID("12345678-1234-5678-1234-567812345678")


async def types() -> list[Any]:
    when = datetime.datetime(2024, 2, 29, 13, 14, 15, 123456, tzinfo=datetime.UTC)
    await Kind.create(
        id=KIND_ID, big=2**40, small=-3, text="ünï 'q'", flag=True,
        day=datetime.date(2024, 2, 29), at=datetime.time(23, 59, 1),
        span=datetime.timedelta(days=1, seconds=5, microseconds=7), ratio=0.25,
        blob=b"\x00\xffab", stamp=when, items=[1, "two", None], numbers=[3, 1, 2],
    )  # fmt: skip
    await Kind.create(
        id=uuid.UUID(int=1), big=-1, small=0, text="", day=datetime.date(1999, 12, 31),
        at=datetime.time(0, 0), span=datetime.timedelta(0), ratio=-1.5, blob=b"",
        stamp=when - datetime.timedelta(days=400),
    )  # fmt: skip
    got = await Kind.get(id=KIND_ID)
    return [
        str(got.id), got.big, got.small, got.text, got.flag, str(got.day), str(got.at),
        str(got.span), got.ratio, got.blob.hex(), got.stamp.isoformat(), got.items, got.numbers,
    ]  # fmt: skip


async def type_filters() -> None:
    """Filters over the Kind rows, each its own step."""
    await step("array_contains", lambda: Kind.filter(numbers__contains=[1]).count())
    await step("array_overlap", lambda: Kind.filter(numbers__overlap=[9, 2]).count())
    await step("array_len", lambda: Kind.filter(numbers__len=3).count())
    span = (datetime.date(2024, 1, 1), "2024-12-31")
    await step("date_range", lambda: Kind.filter(day__range=span).values_list("small", flat=True))
    await step("year", lambda: Kind.filter(stamp__year=2024).values_list("small", flat=True))
    await step("bool", lambda: Kind.filter(flag=False).values_list("big", flat=True))
    ids = [uuid.UUID(int=1)]
    await step("uuid_in", lambda: Kind.filter(id__in=ids).values_list("big", flat=True))


async def or_create() -> list[Any]:
    got, made = await Author.get_or_create(name="Dan", defaults={"profile": {"n": 4}})
    again, made_again = await Author.get_or_create(name="Dan")
    _, created = await Author.update_or_create(name="Dan", defaults={"profile": {"n": 5}})
    dan = await Author.get(name="Dan")
    return [made, made_again, got.id == again.id, created, dan.profile]


async def bulk_update() -> list[Any]:
    books = await Book.filter(author__name="Ann").order_by("id")
    for b in books:
        b.pages += 1
    changed = await Book.bulk_update(books, fields=["pages"])
    bulk = await Book.in_bulk([b.id for b in books], field_name="id")
    only = [b.title for b in await Book.all().only("id", "title").order_by("id")]
    return [changed, sorted(b.title for b in bulk.values()), only]


def functions() -> Any:
    low, up, n = Lower("title"), Upper("title"), Length("title")
    return Book.annotate(low=low, up=up, n=n).order_by("id").values_list("low", "up", "n")


async def coalesce() -> list[str | None]:
    rows = await Book.annotate(p=Coalesce("price", 0)).order_by("id").values_list("p", flat=True)
    return [money(p) for p in rows]


def case() -> Any:
    size = Case(When(pages__gte=100, then="big"), When(pages__gte=40, then="mid"), default="s")
    return Book.annotate(size=size).order_by("id").values_list("title", "size")


def subquery() -> Any:
    ann = Subquery(Author.filter(name__startswith="A").values("id"))
    return Book.filter(author_id__in=ann).order_by("id").values_list("title", flat=True)


async def avg_max() -> list[str]:
    got = await Book.annotate(a=Avg("pages"), m=Max("price")).first().values_list("a", "m")
    return [str(v) for v in got]


async def select_for_update() -> int:
    async with in_transaction() as conn:
        locked = await Book.select_for_update().using_db(conn).get(title="One")
        locked.pages = 7
        await locked.save(using_db=conn)
    return (await Book.get(title="One")).pages


async def schemas_again() -> int:
    await Tortoise.generate_schemas(safe=True)  # CREATE TABLE IF NOT EXISTS of each
    return await Author.all().count()


async def upserts() -> list[Any]:
    """bulk_create with ON CONFLICT DO NOTHING and DO UPDATE; get_or_none; an M2M filter."""
    await Tag.bulk_create([Tag(label="sci"), Tag(label="new")], ignore_conflicts=True)
    await Author.bulk_create(
        [Author(name="Ann", profile={"n": 9}), Author(name="Eve")],
        update_fields=["profile"],
        on_conflict=["name"],
    )
    return [
        await Tag.all().order_by("label").values_list("label", flat=True),
        await Author.filter(name__in=["Ann", "Eve"]).order_by("name").values_list("profile"),
        await Author.get_or_none(name="Nobody"),
        await Book.filter(tags__label="sci").order_by("id").values_list("title", flat=True),
    ]


async def extras() -> None:
    await step("or_create", or_create)
    await step("bulk_update", bulk_update)
    await step("functions", functions)
    await step("coalesce", coalesce)
    await step("case", case)
    await step("subquery", subquery)
    await step("avg_max", avg_max)
    json_n1 = {"n": 1}
    await step(
        "json_filter",
        lambda: Author.filter(profile__filter=json_n1).values_list("name", flat=True),
    )
    await step(
        "regex",
        lambda: Book.filter(title__posix_regex="^T").order_by("id").values_list("title", flat=True),
    )
    await step("select_for_update", select_for_update)
    await step("schemas_again", schemas_again)
    await step("upserts", upserts)
    # Tortoise joins tt_book twice under one alias: PostgreSQL's 42712 on both
    await step("reverse_filter", lambda: Book.filter(author__books__title="Four").count())


async def main() -> None:
    url = f"asyncpg://{USER}@{host}:{port}/{DATABASE}"
    await Tortoise.init(db_url=url, modules={"models": ["__main__"]})
    try:
        conn = Tortoise.get_connection("default")
        for table in ("tt_book_tag", "tt_book", "tt_tag", "tt_author", "tt_kind"):
            await conn.execute_script(f"DROP TABLE IF EXISTS {table} CASCADE")
        await step("schema", schema)
        await step("create", create)
        await step("tags", tags)
        await step("read", read)
        await step("related", related)
        await step("aggregates", aggregates)
        await step("update", update)
        await step("types", types)
        await type_filters()
        await extras()
        await step("integrity", integrity)
        await step("transaction", transaction)
        await step("raw", raw)
        await step("delete", delete)
    finally:
        await Tortoise.close_connections()
        print(json.dumps(out, default=str))


asyncio.run(main())
