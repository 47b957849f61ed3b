"""Background work stays bounded during a long hatiproxy_embed_column on a real server with
the real model: the embedding cache commits what the fill computes within about a
second, SIGINT stops the server within 10 s mid-fill (exit 0, committed rows kept, the
database closed cleanly) and a second SIGINT exits at once (130).

The reported failure was minutes: cache entries committed 45 s after the call and at
shutdown, Ctrl-C taking 5 min, a second Ctrl-C ignored. The bounds here are generous for
a shared 2-core machine and still far below that.
"""

from __future__ import annotations

import random
import signal
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import duckdb
import psycopg
import pytest

from tests.conftest import ServerProcess, shared_model_dir, start_server

ROWS = 3000
VOCAB = (
    "customer billing invoice refund charge account login password reset error server "
    "database query index vector search semantic model latency payment card delivery"
)
WORDS = VOCAB.split()
LAG_LIMIT_S = 2.5  # the promise is ~0.5 s; the machine may be very busy


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return Path(shared_model_dir())  # the bundled MiniLM, converted once per test process


@pytest.fixture
def filling(tmp_path: Path, model_dir: Path) -> Iterator[tuple[ServerProcess, Fill]]:
    """A server with the real model and a table of ROWS texts whose fill has started."""
    srv = start_server(tmp_path, env={"HATIDATA_MODEL_DIR": str(model_dir)})
    fill = Fill(srv)
    try:
        fill.start()
        yield srv, fill
    finally:
        srv.stop()
        fill.thread.join(30)


class Fill:
    """`SELECT hatiproxy_embed_column('docs', 'content')` on a thread of the test."""

    def __init__(self, srv: ServerProcess) -> None:
        self.srv = srv
        self.error: BaseException | None = None
        self.result: int | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        rng = random.Random(7)
        rows = [
            (i, " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30)))) for i in range(ROWS)
        ]
        with psycopg.connect(self.srv.dsn, autocommit=True) as c:
            c.execute("CREATE TABLE docs (id INT, content TEXT)")
            with c.cursor() as cur:
                cur.executemany("INSERT INTO docs VALUES (%s, %s)", rows)
        self.thread.start()
        deadline = time.monotonic() + 120
        while metrics(self.srv).get("hatiproxy_embedding_texts_total", 0) < 32:
            assert self.thread.is_alive(), f"the fill ended early: {self.error}"
            assert time.monotonic() < deadline, "the fill never got going"
            time.sleep(0.2)

    def _run(self) -> None:
        try:
            with psycopg.connect(self.srv.dsn, autocommit=True) as c:
                row = c.execute("SELECT hatiproxy_embed_column('docs', 'content')").fetchone()
                self.result = row[0]
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            self.error = exc


def metrics(srv: ServerProcess) -> dict[str, float]:
    body = urllib.request.urlopen(f"{srv.rest_url}/metrics", timeout=30).read().decode()
    out = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def test_cache_commits_keep_up_with_a_fill(filling: tuple[ServerProcess, Fill]) -> None:
    srv, fill = filling
    samples: list[tuple[float, float, float]] = []  # (time, embedded, committed)
    started = time.monotonic()
    # Samples for 10 s (four times LAG_LIMIT_S) once 64 texts are embedded in them; a busy
    # machine embeds slower, so up to 30 s.
    while fill.thread.is_alive() and time.monotonic() - started < 30:
        m = metrics(srv)
        samples.append(
            (
                time.monotonic(),
                m["hatiproxy_embedding_texts_total"],
                m["hatiproxy_embedding_cache_committed_total"],
            )
        )
        if samples[-1][0] - started >= 10 and samples[-1][1] - samples[0][1] >= 64:
            break
        time.sleep(0.5)
    embedded = samples[-1][1] - samples[0][1]
    assert embedded >= 64, f"too little embedded to judge the writer: {samples}"
    # Whatever the model had embedded LAG_LIMIT_S ago is committed now.
    for t, _, committed in samples:
        earlier = [e for s, e, _ in samples if s <= t - LAG_LIMIT_S]
        if earlier:
            assert committed >= earlier[-1], (t, committed, earlier[-1], samples)
    m = metrics(srv)
    count = m["hatiproxy_embedding_cache_commit_lag_seconds_count"]
    within = m[f'hatiproxy_embedding_cache_commit_lag_seconds_bucket{{le="{LAG_LIMIT_S}"}}']
    assert count >= 2 and within == count, m  # every commit's oldest entry waited < 2.5 s
    assert m["hatiproxy_embedding_cache_pending"] < 2000


def test_sigint_mid_fill_stops_within_10_s(filling: tuple[ServerProcess, Fill]) -> None:
    srv, fill = filling
    time.sleep(2.0)
    embedded = metrics(srv)["hatiproxy_embedding_texts_total"]
    t0 = time.monotonic()
    srv.proc.send_signal(signal.SIGINT)
    code = srv.proc.wait(60)
    took = time.monotonic() - t0
    log = srv.log()
    print(log)  # shown when the test fails
    assert took < 10 and code == 0, (took, code)
    fill.thread.join(10)
    assert fill.result is None and isinstance(fill.error, psycopg.OperationalError), fill.error
    assert "terminating connection due to administrator command" in str(fill.error)
    assert "SIGINT: shutting down" in log and "stopped" in log
    # Closed cleanly (no unclean-start marker), and what the fill committed is there.
    db_file = srv.data_dir / "hatiproxy.duckdb"
    assert not Path(str(db_file) + ".hatiproxy-open").exists()
    con = duckdb.connect(str(db_file), read_only=True)
    try:
        filled = con.execute("SELECT count(content_embedding) FROM docs").fetchone()[0]
        total = con.execute("SELECT count(*) FROM docs").fetchone()[0]
    finally:
        con.close()
    # The embedding cache is in the agent database beside it.
    agent = duckdb.connect(str(srv.data_dir / "hatiproxy.agent.duckdb"), read_only=True)
    try:
        cached = agent.execute("SELECT count(*) FROM _hatidata_embedding_cache").fetchone()[0]
    finally:
        agent.close()
    assert total == ROWS and 0 < filled < ROWS, (filled, embedded)
    assert f"embedding docs.content interrupted after {filled} rows" in log
    assert cached >= filled  # every vector the fill stored reached the cache table too


def test_second_sigint_exits_at_once(filling: tuple[ServerProcess, Fill]) -> None:
    srv, _ = filling
    srv.proc.send_signal(signal.SIGINT)
    time.sleep(0.1)  # the first is taken (two pending SIGINTs would merge into one)
    t0 = time.monotonic()
    srv.proc.send_signal(signal.SIGINT)
    code = srv.proc.wait(30)
    took = time.monotonic() - t0
    log = srv.log()
    print(log)  # shown when the test fails
    assert code == 130 and took < 3, (code, took)
    assert "second SIGINT: exiting now (code 130); abandoned: " in log
    assert "hatiproxy_embed_column" in log.split("abandoned: ")[1].splitlines()[0]
