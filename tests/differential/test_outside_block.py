"""Commands PostgreSQL refuses inside a transaction block (25001), compared with a real
PostgreSQL 15: inside BEGIN, and in a message of several statements (an implicit block);
alone they run. A migration tool that runs CREATE INDEX CONCURRENTLY in its transaction
learns it here as on PostgreSQL, not in production."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from sides import pg_and_hatiproxy

REFUSED = [
    ["BEGIN", "CREATE INDEX CONCURRENTLY ob_i ON ob (a)"],
    ["BEGIN", "CREATE UNIQUE INDEX CONCURRENTLY ob_u ON ob (a)"],
    ["BEGIN", "DROP INDEX CONCURRENTLY IF EXISTS ob_i"],
    ["BEGIN", "VACUUM"],
    ["BEGIN", "VACUUM ANALYZE ob"],
    ["BEGIN", "REINDEX TABLE CONCURRENTLY ob"],
    ["BEGIN", "ALTER SYSTEM SET work_mem = '4MB'"],
    ["SELECT 1; VACUUM ob"],  # one message: an implicit block
    ["VACUUM ob; SELECT 1"],
    ["SELECT 1; CREATE INDEX CONCURRENTLY ob_j ON ob (a)"],
]
RUN = [
    ["BEGIN", "ANALYZE ob"],
    ["BEGIN", "CREATE INDEX ob_k ON ob (a)"],
    ["VACUUM ob"],
    ["CREATE INDEX CONCURRENTLY ob_c ON ob (a)"],
    ["DROP INDEX CONCURRENTLY ob_c"],
]
SCRIPTS = [(s, True) for s in REFUSED] + [(s, False) for s in RUN]


@pytest.fixture(scope="module")
def conns(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[psycopg.Connection, ...]]:
    setup = ["CREATE TABLE ob (a int)"]
    with (
        pg_and_hatiproxy(tmp_path_factory.mktemp("outside_block"), setup) as (pg_dsn, hati_dsn),
        psycopg.connect(pg_dsn, autocommit=True) as a,
        psycopg.connect(hati_dsn, autocommit=True) as b,
    ):
        yield a, b


def outcome(conn: psycopg.Connection, script: list[str]) -> tuple[str | None, str | None]:
    try:
        for sql in script:
            conn.execute(sql, prepare=False)  # type: ignore[arg-type]
        return None, None
    except psycopg.Error as exc:
        return exc.sqlstate, exc.diag.message_primary
    finally:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("ROLLBACK")


@pytest.mark.parametrize(("script", "refused"), SCRIPTS, ids=["; ".join(s) for s, _ in SCRIPTS])
def test_refused_in_a_block_as_postgresql(
    conns: tuple[psycopg.Connection, ...], script: list[str], refused: bool
) -> None:
    pg, hati = conns
    want = outcome(pg, script)
    assert (want[0] == "25001") is refused, want
    assert outcome(hati, script) == want


def test_in_a_pipeline_as_postgresql(conns: tuple[psycopg.Connection, ...]) -> None:
    """After extended-protocol DML and before Sync (psycopg's pipeline mode), PostgreSQL
    says `... cannot be executed within a pipeline`; the pipeline's writes roll back."""
    outcomes = []
    for conn in conns:
        with pytest.raises(psycopg.Error) as info, conn.pipeline():
            conn.execute("INSERT INTO ob VALUES (41)")
            conn.execute("CREATE INDEX CONCURRENTLY ob_p ON ob (a)")
        count = conn.execute("SELECT count(*) FROM ob WHERE a = 41").fetchone()
        outcomes.append((info.value.sqlstate, info.value.diag.message_primary, count))
    assert outcomes[0] == (
        "25001",
        "CREATE INDEX CONCURRENTLY cannot be executed within a pipeline",
        (0,),
    )
    assert outcomes[1] == outcomes[0]
