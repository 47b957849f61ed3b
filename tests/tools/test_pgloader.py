"""pgloader 3.6.9 (Debian `pgloader`; Common Lisp, its own Postmodern driver) against
PostgreSQL 15 and a real hatiproxy server: a CSV file (a header, quoted fields with a comma
and doubled quotes, an empty field, an empty date) into a table its BEFORE LOAD creates and
again into that existing table (`truncate`), and a SQLite database (integer primary keys,
a foreign key, an index; text / real / blob columns) with `LOAD DATABASE`: the rows, the
indexes, the primary and foreign keys, pgloader's exit status and summary counts.

Known difference (asserted): pgloader's default SQLite load ends with its "Reset
Sequences" step, a PL/pgSQL `DO $$ DECLARE ... FOR r IN <catalog query> LOOP EXECUTE r.sql
... END $$`; hatiproxy's DO blocks have no variables or loops (0A000), so pgloader exits 1
after the rows and indexes are in, before the primary and foreign keys (no summary is
printed). With `reset no
sequences` the load is PostgreSQL's."""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import psycopg
import pytest

CSV = 'id,name,note,born\n1,ann,"hello, world",2001-02-03\n2,bob,,1999-12-31\n3,"c ""q""",x,\n'
CSV_LOAD = """LOAD CSV FROM '{csv}' (id, name, note, born)
  INTO {url}?tablename=people
  TARGET COLUMNS (id, name, note, born)
  WITH {truncate}skip header = 1, fields optionally enclosed by '"', fields terminated by ','
  BEFORE LOAD DO $$ CREATE TABLE IF NOT EXISTS people
    (id int primary key, name text, note text, born date); $$;
"""
SQLITE_LOAD = """LOAD DATABASE FROM sqlite://{db}
  INTO {url}
  WITH include drop, create tables, create indexes, reset no sequences, foreign keys;
"""
CHECKS = {
    "columns": "SELECT table_name, column_name, data_type, is_nullable "
    "FROM information_schema.columns WHERE table_name IN ('cat', 'item', 'people') "
    "ORDER BY table_name, ordinal_position",
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes "
    "WHERE tablename IN ('cat', 'item', 'people') ORDER BY tablename, indexdef",
    "constraints": "SELECT conrelid::regclass::text, contype, pg_get_constraintdef(oid) "
    "FROM pg_constraint WHERE conrelid IN ('cat'::regclass, 'item'::regclass) ORDER BY 1, 3",
    "people": "SELECT id, name, note, born::text FROM people ORDER BY id",
    "cat": "SELECT id, name, weight FROM cat ORDER BY id",
    "item": "SELECT id, cat_id, label, price, encode(data, 'hex') FROM item ORDER BY id",
}


def _sqlite_db(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.executescript(
            """
            CREATE TABLE cat (id integer PRIMARY KEY, name text NOT NULL, weight real);
            CREATE TABLE item (id integer PRIMARY KEY, cat_id integer REFERENCES cat(id),
                               label text, price real, data blob);
            CREATE INDEX item_label ON item (label);
            INSERT INTO cat VALUES (1, 'tools', 1.5), (2, 'toys', NULL);
            INSERT INTO item VALUES (1, 1, 'hammer', 9.99, x'00ff10'), (2, 1, 'saw', 19.5, NULL),
                                    (3, 2, 'ball', NULL, x'41');
            """
        )
    db.close()


def _pgloader(*args: str) -> tuple[int, str, dict[str, list[str]]]:
    """Exit status, output, and the summary's rows by name (errors, rows)."""
    program = shutil.which("pgloader")
    if program is None:
        pytest.fail("pgloader is missing: `bash .ci/run` installs the Debian package")
    proc = subprocess.run(
        [program, "--no-ssl-cert-verification", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    summary = {}
    for line in out.splitlines():
        found = re.match(r"^\s*(\S.*?)\s{2,}(\d+|✓|✗)\s+(\d+)(\s|$)", line)
        if found:
            summary[found[1].strip()] = [found[2], found[3]]
    return proc.returncode, out, summary


def _state(dsn: str) -> dict[str, object]:
    out: dict[str, object] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        for name, sql in CHECKS.items():
            rows = conn.execute(sql).fetchall()  # type: ignore[call-overload]
            # pgloader names indexes idx_<table oid>_<name>: the oids differ
            out[name] = [
                tuple(re.sub(r"idx_\d+_", "idx_N_", v) if isinstance(v, str) else v for v in r)
                for r in rows
            ]
    return out


def _run(url: str, dsn: str, tmp: Path) -> dict[str, object]:
    csv_path = tmp / "people.csv"
    csv_path.write_text(CSV)
    _sqlite_db(tmp / "src.db")
    out: dict[str, object] = {}
    for step, text in (
        ("csv_create", CSV_LOAD.format(csv=csv_path, url=url, truncate="")),
        ("csv_existing", CSV_LOAD.format(csv=csv_path, url=url, truncate="truncate, ")),
        ("sqlite", SQLITE_LOAD.format(db=tmp / "src.db", url=url)),
    ):
        command = tmp / f"{step}.load"
        command.write_text(text)
        code, text_out, summary = _pgloader(str(command))
        out[step] = (code, summary.get("Total import time"), text_out if code else "")
    out["state"] = _state(dsn)
    code, text_out, summary = _pgloader(f"sqlite://{tmp / 'src.db'}", url)
    errors = re.findall(r"ERROR Database error (\w+): ([^\n]*)", text_out)
    out["sqlite_default"] = (code, summary.get("item"), summary.get("Primary Keys"), errors[:1])
    out["state_default"] = _state(dsn)
    return out


def test_pgloader_csv_and_sqlite_as_into_postgresql(tmp_path: Path) -> None:
    from tests.conftest import start_server
    from tests.differential.pgcluster import start_pg

    pg = start_pg()
    try:
        (tmp_path / "pg").mkdir()
        url = f"postgresql://postgres:secret@127.0.0.1:{pg.port}/postgres"
        theirs = _run(url, pg.dsn, tmp_path / "pg")
    finally:
        pg.stop()
    srv = start_server(tmp_path / "srv", "--database", ":memory:")
    try:
        (tmp_path / "hp").mkdir()
        url = f"postgresql://tester:secret@{srv.host}:{srv.port}/hatidata"
        ours = _run(url, srv.dsn, tmp_path / "hp")
    finally:
        srv.stop()
    # What PostgreSQL 15 gives.
    for step in ("csv_create", "csv_existing", "sqlite"):
        assert theirs[step][:2] == (0, ["✓", str({"sqlite": 5}.get(step, 3))]), theirs[step]
    state = theirs["state"]
    assert isinstance(state, dict)
    assert state["people"] == [
        (1, "ann", "hello, world", "2001-02-03"),
        (2, "bob", None, "1999-12-31"),
        (3, 'c "q"', "x", None),
    ]
    assert state["item"][0] == (1, 1, "hammer", 9.99, "00ff10")
    assert ("item", "f", "FOREIGN KEY (cat_id) REFERENCES cat(id)") in state["constraints"]
    assert theirs["sqlite_default"][0] == 0
    assert theirs["state_default"] == state
    # hatiproxy: the same, but for the default SQLite load's DO block (see the docstring).
    for step in ("csv_create", "csv_existing", "sqlite"):
        assert ours[step] == theirs[step], ours[step]
    assert ours["state"] == state
    code, item, pkeys, errors = ours["sqlite_default"]  # type: ignore[misc]
    assert (code, item, pkeys) == (1, None, None)  # it stops: no summary
    assert errors == [
        (
            "0A000",
            "DECLARE (variables) in a DO block is not supported: hatiproxy runs DO blocks of "
            "the form BEGIN <SQL statements>; [EXCEPTION WHEN <condition> THEN <statements>;] END",
        )
    ]
    default = ours["state_default"]
    assert isinstance(default, dict)
    later = ("constraints", "columns")  # the keys (and so NOT NULL) come after the DO block
    assert {k: v for k, v in default.items() if k not in later} == {
        k: v for k, v in state.items() if k not in later
    }
    assert default["constraints"] == []
    assert ("cat", "id", "bigint", "YES") in default["columns"]  # type: ignore[operator]


@pytest.mark.parametrize("method", ["scram", "md5"])
def test_pgloader_logs_in_with_scram_and_md5(tmp_path: Path, method: str) -> None:
    """Postmodern answers the server's SCRAM-SHA-256 and md5 requests; a wrong password is
    28P01 in PostgreSQL's words and pgloader exits 1."""
    from tests.conftest import start_server

    args = ["--database", ":memory:", "--users", "alice:secret"]
    if method != "scram":
        args += ["--auth-method", method]
    srv = start_server(tmp_path / "srv", *args)
    try:
        csv_path = tmp_path / "people.csv"
        csv_path.write_text(CSV)
        outcome = {}
        for password in ("secret", "wrong"):
            url = f"postgresql://alice:{password}@{srv.host}:{srv.port}/hatidata"
            command = tmp_path / f"{password}.load"
            command.write_text(CSV_LOAD.format(csv=csv_path, url=url, truncate=""))
            code, out, summary = _pgloader(str(command))
            refused = re.findall(r"Database error 28P01: [^\n]*", out)
            outcome[password] = (code, summary.get("Total import time"), refused[:1])
    finally:
        srv.stop()
    assert outcome == {
        "secret": (0, ["✓", "3"], []),
        "wrong": (1, None, ['Database error 28P01: password authentication failed for user "alice"']),
    }  # fmt: skip
