"""Every captured client catalog query, run the way the server runs it.

* entries in the client files pass through ``transpile()`` alone;
* entries in pending.sql still fail that way (a visible to-do list for the transpiler:
  when one starts passing this test fails, so it gets moved back);
* all entries pass with the rewrites the transpiler still lacks (missing_rewrites.py):
  the catalog itself is ready for them.
"""

from __future__ import annotations

import corpus
import duckdb
import pytest
from missing_rewrites import with_missing_rewrites
from runner import catalog_cursor, run, transpiled

PASSING = corpus.load()
PENDING = corpus.load(include_pending=True)


@pytest.fixture(scope="module")
def cur() -> duckdb.DuckDBPyConnection:
    return catalog_cursor()


def test_corpus_is_not_empty() -> None:
    files = {e.file for e in PASSING + PENDING}
    assert len(PASSING + PENDING) >= 90
    assert all(e.reason for e in PENDING), "every pending entry says why it fails"
    assert {"psql.sql", "pgjdbc.sql", "asyncpg.sql", "dbeaver.sql", "metabase.sql"} <= files


@pytest.mark.parametrize("entry", PASSING, ids=lambda e: e.id)
def test_query_through_transpiler(cur: duckdb.DuckDBPyConnection, entry: corpus.Entry) -> None:
    run(cur, entry, transpiled)


@pytest.mark.parametrize("entry", PENDING, ids=lambda e: e.id)
def test_pending_query_still_fails(cur: duckdb.DuckDBPyConnection, entry: corpus.Entry) -> None:
    try:
        run(cur, entry, transpiled)
    except Exception:
        return
    pytest.fail(f"{entry.id} now passes through transpile(): move it out of pending.sql")


@pytest.mark.parametrize("entry", PASSING + PENDING, ids=lambda e: e.id)
def test_query_with_missing_rewrites(cur: duckdb.DuckDBPyConnection, entry: corpus.Entry) -> None:
    run(cur, entry, with_missing_rewrites)
