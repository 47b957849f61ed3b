"""PostgreSQL 15's maintenance programs on hatiproxy, beside PostgreSQL 15: vacuumdb
(which names every table pg_class lists, pg_catalog's own included, one VACUUM each),
--analyze-only, --analyze-in-stages, -t with columns, -n; reindexdb and clusterdb.
Each run's exit status and messages are PostgreSQL's (the database name aside)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server
from tests.differential.pgcluster import PgCluster, start_pg

BIN = "/usr/lib/postgresql/15/bin"
SCHEMA = """
CREATE TABLE vdb_orders (id serial PRIMARY KEY, customer text, total numeric(10,2));
INSERT INTO vdb_orders (customer, total) VALUES ('ann', 10.50), ('bob', 3.25);
CREATE INDEX vdb_orders_customer ON vdb_orders (customer);
CREATE VIEW vdb_big AS SELECT * FROM vdb_orders WHERE total > 5;
CREATE MATERIALIZED VIEW vdb_totals AS SELECT customer, sum(total) AS s FROM vdb_orders
    GROUP BY customer;
CREATE SCHEMA "Sales";
CREATE TABLE "Sales"."Leads" ("Id" int, note text);
"""


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, PgCluster]]:
    hati = start_server(tmp_path_factory.mktemp("vacuumdb"))
    pg = start_pg()
    try:
        for dsn in (hati.dsn, pg.dsn):
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(SCHEMA)
        yield hati, pg
    finally:
        hati.stop()
        pg.stop()


def _run(program: str, dsn: str, *args: str) -> tuple[int, list[str]]:
    out = subprocess.run(
        [str(Path(BIN) / program), "-d", dsn, *args], capture_output=True, text=True, timeout=120
    )
    lines = (out.stdout + out.stderr).replace('"postgres"', '"DB"').replace('"hatidata"', '"DB"')
    # An error's LINE / caret: PostgreSQL points into vacuumdb's query at a regclass cast
    # that fails, hatiproxy does not (docs/compatibility.md).
    kept = [x for x in lines.splitlines() if not x.startswith("LINE ") and x.strip() != "^"]
    return out.returncode, sorted(kept)


@pytest.mark.parametrize(
    "program, args",
    [
        ("vacuumdb", ()),
        ("vacuumdb", ("--analyze",)),
        ("vacuumdb", ("--analyze-only",)),
        ("vacuumdb", ("--analyze-in-stages",)),
        ("vacuumdb", ("--full", "--verbose", "-t", "vdb_orders")),
        ("vacuumdb", ("-z", "-t", "vdb_orders(customer, total)", "-t", '"Sales"."Leads"')),
        ("vacuumdb", ("-z", "-t", "vdb_big")),
        ("vacuumdb", ("-t", "vdb_nosuch")),
        ("vacuumdb", ("-Z", "-t", "vdb_orders(nosuch)")),
        ("vacuumdb", ("-n", "Sales")),
        ("reindexdb", ()),
        ("reindexdb", ("-t", "vdb_orders")),
        ("clusterdb", ()),
    ],
)
def test_same_as_postgresql(
    servers: tuple[ServerProcess, PgCluster], program: str, args: tuple[str, ...]
) -> None:
    hati, pg = servers
    got, want = _run(program, hati.dsn, *args), _run(program, pg.dsn, *args)
    if "--verbose" in args:  # PostgreSQL's INFO lines count its pages: not compared
        got = (got[0], [line for line in got[1] if line.startswith("vacuumdb")])
        want = (want[0], [line for line in want[1] if line.startswith("vacuumdb")])
    assert got == want


def test_rows_kept(servers: tuple[ServerProcess, PgCluster]) -> None:
    hati, _ = servers
    assert _run("vacuumdb", hati.dsn, "--full", "--analyze")[0] == 0
    with psycopg.connect(hati.dsn, autocommit=True) as conn:
        rows = conn.execute("SELECT customer, total FROM vdb_orders ORDER BY id").fetchall()
        assert [(c, str(t)) for c, t in rows] == [("ann", "10.50"), ("bob", "3.25")]
        assert conn.execute("SELECT count(*) FROM vdb_totals").fetchone() == (2,)
