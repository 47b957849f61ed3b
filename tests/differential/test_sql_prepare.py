"""SQL-level PREPARE / EXECUTE / DEALLOCATE in one session, step by step, compared with
a real PostgreSQL 15: results, and the errors of a name used twice, unknown, or run with
the wrong number of arguments (proxy/pgserver/sql_prepared.py)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from sides import pg_and_hatiproxy

STEPS = [
    "PREPARE q(int) AS SELECT $1 + 1",
    "EXECUTE q(41)",
    "EXECUTE q(1, 2)",
    "PREPARE q(int) AS SELECT $1",
    "PREPARE r AS SELECT 'r'",
    "EXECUTE r",
    "DEALLOCATE q",
    "DEALLOCATE q",
    "EXECUTE q(1)",
    "DEALLOCATE PREPARE r",
    "DEALLOCATE PREPARE nothing_here",
    'DEALLOCATE "Q"',
    "PREPARE s AS SELECT 1",
    "DEALLOCATE ALL",
    "EXECUTE s",
]


def outcomes(dsn: str) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        for sql in STEPS:
            try:
                cur = conn.execute(sql, prepare=False)  # type: ignore[arg-type]
                rows = cur.fetchall() if cur.description else None
                out.append((sql, cur.statusmessage, rows))
            except psycopg.Error as exc:
                out.append((sql, exc.sqlstate, exc.diag.message_primary))
    return out


@pytest.fixture(scope="module")
def dsns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    with pg_and_hatiproxy(tmp_path_factory.mktemp("sql_prepare"), []) as both:
        yield both


def test_prepare_execute_deallocate_as_postgresql(dsns: tuple[str, str]) -> None:
    pg, hati = (outcomes(dsn) for dsn in dsns)
    assert ("DEALLOCATE q", "26000", 'prepared statement "q" does not exist') in pg
    assert hati == pg
