"""pg_dump 15 `--create --clean --if-exists` of a database made with CREATE DATABASE, and
its script replayed by `psql -d postgres` as PostgreSQL's restores run: the script drops
the database, makes it again (`WITH TEMPLATE = template0 ENCODING = 'UTF8' ...`),
`\\connect`s to it and fills it; psql's `\\l` lists it (proxy/db/databases.py). And
PostgreSQL's createdb / dropdb programs, with their options."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import psycopg

from tests.conftest import start_server


def test_dump_with_create_restores_through_postgres(tmp_path: Path) -> None:
    srv = start_server(tmp_path, "--embedding-provider", "hash")
    env = {**os.environ, "PGHOST": "127.0.0.1", "PGPORT": str(srv.port), "PGUSER": "tester"}
    try:
        with psycopg.connect(srv.dsn, autocommit=True) as main:
            main.execute("CREATE DATABASE shop")
        with psycopg.connect(srv.dsn, dbname="shop", autocommit=True) as shop:
            shop.execute("CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL)")
            shop.execute("INSERT INTO items (name) VALUES ('a'), ('b')")
        listed = subprocess.run(
            ["psql", "-X", "-A", "-t", "-d", "postgres", "-c", r"\l"],
            capture_output=True, text=True, env=env, timeout=60,
        )  # fmt: skip
        assert [line.split("|")[0] for line in listed.stdout.split()] == ["hatidata", "shop"]
        dump = subprocess.run(
            ["pg_dump", "--create", "--clean", "--if-exists", "-d", "shop"],
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        assert dump.returncode == 0, dump.stderr
        assert "DROP DATABASE IF EXISTS shop;" in dump.stdout
        assert "CREATE DATABASE shop WITH TEMPLATE = template0" in dump.stdout
        restore = subprocess.run(
            ["psql", "-X", "-v", "ON_ERROR_STOP=1", "-d", "postgres", "-f", "-"],
            input=dump.stdout, capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        assert restore.returncode == 0, restore.stderr
        with psycopg.connect(srv.dsn, dbname="shop", autocommit=True) as shop:
            assert shop.execute("SELECT id, name FROM items ORDER BY id").fetchall() == [
                (1, "a"), (2, "b")
            ]  # fmt: skip
            shop.execute("INSERT INTO items (name) VALUES ('c')")  # the serial goes on
            assert shop.execute("SELECT max(id) FROM items").fetchone() == (3,)
    finally:
        srv.stop()


def test_createdb_and_dropdb(tmp_path: Path) -> None:
    srv = start_server(tmp_path, "--embedding-provider", "hash")
    env = {**os.environ, "PGHOST": "127.0.0.1", "PGPORT": str(srv.port), "PGUSER": "tester"}

    def run(*command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)

    try:
        assert run("createdb", "made").returncode == 0
        with psycopg.connect(srv.dsn, dbname="made", autocommit=True) as made:
            made.execute("CREATE TABLE t AS SELECT 1 AS v")
        copy = run("createdb", "-e", "-T", "made", "-E", "UTF8", "copied")
        assert copy.returncode == 0, copy.stderr
        assert "CREATE DATABASE copied ENCODING 'UTF8' TEMPLATE made;" in copy.stdout
        again = run("createdb", "made")
        assert again.returncode == 1
        assert 'database creation failed: ERROR:  database "made" already exists' in again.stderr
        with psycopg.connect(srv.dsn, dbname="copied", autocommit=True) as copied:
            assert copied.execute("SELECT v FROM t").fetchall() == [(1,)]
            missing = run("dropdb", "--if-exists", "nope")
            assert missing.returncode == 0
            assert 'NOTICE:  database "nope" does not exist, skipping' in missing.stderr
            busy = run("dropdb", "copied")
            assert busy.returncode == 1 and "is being accessed by other users" in busy.stderr
            assert run("dropdb", "--force", "copied").returncode == 0
        assert run("dropdb", "made").returncode == 0
        listed = run("psql", "-X", "-At", "-c", "SELECT datname FROM pg_database")
        assert listed.stdout.split() == ["hatidata"]
    finally:
        srv.stop()
