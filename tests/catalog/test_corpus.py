"""Every captured client catalog query, run the way the server runs it.

* entries in the client files pass through ``transpile()`` alone;
* entries parked in pending.sql (none today) must still fail that way: when one
  starts passing, the test fails so it gets moved back to its client file.
"""

from __future__ import annotations

import corpus
import duckdb
import pytest
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


def test_pending_queries_still_fail(cur: duckdb.DuckDBPyConnection) -> None:
    """Entries parked in pending.sql must fail; one that passes belongs in its client file."""
    for entry in PENDING:
        try:
            run(cur, entry, transpiled)
        except Exception:
            continue
        pytest.fail(f"{entry.id} now passes through transpile(): move it out of pending.sql")
