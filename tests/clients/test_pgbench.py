"""pgbench 15 on hatiproxy: `pgbench -i` (`drop table if exists a, b, ...`, `truncate table
a, b, ...`, COPY, `vacuum analyze t`, primary keys), then its built-in scripts with
several clients. DuckDB fails a write-write conflict at once where PostgreSQL waits for
the row lock: inside a transaction that is PostgreSQL's REPEATABLE READ answer, 40001
(pgbench --max-tries retries it); a single autocommit statement is retried by the server."""

from __future__ import annotations

import os
import re
import subprocess
import threading

import psycopg
import pytest

PGBENCH = "/usr/lib/postgresql/15/bin/pgbench"
SERIALIZE = "could not serialize access due to concurrent update"


def _run(args: list[str], timeout: float = 120) -> str:
    out = subprocess.run([*args, "hatidata"], capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def _figure(report: str, label: str) -> int:
    match = re.search(rf"^{label}: (\d+)", report, re.M)
    assert match is not None, f"no '{label}' in pgbench's report:\n{report}"
    return int(match[1])


def _sums(server) -> tuple[int, ...]:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT (SELECT sum(abalance) FROM pgbench_accounts),"
            " (SELECT sum(bbalance) FROM pgbench_branches),"
            " (SELECT sum(tbalance) FROM pgbench_tellers),"
            " (SELECT coalesce(sum(delta), 0) FROM pgbench_history)"
        ).fetchone()
    assert row is not None
    return tuple(int(v) for v in row)


def _history_rows(server) -> int:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pgbench_history").fetchone()
    assert row is not None
    return int(row[0])


@pytest.fixture(scope="module")
def initialised(server) -> list[str]:
    """pgbench's tables, made twice: the second run drops and truncates what the first
    made (one server per test session: the tests below share them)."""
    assert os.path.exists(PGBENCH), "pgbench 15 is missing: apt-get install postgresql-15"
    args = [PGBENCH, "-h", server.host, "-p", str(server.port), "-U", "x"]
    for _ in range(2):
        _run([*args, "-i", "-s", "1"])
    return args


def test_pgbench_initialises(server, initialised) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM pgbench_accounts").fetchone() == (100_000,)
    assert _history_rows(server) == 0


def test_pgbench_scripts_run_with_retries_and_balances_add_up(server, initialised) -> None:
    pgbench = initialised
    before = _sums(server)
    # TPC-B: every transaction updates the one branch row, so they collide all the time;
    # each collision is a 40001 that pgbench retries, and none is left failed.
    run = [*pgbench, "-c", "4", "-j", "2", "--max-tries=1000"]
    report = _run([*run, "-T", "4"])
    assert _figure(report, "number of failed transactions") == 0, report
    done = _figure(report, "number of transactions actually processed")
    assert done > 0, report
    # Each committed transaction moved the three balances by its delta and wrote one
    # history row (pgbench empties pgbench_history as a run starts): nothing twice.
    after = _sums(server)
    moved = [a - b for a, b in zip(after[:3], before[:3], strict=True)]
    assert moved == [after[3]] * 3, report
    assert _history_rows(server) == done, report
    accounts, branches, tellers, _ = after
    # Simple update (-N: accounts and history only), then select only (-S).
    report = _run([*run, "-N", "-T", "2"])
    assert _figure(report, "number of failed transactions") == 0, report
    after = _sums(server)
    assert after[0] - accounts == after[3] and after[1:3] == (branches, tellers), report
    report = _run([*run, "-S", "-T", "2"])
    assert _figure(report, "number of failed transactions") == 0, report
    assert _figure(report, "number of transactions actually processed") > 0, report


def test_conflict_in_a_transaction_is_40001_then_25p02(server, table_name) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as setup:
        setup.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY, n int)")
        setup.execute(f"INSERT INTO {table_name} VALUES (1, 0)")
    with psycopg.connect(server.dsn) as first, psycopg.connect(server.dsn) as second:
        first.execute(f"UPDATE {table_name} SET n = n + 1 WHERE id = 1")
        # As PostgreSQL's REPEATABLE READ: the second writer of the row fails at its UPDATE
        with pytest.raises(psycopg.errors.SerializationFailure) as exc:
            second.execute(f"UPDATE {table_name} SET n = n + 10 WHERE id = 1")
        assert exc.value.diag.message_primary == SERIALIZE
        assert "Conflict on update" in (exc.value.diag.message_detail or "")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            second.execute("SELECT 1")
        second.rollback()
        first.commit()
        # A row changed by a transaction that committed after this one read it: 40001 too
        assert second.execute(f"SELECT n FROM {table_name}").fetchone() == (1,)
        first.execute(f"UPDATE {table_name} SET n = n + 1 WHERE id = 1")
        first.commit()
        with pytest.raises(psycopg.errors.SerializationFailure):
            second.execute(f"UPDATE {table_name} SET n = n + 10 WHERE id = 1")
        second.rollback()
        second.execute(f"UPDATE {table_name} SET n = n + 10 WHERE id = 1")  # the retry
        second.commit()
        assert first.execute(f"SELECT n FROM {table_name}").fetchone() == (12,)


def test_autocommit_update_storm_loses_nothing(server, table_name) -> None:
    """Four clients add 1 to one row outside transactions: the server runs a statement
    that lost a conflict again, so no client sees 40001 and no increment is lost or
    applied twice. Half the clients use the simple query protocol, half the extended."""
    per_client = 40
    with psycopg.connect(server.dsn, autocommit=True) as setup:
        setup.execute(f"CREATE TABLE {table_name} (id int PRIMARY KEY, n int)")
        setup.execute(f"INSERT INTO {table_name} VALUES (1, 0)")
    errors: list[BaseException] = []

    def client(simple: bool) -> None:
        factory = psycopg.ClientCursor if simple else psycopg.Cursor
        try:
            with psycopg.connect(server.dsn, autocommit=True, cursor_factory=factory) as c:
                for _ in range(per_client):
                    c.execute(f"UPDATE {table_name} SET n = n + 1 WHERE id = %s", (1,))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(i % 2 == 0,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        n = conn.execute(f"SELECT n FROM {table_name} WHERE id = 1").fetchone()
    assert n == (4 * per_client,)
