"""psql 15's `\\dm`, `\\d mv` and `\\d+ mv` of materialized views: the same screens on
hatiproxy as on PostgreSQL 15 running the same statements as the same user (the view
definition's text aside: PostgreSQL prints its own normalised query)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server
from tests.differential.pgcluster import PgCluster, start_pg

SETUP = [
    "CREATE TABLE mv_src (id int PRIMARY KEY, name varchar(20), amount numeric(10,2))",
    "INSERT INTO mv_src VALUES (1, 'a', 1.5), (2, 'b', 2.5)",
    "CREATE MATERIALIZED VIEW mv_totals AS SELECT name, count(*) AS total FROM mv_src"
    " GROUP BY name",
    "CREATE UNIQUE INDEX mv_totals_name ON mv_totals (name)",
    "CREATE MATERIALIZED VIEW mv_later (k) AS SELECT id FROM mv_src WITH NO DATA",
    "COMMENT ON MATERIALIZED VIEW mv_later IS 'filled at night'",
]


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[str], list[str]]]:
    server = start_server(tmp_path_factory.mktemp("psql-matviews"), "--database", ":memory:")
    pg = start_pg()
    try:
        for dsn in (server.dsn, pg.dsn):
            with psycopg.connect(dsn, user="postgres", autocommit=True) as conn:
                for sql in SETUP:
                    conn.execute(sql)
        yield _where(server), _pg_where(pg)
    finally:
        pg.stop()
        server.stop()


def _where(server: ServerProcess) -> list[str]:
    return ["-h", server.host, "-p", str(server.port), "-U", "postgres", "-d", "hatidata"]


def _pg_where(pg: PgCluster) -> list[str]:
    return ["-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "-d", "postgres"]


def _psql(where: list[str], command: str) -> list[str]:
    psql_bin = shutil.which("psql") or "/usr/lib/postgresql/15/bin/psql"
    out = subprocess.run(
        [psql_bin, "-X", *where, "-v", "ON_ERROR_STOP=1", "-c", command],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0 and "ERROR" not in out.stderr, out.stderr
    # the owner's name differs (hatidata / postgres): not what is compared
    return [
        " ".join(line.replace("postgres", "hatidata").split()) for line in out.stdout.splitlines()
    ]


@pytest.mark.parametrize("command", [r"\dm", r"\dm+ mv_later", r"\d mv_totals", r"\d mv_later"])
def test_the_same_screen_as_postgres(sides, command: str) -> None:
    hati, pg = sides
    assert _psql(hati, command) == _psql(pg, command)


def test_describe_plus_shows_the_query(sides) -> None:
    hati, pg = sides
    ours, theirs = _psql(hati, r"\d+ mv_totals"), _psql(pg, r"\d+ mv_totals")
    cut = ours.index("View definition:")
    assert ours[:cut] == theirs[: theirs.index("View definition:")]
    assert "SELECT name, count(*) AS total FROM mv_src GROUP BY name;" in ours[cut + 1]
