"""Domains through pg_dump 15 (proxy/pgserver/domains.py).

The same schema made in hatiproxy and in a real PostgreSQL 15 (CHECKs written as
PostgreSQL shows them, so both dumps can be compared): `pg_dump -Fp` of each writes the
same CREATE DOMAIN statements (base type, DEFAULT, NOT NULL, named CHECKs, a domain in
another schema), the same tables with domain columns and the same rows. Each dump
replays with `psql -v ON_ERROR_STOP=1` into a fresh hatiproxy and into PostgreSQL 15,
where the domains still refuse a bad value (23514, 23502) and give their DEFAULT.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pg_dump_support import dump_body, filled_pair, plain_dump, replayed

from tests.conftest import ServerProcess
from tests.differential.pgcluster import PgCluster

SCHEMA = [
    "CREATE DOMAIN email AS text CONSTRAINT email_has_at CHECK ((VALUE ~ '@'::text))",
    "CREATE DOMAIN posint AS integer NOT NULL DEFAULT 1 CHECK ((VALUE > 0))",
    "CREATE DOMAIN code AS character varying(8)",
    "CREATE SCHEMA shop",
    "CREATE DOMAIN shop.price AS numeric(10,2) DEFAULT 0"
    " CHECK ((VALUE >= (0)::numeric)) CHECK ((VALUE < (100000)::numeric))",
    "CREATE TABLE customers (id integer PRIMARY KEY, mail email NOT NULL, visits posint, ref code)",
    "CREATE TABLE shop.items (id integer PRIMARY KEY, cost shop.price, qty posint DEFAULT 2)",
    "INSERT INTO customers (id, mail, ref) VALUES (1, 'a@b.c', 'R1'), (2, 'd@e.f', NULL)",
    "INSERT INTO customers VALUES (3, 'g@h.i', 7, 'R3')",
    "INSERT INTO shop.items (id, cost) VALUES (1, 9.99), (2, 0)",
]
ROWS = {
    "customers": [(1, "a@b.c", 1, "R1"), (2, "d@e.f", 1, None), (3, "g@h.i", 7, "R3")],
    "shop.items": [(1, 9.99, 2), (2, 0, 2)],
}


def _check_restored(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for table, rows in ROWS.items():
            got = conn.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()
            assert [
                tuple(float(v) if table == "shop.items" and i == 1 else v for i, v in enumerate(r))
                for r in got
            ] == rows, table
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("INSERT INTO customers (id, mail) VALUES (9, 'nope')")
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("INSERT INTO shop.items (id, cost) VALUES (9, -1)")
        with pytest.raises(psycopg.errors.NotNullViolation):
            conn.execute("INSERT INTO customers (id, mail, visits) VALUES (9, 'x@y', NULL)")
        got = conn.execute("INSERT INTO shop.items (id) VALUES (3) RETURNING cost, qty").fetchall()
        assert [(float(c), q) for c, q in got] == [(0.0, 2)]


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, PgCluster]]:
    with filled_pair(tmp_path_factory.mktemp("domains_src"), SCHEMA) as pair:
        yield pair


def test_dump_writes_what_postgres_dump_writes(servers) -> None:
    srv, pg = servers
    ours, theirs = plain_dump(srv.dsn), plain_dump(pg.dsn)
    assert "CREATE DOMAIN public.posint AS integer NOT NULL DEFAULT 1" in ours
    assert dump_body(ours) == dump_body(theirs)


@pytest.mark.parametrize("source", ["hatiproxy", "postgres"])
def test_dump_restores_into_hatiproxy_and_postgres(servers, source: str, tmp_path: Path) -> None:
    srv, pg_source = servers
    with replayed(
        tmp_path, plain_dump(srv.dsn if source == "hatiproxy" else pg_source.dsn)
    ) as dsns:
        for dsn in dsns:
            _check_restored(dsn)
