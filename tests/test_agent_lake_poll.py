"""proxy/db/agent_lake_poll.py on a real DuckLake (a local catalog file): one snapshot-id
read per tick; the subscribers run only after the snapshot moved (or when one says it
has work due), each catches up from its own last snapshot, and one that failed runs
again at the next tick (what keeps an idle proxy of a lake cheap and a catch-up from
being lost)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import duckdb

from proxy.db.agent_lake import AGENT_LAKE, sign
from proxy.db.agent_lake_poll import LakePoller


class Lake:
    """The agent lake on a local DuckLake catalog; `read` as PooledDB.read (a cursor)."""

    def __init__(self, tmp: Path) -> None:
        self.db = duckdb.connect()
        self.db.execute(
            f"ATTACH 'ducklake:{tmp / 'meta.ducklake'}' AS {AGENT_LAKE}"
            f" (DATA_PATH '{tmp / 'data'}', DATA_INLINING_ROW_LIMIT 0)"
        )
        self.db.execute(f"CREATE TABLE {AGENT_LAKE}.t (n INTEGER)")

    async def read(self, fn: Any) -> Any:
        cur = self.db.cursor()
        try:
            return fn(cur)
        finally:
            cur.close()

    def write(self) -> None:
        self.db.execute(f"INSERT INTO {AGENT_LAKE}.t VALUES (1)")


def test_subscribers_wake_only_when_the_snapshot_moves(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    poller = LakePoller(lake, seconds=0.01)  # type: ignore[arg-type]
    woken = {"a": 0, "b": 0, "flaky": 0}
    fail = [True]
    pending = [False]

    async def a() -> None:
        woken["a"] += 1

    async def b() -> None:
        woken["b"] += 1
        pending[0] = False

    async def flaky() -> None:
        woken["flaky"] += 1
        if fail[0]:
            fail[0] = False
            raise duckdb.IOException("catalog unreachable")

    poller.subscribe("a", a)
    poller.subscribe("b", b, due=lambda: pending[0])
    poller.subscribe("flaky", flaky)

    async def run() -> None:
        await poller.tick()  # first tick: everyone catches up once
        assert woken == {"a": 1, "b": 1, "flaky": 1}
        await poller.tick()  # flaky failed: only it runs again, on the same snapshot
        assert woken == {"a": 1, "b": 1, "flaky": 2}
        for _ in range(5):  # idle: snapshot reads only
            await poller.tick()
        assert woken == {"a": 1, "b": 1, "flaky": 2}
        assert poller.ticks == 7
        lake.write()  # the snapshot moved: each once
        await poller.tick()
        await poller.tick()
        assert woken == {"a": 2, "b": 2, "flaky": 3}
        pending[0] = True  # b has work due (a publish to retry): b alone
        await poller.tick()
        assert woken == {"a": 2, "b": 3, "flaky": 3}
        await poller.start()  # the background loop does the same
        lake.write()
        for _ in range(200):
            if woken["a"] == 3:
                break
            await asyncio.sleep(0.01)
        await poller.stop()
        assert woken["a"] == 3 and woken["b"] == 4 and woken["flaky"] == 4

    asyncio.run(run())


def test_subscribers_wake_only_for_changes_to_their_own_tables(tmp_path: Path) -> None:
    """A write to one shared table costs the other services nothing (no change-feed
    read of theirs); a table created wakes everyone; the ticks quicken after a change."""
    lake = Lake(tmp_path)
    lake.db.execute(f"CREATE TABLE {AGENT_LAKE}.u (n INTEGER)")
    poller = LakePoller(lake, seconds=1.0, metadata=f"__ducklake_metadata_{AGENT_LAKE}.main")  # type: ignore[arg-type]
    woken = {"t": 0, "u": 0, "all": 0}

    def counter(name: str) -> Any:
        async def catch_up() -> None:
            woken[name] += 1

        return catch_up

    poller.subscribe("t", counter("t"), tables=["main.t"])
    poller.subscribe("u", counter("u"), tables=["main.u"])
    poller.subscribe("all", counter("all"))

    async def run() -> None:
        await poller.tick()  # first tick: everyone catches up once
        assert woken == {"t": 1, "u": 1, "all": 1}
        assert poller.interval() == 1.0  # nothing new yet
        await poller.tick()
        assert woken == {"t": 1, "u": 1, "all": 1}
        lake.write()  # t only
        await poller.tick()
        assert woken == {"t": 2, "u": 1, "all": 2}
        assert poller.interval() < 1.0  # changes came: the next ticks come sooner
        lake.db.execute(f"INSERT INTO {AGENT_LAKE}.u VALUES (1)")
        lake.db.execute(f"DELETE FROM {AGENT_LAKE}.t")
        await poller.tick()
        assert woken == {"t": 3, "u": 2, "all": 3}
        await poller.tick()
        assert woken == {"t": 3, "u": 2, "all": 3}
        lake.db.execute(f"CREATE TABLE {AGENT_LAKE}.v (n INTEGER)")  # not one table's rows
        await poller.tick()
        assert woken == {"t": 4, "u": 3, "all": 4}
        lake.db.execute(f"INSERT INTO {AGENT_LAKE}.v VALUES (1)")  # a table none follows
        await poller.tick()
        assert woken == {"t": 4, "u": 3, "all": 5}
        lake.db.begin()  # a commit this process signed: its rows are here already
        sign(lake.db, "test")
        lake.db.execute(f"INSERT INTO {AGENT_LAKE}.t VALUES (2)")
        lake.db.commit()
        await poller.tick()
        assert woken == {"t": 4, "u": 3, "all": 5}
        lake.write()  # another's commit after it: woken again
        await poller.tick()
        assert woken == {"t": 5, "u": 3, "all": 6}

    asyncio.run(run())


def test_a_catalog_without_a_change_table_wakes_everyone_on_each_move(tmp_path: Path) -> None:
    lake = Lake(tmp_path)
    poller = LakePoller(lake, seconds=1.0, metadata="no_such_catalog.main")  # type: ignore[arg-type]
    woken = [0]

    async def catch_up() -> None:
        woken[0] += 1

    poller.subscribe("u", catch_up, tables=["main.u"])

    async def run() -> None:
        await poller.tick()
        lake.write()  # not its table, but the poller cannot tell
        await poller.tick()
        await poller.tick()
        assert woken[0] == 2

    asyncio.run(run())


def test_a_service_whose_catch_up_keeps_failing_does_not_hold_back_the_others(
    tmp_path: Path,
) -> None:
    lake = Lake(tmp_path)
    poller = LakePoller(lake, seconds=1.0, metadata=f"__ducklake_metadata_{AGENT_LAKE}.main")  # type: ignore[arg-type]
    woken = {"ok": 0, "broken": 0}

    async def ok() -> None:
        woken["ok"] += 1

    async def broken() -> None:
        woken["broken"] += 1
        raise duckdb.IOException("catalog unreachable")

    poller.subscribe("ok", ok, tables=["main.t"])
    poller.subscribe("broken", broken, tables=["main.t"])

    async def run() -> None:
        await poller.tick()
        assert woken == {"ok": 1, "broken": 1}
        await poller.tick()  # the broken one is tried again at each tick
        assert woken == {"ok": 1, "broken": 2}
        lake.write()
        await poller.tick()  # and the other still sees each change
        assert woken == {"ok": 2, "broken": 3}

    asyncio.run(run())
