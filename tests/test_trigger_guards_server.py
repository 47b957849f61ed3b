"""Guard triggers over the wire (tests/differential/cases/trigger_guards.sql compares the
results with PostgreSQL 15): RAISE EXCEPTION in BEFORE ROW triggers (its SQLSTATE and
message, the whole statement undone, parameters over the extended protocol, a failed
transaction block), BEFORE DELETE triggers (RETURN NULL skips, the command tag counts
the rows kept, DELETE ... USING raises only for the rows it deletes), and an ON DELETE
CASCADE that would fire a child's trigger refused rather than run without it."""

from __future__ import annotations

import psycopg
import pytest


def _setup(conn: psycopg.Connection, t: str) -> None:
    conn.execute(
        f"CREATE TABLE {t} (id serial PRIMARY KEY, name text, qty int NOT NULL DEFAULT 0, "
        "locked boolean NOT NULL DEFAULT false)"
    )
    conn.execute(
        f"CREATE FUNCTION {t}_g() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF NEW.qty < 0 THEN RAISE EXCEPTION 'qty must be >= 0 (got %) on %', NEW.qty, "
        "TG_TABLE_NAME; END IF; IF NEW.name = 'bad' THEN RAISE 'bad %%' USING ERRCODE = "
        "'check_violation'; END IF; RETURN NEW; END $$"
    )
    conn.execute(
        f"CREATE TRIGGER {t}_g BEFORE INSERT OR UPDATE ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_g()"
    )
    conn.execute(
        f"CREATE FUNCTION {t}_d() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF OLD.locked THEN RAISE EXCEPTION 'row % is locked', OLD.id USING ERRCODE = '55000'; "
        "END IF; IF OLD.name = 'keep' THEN RETURN NULL; END IF; RETURN OLD; END $$"
    )
    conn.execute(f"CREATE TRIGGER {t}_d BEFORE DELETE ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_d()")


def test_raise_fails_the_whole_statement_with_its_sqlstate(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, t)
        with pytest.raises(psycopg.errors.RaiseException) as err:
            conn.execute(f"INSERT INTO {t} (name, qty) VALUES ('a', 1), ('b', -2)")
        assert err.value.diag.message_primary == f"qty must be >= 0 (got -2) on {t}"
        assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)
        # parameters over the extended protocol, a condition name as ERRCODE
        with pytest.raises(psycopg.errors.CheckViolation, match="^bad %$"):
            conn.execute(f"INSERT INTO {t} (name, qty) VALUES (%s, %s)", ("bad", 1))
        conn.execute(f"INSERT INTO {t} (name, qty) VALUES (%s, %s)", ("a", 5))
        with pytest.raises(psycopg.errors.RaiseException, match=r"got -1\)"):
            conn.execute(f"UPDATE {t} SET qty = qty - %s WHERE name = %s", (6, "a"))
        # values as PL/pgSQL prints them: a boolean t / f, NULL <NULL>
        conn.execute(
            f"CREATE FUNCTION {t}_s() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE EXCEPTION 'locked=% name=%', NEW.locked, NEW.name; END $$"
        )
        conn.execute(
            f"CREATE TRIGGER {t}_s BEFORE INSERT ON {t} FOR EACH ROW WHEN (NEW.qty = 42) "
            f"EXECUTE FUNCTION {t}_s()"
        )
        with pytest.raises(psycopg.errors.RaiseException, match="^locked=t name=<NULL>$"):
            conn.execute(f"INSERT INTO {t} (qty, locked) VALUES (42, true)")
        # an UPDATE's WHERE keeps the guard off the rows it does not write
        conn.execute(f"INSERT INTO {t} (name, qty) VALUES ('z', 0)")
        cur = conn.execute(f"UPDATE {t} SET qty = qty - 1 WHERE name = 'a'")
        assert cur.rowcount == 1
        assert conn.execute(f"SELECT name, qty FROM {t} ORDER BY id").fetchall() == [
            ("a", 4),
            ("z", 0),
        ]


def test_raise_fails_the_transaction_block(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn) as conn:
        _setup(conn, t)
        conn.commit()
        conn.execute(f"INSERT INTO {t} (name, qty) VALUES ('a', 1)")
        with pytest.raises(psycopg.errors.RaiseException):
            conn.execute(f"UPDATE {t} SET qty = -1")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute(f"SELECT 1 FROM {t}")
        conn.rollback()
        assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)


def test_before_delete_skips_and_guards(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, t)
        conn.execute(
            f"INSERT INTO {t} (name, locked) VALUES ('a', false), ('keep', false), "
            "('lock', true), ('b', false)"
        )
        cur = conn.execute(f"DELETE FROM {t} WHERE name IN ('a', 'keep')")
        assert cur.rowcount == 1  # 'keep' skipped: DELETE 1
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="^row 3 is locked$"):
            conn.execute(f"DELETE FROM {t} WHERE id > %s", (0,))
        assert conn.execute(f"SELECT name FROM {t} ORDER BY id").fetchall() == [
            ("keep",),
            ("lock",),
            ("b",),
        ]
        # DELETE ... USING: the guard sees only the rows the join deletes
        conn.execute(f"CREATE TABLE {t}_x (name text)")
        conn.execute(f"INSERT INTO {t}_x VALUES ('b'), ('keep')")
        cur = conn.execute(
            f"DELETE FROM {t} USING {t}_x WHERE {t}.name = {t}_x.name RETURNING {t}.name"
        )
        assert cur.fetchall() == [("b",)]
        assert cur.rowcount == 1


def test_cascade_into_a_table_with_delete_triggers_is_refused(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {t}_p (id int PRIMARY KEY)")
        conn.execute(
            f"CREATE TABLE {t}_c (id int PRIMARY KEY, p int REFERENCES {t}_p ON DELETE CASCADE)"
        )
        conn.execute(
            f"CREATE FUNCTION {t}_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE EXCEPTION 'no'; END $$"
        )
        conn.execute(
            f"CREATE TRIGGER {t}_t BEFORE DELETE ON {t}_c FOR EACH ROW EXECUTE FUNCTION {t}_f()"
        )
        conn.execute(f"INSERT INTO {t}_p VALUES (1), (2)")
        conn.execute(f"INSERT INTO {t}_c VALUES (10, 1)")
        conn.execute(f"DELETE FROM {t}_p WHERE id = 2")  # no child: nothing to fire
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="ON DELETE CASCADE"):
            conn.execute(f"DELETE FROM {t}_p WHERE id = 1")
        assert conn.execute(f"SELECT id FROM {t}_p").fetchall() == [(1,)]
        assert conn.execute(f"SELECT id FROM {t}_c").fetchall() == [(10,)]


def test_delete_in_a_data_modifying_with(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, t)
        conn.execute(f"INSERT INTO {t} (name) VALUES ('a'), ('keep')")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="data-modifying WITH"):
            conn.execute(f"WITH w AS (DELETE FROM {t} RETURNING id) SELECT count(*) FROM w")
        conn.execute(f"DROP TRIGGER {t}_d ON {t}")  # INSERT / UPDATE triggers only: it runs
        got = conn.execute(f"WITH w AS (DELETE FROM {t} RETURNING id) SELECT count(*) FROM w")
        assert got.fetchone() == (2,)
