"""Differential tests: the same SQL on a throwaway PostgreSQL 15 and on hatiproxy.

Cases live in ``cases/*.sql`` (format in ``cases.py``); one test per query.
Results are fetched with psycopg 3 on both sides, so Python types must match
too (int vs Decimal vs float). psycopg sends a parameterless text query with
the simple protocol; read-only queries are run a second time on hatiproxy with
binary results, which goes through the extended protocol and binary encoders.
``known_differences.sql`` holds SQL translation gaps: those tests assert the
results STILL differ, so a fix in the transpiler is noticed and the case moved.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest
from cases import KNOWN_FILE, CaseFile, Outcome, Query, compare, load_all, parse_case_file
from pgcluster import start_pg

# tests/ is not a package; make `tests.conftest` importable however pytest was started.
if (_root := str(Path(__file__).resolve().parents[2])) not in sys.path:
    sys.path.append(_root)
from tests.conftest import ServerProcess, start_server  # noqa: E402

ALL = load_all()
REGULAR = [q for cf in ALL if cf.name + ".sql" != KNOWN_FILE for q in cf.queries]
KNOWN = [q for cf in ALL if cf.name + ".sql" == KNOWN_FILE for q in cf.queries]
FILES = {cf.name: cf for cf in ALL}
_READ_ONLY = re.compile(r"^\s*(select|values|table)\b", re.IGNORECASE)


def run(conn: psycopg.Connection, sql: str, binary: bool = False) -> Outcome:
    with conn.cursor(binary=binary) as cur:
        try:
            cur.execute(sql)  # type: ignore[arg-type]  # case text is trusted SQL
        except psycopg.Error as exc:
            return Outcome(sqlstate=exc.sqlstate or "?????", message=str(exc).splitlines()[0])
        rows = cur.fetchall() if cur.description is not None else None
        return Outcome(rows=rows, status=cur.statusmessage)


@dataclass
class Sides:
    pg: psycopg.Connection
    hati: psycopg.Connection
    ready: set[str] = field(default_factory=set)

    def setup(self, cf: CaseFile) -> None:
        """Run a file's setup once per session on both sides; any failure is fatal."""
        if cf.name in self.ready:
            return
        self.ready.add(cf.name)
        for stmt in cf.setup:
            for side, conn in (("PG", self.pg), ("hatiproxy", self.hati)):
                out = run(conn, stmt)
                if out.sqlstate:
                    raise AssertionError(f"{cf.name} setup failed on {side}: {stmt}\n{out.message}")


@pytest.fixture(scope="session")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sides]:
    pg = start_pg()
    srv: ServerProcess | None = None
    try:
        # Our own server: case files create tables we do not want in the shared one.
        srv = start_server(tmp_path_factory.mktemp("diffserver"), "--database", ":memory:")
        opts = {"autocommit": True, "options": "-c TimeZone=UTC"}
        with (
            psycopg.connect(pg.dsn, **opts) as pg_conn,  # type: ignore[arg-type]
            # The same login name on both sides: current_user & co. compare equal.
            psycopg.connect(srv.dsn.replace("user=tester", "user=postgres"), **opts) as hati_conn,  # type: ignore[arg-type]
        ):
            yield Sides(pg_conn, hati_conn)
    finally:
        if srv is not None:
            srv.stop()
        pg.stop()


def _outcomes(sides: Sides, q: Query) -> tuple[Outcome, Outcome, Outcome | None]:
    sides.setup(FILES[q.file])
    pg = run(sides.pg, q.sql)
    hati = run(sides.hati, q.sql)
    binary = None
    if _READ_ONLY.match(q.sql) and hati.rows is not None and not q.expect_error:
        binary = run(sides.hati, q.sql, binary=True)
    return pg, hati, binary


@pytest.mark.parametrize("q", REGULAR, ids=[q.id for q in REGULAR])
def test_same_as_postgres(sides: Sides, q: Query) -> None:
    pg, hati, binary = _outcomes(sides, q)
    diff = compare(q, pg, hati)
    assert diff is None, f"{q.id}\n{q.sql}\n{diff}"
    if binary is not None:
        diff = compare(q, pg, binary)
        assert diff is None, f"{q.id} (binary results)\n{q.sql}\n{diff}"


@pytest.mark.parametrize("q", KNOWN, ids=[q.id for q in KNOWN])
def test_known_difference_still_differs(sides: Sides, q: Query) -> None:
    pg, hati, _ = _outcomes(sides, q)
    assert compare(q, pg, hati) is not None, (
        f"{q.id} now matches PostgreSQL ({pg.describe()}): move it from {KNOWN_FILE} "
        "to a regular case file"
    )


def test_case_files_are_well_formed() -> None:
    assert len(REGULAR) >= 150
    for q in KNOWN:
        assert q.reason, f"{q.id}: every known difference needs a '-- @reason'"
    for q in REGULAR:
        assert not q.reason, f"{q.id}: @reason belongs in {KNOWN_FILE} only"


def test_case_parser(tmp_path: Path) -> None:
    p = tmp_path / "demo.sql"
    p.write_text(
        "-- header\n-- @setup\nCREATE TABLE d_x (a int);\nINSERT INTO d_x\nVALUES (1);\n"
        "-- @query q1\n-- note\nSELECT a FROM d_x ORDER BY a;\n"
        "-- @query q2 error\nSELECT 1/0;\n-- @reason why\n"
    )
    cf = parse_case_file(p)
    assert cf.setup == ["CREATE TABLE d_x (a int)", "INSERT INTO d_x\nVALUES (1)"]
    assert [(q.name, q.sql, q.expect_error) for q in cf.queries] == [
        ("q1", "SELECT a FROM d_x ORDER BY a", False),
        ("q2", "SELECT 1/0", True),
    ]
    assert cf.queries[1].reason == "why"


# Catalog columns that are "char" in PostgreSQL (OID 18; "char"[] 1002) reach the client
# typed so, through aliases and subqueries too: asyncpg compares pg_type.typtype to bytes.
CHAR_COLUMN_QUERIES = [
    "SELECT typtype FROM pg_type LIMIT 1",
    "SELECT relkind FROM pg_class LIMIT 1",
    "SELECT c.relkind AS k FROM pg_class c LIMIT 1",
    "SELECT s.k FROM (SELECT relkind AS k FROM pg_class) s LIMIT 1",
    "SELECT t.typtype AS kind, t.typcategory, t.typdelim, t.typalign, t.typstorage "
    "FROM pg_type t WHERE t.typname = 'int4'",
    "SELECT relpersistence, relreplident FROM pg_class WHERE relname = 'pg_type'",
    "SELECT a.attalign, a.attstorage, a.attidentity, a.attgenerated FROM pg_attribute a "
    "JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = 'pg_type' AND a.attnum = 1",
    "SELECT prokind, provolatile, proparallel FROM pg_proc LIMIT 1",
    "SELECT contype, confupdtype, confdeltype, confmatchtype FROM pg_constraint LIMIT 1",
    "SELECT deptype FROM pg_depend LIMIT 1",
    "SELECT array_agg(relkind) AS kinds FROM pg_class",
]


@pytest.mark.parametrize("sql", CHAR_COLUMN_QUERIES)
def test_catalog_char_columns_typed_as_postgres(sides: Sides, sql: str) -> None:
    types = {}
    for side, conn in (("PostgreSQL", sides.pg), ("hatiproxy", sides.hati)):
        with conn.cursor() as cur:
            cur.execute(sql)  # type: ignore[arg-type]
            types[side] = [(d.name, d.type_code) for d in cur.description or ()]
    assert types["hatiproxy"] == types["PostgreSQL"], sql
    if "int4" in sql:  # the same values, in text and in binary
        expected = run(sides.pg, sql, binary=True).rows
        assert run(sides.hati, sql).rows == run(sides.pg, sql).rows
        assert run(sides.hati, sql, binary=True).rows == expected


# Catalog identifier columns and functions PostgreSQL types name (OID 19; name[] 1003)
# reach the client typed so (transpiler/name_types.py): node-postgres parses text[] into
# an array but hands name[] over as its '{a,b}' text, which Sequelize's showIndex reads.
NAME_COLUMN_QUERIES = [
    "SELECT relname FROM pg_class WHERE relname = 'pg_type'",
    "SELECT c.relname AS t, n.nspname FROM pg_class c JOIN pg_namespace n "
    "ON n.oid = c.relnamespace WHERE c.relname = 'pg_type'",
    "SELECT s.r FROM (SELECT relname AS r FROM pg_class) s WHERE s.r = 'pg_type'",
    "SELECT c.relname, array_agg(a.attname ORDER BY a.attnum) AS cols FROM pg_class c "
    "JOIN pg_attribute a ON a.attrelid = c.oid WHERE c.relname = 'd_name_t' AND a.attnum > 0 "
    "GROUP BY c.relname",
    "SELECT current_user, session_user, current_schema(), current_database(), "
    "current_schemas(false), 'x'::name AS n",
    "SELECT (SELECT relname FROM pg_class WHERE relname = 'pg_type') AS r, "
    "coalesce(NULL, relname) AS c, relname::text AS t FROM pg_class WHERE relname = 'pg_type'",
    "SELECT table_name, column_name, data_type = 'text' AS is_text "
    "FROM information_schema.columns WHERE table_name = 'd_name_t' ORDER BY column_name",
    # Sequelize's showIndex
    "SELECT i.relname AS name, ix.indisprimary AS primary, ix.indisunique AS unique, "
    "ix.indkey AS indkey, array_agg(a.attnum) as column_indexes, array_agg(a.attname) AS "
    "column_names, pg_get_indexdef(ix.indexrelid) AS definition FROM pg_class t, pg_class i, "
    "pg_index ix, pg_attribute a WHERE t.oid = ix.indrelid AND i.oid = ix.indexrelid AND "
    "a.attrelid = t.oid AND t.relkind = 'r' and t.relname = 'd_name_t' AND a.attnum > 0 "
    "GROUP BY i.relname, ix.indexrelid, ix.indisprimary, ix.indisunique, ix.indkey "
    "ORDER BY i.relname",
]


@pytest.mark.parametrize("sql", NAME_COLUMN_QUERIES)
def test_catalog_name_columns_typed_as_postgres(sides: Sides, sql: str) -> None:
    for conn in (sides.pg, sides.hati):
        conn.execute("CREATE TABLE IF NOT EXISTS d_name_t (id int PRIMARY KEY, a text)")
    types = {}
    for side, conn in (("PostgreSQL", sides.pg), ("hatiproxy", sides.hati)):
        with conn.cursor() as cur:
            cur.execute(sql)  # type: ignore[arg-type]
            types[side] = [(d.name, d.type_code) for d in cur.description or ()]
    assert types["hatiproxy"] == types["PostgreSQL"], sql
    # (PostgreSQL lists system columns in column_indexes; the database names differ)
    if "column_indexes" not in sql and "current_database" not in sql:
        expected = run(sides.pg, sql).rows
        assert run(sides.hati, sql).rows == expected
        assert run(sides.hati, sql, binary=True).rows == expected
