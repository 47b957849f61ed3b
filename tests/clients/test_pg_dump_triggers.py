"""Triggers (a BEFORE UPDATE OF one, a DELETE guard with RAISE, an AFTER ROW audit log
and an AFTER statement one) through pg_dump 15 and a server restart
(proxy/pgserver/triggers.py, proxy/pgserver/after_triggers.py).

The same schema made in hatiproxy and in a real PostgreSQL 15: `pg_dump -Fp` of each
writes the trigger function (`CREATE FUNCTION ... RETURNS trigger LANGUAGE plpgsql AS
$$...$$`) and `CREATE TRIGGER ...` after the data; hatiproxy's dump replays with
`psql -v ON_ERROR_STOP=1` into a fresh hatiproxy and into PostgreSQL 15, where the
restored triggers fire alike. A server started again on its data directory still runs
its triggers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pg_dump_support import fill, filled_pair, plain_dump, replayed

from tests.conftest import ServerProcess, start_server
from tests.differential.pgcluster import PgCluster

SCHEMA = [
    "CREATE TABLE posts (id serial PRIMARY KEY, title text NOT NULL, version int NOT NULL"
    " DEFAULT 1, updated_at timestamptz NOT NULL DEFAULT '2000-01-01 00:00:00+00')",
    "CREATE FUNCTION set_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n"
    "  NEW.updated_at := '2030-01-01 00:00:00+00';\n  NEW.version = OLD.version + 1;\n"
    "  RETURN NEW;\nEND;\n$$",
    "CREATE TRIGGER posts_updated_at BEFORE UPDATE OF title ON posts FOR EACH ROW"
    " EXECUTE FUNCTION set_updated_at()",
    "CREATE FUNCTION guard_delete() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n"
    "  IF OLD.title = 'b' THEN\n    RAISE EXCEPTION 'post % is kept', OLD.id USING ERRCODE ="
    " 'restrict_violation';\n  END IF;\n  RETURN OLD;\nEND;\n$$",
    "CREATE TRIGGER posts_guard BEFORE DELETE ON posts FOR EACH ROW"
    " EXECUTE FUNCTION guard_delete()",
    "CREATE TABLE post_log (n serial PRIMARY KEY, op text, post_id int, level text)",
    "CREATE FUNCTION log_post() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n"
    "  INSERT INTO post_log (op, post_id, level) VALUES (TG_OP, COALESCE(NEW.id, OLD.id),"
    " TG_LEVEL);\n  RETURN NULL;\nEND;\n$$",
    "CREATE TRIGGER posts_log AFTER INSERT OR DELETE ON posts FOR EACH ROW"
    " EXECUTE FUNCTION log_post()",
    "CREATE TRIGGER posts_log_statement AFTER UPDATE ON posts FOR EACH STATEMENT"
    " EXECUTE FUNCTION log_post()",
    "INSERT INTO posts (title) VALUES ('a'), ('b')",
]


def _objects(dump: str) -> list[str]:
    """The dump's function and trigger entries (header comment to the next one)."""
    dump = re.sub(r"\\(un)?restrict \S+", "", dump)  # a random key per dump
    parts = re.split(r"\n--\n-- Name: ", dump)
    return [p for p in parts if re.match(r"[^;\n]+; Type: (FUNCTION|TRIGGER);", p)]


def _check_fires(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute("SELECT id, title, version, updated_at::text FROM posts ORDER BY id")
        assert rows.fetchall() == [
            (1, "a", 1, "2000-01-01 00:00:00+00"),
            (2, "b", 1, "2000-01-01 00:00:00+00"),
        ]
        got = conn.execute(
            "UPDATE posts SET title = 'c' WHERE id = 1 RETURNING version, updated_at::text"
        ).fetchall()
        assert got == [(2, "2030-01-01 00:00:00+00")]
        with pytest.raises(psycopg.errors.RestrictViolation, match="^post 2 is kept"):
            conn.execute("DELETE FROM posts")
        assert conn.execute("DELETE FROM posts WHERE id = 1").rowcount == 1
        log = conn.execute("SELECT op, post_id, level FROM post_log ORDER BY n").fetchall()
        assert log == [
            ("INSERT", 1, "ROW"),
            ("INSERT", 2, "ROW"),
            ("UPDATE", None, "STATEMENT"),
            ("DELETE", 1, "ROW"),
        ]


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, PgCluster]]:
    with filled_pair(tmp_path_factory.mktemp("triggers_src"), SCHEMA) as pair:
        yield pair


def test_dump_writes_what_postgres_dump_writes(servers) -> None:
    srv, pg = servers
    ours, theirs = plain_dump(srv.dsn), plain_dump(pg.dsn)
    assert "CREATE TRIGGER posts_updated_at BEFORE UPDATE OF title ON public.posts" in ours
    assert "CREATE TRIGGER posts_log_statement AFTER UPDATE ON public.posts FOR EACH" in ours
    assert len(_objects(ours)) == 7  # the functions and the triggers
    assert _objects(ours) == _objects(theirs)


def test_dump_restores_into_hatiproxy_and_postgres(servers, tmp_path: Path) -> None:
    srv, _ = servers
    with replayed(
        tmp_path, plain_dump(srv.dsn), env={"PGTZ": "UTC", "PATH": "/usr/bin:/bin"}
    ) as dsns:
        for dsn in dsns:
            _check_fires(dsn)


def test_triggers_survive_a_restart(tmp_path: Path) -> None:
    srv = start_server(tmp_path)
    try:
        fill(srv.dsn, SCHEMA)
    finally:
        srv.stop()
    again: ServerProcess = start_server(tmp_path)
    try:
        _check_fires(again.dsn)
    finally:
        again.stop()
