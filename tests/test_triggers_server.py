"""BEFORE ROW triggers over the wire, beyond tests/differential/cases/triggers.sql (which
compares their results and catalog rows with PostgreSQL 15): parameters over the extended
protocol, transactions, other sessions, DO blocks, and what is refused (0A000) rather
than accepted and not run."""

from __future__ import annotations

import psycopg
import pytest


def _setup(conn: psycopg.Connection, t: str) -> None:
    conn.execute(
        f"CREATE TABLE {t} (id serial PRIMARY KEY, title text, n int NOT NULL DEFAULT 0, "
        "stamp text)"
    )
    conn.execute(
        f"CREATE FUNCTION {t}_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF TG_OP = 'UPDATE' THEN NEW.n := OLD.n + 1; END IF; "
        "NEW.stamp = TG_OP || ':' || upper(NEW.title); RETURN NEW; END $$"
    )
    conn.execute(
        f"CREATE TRIGGER {t}_t BEFORE INSERT OR UPDATE ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_f()"
    )


def test_parameters_over_the_extended_protocol(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, t)
        cur = conn.cursor()
        cur.executemany(f"INSERT INTO {t} (title) VALUES (%s)", [("a",), ("b",)])
        row = conn.execute(
            f"UPDATE {t} SET title = %s WHERE id = %s RETURNING n, stamp", ("c", 1), prepare=True
        ).fetchone()
        assert row == (1, "UPDATE:C")
        rows = conn.execute(f"SELECT id, title, n, stamp FROM {t} ORDER BY id").fetchall()
        assert rows == [(1, "c", 1, "UPDATE:C"), (2, "b", 0, "INSERT:B")]
        row = conn.execute(
            f"INSERT INTO {t} (id, title) VALUES (%s, %s) ON CONFLICT (id) DO UPDATE "
            "SET title = EXCLUDED.title || %s RETURNING id, n, stamp",
            (2, "d", "!"),
            prepare=True,
        ).fetchone()
        assert row == (2, 1, "UPDATE:D!")


def test_rollback_takes_the_trigger_back_and_others_see_commits(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn) as conn, psycopg.connect(server.dsn) as other:
        conn.execute(f"CREATE TABLE {t} (id int, stamp text)")
        conn.execute(
            f"CREATE FUNCTION {t}_f() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN NEW.stamp := 'fired'; RETURN NEW; END $$"
        )
        conn.commit()
        trigger = f"CREATE TRIGGER {t}_t BEFORE INSERT ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_f()"
        conn.execute(trigger)
        conn.execute(f"INSERT INTO {t} VALUES (1, NULL)")  # seen in its own transaction
        assert conn.execute(f"SELECT stamp FROM {t}").fetchall() == [("fired",)]
        conn.rollback()
        conn.execute(f"INSERT INTO {t} VALUES (2, NULL)")
        conn.commit()
        assert conn.execute(f"SELECT id, stamp FROM {t}").fetchall() == [(2, None)]
        conn.execute(trigger)
        conn.commit()
        other.execute(f"INSERT INTO {t} VALUES (3, NULL)")
        other.commit()
        assert other.execute(f"SELECT stamp FROM {t} WHERE id = 3").fetchone() == ("fired",)
        # a DO block's INSERT fires it too
        other.execute(f"DO $$ BEGIN INSERT INTO {t} VALUES (4, NULL); END $$")
        assert other.execute(f"SELECT stamp FROM {t} WHERE id = 4").fetchone() == ("fired",)
        other.commit()


@pytest.mark.parametrize(
    ("statement", "named"),
    [
        (
            "CREATE TRIGGER {t}_x INSTEAD OF UPDATE ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_f()",
            "INSTEAD OF",
        ),
        (
            "CREATE TRIGGER {t}_x AFTER UPDATE ON {t} REFERENCING NEW TABLE AS n "
            "FOR EACH STATEMENT EXECUTE FUNCTION {t}_f()",
            "REFERENCING",
        ),
        (
            "CREATE TRIGGER {t}_x BEFORE TRUNCATE ON {t} FOR EACH STATEMENT EXECUTE FUNCTION {t}_f()",
            "TRUNCATE",
        ),
        (
            "CREATE FUNCTION {t}_g() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM 1; RETURN NEW; END $$;"
            "CREATE TRIGGER {t}_x BEFORE INSERT ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_g()",
            "PERFORM",
        ),
        (
            "CREATE FUNCTION {t}_g() RETURNS trigger LANGUAGE plpgsql AS $$ DECLARE x int; BEGIN RETURN NEW; END $$",
            "DECLARE",
        ),
        (
            "CREATE FUNCTION {t}_g() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'no'; RETURN NEW; END $$;"
            "CREATE TRIGGER {t}_x BEFORE INSERT ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_g()",
            "RAISE NOTICE",
        ),
        (
            "CREATE FUNCTION {t}_g() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN FOR i IN 1..2 LOOP END LOOP; RETURN NEW; END $$",
            "FOR",
        ),
        (
            "WITH w AS (UPDATE {t} SET title = 'x' RETURNING id) SELECT * FROM w",
            "data-modifying WITH",
        ),
        ("COPY {t} (title) FROM STDIN", "COPY FROM"),
        (
            "MERGE INTO {t} USING (SELECT 1 AS id) s ON s.id = {t}.id "
            "WHEN MATCHED THEN UPDATE SET title = 'm'",
            "MERGE",
        ),
    ],
    ids=[
        "instead_of",
        "referencing",
        "truncate",
        "perform",
        "declare",
        "raise_notice",
        "loop",
        "cte",
        "copy",
        "merge",
    ],
)
def test_refused_with_0a000_naming_it(server, table_name, statement, named) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, t)
        with pytest.raises(psycopg.errors.FeatureNotSupported, match=named):
            conn.execute(statement.format(t=t))
        assert conn.execute(
            f"SELECT count(*) FROM pg_trigger WHERE tgname LIKE '{t}%'"
        ).fetchone() == (1,)


def test_errors_as_postgresql(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, t)
        with pytest.raises(
            psycopg.errors.UndefinedFunction, match=r"function nope\(\) does not exist"
        ):
            conn.execute(
                f"CREATE TRIGGER x BEFORE INSERT ON {t} FOR EACH ROW EXECUTE FUNCTION nope()"
            )
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute(
                f"CREATE TRIGGER x BEFORE INSERT ON {t}_no FOR EACH ROW EXECUTE FUNCTION {t}_f()"
            )
        with pytest.raises(psycopg.errors.DuplicateObject, match="already exists"):
            conn.execute(
                f"CREATE TRIGGER {t}_t BEFORE INSERT ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_f()"
            )
        with pytest.raises(psycopg.errors.UndefinedObject):
            conn.execute(f"DROP TRIGGER nope ON {t}")
        with pytest.raises(psycopg.errors.DependentObjectsStillExist):
            conn.execute(f"DROP FUNCTION {t}_f()")
        conn.execute(
            f"CREATE OR REPLACE TRIGGER {t}_t BEFORE UPDATE ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_f()"
        )
        conn.execute(f"INSERT INTO {t} (title) VALUES ('q')")  # now an UPDATE trigger only
        assert conn.execute(f"SELECT stamp FROM {t}").fetchone() == (None,)
        conn.execute(f"DROP TABLE {t}")  # its triggers go with it
        assert conn.execute(
            f"SELECT count(*) FROM pg_trigger WHERE tgname = '{t}_t'"
        ).fetchone() == (0,)
        conn.execute(f"DROP FUNCTION {t}_f()")


def test_skipping_trigger_on_a_table_with_an_identity_column(server, table_name) -> None:
    """RETURN NULL makes the rewrite compute defaults itself; an identity column GENERATED
    ALWAYS takes no value, so it is left to its own default (not 428C9)."""
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {t} (id int GENERATED ALWAYS AS IDENTITY, v text)")
        conn.execute(
            f"CREATE FUNCTION {t}_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.v = 'skip' THEN RETURN NULL; END IF; RETURN NEW; END $$"
        )
        conn.execute(
            f"CREATE TRIGGER {t}_t BEFORE INSERT ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_f()"
        )
        cur = conn.execute(f"INSERT INTO {t} (v) VALUES ('a'), ('skip'), ('b')")
        assert cur.rowcount == 2
        assert conn.execute(f"SELECT v FROM {t} ORDER BY id").fetchall() == [("a",), ("b",)]


def test_sql_prepare_and_several_statements_in_one_query(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, t)
        conn.execute(f"PREPARE {t}_i (text) AS INSERT INTO {t} (title) VALUES ($1)")
        conn.execute(f"EXECUTE {t}_i('a')")
        conn.execute(
            f"INSERT INTO {t} (title) VALUES ('b'); UPDATE {t} SET title = 'c' WHERE id = 1"
        )
        rows = conn.execute(f"SELECT id, n, stamp FROM {t} ORDER BY id").fetchall()
        assert rows == [(1, 1, "UPDATE:C"), (2, 0, "INSERT:B")]


def test_an_unqualified_name_fires_the_triggers_of_the_table_it_finds(server, table_name) -> None:
    """A trigger on app.t does not fire for public.t, which `t` names on the default
    search_path; with app first on it, `t` is app.t and fires it."""
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {t}_s")
        conn.execute(f"CREATE TABLE {t}_s.{t} (id int, v text)")
        conn.execute(f"CREATE TABLE {t} (id int, v text)")
        conn.execute(
            f"CREATE FUNCTION {t}_s.f() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN NEW.v := 'fired'; RETURN NEW; END $$"
        )
        conn.execute(
            f"CREATE TRIGGER {t}_t BEFORE INSERT ON {t}_s.{t} FOR EACH ROW "
            f"EXECUTE FUNCTION {t}_s.f()"
        )
        conn.execute(f"INSERT INTO {t} VALUES (1, 'x')")
        conn.execute(f"SET search_path = {t}_s, public")
        conn.execute(f"INSERT INTO {t} VALUES (2, 'x')")
        assert conn.execute(f"SELECT * FROM public.{t}").fetchall() == [(1, "x")]
        assert conn.execute(f"SELECT * FROM {t}_s.{t}").fetchall() == [(2, "fired")]


def test_rollback_to_savepoint_keeps_triggered_rows(server, table_name) -> None:
    """ROLLBACK TO replays the block's earlier writes (the SAVEPOINT emulation): as they
    ran, with their triggers."""
    t = table_name
    with psycopg.connect(server.dsn) as conn:
        conn.execute(f"CREATE TABLE {t} (id int, title text, n int DEFAULT 0)")
        conn.execute(
            f"CREATE FUNCTION {t}_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "NEW.n := coalesce(OLD.n, 10) + 1; RETURN NEW; END $$"
        )
        conn.execute(
            f"CREATE TRIGGER {t}_t BEFORE INSERT OR UPDATE ON {t} FOR EACH ROW "
            f"EXECUTE FUNCTION {t}_f()"
        )
        conn.commit()
        conn.execute(f"INSERT INTO {t} (id, title) VALUES (1, 'a')")
        conn.execute(f"UPDATE {t} SET title = 'b'")
        conn.execute("SAVEPOINT s")
        conn.execute(f"INSERT INTO {t} (id, title) VALUES (2, 'c')")
        conn.execute("ROLLBACK TO SAVEPOINT s")
        conn.commit()
        rows = conn.execute(f"SELECT id, title, n FROM {t}").fetchall()
        assert rows == [(1, "b", 12)]


def test_disable_trigger_all_and_enable_trigger_user(server, table_name) -> None:
    """pg_dump --disable-triggers and Rails fixtures switch every trigger of a table."""
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, t)
        conn.execute(f"ALTER TABLE {t} DISABLE TRIGGER ALL")
        conn.execute(f"INSERT INTO {t} (title) VALUES ('a')")
        assert conn.execute(
            f"SELECT tgenabled FROM pg_trigger WHERE tgname = '{t}_t'"
        ).fetchone() == ("D",)
        conn.execute(f"ALTER TABLE {t} ENABLE TRIGGER USER")
        conn.execute(f"INSERT INTO {t} (title) VALUES ('b')")
        rows = conn.execute(f"SELECT title, stamp FROM {t} ORDER BY id").fetchall()
        assert rows == [("a", None), ("b", "INSERT:B")]
