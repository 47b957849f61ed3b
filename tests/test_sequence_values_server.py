"""currval / lastval per session over the wire, the same calls against PostgreSQL 15.

PostgreSQL's currval(s) is what this session's last nextval(s) gave (the serial default
of its INSERT included), never another session's; lastval() is its last nextval of any
sequence; both are 55000 before the session drew one, survive ROLLBACK, and setval sets
currval. proxy/pgserver/sequence_values.py keeps them in hatiproxy.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import psycopg
import pytest

from tests.conftest import ServerProcess
from tests.differential.pgcluster import PgCluster, start_pg


@pytest.fixture(scope="module")
def pg() -> Iterator[PgCluster]:
    cluster = start_pg()
    yield cluster
    cluster.stop()


Both = Callable[[str], list[str]]


def _sides(server: ServerProcess, pg: PgCluster) -> list[str]:
    return [server.dsn, pg.dsn]


def _setup(dsn: str, name: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        c.execute(f"DROP TABLE IF EXISTS {name}")
        c.execute(f"DROP SEQUENCE IF EXISTS {name}_s")
        c.execute(f"CREATE TABLE {name} (id serial PRIMARY KEY, v text)")
        c.execute(f"CREATE SEQUENCE {name}_s")


def _state(exc: BaseException) -> tuple[str | None, str]:
    assert isinstance(exc, psycopg.Error)
    return exc.sqlstate, str(exc).splitlines()[0]


@pytest.mark.parametrize("side", ["hati", "pg"])
def test_two_sessions_interleaving_inserts_see_their_own(
    server: ServerProcess, pg: PgCluster, table_name: str, side: str
) -> None:
    dsn = server.dsn if side == "hati" else pg.dsn
    _setup(dsn, table_name)
    seq = f"{table_name}_id_seq"
    with psycopg.connect(dsn, autocommit=True) as a, psycopg.connect(dsn, autocommit=True) as b:
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as err:
            a.execute(f"SELECT currval('{seq}')")
        assert _state(err.value) == (
            "55000",
            f'currval of sequence "{seq}" is not yet defined in this session',
        )
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState) as err:
            a.execute("SELECT lastval()")
        assert _state(err.value) == ("55000", "lastval is not yet defined in this session")
        a.execute(f"INSERT INTO {table_name} (v) VALUES ('a1')")  # id 1
        b.execute(f"INSERT INTO {table_name} (v) VALUES ('b1'), ('b2')")  # ids 2, 3
        a.execute(f"INSERT INTO {table_name} (v) VALUES (%s)", ["a2"], prepare=True)  # id 4
        b.execute(f"INSERT INTO {table_name} (v) VALUES ('b3')")  # id 5
        assert a.execute(f"SELECT currval('{seq}'), lastval()").fetchone() == (4, 4)
        assert b.execute(f"SELECT currval('{seq}'), lastval()").fetchone() == (5, 5)
        # PHP PDO's lastInsertId('seq'), an INSERT with RETURNING, an explicit nextval
        assert a.execute(f"SELECT currval('public.{seq}'::regclass)").fetchone() == (4,)
        row = b.execute(f"INSERT INTO {table_name} (v) VALUES ('b4') RETURNING id").fetchone()
        assert row == (6,) and b.execute("SELECT lastval()").fetchone() == (6,)
        assert a.execute(f"SELECT nextval('{table_name}_s')").fetchone() == (1,)
        b.execute(f"SELECT nextval('{table_name}_s') + 0")  # 2, read around the statement
        assert b.execute(f"SELECT currval('{table_name}_s'), lastval()").fetchone() == (2, 2)
        assert a.execute("SELECT lastval()").fetchone() == (1,)  # the last sequence drawn
        assert a.execute(f"SELECT currval('{seq}')").fetchone() == (4,)
        a.execute(f"INSERT INTO {table_name} (v) SELECT 'g' || g FROM generate_series(1, 3) g")
        assert a.execute(f"SELECT currval('{seq}'), lastval()").fetchone() == (9, 9)
        # a client-given id draws nothing
        a.execute(f"INSERT INTO {table_name} (id, v) VALUES (100, 'x')")
        assert a.execute(f"SELECT currval('{seq}')").fetchone() == (9,)
        # ON CONFLICT: a row that conflicts drew its id too
        a.execute(f"CREATE UNIQUE INDEX {table_name}_v ON {table_name} (v)")
        upsert = f"INSERT INTO {table_name} (v) VALUES ('a1'), ('new') ON CONFLICT (v) DO NOTHING"
        a.execute(upsert)  # ids 10 (conflicts), 11
        assert a.execute(f"SELECT currval('{seq}')").fetchone() == (11,)
        b.execute(upsert)  # 12, 13: both conflict, nothing written
        assert b.execute(f"SELECT currval('{seq}'), lastval()").fetchone() == (13, 13)
        a.execute(f"INSERT INTO {table_name} (v) SELECT v FROM {table_name} WHERE false")
        assert a.execute(f"SELECT currval('{seq}')").fetchone() == (11,)  # drew nothing


@pytest.mark.parametrize("side", ["hati", "pg"])
def test_rollback_keeps_and_setval_sets(
    server: ServerProcess, pg: PgCluster, table_name: str, side: str
) -> None:
    dsn = server.dsn if side == "hati" else pg.dsn
    _setup(dsn, table_name)
    seq = f"{table_name}_id_seq"
    with psycopg.connect(dsn) as a:
        a.execute(f"INSERT INTO {table_name} (v) VALUES ('a'), ('b')")
        a.rollback()  # the values drawn stay drawn, and this session's
        assert a.execute(f"SELECT currval('{seq}'), lastval()").fetchone() == (2, 2)
        a.execute(f"INSERT INTO {table_name} (v) VALUES ('c')")
        a.commit()
        assert a.execute(f"SELECT currval('{seq}')").fetchone() == (3,)
        a.execute(f"SELECT setval('{seq}', 42)")
        assert a.execute(f"SELECT currval('{seq}')").fetchone() == (42,)
        a.execute(f"SELECT setval('{seq}', 50, false)")  # is_called false: currval stays
        assert a.execute(f"SELECT currval('{seq}')").fetchone() == (42,)
        a.execute(f"INSERT INTO {table_name} (v) VALUES ('d')")
        assert a.execute(f"SELECT currval('{seq}')").fetchone() == (50,)
        a.commit()
    with psycopg.connect(dsn, autocommit=True) as b:
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
            b.execute(f"SELECT currval('{seq}')")  # a new session drew nothing
        b.execute(f"SELECT nextval('{table_name}_s')")
        b.execute("DISCARD SEQUENCES")
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState):
            b.execute("SELECT lastval()")


def test_concurrent_writers_each_read_their_own(server: ServerProcess, table_name: str) -> None:
    """Four sessions insert at once, each one checking currval after every insert
    against the id its own RETURNING (or its own row) shows."""
    _setup(server.dsn, table_name)
    seq = f"{table_name}_id_seq"
    errors: list[str] = []

    def writer(n: int) -> None:
        with psycopg.connect(server.dsn, autocommit=True) as c:
            for i in range(40):
                tag = f"w{n}-{i}"
                if i % 3 == 0:  # the read-before-and-after path
                    c.execute(f"INSERT INTO {table_name} (v) SELECT %s", [tag])
                elif i % 3 == 1:  # Hibernate's way: the id first, then the row
                    (new,) = c.execute(f"SELECT nextval('{seq}')").fetchone()
                    c.execute(f"INSERT INTO {table_name} (id, v) VALUES (%s, %s)", [new, tag])
                else:
                    c.execute(f"INSERT INTO {table_name} (v) VALUES (%s)", [tag])
                got = c.execute(f"SELECT currval('{seq}')").fetchone()
                mine = c.execute(f"SELECT id FROM {table_name} WHERE v = %s", [tag]).fetchone()
                if got != mine:
                    errors.append(f"{tag}: currval {got}, row {mine}")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("side", ["hati", "pg"])
def test_prepared_statements_describe_and_rerun(
    server: ServerProcess, pg: PgCluster, table_name: str, side: str
) -> None:
    """asyncpg describes every statement first (DESCRIBE must type lastval()), and a
    prepared statement run again reads the value of its time."""
    import asyncio

    import asyncpg

    dsn = server.dsn if side == "hati" else pg.dsn
    _setup(dsn, table_name)

    async def run() -> None:
        opts = dict(kv.split("=", 1) for kv in dsn.split())
        c = await asyncpg.connect(
            host=opts["host"], port=int(opts["port"]), user=opts["user"], database=opts["dbname"]
        )
        try:
            with pytest.raises(asyncpg.ObjectNotInPrerequisiteStateError):
                await c.fetch("SELECT lastval()")
            last = await c.prepare(f"SELECT lastval(), currval('{table_name}_id_seq')")
            assert [a.type.name for a in last.get_attributes()] == ["int8", "int8"]
            insert = f"INSERT INTO {table_name} (v) VALUES ($1)"
            await c.execute(insert, "a")
            assert tuple(await last.fetchrow()) == (1, 1)
            await c.executemany(insert, [("b",), ("c",)])
            assert tuple(await last.fetchrow()) == (3, 3)
        finally:
            await c.close()

    asyncio.run(run())
