"""What a second DuckLake (the agent layer's, issue 25) can hold, probed on a real
PostgreSQL 15 catalog with DuckLake 1.5.5: the agent tables use primary keys, indexes,
sequences, UPDATE/DELETE and FLOAT[384] columns, and cross-proxy vector catch-up needs
snapshot ids and a change feed. Prints one line per feature; not a test (it documents the
ground the agent-lake work stands on, docs/deployment.md)."""

from __future__ import annotations

import tempfile
import time

import duckdb

from proxy.db.lake import load_lake_extensions
from tests.differential.pgcluster import start_pg


def _try(conn: duckdb.DuckDBPyConnection, label: str, sql: str) -> None:
    try:
        conn.execute(sql)
        print(f"ok    {label}")
    except duckdb.Error as exc:
        print(f"FAIL  {label}: {' '.join(str(exc).split())[:140]}")


def _open(dsn: str, schema: str, data: str) -> duckdb.DuckDBPyConnection:
    conn = duckdb.connect(":memory:")
    load_lake_extensions(conn)
    conn.execute(
        f"ATTACH 'ducklake:postgres:{dsn}' AS agent "
        f"(METADATA_SCHEMA '{schema}', DATA_PATH '{data}', DATA_INLINING_ROW_LIMIT 0)"
    )
    return conn


def main() -> None:
    pg = start_pg()
    try:
        data = tempfile.mkdtemp(prefix="agent-lake-")
        a = _open(pg.dsn, "hatidata_agent", data)
        _try(a, "CREATE SCHEMA", "CREATE SCHEMA agent.hatidata_internal")
        _try(a, "PRIMARY KEY", "CREATE TABLE agent.hatidata_internal.pk (id INT PRIMARY KEY)")
        _try(a, "SEQUENCE", "CREATE SEQUENCE agent.hatidata_internal.s")
        _try(a, "FLOAT[384]", "CREATE TABLE agent.hatidata_internal.fx (v FLOAT[384])")
        _try(
            a,
            "table with UUID id, FLOAT[] list",
            "CREATE TABLE agent.hatidata_internal.mem "
            "(id UUID NOT NULL, org TEXT, content TEXT, v FLOAT[])",
        )
        _try(a, "INDEX", "CREATE INDEX i ON agent.hatidata_internal.mem (org)")
        _try(
            a,
            "INSERT",
            "INSERT INTO agent.hatidata_internal.mem SELECT uuid(), 'o', 'x' || i, "
            "[i, 0, 1]::FLOAT[] FROM range(3) t(i)",
        )
        _try(a, "UPDATE", "UPDATE agent.hatidata_internal.mem SET content = 'y' WHERE org = 'o'")
        _try(a, "DELETE", "DELETE FROM agent.hatidata_internal.mem WHERE content = 'nope'")
        s0 = a.execute("SELECT max(snapshot_id) FROM agent.snapshots()").fetchone()[0]
        # a second process (here: a second DuckDB instance) writes; the first reads only
        # what changed since the snapshot it saw
        b = _open(pg.dsn, "hatidata_agent", data)
        t0 = time.perf_counter()
        b.execute("INSERT INTO agent.hatidata_internal.mem VALUES (uuid(), 'o', 'from b', [9,9,9])")
        s1 = a.execute("SELECT max(snapshot_id) FROM agent.snapshots()").fetchone()[0]
        rows = a.execute(
            f"SELECT change_type, content, v FROM ducklake_table_changes("
            f"'agent', 'hatidata_internal', 'mem', {s0 + 1}, {s1})"
        ).fetchall()
        dt = (time.perf_counter() - t0) * 1000
        print(f"ok    change feed {s0}->{s1}: {rows} ({dt:.0f} ms write+poll+read)")
        # the client-facing instance never attaches it: a name there does not resolve
        users = duckdb.connect(":memory:")
        try:
            users.execute("SELECT * FROM agent.hatidata_internal.mem")
            print("FAIL  the client instance reached the agent lake")
        except duckdb.Error:
            print("ok    the client instance cannot name the agent lake (not attached)")
        # one chain head per session: two writers appending at once both UPDATE it, so
        # DuckLake's commit check lets one through and fails the other (ledger retry)
        a.execute("CREATE TABLE agent.hatidata_internal.head (session TEXT, seq BIGINT)")
        a.execute("INSERT INTO agent.hatidata_internal.head VALUES ('s', 0)")
        a.execute("BEGIN")
        b.execute("BEGIN")
        a.execute("UPDATE agent.hatidata_internal.head SET seq = seq + 1 WHERE session = 's'")
        b.execute("UPDATE agent.hatidata_internal.head SET seq = seq + 1 WHERE session = 's'")
        a.execute("COMMIT")
        try:
            b.execute("COMMIT")
            print("FAIL  two head updates both committed (lost update)")
        except duckdb.Error as exc:
            print(f"ok    second head update conflicts: {type(exc).__name__}")
        n = 200
        t0 = time.perf_counter()
        for i in range(n):
            a.execute(
                "INSERT INTO agent.hatidata_internal.mem VALUES (uuid(), 'o', ?, [1,2,3])",
                [str(i)],
            )
        ins = (time.perf_counter() - t0) / n * 1000
        t0 = time.perf_counter()
        for _ in range(n):
            a.execute("SELECT max(snapshot_id) FROM agent.snapshots()").fetchone()
        poll = (time.perf_counter() - t0) / n * 1000
        print(f"      one-row INSERT {ins:.1f} ms, snapshot poll {poll:.1f} ms (mean of {n})")
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
