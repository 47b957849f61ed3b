"""store_memory without wait and append_event are acknowledged from an fsynced journal
(proxy/agent/journal.py).

What a user relies on: an acknowledged store or event survives kill -9 and is found after
the restart (events in order, with the seqs they were acknowledged with); a store is seen at once by the same caller's memory reads; the same text stored
twice quickly is one memory; a trigger fires once per stored memory; a journal left by a
crash (an entry already applied, a torn record, a segment full of stale records) replays
exactly once, stores acknowledged while others were mid-stream included; a deleted memory
never comes back; stop applies everything and leaves nothing to replay.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
from collections import Counter
from pathlib import Path

import duckdb
import psycopg
from agent_support import open_layer, run, who
from memory_support import count_rows, sql
from trigger_support import fires, register

from proxy.agent import journal_log
from proxy.core.identity import Identity
from tests.conftest import start_server


async def all_embedded(layer: object) -> None:
    deadline = asyncio.get_running_loop().time() + 30
    q = "SELECT count(*) FROM hatidata_internal.agent_memory WHERE embedding_status = 'pending'"
    while (await sql(layer, q))[0][0]:  # type: ignore[arg-type]
        assert asyncio.get_running_loop().time() < deadline, "memories still pending"
        await asyncio.sleep(0.02)


def test_acknowledged_stores_survive_kill_9(tmp_path: Path) -> None:
    srv = start_server(tmp_path, "--embedding-provider", "hash")
    words = ["alpha", "beta", "gamma"] * 10
    texts = [f"journaled {w}{n} fact{n}x" for n, w in enumerate(words)]
    try:
        with psycopg.connect(srv.dsn, autocommit=True) as con:
            ids = [
                con.execute("SELECT memory_id::VARCHAR FROM store_memory(%s)", (t,)).fetchone()[0]
                for t in texts
            ]
            # The same connection reads its stores at once, in SQL too.
            seen = con.execute(
                "SELECT count(*) FROM _hatidata_agent_memory WHERE content = %s", (texts[-1],)
            ).fetchone()
            assert seen == (1,)
            more = [f"after the read {n}" for n in range(10)]
            for t in more:
                ids.append(
                    con.execute("SELECT memory_id::VARCHAR FROM store_memory(%s)", (t,)).fetchone()[
                        0
                    ]
                )
            texts += more
            # append_event: acknowledged from the journal too; seqs run on across the
            # transaction path (an event with a state_delta) and the journal's.
            con.execute("SELECT * FROM create_session('app', 'u', session_id := 'js')")
            seqs = []
            for n in range(12):
                actions = json.dumps({"state_delta": {"turn": n}}) if n == 5 else None
                seqs.append(
                    con.execute(
                        "SELECT seq FROM append_event('js', 'user', %s, actions := %s)",
                        (json.dumps({"role": "user", "parts": [{"text": f"turn {n}"}]}), actions),
                    ).fetchone()[0]
                )
            assert seqs == list(range(1, 13))
            seen = con.execute(
                "SELECT max(seq) FROM _hatidata_session_events WHERE session_id = 'js'"
            ).fetchone()
            assert seen == (12,)  # read at once by the same caller
            for n in range(12, 20):
                con.execute("SELECT seq FROM append_event('js', 'user', %s)", (f'"turn {n}"',))
        # kill -9 while three connections are storing: every store acknowledged before
        # it is found after the restart.
        acked: list[tuple[str, str]] = []
        running = threading.Event()

        def store(w: int) -> None:
            with psycopg.connect(srv.dsn, autocommit=True) as c:
                running.set()
                for n in range(1000):
                    text = f"mid-stream {w} {n}"
                    try:
                        got = c.execute("SELECT memory_id::VARCHAR FROM store_memory(%s)", (text,))
                        acked.append((got.fetchone()[0], text))
                    except psycopg.Error:
                        return  # the server is gone

        writers = [threading.Thread(target=store, args=(w,)) for w in range(3)]
        for t in writers:
            t.start()
        running.wait(30)
        while len(acked) < 60 and any(t.is_alive() for t in writers):
            threading.Event().wait(0.005)
        os.kill(srv.proc.pid, signal.SIGKILL)
        srv.proc.wait(10)
        for t in writers:
            t.join(30)
        assert len(acked) >= 60
        replies = [t.split() for _, t in acked]  # "mid-stream <writer> <n>"
        in_flight = set()
        for w in range(3):
            sent = [int(n) for _, writer, n in replies if writer == str(w)]
            in_flight.add(f"mid-stream {w} {max(sent, default=-1) + 1}")
        ids += [i for i, _ in acked]
        texts += [t for _, t in acked]
    finally:
        srv.stop()

    # A crash may also leave an entry already applied and a torn record (never
    # acknowledged); replay applies the others once, and nothing after the torn one.
    data = tmp_path / "data"
    entry = [ids[0], "local", "x", None, "fact", texts[0], "{}", 0.5]
    entry += ["2026-01-01T00:00:00+00:00"] * 2 + ["h", None]
    new = [*entry]
    new[0], new[5], new[10] = "00000000-0000-4000-8000-000000000001", "replayed", "h2"
    late = [*new]
    late[0], late[5], late[10] = "00000000-0000-4000-8000-000000000002", "never acked", "h3"
    segments = sorted(data.glob("hatiproxy.agent.duckdb.journal.*[0-9]"))
    last = max(
        segments, key=lambda p: len(journal_log.read_segment(int(p.suffix[1:]), p.read_bytes())[0])
    )
    number = int(last.suffix[1:])
    records, _ = journal_log.read_segment(number, last.read_bytes())
    assert records, "the journal holds the acknowledged entries"
    end = sum(journal_log.HEADER.size + len(p) for _, p in records)
    top = records[-1][0]
    blobs = [json.dumps(["memory", r]).encode() for r in (entry, new, new, late)]
    torn = journal_log.record(number, top + 3, blobs[2])
    tail = journal_log.record(number, top + 1, blobs[0]) + journal_log.record(
        number, top + 2, blobs[1]
    )
    tail += torn[: len(torn) // 2] + bytes(len(torn) - len(torn) // 2)
    tail += journal_log.record(number, top + 4, blobs[3])
    with open(last, "r+b") as f:
        f.seek(end)
        f.write(tail)
    # An older version's one-file log, left by a crash: replayed too (an upgrade).
    legacy = [*new]
    legacy[0], legacy[5], legacy[10] = "00000000-0000-4000-8000-000000000003", "legacy", "h4"
    (data / "hatiproxy.agent.duckdb.journal").write_text(json.dumps(["memory", legacy]) + "\n")

    async def check() -> None:
        # The same files, opened again (in process: a second server start costs ~7 s).
        db = str(tmp_path / "data" / "hatiproxy.duckdb")
        async with open_layer(tmp_path, database=db) as layer:
            got = await sql(
                layer,
                "SELECT memory_id::VARCHAR, content, org_id, agent_id"
                " FROM hatidata_internal.agent_memory",
            )
            assert {r[0]: r[1] for r in got if r[0] in ids} == dict(zip(ids, texts, strict=True))
            expected = Counter([*texts, "replayed", "legacy"])
            found = Counter(r[1] for r in got)
            assert not expected - found  # every acknowledged store, the replayed ones
            # A store in flight at the kill may be durable without its reply having
            # reached the client: at most one per writer, the one after its last reply.
            assert set(found - expected) <= in_flight, found - expected
            assert max((found - expected).values(), default=1) == 1
            await all_embedded(layer)  # queued again at start: searchable
            owner = Identity(got[0][2], got[0][3])
            hit = await layer.call("search_memory", owner, [texts[7], 1])
            assert hit[0]["memory_id"] == ids[7]
            events = await layer.call("session_events", owner, session_id="js")
            assert [e["seq"] for e in events] == list(range(1, 21))
            assert events[-1]["message"] == "turn 19"
            state = (await layer.call("get_session", owner, session_id="js"))[0]["state"]
            assert state["turn"] == 5

    run(check())


def test_read_your_writes_dedup_and_one_trigger_fire(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path, database=str(tmp_path / "users.duckdb")) as layer:
            assert layer.journal.path is not None  # the fast path is on
            trig = await register(layer, name="refunds", concept="refund request", cooldown_secs=0)
            first = (await layer.call("store_memory", who(), ["refund request"]))[0]
            again = (await layer.call("store_memory", who(), ["refund request"]))[0]
            assert (first["deduplicated"], again["deduplicated"]) == (False, True)
            assert again["memory_id"] == first["memory_id"]
            assert first["embedding_status"] == "pending"
            got = await layer.call("get_memory", who(), memory_id=first["memory_id"])
            assert got[0]["content"] == "refund request"
            # Once applied, the same text again is answered from the table: same id.
            third = (await layer.call("store_memory", who(), ["refund request"]))[0]
            assert (third["memory_id"], third["deduplicated"]) == (first["memory_id"], True)
            await all_embedded(layer)
            # The trigger hears of a memory just after its embedding is written.
            deadline = asyncio.get_running_loop().time() + 30
            while not await fires(layer, trig["trigger_id"]):
                assert asyncio.get_running_loop().time() < deadline, "the trigger never fired"
                await layer.triggers.drain()
                await asyncio.sleep(0.02)
            await layer.triggers.drain()
            assert len(await fires(layer, trig["trigger_id"])) == 1
            other = (await layer.call("store_memory", who("agent-b"), ["refund request"]))[0]
            assert other["deduplicated"] is False and other["memory_id"] != first["memory_id"]
            await layer.call("get_memory", who("agent-b"), memory_id=other["memory_id"])
            assert await count_rows(layer) == 2  # direct SQL: once a read has waited
            # A delete never leaves the deleted memory to a replay after a crash (it would
            # bring it back): what is applied is marked so first (the watermark).
            await layer.call("store_memory", who("agent-b"), ["waiting meanwhile"])
            await layer.call("delete_memory", who(), memory_id=first["memory_id"])
            journal = layer.journal.path
            assert journal is not None
            left, _ = journal_log.Files(journal).recover()
            assert not [p for _, p in left if first["memory_id"].encode() in p]
            await layer.call("store_memory", who(), ["left for stop"])
        assert journal_log.Files(journal).recover()[0] == []  # stop() applied everything

    run(go())


class Lines:
    """A journal kind that only records what it was asked to apply."""

    name = "lines"

    def __init__(self) -> None:
        self.rows: list[tuple] = []

    def encode(self, row: tuple) -> list:
        return list(row)

    def decode(self, data: list) -> tuple:
        return tuple(data)

    def replay(self, cur: object, rows: list[tuple]) -> int:
        self.rows += rows
        return len(rows)

    async def apply(self, rows: list[tuple]) -> None:
        self.rows += rows

    def applied(self, rows: list[tuple]) -> None:
        pass


def test_concurrent_appends_share_fsyncs_and_all_are_applied(tmp_path: Path) -> None:
    """Group commit: writers acknowledged at the same moment share one fdatasync, each
    acknowledged only once its line is synced; every line is applied, in each writer's
    order, and the log is left empty."""
    from proxy.agent.journal import Journal

    async def go() -> None:
        journal = Journal(str(tmp_path / "j.journal"))
        kind = Lines()
        journal.register(kind)
        journal.replay(None)  # type: ignore[arg-type]  # no log yet: nothing to read
        journal.start()

        def writer(w: int) -> None:
            for n in range(25):
                entry = journal.write("lines", ("org", f"w{w}"), (w, n))
                assert entry is not None
                journal.durable(entry)
                assert journal._synced >= entry.ticket  # acknowledged only once synced

        await asyncio.gather(*(asyncio.to_thread(writer, w) for w in range(8)))
        assert journal.syncs < 200  # 200 acknowledgements, fewer fsyncs
        for w in range(8):
            await journal.settled("org", f"w{w}")
        await journal.stop()
        assert sorted(kind.rows) == [(w, n) for w in range(8) for n in range(25)]
        for w in range(8):
            assert [r for r in kind.rows if r[0] == w] == [(w, n) for n in range(25)]
        assert journal_log.Files(str(tmp_path / "j.journal")).recover()[0] == []

    run(go())


def test_segments_rotate_and_a_crash_copy_replays_every_acknowledged_entry_once(
    tmp_path: Path, monkeypatch: object
) -> None:
    """Small segments: the log moves on to prepared spares and recycles applied ones; the
    files as a crash mid-stream would leave them (copied while writers run, a torn record
    at the end) replay every acknowledged entry not yet applied exactly once, in order,
    and nothing after the torn record."""
    import shutil

    from proxy.agent.journal import Journal

    monkeypatch.setattr(journal_log, "SEGMENT_BYTES", 32 << 10)  # type: ignore[attr-defined]
    monkeypatch.setattr(journal_log, "FIRST_SEGMENT_BYTES", 8 << 10)  # type: ignore[attr-defined]
    live, crash = tmp_path / "live", tmp_path / "crash"
    live.mkdir()
    acked: list[tuple] = []
    at_crash: dict[str, list[tuple]] = {}

    async def go() -> None:
        journal = Journal(str(live / "j.journal"))
        kind = Lines()
        journal.register(kind)
        journal.replay(None)  # type: ignore[arg-type]
        journal.start()

        def writer(w: int) -> None:
            for n in range(300):
                row = (w, n, "x" * 60)
                entry = journal.write("lines", ("org", f"w{w}"), row)
                while entry is None:  # the segment is full and the spare not ready yet
                    threading.Event().wait(0.001)
                    entry = journal.write("lines", ("org", f"w{w}"), row)
                journal.durable(entry)
                acked.append(row)

        def crash_copy() -> None:
            while len(acked) < 600:
                threading.Event().wait(0.001)
            with journal._sync, journal._mu:  # no write, sync or apply meanwhile
                at_crash["acked"] = list(acked)
                at_crash["applied"] = list(kind.rows)
                shutil.copytree(live, crash)

        await asyncio.gather(
            *(asyncio.to_thread(writer, w) for w in range(3)), asyncio.to_thread(crash_copy)
        )
        assert len(list(live.glob("j.journal.*[0-9]"))) <= 4, "applied segments are recycled"
        assert len(list(crash.glob("j.journal.*[0-9]"))) <= 4
        await journal.stop()

    run(go())
    # A torn record after the last valid one: ignored.
    last = max(crash.glob("j.journal.*[0-9]"), key=lambda p: int(p.suffix[1:]))
    number = int(last.suffix[1:])
    records, _ = journal_log.read_segment(number, last.read_bytes())
    end = sum(journal_log.HEADER.size + len(p) for _, p in records)
    top = records[-1][0] if records else 10**9
    torn = journal_log.record(number, top + 1, b'["lines",[9,9,"torn"]]')
    with open(last, "r+b") as f:
        f.seek(end)
        f.write(torn[:-5])
    again = Journal(str(crash / "j.journal"))
    kind = Lines()
    again.register(kind)
    again.replay(duckdb.connect())
    got = [tuple(r) for r in kind.rows]
    assert len(got) == len(set(got)) and (9, 9, "torn") not in got
    lost = set(at_crash["acked"]) - set(at_crash["applied"]) - set(got)
    assert not lost, f"{len(lost)} acknowledged entries neither applied nor replayed"
    for w in range(3):
        mine = [r for r in got if r[0] == w]
        assert mine == sorted(mine)


def test_applied_rows_are_the_same_by_lists_and_by_arrow(tmp_path: Path) -> None:
    """An apply round inserts its rows as one list parameter per column (up to LIST_ROWS)
    or as an Arrow table (more): both give the table, and the rows handed back to the
    index, exactly what was stored (NULLs, JSON, time zones, order)."""
    import datetime as dt
    import uuid

    from proxy.agent.memory.journal import LIST_ROWS, insert_rows
    from proxy.agent.memory.schema import SELECT_COLUMNS, T_MEM

    at = dt.datetime(2026, 11, 27, 18, 30, 15, 123456, tzinfo=dt.UTC)

    def rows(n: int, tag: str) -> list[tuple]:
        return [
            (str(uuid.uuid4()), "local", f"agent-{i % 2}", None if i % 3 else f"s{i}",
             "fact", f"{tag} memory {i} ünïcode", json.dumps({"i": i, "tag": tag}), i / n,
             at + dt.timedelta(seconds=i), at, f"{tag}{i:060d}",
             None if i % 2 else at + dt.timedelta(days=1))
            for i in range(n)
        ]  # fmt: skip

    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            for n, tag in ((3, "lists"), (LIST_ROWS, "lists"), (LIST_ROWS + 1, "arrow")):
                new = rows(n, tag)
                got = await layer.db.run(lambda cur, new=new: insert_rows(cur, new))
                assert [g[1][0] for g in got] == [r[0] for r in new]  # in the rows' order
                table = {
                    r[1]: (r[0], r[1:])
                    for r in await sql(
                        layer,
                        f"SELECT seq, {SELECT_COLUMNS} FROM {T_MEM} WHERE memory_id IN"
                        " (SELECT unnest(?::UUID[]))",
                        [[r[0] for r in new]],
                    )
                }
                assert got == [table[r[0]] for r in new]
                stored = await sql(
                    layer,
                    f"SELECT memory_id::VARCHAR, org_id, agent_id, session_id, memory_type,"
                    f" content, metadata, importance, created_at, updated_at, content_hash,"
                    f" expires_at FROM {T_MEM} WHERE content LIKE ? ORDER BY seq",
                    [f"{tag} %"],
                )
                stored = [s for s in stored if s[0] in {r[0] for r in new}]
                assert [(*s[:6], json.loads(s[6]), *s[7:]) for s in stored] == [
                    (*r[:6], json.loads(r[6]), *r[7:]) for r in new
                ]

    run(go())
