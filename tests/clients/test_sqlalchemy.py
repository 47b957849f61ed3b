"""SQLAlchemy 2 over the psycopg and psycopg2 dialects; pandas read_sql / to_sql."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal

import pandas as pd
import pytest
import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


@pytest.fixture(params=["postgresql+psycopg", "postgresql+psycopg2"], ids=["psycopg", "psycopg2"])
def engine(server, request) -> Iterator[sa.Engine]:
    eng = sa.create_engine(server.url(request.param), pool_size=2)
    yield eng
    eng.dispose()


def test_engine_connect(engine) -> None:
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT 1 + :x"), {"x": 2}).scalar() == 3
        assert engine.dialect.server_version_info[0] == 15


def test_core_create_insert_select(engine, table_name) -> None:
    meta = sa.MetaData()
    t = sa.Table(
        table_name,
        meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("name", sa.String(50), nullable=False),
        sa.Column("price", sa.Numeric(10, 2)),
        sa.Column("born", sa.Date),
        sa.Column("seen", sa.DateTime),
        sa.Column("ok", sa.Boolean),
    )
    with engine.begin() as conn:
        t.create(conn)
    try:
        rows = [
            {"id": 1, "name": "a", "price": Decimal("1.50"), "born": dt.date(2001, 1, 1),
             "seen": dt.datetime(2020, 5, 5, 5, 5, 5), "ok": True},
            {"id": 2, "name": "b", "price": None, "born": None, "seen": None, "ok": False},
        ]  # fmt: skip
        with engine.begin() as conn:
            conn.execute(t.insert(), rows)
        with engine.connect() as conn:
            got = conn.execute(sa.select(t).order_by(t.c.id)).mappings().all()
            assert [dict(r) for r in got] == rows
            n = conn.execute(sa.select(sa.func.count()).where(t.c.name == "b")).scalar()
            assert n == 1
        with engine.begin() as conn:
            upd = conn.execute(t.update().where(t.c.id == 2).values(name="bb"))
            assert upd.rowcount == 1
        with engine.connect() as conn:
            trans = conn.begin()
            conn.execute(t.delete())
            trans.rollback()
            assert conn.execute(sa.select(sa.func.count()).select_from(t)).scalar() == 2
    finally:
        with engine.begin() as conn:
            t.drop(conn)


def test_orm_session(engine, table_name) -> None:
    class Base(DeclarativeBase):
        pass

    class Item(Base):
        __tablename__ = table_name
        id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
        title: Mapped[str]
        qty: Mapped[int | None]

    Base.metadata.create_all(engine, checkfirst=False)
    try:
        with Session(engine) as session:
            session.add_all([Item(id=1, title="pen", qty=3), Item(id=2, title="ink", qty=None)])
            session.commit()
        with Session(engine) as session:
            items = session.scalars(sa.select(Item).order_by(Item.id)).all()
            assert [(i.id, i.title, i.qty) for i in items] == [(1, "pen", 3), (2, "ink", None)]
            items[0].qty = 10
            session.commit()
            assert session.get(Item, 1).qty == 10
            session.delete(items[1])
            session.commit()
            assert session.scalar(sa.select(sa.func.count()).select_from(Item)) == 1
    finally:
        Base.metadata.drop_all(engine, checkfirst=False)


def test_orm_autoincrement_keys_and_identity(engine, table_name) -> None:
    """The default mapping of an integer primary key: create_all says SERIAL (and
    Identity() says GENERATED ... AS IDENTITY); the ORM gets the new keys back."""

    class Base(DeclarativeBase):
        pass

    class Note(Base):
        __tablename__ = table_name
        id: Mapped[int] = mapped_column(primary_key=True)
        body: Mapped[str]

    class Tag(Base):
        __tablename__ = f"{table_name}_tag"
        id: Mapped[int] = mapped_column(sa.BigInteger, sa.Identity(start=100), primary_key=True)
        note_id: Mapped[int] = mapped_column(sa.ForeignKey(Note.id))

    Base.metadata.create_all(engine, checkfirst=False)
    try:
        with Session(engine) as session:
            notes = [Note(body="first"), Note(body="second")]
            session.add_all(notes)
            session.flush()
            tags = [Tag(note_id=notes[1].id), Tag(note_id=notes[1].id)]
            session.add_all(tags)
            session.commit()
            assert [n.id for n in notes] == [1, 2] and [t.id for t in tags] == [100, 101]
        inspector = sa.inspect(engine)
        (id_col,) = [c for c in inspector.get_columns(table_name) if c["name"] == "id"]
        assert id_col["autoincrement"] is True and not id_col["nullable"]
        assert id_col["default"] == f"nextval('{table_name}_id_seq'::regclass)"
    finally:
        Base.metadata.drop_all(engine, checkfirst=False)


def test_pandas_round_trip(engine, table_name) -> None:
    df = pd.DataFrame(
        {
            "id": pd.Series([1, 2, 3], dtype="int64"),
            "name": ["x", None, "z"],
            "score": [1.5, float("nan"), -3.25],
            "when": pd.to_datetime(["2024-01-01 10:00:00", "2024-06-30 23:59:59", None]),
            "flag": [True, False, True],
        }
    )
    n = df.to_sql(table_name, engine, index=False, if_exists="replace")
    assert n in (3, -1, None)  # psycopg's executemany reports -1 on PostgreSQL 15 too
    try:
        back = pd.read_sql(f"SELECT * FROM {table_name} ORDER BY id", engine)
        assert list(back.columns) == list(df.columns)
        assert back["id"].tolist() == [1, 2, 3]
        assert back["name"].tolist()[0] == "x" and back["name"].isna().tolist()[1]
        assert back["score"].iloc[0] == 1.5 and pd.isna(back["score"].iloc[1])
        assert str(back["when"].dtype).startswith("datetime64")
        assert back["when"].iloc[1] == pd.Timestamp("2024-06-30 23:59:59")
        assert back["flag"].tolist() == [True, False, True]
        more = pd.DataFrame({"id": [4], "name": ["w"], "score": [0.0], "when": [None],
                             "flag": [False]})  # fmt: skip
        more.to_sql(table_name, engine, index=False, if_exists="append")
        count = pd.read_sql(sa.text(f"SELECT count(*) AS n FROM {table_name}"), engine)
        assert count["n"].iloc[0] == 4
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP TABLE IF EXISTS {table_name}"))


def test_inspector(engine, table_name) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text(f"CREATE TABLE {table_name} (id int PRIMARY KEY, label text)"))
    try:
        insp = sa.inspect(engine)
        assert insp.has_table(table_name)
        assert table_name in insp.get_table_names()
        cols = {c["name"]: c for c in insp.get_columns(table_name)}
        assert set(cols) == {"id", "label"}
        assert isinstance(cols["id"]["type"], sa.Integer)
        assert insp.get_pk_constraint(table_name)["constrained_columns"] == ["id"]
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP TABLE {table_name}"))
