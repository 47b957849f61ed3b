"""search_memory from SQL runs on the client connection's own thread and event loop
(registry.AgentFunction.any_loop), not on the server's main loop.

What a user relies on stays as it was: under concurrent connections a search sees the
memories its caller stored just before (journaled, not yet applied: the journal's
`settled` is awaited on the connection's loop and resolved from the main loop), finds
what a search through REST (on the main loop) finds, and every search that returns a
memory counts one access to it (none lost between threads).
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import asyncpg
from agent_support import run

from proxy.agent import journal_log
from tests.conftest import start_server

CONNS = 6


async def _connect(port: int, agent: str) -> asyncpg.Connection:
    return await asyncpg.connect(
        host="127.0.0.1",
        port=port,
        user="tester",
        database="hatidata",
        server_settings={"hatidata_agent_id": agent},
    )


def test_concurrent_sql_searches_see_own_stores_match_rest_and_count_accesses(
    tmp_path: Path,
) -> None:
    srv = start_server(tmp_path, "--embedding-provider", "hash")  # a file: the journal is on

    async def writer_reader(i: int) -> list[str]:
        conn = await _connect(srv.port, "threads-a")
        ids = []
        try:
            for r in range(5):
                token = f"tok{i}x{r}"
                mid = await conn.fetchval(
                    "SELECT memory_id::VARCHAR FROM store_memory($1)",
                    f"connection {i} round {r} noted {token}",
                )
                found = await conn.fetch(
                    "SELECT memory_id::VARCHAR AS id, content FROM search_memory($1, top_k := 50)",
                    token,
                )
                assert mid in [f["id"] for f in found], (token, found)  # read-your-writes
                ids.append(mid)
        finally:
            await conn.close()
        return ids

    async def searcher(n: int) -> int:
        conn = await _connect(srv.port, "threads-b")
        try:
            hits = 0
            for _ in range(n):
                rows = await conn.fetch("SELECT memory_id FROM search_memory('zebras')")
                hits += len(rows)
            return hits
        finally:
            await conn.close()

    async def go() -> None:
        conn = await _connect(srv.port, "threads-b")
        only = await conn.fetchval(
            "SELECT memory_id::VARCHAR FROM store_memory('the only memory about zebras')"
        )
        written = await asyncio.gather(*(writer_reader(i) for i in range(CONNS)))
        hits = await asyncio.gather(*(searcher(10) for _ in range(CONNS)))
        assert hits == [10] * CONNS  # each search returned the one memory
        count = await conn.fetchval("SELECT access_count FROM get_memory($1::UUID)", only)
        # every search's access, and get_memory's own
        assert count == 10 * CONNS + 1, "accesses counted from connection threads were lost"
        sql_ids = {
            r["id"]
            for r in await conn.fetch(
                "SELECT memory_id::VARCHAR AS id FROM search_memory('noted', top_k := 100)"
            )
        }
        await conn.close()
        stored = {m for ids in written for m in ids}
        assert len(stored) == 5 * CONNS
        rest = srv.function_rows("search_memory", "threads-a", query="noted", top_k=100)
        assert {r["memory_id"] for r in rest} == stored
        conn = await _connect(srv.port, "threads-a")
        try:
            sql_a = {
                r["id"]
                for r in await conn.fetch(
                    "SELECT memory_id::VARCHAR AS id FROM search_memory('noted', top_k := 100)"
                )
            }
        finally:
            await conn.close()
        assert sql_a == stored
        assert sql_ids == set()  # another agent's memories stay its own

    try:
        run(go())
    finally:
        assert srv.stop(), srv.log()


def test_settled_awaited_on_other_threads_loops(tmp_path: Path) -> None:
    """Callers on other threads' event loops (client connections) wait for their journaled
    writes to be applied; the applier, on the main loop, resolves each on its own loop."""
    from test_memory_journal import Lines as JournalLines  # (tests/agent is on sys.path)

    from proxy.agent.journal import Journal

    class Lines(JournalLines):
        async def apply(self, rows: list[tuple]) -> None:
            await asyncio.sleep(0.01)  # the applier takes its time: callers must wait
            await super().apply(rows)

    async def go() -> None:
        journal = Journal(str(tmp_path / "j.journal"))
        kind = Lines()
        journal.register(kind)
        journal.replay(None)  # type: ignore[arg-type]  # no log yet
        journal.start()
        errors: list[BaseException] = []

        async def connection(w: int) -> None:
            for n in range(10):
                entry = journal.write("lines", ("org", f"w{w}"), (w, n))
                assert entry is not None
                journal.durable(entry)
                started = time.monotonic()
                await journal.settled("org", f"w{w}")
                assert (w, n) in kind.rows  # applied before settled returned
                # Woken when applied (a future resolved from another thread would only
                # be seen at this loop's next timer: the 30 s settle timeout).
                assert time.monotonic() - started < 5

        def thread(w: int) -> None:
            try:
                asyncio.run(connection(w))
            except BaseException as exc:  # noqa: BLE001 - handed to the test
                errors.append(exc)

        threads = [threading.Thread(target=thread, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        await asyncio.to_thread(lambda: [t.join(60) for t in threads])
        assert not errors, errors
        await journal.stop()
        assert sorted(kind.rows) == [(w, n) for w in range(4) for n in range(10)]
        assert journal_log.Files(str(tmp_path / "j.journal")).recover()[0] == []

    run(go())
