"""Long hatiproxy_embed_column() work reports its progress: NOTICEs the client sees while the
statement still runs, and the same lines in the server log at INFO."""

from __future__ import annotations

import re

import psycopg
import pytest

from proxy.semantic.embedded_columns import FILL_CHUNK, FillProgress
from tests.conftest import start_server

ROWS = 2500
PROGRESS = re.compile(r"embedded (\d+) of (\d+) rows of docs\.content \((\d+)%, [\d.]+ s\)")


def test_embed_column_sends_progress_notices_and_logs_them(tmp_path) -> None:
    # hash vectors of 16 dims: the fill and the index build stay quick
    srv = start_server(
        tmp_path,
        "--embedding-provider",
        "hash",
        env={"HATIDATA_EMBEDDING_DIMS": "16"},
    )
    try:
        with (
            psycopg.connect(srv.dsn, autocommit=True) as c,
            psycopg.connect(srv.dsn, autocommit=True) as watcher,
        ):
            notices: list[str] = []
            running_at_first: list[int] = []

            def on_notice(diag: psycopg.errors.Diagnostic) -> None:
                notices.append(diag.message_primary or "")
                if len(notices) == 1:  # the statement must still be running
                    running_at_first.append(
                        watcher.execute(
                            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                            "AND query LIKE 'SELECT hatiproxy_embed_column%%'"
                        ).fetchone()[0]
                    )

            c.add_notice_handler(on_notice)
            c.execute("CREATE TABLE small (id INT, content TEXT)")
            c.execute("INSERT INTO small VALUES (1, 'a'), (2, 'b')")
            assert c.execute("SELECT hatiproxy_embed_column('small', 'content')").fetchone() == (2,)
            assert notices == []  # short work says nothing

            c.execute("CREATE TABLE docs (id INT, content TEXT)")
            c.execute(f"INSERT INTO docs SELECT i, 'document ' || i FROM range({ROWS}) t(i)")
            count = c.execute("SELECT hatiproxy_embed_column('docs', 'content')").fetchone()
            assert count == (ROWS,)
        assert running_at_first == [1], notices

        progress = [PROGRESS.fullmatch(n) for n in notices if n.startswith("embedded ")]
        assert len(progress) >= 2 and all(progress), notices
        done = [int(m[1]) for m in progress]
        assert done == sorted(done) and done[-1] == ROWS
        assert {int(m[2]) for m in progress} == {ROWS}
        assert int(progress[0][3]) < 100 and int(progress[-1][3]) == 100
        index = [n for n in notices if "HNSW index docs_content_embedding_hnsw" in n]
        assert index[0] == (
            f"building HNSW index docs_content_embedding_hnsw on docs.content_embedding "
            f"({ROWS} rows)"
        )
        assert index[1].startswith("built HNSW index docs_content_embedding_hnsw in ")

        log = srv.log()
        for notice in notices:  # each NOTICE is an INFO line of the server log too
            assert f" INFO hatiproxy.embed_columns: {notice}\n" in log
    finally:
        srv.stop()


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_fill_progress_reports_every_tenth_or_two_seconds() -> None:
    lines: list[str] = []
    clock = Clock()
    big = FillProgress("t", "c", lines.append, clock)
    big.start(10 * FILL_CHUNK)
    for _ in range(40):  # 40 steps of 250 rows: a line every 1000 rows (10%)
        big.advance(250)
    big.finish()
    assert len(lines) == 10 and lines[-1] == "embedded 10000 of 10000 rows of t.c (100%, 0.0 s)"

    lines.clear()
    slow = FillProgress("t", "c", lines.append, clock)
    slow.start(FILL_CHUNK)  # one round: no 10% lines, but one every 2 s of work
    for _ in range(4):
        clock.now += 1.5
        slow.advance(250)
    slow.finish()
    assert lines == [
        "embedded 500 of 1000 rows of t.c (50%, 3.0 s)",
        "embedded 1000 of 1000 rows of t.c (100%, 6.0 s)",
    ]

    lines.clear()
    quick = FillProgress("t", "c", lines.append, clock)
    quick.start(FILL_CHUNK)
    quick.advance(FILL_CHUNK)
    quick.finish()
    assert lines == []


@pytest.mark.parametrize("extra", [0, 7])
def test_fill_progress_counts_rows_added_meanwhile(extra: int) -> None:
    lines: list[str] = []
    progress = FillProgress("t", "c", lines.append, Clock())
    progress.start(2 * FILL_CHUNK)
    progress.advance(2 * FILL_CHUNK + extra)
    total = 2 * FILL_CHUNK + extra
    assert lines == [f"embedded {total} of {total} rows of t.c (100%, 0.0 s)"]
