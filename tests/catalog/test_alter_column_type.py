"""ALTER TABLE ... ALTER COLUMN ... TYPE where DuckDB cannot do it in place (a varchar(n)
length is a CHECK; a new varchar(n) needs one): the table is rebuilt in one transaction
(proxy/pgserver/alter_rebuild.py) and behaves as PostgreSQL's would afterwards. Migration tools
(Alembic, Django, Rails) send exactly these statements.
"""

from __future__ import annotations

import psycopg
import pytest

from tests.conftest import ServerProcess
from tests.conftest import psql_command as psql


@pytest.fixture(scope="module")
def srv(server: ServerProcess) -> ServerProcess:
    """The session's shared server: every table here is named at_* (no collisions)."""
    return server


def _types(conn: psycopg.Connection, table: str) -> list[tuple[str, str]]:
    return conn.execute(
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
        f"WHERE attrelid = '{table}'::regclass AND attnum > 0 ORDER BY attnum"
    ).fetchall()


def _people(conn: psycopg.Connection, table: str) -> None:
    conn.execute(
        f"CREATE TABLE {table} (id int PRIMARY KEY, name varchar(5) NOT NULL DEFAULT 'anon', "
        "code varchar(3) UNIQUE, score int CHECK (score >= 0), note text)"
    )
    conn.execute(f"CREATE INDEX {table}_score ON {table} (score)")
    conn.execute(f"COMMENT ON COLUMN {table}.name IS 'display name'")
    conn.execute(f"INSERT INTO {table} VALUES (1, 'abcde', 'ab', 1, 'x'), (2, 'ab', 'cd', 2, NULL)")


def test_widen_then_narrow(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        _people(conn, "at_widen")
        conn.execute("ALTER TABLE at_widen ALTER COLUMN name TYPE varchar(20)")
        conn.execute("INSERT INTO at_widen (id, name) VALUES (3, 'twenty characters ok')")
        with pytest.raises(psycopg.errors.StringDataRightTruncation) as err:
            conn.execute("INSERT INTO at_widen (id, name) VALUES (4, 'twenty-one characters')")
        assert str(err.value) == "value too long for type character varying(20)"
        # Narrowing below the longest value fails as in Postgres and changes nothing
        with pytest.raises(psycopg.errors.StringDataRightTruncation) as err:
            conn.execute("ALTER TABLE at_widen ALTER COLUMN name TYPE varchar(10)")
        assert str(err.value) == "value too long for type character varying(10)"
        assert ("name", "character varying(20)") in _types(conn, "at_widen")
        assert conn.execute("SELECT count(*) FROM at_widen").fetchone() == (3,)
        # Django's form: TYPE ... USING "col"::type (an explicit cast, so it truncates)
        conn.execute(
            'ALTER TABLE "at_widen" ALTER COLUMN "name" TYPE varchar(8) USING "name"::varchar(8)'
        )
        names = conn.execute("SELECT name FROM at_widen ORDER BY id").fetchall()
        assert names == [("abcde",), ("ab",), ("twenty c",)]
        assert _types(conn, "at_widen") == [
            ("id", "integer"),
            ("name", "character varying(8)"),
            ("code", "character varying(3)"),
            ("score", "integer"),
            ("note", "text"),
        ]
        assert "character varying(8)" in psql(srv, r"\d at_widen")


def test_everything_else_survives(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        _people(conn, "at_keep")
        conn.execute("ALTER TABLE at_keep ALTER COLUMN name TYPE varchar(30)")
        conn.execute("INSERT INTO at_keep (id, code, score) VALUES (3, 'ef', 3)")
        assert conn.execute("SELECT name FROM at_keep WHERE id = 3").fetchone() == ("anon",)
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("INSERT INTO at_keep (id, name) VALUES (1, 'dup')")
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("INSERT INTO at_keep (id, name, code) VALUES (4, 'x', 'ab')")
        with pytest.raises(psycopg.errors.StringDataRightTruncation) as err:
            conn.execute("INSERT INTO at_keep (id, code) VALUES (5, 'abcd')")
        assert str(err.value) == "value too long for type character varying(3)"
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("INSERT INTO at_keep (id, score) VALUES (6, -1)")
        with pytest.raises(psycopg.errors.NotNullViolation):
            conn.execute("INSERT INTO at_keep (id, name) VALUES (7, NULL)")
        described = psql(srv, r"\d at_keep")
        assert '"at_keep_score" btree (score)' in described
        assert "character varying(30)" in described
        assert conn.execute("SELECT col_description('at_keep'::regclass, 2)").fetchone() == (
            "display name",
        )


def test_to_text_and_to_integer(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE at_conv (id int PRIMARY KEY, label varchar(4), qty varchar(3))")
        conn.execute("INSERT INTO at_conv VALUES (1, 'abcd', ' 12'), (2, NULL, 'x7')")
        conn.execute("ALTER TABLE at_conv ALTER COLUMN label TYPE text")
        conn.execute("INSERT INTO at_conv VALUES (3, 'no length limit any more', '5')")
        # A failed cast is the DuckDB error as everywhere (22P02); the table stays as it was
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            conn.execute("ALTER TABLE at_conv ALTER COLUMN qty TYPE integer USING trim(qty)::int")
        assert ("qty", "character varying(3)") in _types(conn, "at_conv")
        conn.execute(
            "ALTER TABLE at_conv ALTER COLUMN qty TYPE integer "
            "USING CASE WHEN qty ~ '^ *[0-9]+$' THEN trim(qty)::integer END"
        )
        rows = conn.execute("SELECT id, label, qty FROM at_conv ORDER BY id").fetchall()
        assert rows == [(1, "abcd", 12), (2, None, None), (3, "no length limit any more", 5)]
        assert _types(conn, "at_conv") == [
            ("id", "integer"),
            ("label", "text"),
            ("qty", "integer"),
        ]


def test_plain_column_gets_a_length(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE at_plain (id int, title varchar, num integer)")
        conn.execute("INSERT INTO at_plain VALUES (1, 'hello', 123456)")
        with pytest.raises(psycopg.errors.StringDataRightTruncation):
            conn.execute("ALTER TABLE at_plain ALTER COLUMN title TYPE varchar(4)")
        conn.execute("ALTER TABLE at_plain ALTER COLUMN title TYPE varchar(5)")
        conn.execute("ALTER TABLE at_plain ALTER COLUMN num TYPE varchar(6)")
        with pytest.raises(psycopg.errors.StringDataRightTruncation):
            conn.execute("INSERT INTO at_plain VALUES (2, 'toolong', NULL)")
        with pytest.raises(psycopg.errors.StringDataRightTruncation):
            conn.execute("INSERT INTO at_plain VALUES (2, NULL, '1234567')")
        assert _types(conn, "at_plain") == [
            ("id", "integer"),
            ("title", "character varying(5)"),
            ("num", "character varying(6)"),
        ]
        described = psql(srv, r"\d at_plain")
        assert "character varying(5)" in described and "character varying(6)" in described
        assert conn.execute("SELECT num FROM at_plain").fetchone() == ("123456",)


def test_inside_a_transaction_block(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE at_txn (id int PRIMARY KEY, v varchar(3))")
        conn.execute("INSERT INTO at_txn VALUES (1, 'abc')")
        conn.execute("BEGIN")
        conn.execute("ALTER TABLE at_txn ALTER COLUMN v TYPE varchar(10)")
        conn.execute("INSERT INTO at_txn VALUES (2, 'abcdefghij')")  # the block goes on
        assert conn.execute("SELECT count(*) FROM at_txn").fetchone() == (2,)
        conn.execute("ROLLBACK")
        assert _types(conn, "at_txn") == [("id", "integer"), ("v", "character varying(3)")]
        assert conn.execute("SELECT id, v FROM at_txn").fetchall() == [(1, "abc")]
        with pytest.raises(psycopg.errors.StringDataRightTruncation):
            conn.execute("INSERT INTO at_txn VALUES (2, 'abcdefghij')")

        conn.execute("BEGIN")
        conn.execute("ALTER TABLE at_txn ALTER COLUMN v TYPE varchar(10)")
        conn.execute("INSERT INTO at_txn VALUES (2, 'abcdefghij')")
        conn.execute("COMMIT")
        assert ("v", "character varying(10)") in _types(conn, "at_txn")

        conn.execute("BEGIN")
        with pytest.raises(psycopg.errors.StringDataRightTruncation):
            conn.execute("ALTER TABLE at_txn ALTER COLUMN v TYPE varchar(5)")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.execute("ROLLBACK")
        assert conn.execute("SELECT count(*) FROM at_txn").fetchone() == (2,)
        assert ("v", "character varying(10)") in _types(conn, "at_txn")


def test_several_clauses_rails_style(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE at_rails (id int, a varchar(2), b int)")
        conn.execute("INSERT INTO at_rails VALUES (1, 'xy', 7)")
        conn.execute(
            'ALTER TABLE "at_rails" ALTER COLUMN "a" TYPE character varying(50), '
            'ALTER COLUMN "a" SET DEFAULT \'none\', ALTER "a" SET NOT NULL, '
            'ALTER COLUMN "b" TYPE bigint'
        )
        conn.execute("INSERT INTO at_rails (id) VALUES (2)")
        assert conn.execute("SELECT a FROM at_rails WHERE id = 2").fetchone() == ("none",)
        with pytest.raises(psycopg.errors.NotNullViolation):
            conn.execute("INSERT INTO at_rails VALUES (3, NULL, 1)")
        assert _types(conn, "at_rails") == [
            ("id", "integer"),
            ("a", "character varying(50)"),
            ("b", "bigint"),
        ]


def test_a_column_a_view_reads_keeps_its_type_as_in_postgresql(srv: ServerProcess) -> None:
    """PostgreSQL refuses to change the type of a column a view reads (0A000); dropping
    the view first lets the ALTER through, and a view made again reads the new type."""
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE at_viewed (id int, v varchar(3))")
        conn.execute("INSERT INTO at_viewed VALUES (1, 'abc')")
        conn.execute("CREATE VIEW at_viewed_v AS SELECT id, v FROM at_viewed")
        with pytest.raises(psycopg.errors.FeatureNotSupported) as info:
            conn.execute("ALTER TABLE at_viewed ALTER COLUMN v TYPE varchar(10)")
        assert info.value.diag.message_primary == (
            "cannot alter type of a column used by a view or rule"
        )
        conn.execute("DROP VIEW at_viewed_v")
        conn.execute("ALTER TABLE at_viewed ALTER COLUMN v TYPE varchar(10)")
        conn.execute("CREATE VIEW at_viewed_v AS SELECT id, v FROM at_viewed")
        conn.execute("INSERT INTO at_viewed VALUES (2, 'abcdefghij')")
        rows = conn.execute("SELECT id, v FROM at_viewed_v ORDER BY id").fetchall()
        assert rows == [(1, "abc"), (2, "abcdefghij")]


def test_schema_qualified_and_search_path(srv: ServerProcess) -> None:
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA at_sales")
        conn.execute("CREATE TABLE at_dup (k varchar(2))")  # same name in public
        conn.execute("CREATE TABLE at_sales.at_dup (k varchar(2))")
        conn.execute("ALTER TABLE at_sales.at_dup ALTER COLUMN k TYPE varchar(6)")
        conn.execute("INSERT INTO at_sales.at_dup VALUES ('sixsix')")
        with pytest.raises(psycopg.errors.StringDataRightTruncation):
            conn.execute("INSERT INTO public.at_dup VALUES ('abc')")
        conn.execute("SET search_path = at_sales, public")
        conn.execute("ALTER TABLE at_dup ALTER COLUMN k TYPE varchar(7)")
        lengths = conn.execute(
            "SELECT table_schema, character_maximum_length FROM information_schema.columns "
            "WHERE table_name = 'at_dup' ORDER BY 1"
        ).fetchall()
        assert lengths == [("at_sales", 7), ("public", 2)]


def test_foreign_key_tables_rebuilt_and_key_still_enforced(srv: ServerProcess) -> None:
    """Foreign keys are the server's (proxy/pgserver/foreign_keys.py), not DuckDB's, so a
    table linked by one is rebuilt like any other, and the key still holds after."""
    with psycopg.connect(srv.dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE at_parent (id int PRIMARY KEY, v varchar(3))")
        conn.execute(
            "CREATE TABLE at_child (id int, pid int REFERENCES at_parent (id), w varchar(3))"
        )
        conn.execute("INSERT INTO at_parent VALUES (1, 'abc')")
        conn.execute("INSERT INTO at_child VALUES (1, 1, 'xyz')")
        for table, column in (("at_parent", "v"), ("at_child", "w")):
            conn.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE varchar(10)")
            assert (column, "character varying(10)") in _types(conn, table)
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute("INSERT INTO at_child VALUES (2, 99, 'w')")
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute("DELETE FROM at_parent WHERE id = 1")
