"""DuckDB's write-write conflicts, provoked on a real in-process database, come out as
PostgreSQL reports them (proxy/db/duckdb_errors.py): 40001 with PostgreSQL's message,
the aborted transaction as 25P02, a COMMIT that meets a key committed first as 23505."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from proxy.db.duckdb_errors import map_duckdb_error

SERIALIZE = "could not serialize access due to concurrent update"


@pytest.fixture
def two() -> Iterator[tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection]]:
    db = duckdb.connect()
    db.execute("CREATE TABLE t (id int PRIMARY KEY, v int)")
    db.execute("INSERT INTO t VALUES (1, 0), (2, 0)")
    a, b = db.cursor(), db.cursor()
    a.begin()
    b.begin()
    yield a, b
    db.close()


def _error(cur: duckdb.DuckDBPyConnection, sql: str) -> tuple[str, str, str | None]:
    with pytest.raises(duckdb.Error) as exc:
        cur.execute(sql)
    err = map_duckdb_error(exc.value, sql)
    return err.sqlstate, err.message, err.detail


# (DuckDB 1.5 lets a DELETE and an UPDATE of the same row both commit: no conflict to map.)
@pytest.mark.parametrize(
    ("sql", "duckdb_words"),
    [
        ("UPDATE t SET v = v + 1 WHERE id = 1", "Conflict on update"),
        ("DELETE FROM t WHERE id = 1", "Conflict on tuple deletion"),
    ],
)
def test_second_writer_of_a_row_is_40001_then_25p02(two, sql: str, duckdb_words: str) -> None:
    a, b = two
    a.execute(sql)
    state, message, detail = _error(b, sql)
    assert (state, message) == ("40001", SERIALIZE)
    assert duckdb_words in (detail or "")
    assert _error(b, "SELECT 1")[0] == "25P02"


def test_commit_after_a_key_committed_first_is_23505(two) -> None:
    a, b = two
    a.execute("INSERT INTO t VALUES (3, 0)")
    b.execute("INSERT INTO t VALUES (3, 0)")
    a.commit()
    with pytest.raises(duckdb.Error) as exc:
        b.commit()
    err = map_duckdb_error(exc.value)
    assert err.sqlstate == "23505" and "duplicate key" in err.message
