"""Restoring a PostgreSQL 15 dump again over an earlier restore of it, as people refresh a
copy: `pg_restore --clean` and `--clean --if-exists` of a custom dump, and `psql -f` of a
`pg_dump --clean` (and `--clean --if-exists`) plain dump, each twice in a row into the same
hatiproxy. pg_restore drops in its own order: foreign keys and keys first, then a serial
column's default, its sequence (before the table that owns it), the table; DuckDB refused
that DROP SEQUENCE while the table stood. After each round the rows, the sequences'
positions, the constraints and the database's comment are PostgreSQL's, and a serial keeps
counting.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ServerProcess, start_server
from tests.differential.pgcluster import start_pg

BIN = Path("/usr/lib/postgresql/15/bin")

SCHEMA = r"""
CREATE SCHEMA shop;
CREATE TABLE shop.items (id serial PRIMARY KEY, name text UNIQUE, n int CHECK (n > 0));
CREATE TABLE shop.notes (
    id bigserial PRIMARY KEY,
    item_id int REFERENCES shop.items(id) ON DELETE CASCADE,
    body text
);
CREATE INDEX notes_body ON shop.notes (body);
CREATE TABLE public.events (id serial PRIMARY KEY, what text NOT NULL);
CREATE TABLE public.tokens (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, label text);
CREATE SEQUENCE public.loose START 7;
SELECT nextval('public.loose'), nextval('public.loose');
CREATE VIEW public.item_names AS SELECT id, name FROM shop.items;
COMMENT ON TABLE shop.items IS 'things';
COMMENT ON DATABASE postgres IS 'the shop';
INSERT INTO shop.items (name, n) VALUES ('a', 1), ('b', 2), ('c', 3);
INSERT INTO shop.notes (item_id, body) VALUES (1, 'x'), (2, 'y');
INSERT INTO public.events (what) VALUES ('made'), ('sold');
INSERT INTO public.tokens (label) VALUES ('t1'), ('t2');
"""

STATE = {
    "items": "SELECT * FROM shop.items ORDER BY id",
    "notes": "SELECT * FROM shop.notes ORDER BY id",
    "events": "SELECT * FROM public.events ORDER BY id",
    "tokens": "SELECT * FROM public.tokens ORDER BY id",
    "view": "SELECT * FROM public.item_names ORDER BY id",
    "sequences": "SELECT schemaname, sequencename, last_value FROM pg_sequences"
    " WHERE schemaname IN ('shop', 'public') ORDER BY 1, 2",
    "constraints": "SELECT conrelid::regclass::text, conname, contype FROM pg_constraint"
    " WHERE connamespace IN (SELECT oid FROM pg_namespace WHERE nspname IN ('shop', 'public'))"
    " ORDER BY 1, 2",
    "indexes": "SELECT schemaname, indexname FROM pg_indexes"
    " WHERE schemaname IN ('shop', 'public') ORDER BY 1, 2",
    "comment": "SELECT obj_description('shop.items'::regclass, 'pg_class')",
}
# drawn after each round: the restored serials continue after the restored rows
NEXT = "INSERT INTO public.events (what) VALUES ('next') RETURNING id"


def _tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: apt-get install postgresql-15 (.ci/run does)")
    return str(path)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, timeout=300)


@dataclass
class Source:
    dumps: Path
    state: dict[str, list[tuple]]
    next_id: int


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Source:
    pg = start_pg()
    try:
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            conn.execute(SCHEMA)
        where = ["-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres"]
        dumps = tmp_path_factory.mktemp("pg_clean_dumps")
        for flags, name in (
            (["-Fc"], "dump.fc"),
            (["-Fp", "--clean"], "clean.sql"),
            (["-Fp", "--clean", "--if-exists"], "clean_if_exists.sql"),
        ):
            out = _run(_tool("pg_dump"), *flags, *where, "-f", str(dumps / name), "postgres")
            assert out.returncode == 0, out.stderr
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            state = {k: conn.execute(q).fetchall() for k, q in STATE.items()}
            with conn.transaction():
                next_id = conn.execute(NEXT).fetchone()[0]
                raise psycopg.Rollback
        return Source(dumps, state, next_id)
    finally:
        pg.stop()


@pytest.fixture
def target(tmp_path: Path) -> Iterator[ServerProcess]:
    srv = start_server(tmp_path, "--database", ":memory:")
    yield srv
    srv.stop()


def _check(srv: ServerProcess, source: Source, step: str) -> None:
    with psycopg.connect(
        host=srv.host, port=srv.port, user="x", dbname="hatidata", autocommit=True
    ) as conn:
        for key, query in STATE.items():
            assert conn.execute(query).fetchall() == source.state[key], (step, key)
        with conn.transaction():
            assert conn.execute(NEXT).fetchone()[0] == source.next_id, step
            raise psycopg.Rollback


def _restore(srv: ServerProcess, dump: Path, *flags: str) -> None:
    out = _run(
        _tool("pg_restore"), "--exit-on-error", "--no-owner", *flags, "-d", srv.dsn, str(dump)
    )
    assert out.returncode == 0, (flags, out.stderr[-3000:])


def _replay(srv: ServerProcess, script: Path) -> None:
    out = _run("psql", srv.dsn, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", str(script))
    assert out.returncode == 0, (script.name, out.stderr[-3000:])


@pytest.mark.parametrize("flags", [["--clean"], ["--clean", "--if-exists"]])
def test_pg_restore_clean_twice(source: Source, target: ServerProcess, flags: list[str]) -> None:
    dump = source.dumps / "dump.fc"
    _restore(target, dump)
    _check(target, source, "first restore")
    for round_no in (1, 2):
        _restore(target, dump, *flags)
        _check(target, source, f"{' '.join(flags)} round {round_no}")


def test_psql_clean_dump_twice(source: Source, target: ServerProcess) -> None:
    # a --clean script's first DROPs fail on an empty database (as on PostgreSQL):
    # the first load is the plain restore, then the script twice
    _restore(target, source.dumps / "dump.fc")
    for round_no in (1, 2):
        _replay(target, source.dumps / "clean.sql")
        _check(target, source, f"psql -f clean.sql round {round_no}")


def test_psql_clean_if_exists_dump_from_empty(source: Source, target: ServerProcess) -> None:
    for round_no in (1, 2, 3):  # the first into an empty database: every DROP skips
        _replay(target, source.dumps / "clean_if_exists.sql")
        _check(target, source, f"psql -f clean_if_exists.sql round {round_no}")
