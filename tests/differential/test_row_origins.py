"""RowDescription's table oid and column number against PostgreSQL 15.

Drivers read the catalog with them: psqlODBC's and pgJDBC's nullability and base table
names, psycopg's `pgresult.ftable` / `ftablecol`. Oids differ between servers, so each
side's pair is read back through its own pg_class / pg_attribute / pg_namespace in the
same connection, and the names compared.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from sides import pg_beside

from tests.conftest import ServerProcess

SETUP = [
    "CREATE TABLE ro_a (id integer PRIMARY KEY, name text NOT NULL, n integer)",
    "CREATE TABLE ro_b (id integer, a_id integer, note text)",
    "CREATE SCHEMA ro_s",
    'CREATE TABLE ro_s."Mixed" ("Col" integer NOT NULL, x integer)',
    "CREATE VIEW ro_v AS SELECT n, name, id + 1 AS e FROM ro_a",
    "INSERT INTO ro_a VALUES (1, 'x', 2)",
]
QUERIES = [
    "SELECT * FROM ro_a",
    "SELECT ro_a.* FROM ro_a",
    "SELECT name AS who, n FROM ro_a",  # an alias keeps its source
    "SELECT id + 1, name, count(*) OVER () FROM ro_a",  # expressions: 0
    "SELECT * FROM ro_a JOIN ro_b ON ro_a.id = ro_b.a_id",  # duplicate names
    "SELECT ro_b.*, ro_a.id FROM ro_a, ro_b",
    "SELECT name, note FROM ro_a, ro_b",  # unqualified over a join
    "SELECT * FROM ro_v",  # a view is the relation, as in PostgreSQL
    "SELECT * FROM (SELECT name, n AS m FROM ro_a) s",
    "WITH c AS (SELECT name FROM ro_a) SELECT name FROM c",
    "SELECT name FROM ro_a UNION SELECT note FROM ro_b",  # set operations: 0
    'SELECT * FROM ro_s."Mixed"',
    "SELECT x.name FROM ro_a x",
    "SELECT count(*) FROM ro_a",
    "SELECT DISTINCT name FROM ro_a GROUP BY name",
    "SELECT (SELECT name FROM ro_a LIMIT 1)",
    "SELECT * FROM ro_a x(p, q)",
]


@pytest.fixture(scope="module")
def sides(server: ServerProcess) -> Iterator[tuple[str, str]]:
    """PostgreSQL 15 and the session's shared server (names here are this module's)."""
    with pg_beside(server, SETUP) as dsns:
        yield dsns


def _origins(conn: psycopg.Connection, cur: psycopg.Cursor) -> list[tuple[str, str, str] | None]:
    """(schema, relation, column) each result column's oid / attnum name, as the same
    server's catalog says."""
    res = cur.pgresult
    assert res is not None
    out: list[tuple[str, str, str] | None] = []
    for i in range(res.nfields):
        oid, num = res.ftable(i), res.ftablecol(i)
        if oid == 0:
            assert num == 0
            out.append(None)
            continue
        row = conn.execute(
            "SELECT n.nspname, c.relname, a.attname FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " JOIN pg_attribute a ON a.attrelid = c.oid"
            " WHERE c.oid = %s AND a.attnum = %s",
            (oid, num),
        ).fetchone()
        assert row is not None, f"column {i}: oid {oid} attnum {num} is not in the catalog"
        out.append((row[0], row[1], row[2]))
    return out


def _both(sides: tuple[str, str], sql: str, prepare: bool = False) -> list[list]:
    results = []
    for dsn in sides:
        with psycopg.connect(dsn, autocommit=True) as conn:
            cur = conn.execute(sql, prepare=prepare)  # type: ignore[arg-type]
            results.append(_origins(conn, cur))
    return results


@pytest.mark.parametrize("sql", QUERIES)
def test_origins_match_postgres(sides: tuple[str, str], sql: str) -> None:
    pg, hati = _both(sides, sql)
    assert hati == pg


def test_prepared_and_returning_match_postgres(sides: tuple[str, str]) -> None:
    pg, hati = _both(sides, "SELECT name, n + 1 FROM ro_a WHERE id = 1", prepare=True)
    assert hati == pg == [("public", "ro_a", "name"), None]
    for sql in (
        "INSERT INTO ro_b VALUES (7, 1, 'r') RETURNING *",
        "UPDATE ro_b SET note = 's' WHERE id = 7 RETURNING note, id * 2",
        "DELETE FROM ro_b WHERE id = 7 RETURNING a_id",
    ):
        pg, hati = _both(sides, sql)
        assert hati == pg, sql


def test_describe_statement_matches_postgres(sides: tuple[str, str]) -> None:
    """Parse + Describe (statement), as pgJDBC and node-postgres send it: the same oids."""
    found = []
    for dsn in sides:
        with psycopg.connect(dsn, autocommit=True) as conn:
            pgconn = conn.pgconn
            sql = b"SELECT a.name, b.note, a.id * 2 FROM ro_a a JOIN ro_b b ON a.id = b.a_id"
            assert pgconn.prepare(b"ro_stmt", sql).status == psycopg.pq.ExecStatus.COMMAND_OK
            res = pgconn.describe_prepared(b"ro_stmt")
            pairs = [(res.ftable(i), res.ftablecol(i)) for i in range(res.nfields)]
            names = []
            for oid, num in pairs:
                row = conn.execute(
                    "SELECT c.relname, a.attname FROM pg_class c JOIN pg_attribute a"
                    " ON a.attrelid = c.oid WHERE c.oid = %s AND a.attnum = %s",
                    (oid, num),
                ).fetchone()
                names.append(row)
            found.append(names)
    pg, hati = found
    assert hati == pg == [("ro_a", "name"), ("ro_b", "note"), None]


def test_temp_table_and_recreated_table(sides: tuple[str, str]) -> None:
    """A temp table's own oid; a table dropped and made again: its new oid, at once."""
    found = []
    for dsn in sides:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE TEMP TABLE ro_tmp (z integer NOT NULL)")
            temp = _origins(conn, conn.execute("SELECT * FROM ro_tmp"))
            conn.execute("CREATE TABLE ro_re (k integer, w text)")
            conn.execute("SELECT w FROM ro_re")
            conn.execute("DROP TABLE ro_re")
            conn.execute("CREATE TABLE ro_re (w text, k integer)")
            again = _origins(conn, conn.execute("SELECT w FROM ro_re"))
            conn.execute("DROP TABLE ro_re")
            found.append((temp[0][1:] if temp[0] else None, again))
    pg, hati = found
    assert hati == pg == (("ro_tmp", "z"), [("public", "ro_re", "w")])


def test_oid_stable_across_connections(sides: tuple[str, str]) -> None:
    _pg, hati = sides
    seen = set()
    for _ in range(2):
        with psycopg.connect(hati, autocommit=True) as conn:
            for sql in ("SELECT n FROM ro_a", "SELECT ro_a.n FROM ro_a JOIN ro_b ON true"):
                res = conn.execute(sql).pgresult
                assert res is not None
                seen.add((res.ftable(0), res.ftablecol(0)))
    assert len(seen) == 1 and next(iter(seen))[0] != 0


def test_table_remade_in_another_sessions_block(sides: tuple[str, str]) -> None:
    """A table dropped and made again inside another session's block: after its COMMIT,
    this session's next statement names the new table (it had read the old one)."""
    _pg, hati = sides
    with (
        psycopg.connect(hati, autocommit=True) as reader,
        psycopg.connect(hati) as writer,
    ):
        reader.execute("CREATE TABLE ro_blk (k integer, w text)")
        before = _origins(reader, reader.execute("SELECT w FROM ro_blk"))
        writer.execute("DROP TABLE ro_blk")
        writer.execute("CREATE TABLE ro_blk (w text, k integer)")
        assert _origins(reader, reader.execute("SELECT w FROM ro_blk")) == before
        writer.commit()
        after = _origins(reader, reader.execute("SELECT w FROM ro_blk"))
        reader.execute("DROP TABLE ro_blk")
    assert before == after == [("public", "ro_blk", "w")]


def test_search_path_decides_the_table(sides: tuple[str, str]) -> None:
    """An unqualified name is the table the search_path finds first, before and after
    SET search_path in the same session."""
    found = []
    for dsn in sides:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE SCHEMA IF NOT EXISTS ro_p")
            conn.execute("CREATE TABLE IF NOT EXISTS ro_p.ro_a (z integer, name text)")
            sql = "SELECT name FROM ro_a"
            before = _origins(conn, conn.execute(sql))
            conn.execute("SET search_path = ro_p, public")
            after = _origins(conn, conn.execute(sql))
            found.append((before, after))
    pg, hati = found
    assert hati == pg == ([("public", "ro_a", "name")], [("ro_p", "ro_a", "name")])
