"""The reasoning ledger over one DuckLake (tests/lake/conftest.py's three proxies): appends
to one session from several proxies at once keep one valid chain with every step, the
organisation chain verifies on every proxy, and a proxy killed with -9 in the middle of
appends loses no step it acknowledged."""

from __future__ import annotations

import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import psycopg

from tests.conftest import ServerProcess
from tests.lake.conftest import LakeCluster


def _connect(p: ServerProcess) -> psycopg.Connection:
    return psycopg.connect(p.dsn, autocommit=True)


def _append(c: psycopg.Connection, session: str, text: str) -> int:
    return c.execute(
        "SELECT step_index FROM log_reasoning_step(%s, %s)", (session, text)
    ).fetchone()[0]


def _verified(c: psycopg.Connection, session: str) -> tuple[bool, int, str | None]:
    return c.execute(
        "SELECT chain_valid, total_traces, reason FROM verify_chain(%s)", (session,)
    ).fetchone()


def _contents(c: psycopg.Connection, session: str) -> list[str]:
    rows = c.execute(
        "SELECT content::text FROM _hatidata_cot_traces WHERE session_id = %s ORDER BY step_index",
        (session,),
    ).fetchall()
    return [json.loads(r[0]) for r in rows]


def _ledger_valid(c: psycopg.Connection) -> tuple[bool, str]:
    return c.execute(
        "SELECT ledger_valid, reason FROM verify_ledger() WHERE kind = 'summary'"
    ).fetchone()


def test_appends_from_three_proxies_to_one_session_keep_one_valid_chain(
    proxies: list[ServerProcess],
) -> None:
    session = f"lake-chain-{uuid.uuid4().hex[:8]}"
    per_proxy = 2

    def appends(i: int, p: ServerProcess) -> list[int]:
        with _connect(p) as c:
            return [_append(c, session, f"p{i} step {n}") for n in range(per_proxy)]

    with ThreadPoolExecutor(len(proxies)) as pool:
        indexes = [
            x
            for f in [pool.submit(appends, i, p) for i, p in enumerate(proxies)]
            for x in f.result()
        ]
    total = per_proxy * len(proxies)
    # every append got its own place in the one chain: none forked, none lost
    assert sorted(indexes) == list(range(total))
    expected = sorted(f"p{i} step {n}" for i in range(len(proxies)) for n in range(per_proxy))
    for p in proxies:
        with _connect(p) as c:
            assert _verified(c, session) == (True, total, None)
            assert sorted(_contents(c, session)) == expected
            valid, reason = _ledger_valid(c)
            assert valid, reason
    # each proxy's own appends keep their order in the chain
    with _connect(proxies[0]) as c:
        order = _contents(c, session)
    for i in range(len(proxies)):
        mine = [t for t in order if t.startswith(f"p{i} ")]
        assert mine == [f"p{i} step {n}" for n in range(per_proxy)]


def test_tampering_with_a_shared_step_is_reported_by_every_proxy(
    proxies: list[ServerProcess], lake: LakeCluster
) -> None:
    session = f"lake-tamper-{uuid.uuid4().hex[:8]}"
    with _connect(proxies[0]) as c:
        for n in range(3):
            _append(c, session, f"fact {n}")
    # an edit of the lake's data behind the proxies' back, from a DuckDB of its own
    import duckdb

    con = duckdb.connect()
    con.execute("LOAD ducklake; LOAD postgres")
    con.execute(
        f"ATTACH 'ducklake:{lake.catalog}' AS al (METADATA_SCHEMA 'hatidata_agent', "
        f"DATA_PATH '{lake.data}/_hatidata_agent')"
    )
    edit = (
        "UPDATE al.hatidata_internal.cot_traces SET content = ? "
        "WHERE session_id = ? AND step_index = 1"
    )
    con.execute(edit, ['"forged"', session])
    try:
        for p in proxies:
            with _connect(p) as c:
                valid, total, reason = _verified(c, session)
                assert (valid, total) == (False, 3) and "1" in (reason or ""), reason
    finally:  # the shared ledger stays valid for the tests after this one
        con.execute(edit, ['"fact 1"', session])
        con.close()
    with _connect(proxies[1]) as c:
        assert _verified(c, session) == (True, 3, None)


def test_a_proxy_killed_with_9_during_appends_loses_nothing_it_acknowledged(
    proxies: list[ServerProcess], lake: LakeCluster
) -> None:
    # An extra proxy is the victim (the three are shared). What it acknowledged - rows of
    # a users' table, steps of a reasoning session - is on the others after the kill.
    session = f"lake-kill-{uuid.uuid4().hex[:8]}"
    victim = lake.start_proxy()
    with _connect(victim) as c:
        c.execute("CREATE TABLE acked (id INTEGER)")
        for i in range(5):
            c.execute("INSERT INTO acked VALUES (%s)", (i,))
        with c.transaction():
            c.execute("INSERT INTO acked SELECT range + 100 FROM range(50)")
    acked: list[str] = []
    stop = threading.Event()

    def appends() -> None:
        try:
            with _connect(victim) as c:
                n = 0
                while not stop.is_set():
                    _append(c, session, f"acked {n}")
                    acked.append(f"acked {n}")  # only after the proxy answered
                    n += 1
        except psycopg.Error:
            pass  # the proxy died under this connection

    writer = threading.Thread(target=appends)
    writer.start()
    deadline = time.monotonic() + 60
    while len(acked) < 2 and time.monotonic() < deadline and writer.is_alive():
        time.sleep(0.02)
    assert len(acked) >= 2, f"the victim acknowledged {len(acked)} appends in 60 s"
    with _connect(proxies[1]) as c:  # a writer on a surviving proxy, into the same chain
        for n in range(2):
            _append(c, session, f"other {n}")
    lake.kill(victim)  # most likely in the middle of an append
    stop.set()
    writer.join(30)
    with _connect(proxies[2]) as c:
        assert c.execute("SELECT count(*), sum(id) FROM acked").fetchone() == (
            55,
            sum(range(5)) + sum(range(100, 150)),
        )
        stored = _contents(c, session)
        assert set(acked) <= set(stored), set(acked) - set(stored)
        assert {"other 0", "other 1"} <= set(stored)
        assert _verified(c, session) == (True, len(stored), None)
        valid, reason = _ledger_valid(c)
        assert valid, reason
