"""Piccolo ORM (asyncpg) doing an app's first steps against the server at argv[1]
(host:port), user argv[2], database argv[3]; prints one JSON line that
tests/tools/test_piccolo.py compares with what PostgreSQL 15 gives. Each step records its
result, or the error's class and SQLSTATE, so one failing step does not hide the rest.
"""

from __future__ import annotations

import asyncio
import datetime
import decimal
import json
import sys
import traceback
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from piccolo.columns import (
    JSONB,
    M2M,
    UUID,
    Array,
    Boolean,
    Bytea,
    Date,
    ForeignKey,
    Integer,
    Interval,
    LazyTableReference,
    Numeric,
    OnDelete,
    Real,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.engine.postgres import PostgresEngine
from piccolo.query.functions.aggregate import Avg, Count, Max, Sum
from piccolo.table import Table, create_db_tables, drop_db_tables

host, port = sys.argv[1].rsplit(":", 1)
DB = PostgresEngine(
    config={"host": host, "port": int(port), "user": sys.argv[2], "database": sys.argv[3]}
)
out: dict[str, Any] = {}


class Manager(Table, db=DB, tablename="pc_manager"):
    name = Varchar(length=50, unique=True)
    touring = Boolean(default=False)


class Band(Table, db=DB, tablename="pc_band"):
    name = Varchar(length=100, index=True)
    manager = ForeignKey(references=Manager, on_delete=OnDelete.cascade, null=True)
    popularity = Integer(default=0)
    fee = Numeric(digits=(8, 2), null=True)
    formed = Timestamptz()
    info = JSONB(null=True)
    tags = Array(base_column=Varchar(), default=list)
    genres = M2M(LazyTableReference("GenreToBand", module_path=__name__))


class Genre(Table, db=DB, tablename="pc_genre"):
    name = Varchar(length=30)
    bands = M2M(LazyTableReference("GenreToBand", module_path=__name__))


class GenreToBand(Table, db=DB, tablename="pc_genre_to_band"):
    band = ForeignKey(Band)
    genre = ForeignKey(Genre)


class Concert(Table, db=DB, tablename="pc_concert"):
    """Two foreign keys to one table, and the other column types."""

    band_1 = ForeignKey(Band)
    band_2 = ForeignKey(Band, null=True)
    code = UUID()
    day = Date()
    length = Interval()
    rating = Real(default=0.5)
    notes = Text(default="")
    poster = Bytea(null=True)
    seats = Array(base_column=Integer(), null=True)


class Venue(Table, db=DB, tablename="pc_venue"):
    """Upserts, row locks, batches and the Alter API."""

    name = Varchar(length=40, unique=True)
    capacity = Integer(default=0)


TABLES = [Manager, Band, Genre, GenreToBand, Concert, Venue]


def error(exc: BaseException) -> list[Any]:
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


def plain(value: Any) -> Any:
    """JSON-able: Decimal, datetime, timedelta, UUID, bytes as strings."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, decimal.Decimal | datetime.date | datetime.timedelta | uuid.UUID):
        return str(value)
    if isinstance(value, datetime.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    return value


async def schema() -> list[Any]:
    await drop_db_tables(*TABLES)
    await create_db_tables(*TABLES, if_not_exists=True)
    await create_db_tables(*TABLES, if_not_exists=True)  # again: nothing to do
    return [await t.table_exists() for t in TABLES]


FORMED = datetime.datetime(2020, 5, 6, 7, 8, 9, 123000, tzinfo=datetime.UTC)


async def insert() -> list[Any]:
    guido = Manager(name="Guido", touring=True)
    await guido.save()
    await Manager.insert(Manager(name="Graydon"), Manager(name="Mads")).run()
    graydon = await Manager.objects().get(Manager.name == "Graydon")
    rows = await Band.insert(
        Band(name="Pythonistas", manager=guido, popularity=1000, fee=decimal.Decimal("99.50"),
             formed=FORMED, info={"city": "Amsterdam", "members": 4}, tags=["rock", "live"]),
        Band(name="Rustaceans", manager=graydon, popularity=800, formed=FORMED,
             info={"city": "Oslo", "members": 2}, tags=["metal"]),
        Band(name="C-Sharps", manager=None, popularity=10, fee=decimal.Decimal("5.25"),
             formed=FORMED - datetime.timedelta(days=365), tags=[]),
    ).returning(Band.id, Band.name).run()  # fmt: skip
    await Genre.insert(Genre(name="Rock"), Genre(name="Classical")).run()
    return [guido.id, graydon.id, plain(rows), await Band.count()]


async def select() -> dict[str, Any]:
    return {
        "all": plain(
            await Band.select(Band.name, Band.popularity, Band.fee, Band.tags).order_by(Band.id)
        ),
        "where": await Band.select(Band.name)
        .where((Band.popularity > 100) & (Band.name.like("%ist%") | Band.name.ilike("rust%")))
        .order_by(Band.name),
        "join": await Band.select(Band.name, Band.manager.name, Band.manager.touring)
        .where(Band.manager.touring.eq(True) | Band.manager.name.is_null())
        .order_by(Band.name),
        "join_as": await Band.select(Band.name, Band.manager.name.as_alias("boss"))
        .order_by(Band.name, ascending=False)
        .limit(2)
        .offset(1),
        "is_in": await Band.select(Band.name).where(Band.manager.name.is_in(["Guido", "X"])),
        "not_in": await Band.select(Band.name)
        .where(Band.name.not_in(["C-Sharps"]))
        .order_by(Band.name),
        "null": await Band.select(Band.name).where(Band.fee.is_null()),
        "first": await Band.select(Band.name).order_by(Band.popularity).first(),
        "output_json": await Band.select(Band.name, Band.info)
        .where(Band.name == "Pythonistas")
        .output(load_json=True),
        "as_json": await Band.select(Band.name).order_by(Band.name).output(as_json=True),
        "as_list": await Band.select(Band.name).order_by(Band.name).output(as_list=True),
        "distinct": await Band.select(Band.manager.touring)
        .distinct()
        .order_by(Band.manager.touring),
        "exists": [
            await Band.exists().where(Band.name == "Rustaceans"),
            await Band.exists().where(Band.name == "Nope"),
        ],
        "count_where": await Band.count().where(Band.popularity >= 800),
    }


async def objects() -> dict[str, Any]:
    band = await Band.objects(Band.manager).get(Band.name == "Pythonistas")
    fetched = await Band.objects().where(Band.name == "Rustaceans").first()
    manager = await fetched.get_related(Band.manager)
    made = await Manager.objects().get_or_create(Manager.name == "Kim", defaults={"touring": True})
    again = await Manager.objects().get_or_create(Manager.name == "Kim")
    return {
        "get": [
            band.name,
            band.manager.name,
            plain(band.fee),
            band.formed.isoformat(),
            band.info,
            band.tags,
        ],  # fmt: skip
        "get_related": manager.name,
        "get_or_create": [made._was_created, again._was_created, made.id == again.id],
        "to_dict": plain(fetched.to_dict(Band.name, Band.popularity)),
    }


async def json_and_arrays() -> None:
    """jsonb and array operators, each its own step."""
    info, tags, name = Band.info, Band.tags, Band.name
    await step(
        "arrow",
        lambda: (
            Band.select(name, info.arrow("city").as_alias("city"))
            .where(info.is_not_null())
            .order_by(name)
        ),
    )
    await step("arrow_where", lambda: Band.select(name).where(info.arrow("members") == 4))
    await step(
        "from_path",
        lambda: Band.select(info.from_path(["city"]).as_alias("c")).where(name == "Rustaceans"),
    )
    await step("any", lambda: Band.select(name).where(tags.any("rock")))
    await step("not_any", lambda: Band.select(name).where(tags.not_any("rock")).order_by(name))
    await step(
        "cat",
        lambda: Band.update({tags: tags.cat(["new"])}).where(name == "Rustaceans").returning(tags),
    )
    await step("index", lambda: Band.select(tags[0].as_alias("t0")).where(name == "Pythonistas"))


async def m2m() -> dict[str, Any]:
    py = await Band.objects().get(Band.name == "Pythonistas")
    rock = await Genre.objects().get(Genre.name == "Rock")
    classical = await Genre.objects().get(Genre.name == "Classical")
    await py.add_m2m(rock, classical, m2m=Band.genres)
    rust = await Band.objects().get(Band.name == "Rustaceans")
    await rust.add_m2m(rock, m2m=Band.genres)
    await py.remove_m2m(classical, m2m=Band.genres)
    return {
        "get_m2m": sorted(g.name for g in await py.get_m2m(Band.genres)),
        "select_m2m": await Band.select(Band.name, Band.genres(Genre.name, as_list=True)).order_by(
            Band.name
        ),
        "reverse": await Genre.select(Genre.name, Genre.bands(Band.name, as_list=True)).order_by(
            Genre.name
        ),
    }


async def aggregates() -> dict[str, Any]:
    grouped = (
        await Band.select(Band.manager.name, Count(Band.id), Sum(Band.popularity))
        .group_by(Band.manager.name)
        .order_by(Band.manager.name)
    )
    return {
        "group_by": grouped,
        "max": plain(await Band.select(Max(Band.fee)).first()),
        "count_distinct": await Band.count(distinct=[Band.manager]),
    }


async def avg() -> Any:
    return plain(
        await Band.select(Avg(Band.popularity, alias="pop"), Avg(Band.fee, alias="fee")).first()
    )


async def update_delete() -> dict[str, Any]:
    res: dict[str, Any] = {}
    updated = (
        await Band.update({Band.popularity: Band.popularity + 5})
        .where(Band.popularity < 900)
        .returning(Band.name, Band.popularity)
    )
    res["update"] = sorted(updated, key=lambda r: r["name"])
    band = await Band.objects().get(Band.name == "C-Sharps")
    band.fee = decimal.Decimal("6.75")
    await band.save([Band.fee])
    res["saved"] = plain(await Band.select(Band.fee).where(Band.id == band.id).first())
    res["delete_cascade"] = await Manager.delete().where(Manager.name == "Graydon")
    res["after_cascade"] = await Band.select(Band.name).order_by(Band.name)
    res["m2m_after_cascade"] = await GenreToBand.count()
    return res


async def transactions() -> dict[str, Any]:
    res: dict[str, Any] = {}
    try:
        async with DB.transaction():
            await Manager.insert(Manager(name="Temp")).run()
            await Band.update({Band.popularity: 0}).where(Band.name == "Pythonistas")
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    res["rolled_back"] = [
        await Manager.count().where(Manager.name == "Temp"),
        await Band.select(Band.popularity).where(Band.name == "Pythonistas").first(),
    ]
    async with DB.transaction():
        await Manager.insert(Manager(name="Kept")).run()
    res["committed"] = await Manager.exists().where(Manager.name == "Kept")
    async with DB.transaction() as tx:
        await Manager.insert(Manager(name="Savepointed")).run()
        savepoint = await tx.savepoint()
        await Manager.insert(Manager(name="Undone")).run()
        await savepoint.rollback_to()
    res["savepoint"] = await Manager.select(Manager.name).where(
        Manager.name.is_in(["Savepointed", "Undone"])
    )
    for name, make in (
        ("unique", lambda: Manager.insert(Manager(name="Guido")).run()),
        ("foreign_key", lambda: Band.insert(Band(name="Orphan", manager=999, formed=FORMED))),
        ("not_null", lambda: Manager.insert(Manager(name=None))),
    ):
        try:
            await make()
            res[name] = "no error"
        except Exception as exc:  # noqa: BLE001
            res[name] = error(exc)
    try:
        async with DB.transaction():
            await Manager.insert(Manager(name="Twice")).run()
            await Manager.insert(Manager(name="Twice")).run()
    except Exception as exc:  # noqa: BLE001
        res["failed_transaction"] = [
            error(exc),
            await Manager.count().where(Manager.name == "Twice"),
        ]
    return res


async def types() -> list[Any]:
    py = await Band.objects().get(Band.name == "Pythonistas")
    code = uuid.UUID("12345678-1234-5678-1234-567812345678")
    await Concert.insert(
        Concert(band_1=py, band_2=None, code=code, day=datetime.date(2024, 2, 29),
                length=datetime.timedelta(hours=2, minutes=30), notes="it's \"live\"",
                poster=b"\x00\xff", seats=[1, 2, 3]),
    ).run()  # fmt: skip
    row = await Concert.select(
        Concert.band_1.name, Concert.code, Concert.day, Concert.length, Concert.rating,
        Concert.notes, Concert.poster, Concert.seats,
    ).first()  # fmt: skip
    return plain(row)


async def raw() -> Any:
    return plain(
        await Band.raw(
            "SELECT b.name, m.name AS manager FROM pc_band b LEFT JOIN pc_manager m "
            "ON m.id = b.manager WHERE b.popularity > {} ORDER BY b.name",
            5,
        )
    )


async def upsert() -> list[Any]:
    await Venue.insert(Venue(name="Hall", capacity=100), Venue(name="Club", capacity=50)).run()
    await Venue.insert(Venue(name="Hall", capacity=999)).on_conflict(action="DO NOTHING").run()
    changed = await (
        Venue.insert(Venue(name="Club", capacity=60))
        .on_conflict(target=Venue.name, action="DO UPDATE", values=[Venue.capacity])
        .returning(Venue.name, Venue.capacity)
    )
    return [changed, await Venue.select(Venue.name, Venue.capacity).order_by(Venue.name)]


async def locks_and_batches() -> list[Any]:
    async with DB.transaction():
        locked = (
            await Venue.select(Venue.name)
            .where(Venue.name == "Hall")
            .lock_rows("UPDATE", skip_locked=True)
        )
        await Venue.update({Venue.capacity: 101}).where(Venue.name == "Hall")
    batches = []
    async with await Venue.select(Venue.name).order_by(Venue.name).batch(batch_size=1) as b:
        async for rows in b:
            batches.append(rows)
    return [locked, batches]


async def alter() -> list[Any]:
    await Venue.alter().add_column("city", Varchar(length=20, default="Oslo")).run()
    await Venue.alter().set_length(Venue.name, 60).run()
    await Venue.alter().rename_column(Venue.capacity, "seats").run()
    await Venue.alter().set_null(Venue.name, boolean=True).run()
    await Venue.create_index(["name", "seats"]).run()
    indexes = sorted(await Venue.indexes().run())
    rows = await Venue.raw("SELECT name, seats, city FROM pc_venue ORDER BY name")
    await Venue.alter().drop_column("city").run()
    return [indexes, rows, await Venue.raw("SELECT * FROM pc_venue ORDER BY id")]


async def main() -> None:
    await DB.start_connection_pool()
    try:
        await step("schema", schema)
        await step("insert", insert)
        await step("select", select)
        await step("objects", objects)
        await json_and_arrays()
        await step("m2m", m2m)
        await step("aggregates", aggregates)
        await step("avg", avg)
        await step("types", types)
        await step("raw", raw)
        await step("transactions", transactions)
        await step("update_delete", update_delete)
        await step("upsert", upsert)
        await step("locks_and_batches", locks_and_batches)
        await step("alter", alter)
    finally:
        await DB.close_connection_pool()
        print(json.dumps(out, default=str))


asyncio.run(main())
