"""varchar(n): the declared length is kept in DuckDB's catalog as a CHECK constraint
(transpiler/varchar_length.py), read back by the catalog layer as Postgres' typmod n + 4,
and enforced by DuckDB, reported as Postgres' 22001.

What each client reads: psql `\\d` (format_type), information_schema.columns, pgJDBC
getColumns (atttypid / atttypmod -> TYPE_NAME / COLUMN_SIZE), SQLAlchemy inspect
(format_type text). The limits (README, "PostgreSQL compatibility notes") are pinned too.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa

from tests.conftest import ServerProcess
from tests.conftest import psql_command as psql

JAR = Path("/usr/share/java/postgresql.jar")
JAVA_SRC = Path(__file__).parent / "java" / "CatalogMeta.java"
TABLE = "vlen_people"
DDL = (
    f"CREATE TABLE {TABLE} (id int PRIMARY KEY, name varchar(10), "
    "code character varying(3) NOT NULL DEFAULT 'abc', note text, "
    "score int CHECK (score >= 0), free varchar)"
)


@pytest.fixture(scope="module")
def srv(server: ServerProcess) -> ServerProcess:
    """The session's shared server: every table here is named vlen_* (no collisions)."""
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(DDL)
    return server


def test_pg_attribute_and_format_type(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.atttypmod, t.typname "
            "FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
            f"WHERE a.attrelid = '{TABLE}'::regclass AND a.attnum > 0 ORDER BY a.attnum"
        ).fetchall()
    assert rows == [
        ("id", "integer", -1, "int4"),
        ("name", "character varying(10)", 14, "varchar"),
        ("code", "character varying(3)", 7, "varchar"),
        ("note", "text", -1, "text"),
        ("score", "integer", -1, "int4"),
        ("free", "character varying", -1, "varchar"),  # unsized: typmod -1
    ]


def test_information_schema_columns(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT column_name, data_type, character_maximum_length, character_octet_length, "
            "udt_name FROM information_schema.columns WHERE table_name = %s "
            "AND column_name IN ('name', 'code', 'note') ORDER BY ordinal_position",
            [TABLE],
        ).fetchall()
    assert rows == [
        ("name", "character varying", 10, 40, "varchar"),
        ("code", "character varying", 3, 12, "varchar"),
        ("note", "text", None, 1073741824, "text"),
    ]


def test_length_is_a_type_not_a_listed_check_constraint(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        checks = conn.execute(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
            f"WHERE conrelid = '{TABLE}'::regclass AND contype = 'c'"
        ).fetchall()
        relchecks = conn.execute(
            "SELECT relchecks FROM pg_class WHERE relname = %s", [TABLE]
        ).fetchone()
    assert checks == [("CHECK ((score >= 0))",)]
    assert relchecks == (1,)  # psql asks pg_constraint for CHECKs only when relchecks > 0


def test_psql_describe(srv: ServerProcess) -> None:
    out = psql(srv, rf"\d {TABLE}")
    lines = [" ".join(line.split()) for line in out.splitlines()]
    assert "name | character varying(10) | | |" in lines, out
    # the default as PostgreSQL shows it: the constant coerced to the column's type
    assert "code | character varying(3) | | not null | 'abc'::character varying" in lines, out
    assert "note | text | | |" in lines, out
    # the user's own CHECK is listed, the length is not
    assert '"vlen_people_score_check" CHECK (score >= 0)' in lines, out  # pretty, as PG
    assert "length" not in out, out


def test_sqlalchemy_inspect(srv: ServerProcess) -> None:
    engine = sa.create_engine(srv.url("postgresql+psycopg"))
    try:
        cols = {c["name"]: c["type"] for c in sa.inspect(engine).get_columns(TABLE)}
        checks = sa.inspect(engine).get_check_constraints(TABLE)
    finally:
        engine.dispose()
    assert isinstance(cols["name"], sa.VARCHAR) and cols["name"].length == 10
    assert isinstance(cols["code"], sa.VARCHAR) and cols["code"].length == 3
    assert isinstance(cols["note"], sa.TEXT)
    assert [c["sqltext"] for c in checks] == ["score >= 0"]


def test_jdbc_get_columns(srv: ServerProcess, tmp_path: Path) -> None:
    assert JAR.exists(), "install libpostgresql-jdbc-java"
    subprocess.run(["javac", "-d", str(tmp_path), str(JAVA_SRC)], check=True, timeout=120)
    url = f"jdbc:postgresql://{srv.host}:{srv.port}/hatidata?user=x"
    out = subprocess.run(
        ["java", "-cp", f"{tmp_path}:{JAR}", "CatalogMeta", url, TABLE],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    cols = [dict(f.split("=", 1) for f in line.split("\t")[1:]) for line in out.stdout.splitlines()
            if line.startswith("getColumns\tTABLE_CAT")]  # fmt: skip
    got = {c["COLUMN_NAME"]: (c["DATA_TYPE"], c["TYPE_NAME"], c["COLUMN_SIZE"]) for c in cols}
    assert got["name"] == ("12", "varchar", "10")  # java.sql.Types.VARCHAR
    assert got["code"] == ("12", "varchar", "3")
    assert got["note"][1] == "text"


def test_too_long_value_is_22001(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE vlen_writes (id int, name varchar(5))")
        conn.execute("INSERT INTO vlen_writes VALUES (1, 'abcde'), (2, NULL), (3, 'ééééé')")
        for sql, params in [
            ("INSERT INTO vlen_writes VALUES (9, 'abcdef')", None),
            ("INSERT INTO vlen_writes VALUES (9, %s)", ["abcdef"]),  # extended protocol
            ("UPDATE vlen_writes SET name = name || 'x' WHERE id = 1", None),
            # Postgres would store 'abc' (excess trailing spaces are cut); the CHECK refuses
            ("INSERT INTO vlen_writes VALUES (9, 'abcde ')", None),
        ]:
            with pytest.raises(psycopg.errors.StringDataRightTruncation) as err:
                conn.execute(sql, params)
            assert err.value.sqlstate == "22001"
            assert err.value.diag.message_primary == (
                "value too long for type character varying(5)"
            )
        # COPY FROM STDIN goes through the same constraint
        with (
            pytest.raises(psycopg.errors.StringDataRightTruncation),
            conn.cursor().copy("COPY vlen_writes FROM STDIN") as copy,
        ):
            copy.write_row((10, "toolong"))
        # an explicit cast truncates, as in Postgres
        conn.execute("INSERT INTO vlen_writes VALUES (4, 'abcdefgh'::varchar(5))")
        rows = conn.execute("SELECT id, name FROM vlen_writes ORDER BY id").fetchall()
        assert rows == [(1, "abcde"), (2, None), (3, "ééééé"), (4, "abcde")]
        # other CHECK failures keep 23514
        conn.execute("CREATE TABLE vlen_other (n int CHECK (n > 0), s varchar CHECK (s <> ''))")
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("INSERT INTO vlen_other VALUES (0, 'x')")
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("INSERT INTO vlen_other VALUES (1, '')")


def test_too_long_value_fails_the_transaction(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn, autocommit=True) as setup:
        setup.execute("CREATE TABLE vlen_txn (id int, name varchar(3))")
    with psycopg.connect(srv.dsn) as conn:
        conn.execute("INSERT INTO vlen_txn VALUES (1, 'ok')")
        with pytest.raises(psycopg.errors.StringDataRightTruncation):
            conn.execute("INSERT INTO vlen_txn VALUES (2, 'toolong')")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.rollback()
        assert conn.execute("SELECT count(*) FROM vlen_txn").fetchone() == (0,)


def test_result_columns_carry_the_declared_type(srv: ServerProcess) -> None:
    """RowDescription: a result column read plainly from a varchar(n) column is varchar
    (1043) with typmod n + 4, as PostgreSQL sends it; an expression over it is text."""
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        cur = conn.execute(f"SELECT name, upper(name) FROM {TABLE}")
        assert cur.description is not None and cur.pgresult is not None
        assert [d.type_code for d in cur.description] == [1043, 25]
        assert [cur.pgresult.fmod(0), cur.pgresult.fmod(1)] == [14, -1]


def test_alter_table_limits(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE vlen_alter (id int, name varchar(4))")
        # ADD COLUMN keeps the length (DuckDB takes no constraint there: the server adds
        # the column, then the CHECK by a rebuild; proxy/pgserver/constraint_ddl.py)
        conn.execute("ALTER TABLE vlen_alter ADD COLUMN extra varchar(5)")
        with pytest.raises(psycopg.errors.StringDataRightTruncation):
            conn.execute("INSERT INTO vlen_alter VALUES (1, 'abcd', 'longer than five')")
        conn.execute("INSERT INTO vlen_alter VALUES (1, 'abcd', 'five!')")
        # RENAME keeps the length (DuckDB rewrites the constraint)
        conn.execute("ALTER TABLE vlen_alter RENAME COLUMN name TO label")
        rows = conn.execute(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'vlen_alter'::regclass AND attnum > 0 ORDER BY attnum"
        ).fetchall()
        assert rows == [
            ("id", "integer"),
            ("label", "character varying(4)"),
            ("extra", "character varying(5)"),
        ]
        with pytest.raises(psycopg.errors.StringDataRightTruncation):
            conn.execute("INSERT INTO vlen_alter VALUES (2, 'abcde', NULL)")
        # ALTER COLUMN TYPE rebuilds the table (tests/catalog/test_alter_column_type.py)
        conn.execute("ALTER TABLE vlen_alter ALTER COLUMN label TYPE varchar(20)")
        conn.execute("INSERT INTO vlen_alter VALUES (2, 'twenty characters ok', NULL)")
        assert ("label", "character varying(20)") in conn.execute(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'vlen_alter'::regclass AND attnum > 0"
        ).fetchall()
