"""AFTER ROW and statement-level triggers over the wire, beyond
tests/differential/cases/triggers_after.sql (which compares results with PostgreSQL 15):
the extended protocol, all-or-nothing on an error (outside and inside a block), triggers
firing triggers and the depth limit, NOTICEs, and what stays refused (0A000)."""

from __future__ import annotations

import psycopg
import pytest


def _setup(conn: psycopg.Connection, t: str) -> None:
    conn.execute(f"CREATE TABLE {t}_posts (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)")
    conn.execute(f"INSERT INTO {t}_posts VALUES (1, 0), (2, 0)")
    conn.execute(f"CREATE TABLE {t} (id serial PRIMARY KEY, post_id int, qty int)")
    conn.execute(f"CREATE TABLE {t}_log (n serial, op text, row_id int, what text)")
    conn.execute(
        f"CREATE FUNCTION {t}_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"INSERT INTO {t}_log(op, row_id, what) VALUES (TG_OP, COALESCE(NEW.id, OLD.id), "
        "TG_WHEN || ' ' || TG_LEVEL); RETURN NULL; END $$"
    )
    conn.execute(
        f"CREATE FUNCTION {t}_count() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"IF TG_OP = 'INSERT' THEN UPDATE {t}_posts SET n = n + 1 WHERE id = NEW.post_id; "
        f"ELSE UPDATE {t}_posts SET n = n - 1 WHERE id = OLD.post_id; END IF; "
        "IF NEW.qty > 100 THEN RAISE EXCEPTION 'qty % too big', NEW.qty "
        "USING ERRCODE = 'check_violation'; END IF; RETURN NULL; END $$"
    )
    conn.execute(
        f"CREATE TRIGGER a_audit AFTER INSERT OR UPDATE OR DELETE ON {t} "
        f"FOR EACH ROW EXECUTE FUNCTION {t}_audit()"
    )
    conn.execute(
        f"CREATE TRIGGER b_count AFTER INSERT OR DELETE ON {t} "
        f"FOR EACH ROW EXECUTE FUNCTION {t}_count()"
    )


def _posts(conn: psycopg.Connection, t: str) -> list[tuple]:
    return conn.execute(f"SELECT id, n FROM {t}_posts ORDER BY id").fetchall()


def test_audit_and_counters_over_the_extended_protocol(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, t)
        cur = conn.cursor()
        cur.executemany(f"INSERT INTO {t} (post_id, qty) VALUES (%s, %s)", [(1, 1), (1, 2)])
        row = conn.execute(
            f"INSERT INTO {t} (post_id, qty) VALUES (%s, %s), (%s, %s) RETURNING id, qty * 2",
            (2, 3, 1, 4),
            prepare=True,
        ).fetchall()
        assert row == [(3, 6), (4, 8)]
        assert _posts(conn, t) == [(1, 3), (2, 1)]  # three rows hit post 1: each counts
        cur = conn.execute(f"DELETE FROM {t} WHERE post_id = %s", (1,))
        assert cur.rowcount == 3 and cur.statusmessage == "DELETE 3"
        assert _posts(conn, t) == [(1, 0), (2, 1)]
        log = conn.execute(f"SELECT op, row_id, what FROM {t}_log ORDER BY n").fetchall()
        assert [r[0] for r in log] == ["INSERT"] * 4 + ["DELETE"] * 3
        assert sorted(r[1] for r in log[4:]) == [1, 2, 4]
        assert {r[2] for r in log} == {"AFTER ROW"}


def test_an_error_in_an_after_trigger_leaves_nothing(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, t)
        with pytest.raises(psycopg.errors.CheckViolation, match="qty 500 too big"):
            conn.execute(f"INSERT INTO {t} (post_id, qty) VALUES (1, 5), (1, 500)")
        assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)
        assert conn.execute(f"SELECT count(*) FROM {t}_log").fetchone() == (0,)
        assert _posts(conn, t) == [(1, 0), (2, 0)]
    with psycopg.connect(server.dsn) as conn:
        conn.execute(f"INSERT INTO {t} (post_id, qty) VALUES (2, 5)")
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(f"INSERT INTO {t} (post_id, qty) VALUES (2, 500)")
        with pytest.raises(psycopg.errors.InFailedSqlTransaction):
            conn.execute("SELECT 1")
        conn.rollback()
        assert _posts(conn, t) == [(1, 0), (2, 0)]
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        # the statement itself fails (a constraint): the session goes on
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute(f"INSERT INTO {t} (id, post_id, qty) VALUES (7, 1, 1), (7, 1, 1)")
        assert conn.execute(f"SELECT count(*) FROM {t}_log").fetchone() == (0,)
        conn.execute(f"INSERT INTO {t} (id, post_id, qty) VALUES (7, 1, 1)")
        assert _posts(conn, t) == [(1, 1), (2, 0)]


def test_statement_triggers_fire_once_also_for_no_rows(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, t)
        conn.execute(f"CREATE TRIGGER s_before BEFORE UPDATE ON {t} EXECUTE FUNCTION {t}_audit()")
        conn.execute(
            f"CREATE TRIGGER s_after AFTER UPDATE ON {t} FOR EACH STATEMENT "
            f"EXECUTE FUNCTION {t}_audit()"
        )
        conn.execute(f"INSERT INTO {t} (post_id, qty) VALUES (1, 1), (1, 2)")
        conn.execute(f"DELETE FROM {t}_log")
        assert conn.execute(f"UPDATE {t} SET qty = 0 WHERE id = 99").statusmessage == "UPDATE 0"
        assert conn.execute(f"UPDATE {t} SET qty = 7").statusmessage == "UPDATE 2"
        log = conn.execute(f"SELECT op, row_id, what FROM {t}_log ORDER BY n").fetchall()
        assert log == [
            ("UPDATE", None, "BEFORE STATEMENT"),
            ("UPDATE", None, "AFTER STATEMENT"),
            ("UPDATE", None, "BEFORE STATEMENT"),
            ("UPDATE", 1, "AFTER ROW"),
            ("UPDATE", 2, "AFTER ROW"),
            ("UPDATE", None, "AFTER STATEMENT"),
        ]


def test_notice_old_values_and_recursion_limit(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, v int)")
        conn.execute(
            f"CREATE FUNCTION {t}_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE NOTICE 'v % -> %', OLD.v, NEW.v; "
            f"IF NEW.v < 100 THEN UPDATE {t} SET v = v + 1 WHERE id = NEW.id; END IF; "
            "RETURN NULL; END $$"
        )
        conn.execute(f"CREATE TRIGGER t AFTER UPDATE ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_f()")
        conn.execute(f"INSERT INTO {t} VALUES (1, 95)")
        notices: list[str] = []
        conn.add_notice_handler(lambda d: notices.append(d.message_primary))
        conn.execute(f"UPDATE {t} SET v = 96 WHERE id = 1")
        assert conn.execute(f"SELECT v FROM {t}").fetchone() == (100,)
        assert notices == ["v 95 -> 96", "v 96 -> 97", "v 97 -> 98", "v 98 -> 99", "v 99 -> 100"]
        with pytest.raises(psycopg.errors.StatementTooComplex, match="stack depth"):
            conn.execute(f"UPDATE {t} SET v = 0 WHERE id = 1")
        assert conn.execute(f"SELECT v FROM {t}").fetchone() == (100,)


def test_refused_rather_than_not_run(server, table_name) -> None:
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        _setup(conn, t)
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="SQL statements"):
            conn.execute(
                f"CREATE TRIGGER z BEFORE INSERT ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_audit()"
            )
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="ON CONFLICT \\(columns\\)"):
            # the key (a serial) is drawn by the rows: their keys cannot be read first
            conn.execute(
                f"INSERT INTO {t} (post_id, qty) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET qty = 2"
            )
        with (
            pytest.raises(psycopg.errors.FeatureNotSupported, match="COPY FROM"),
            conn.cursor().copy(f"COPY {t} (post_id, qty) FROM STDIN") as copy,
        ):
            copy.write_row((1, 1))
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="INSTEAD OF"):
            conn.execute(f"CREATE TRIGGER z INSTEAD OF INSERT ON {t} EXECUTE FUNCTION {t}_audit()")
        assert conn.execute(f"SELECT count(*) FROM {t}_log").fetchone() == (0,)
        # OLD in an AFTER UPDATE needs a primary key the UPDATE keeps (rows matched by it)
        conn.execute(f"CREATE TABLE {t}_nokey (a int, b int)")
        conn.execute(f"INSERT INTO {t}_nokey VALUES (1, 1)")
        conn.execute(
            f"CREATE TRIGGER u AFTER UPDATE ON {t}_nokey FOR EACH ROW EXECUTE FUNCTION {t}_count()"
        )
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="primary key"):
            conn.execute(f"UPDATE {t}_nokey SET b = 2")
        with pytest.raises(psycopg.errors.FeatureNotSupported, match="primary key"):
            conn.execute(f"UPDATE {t} SET id = id + 100")
        assert conn.execute(f"SELECT b FROM {t}_nokey").fetchall() == [(1,)]


def test_perform_pg_notify_reaches_listeners_at_commit(server, table_name) -> None:
    t = table_name
    with (
        psycopg.connect(server.dsn, autocommit=True) as conn,
        psycopg.connect(server.dsn, autocommit=True) as listener,
    ):
        conn.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, name text)")
        conn.execute(
            f"CREATE FUNCTION {t}_n() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"PERFORM pg_notify('{t}_ch', TG_OP || ':' || NEW.id || ':' || NEW.name); "
            "RETURN NULL; END $$"
        )
        conn.execute(
            f"CREATE TRIGGER n AFTER INSERT OR UPDATE ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_n()"
        )
        listener.execute(f"LISTEN {t}_ch")
        conn.execute(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')")
        with conn.transaction():
            conn.execute(f"UPDATE {t} SET name = 'c' WHERE id = 2")
        got = [n.payload for n in listener.notifies(timeout=5, stop_after=3)]
        assert got == ["INSERT:1:a", "INSERT:2:b", "UPDATE:2:c"]


def test_parameters_reach_the_rows_before_an_update_and_an_upsert(server, table_name) -> None:
    """OLD (an UPDATE's rows before it, an upsert's existing rows) is read with the
    statement's parameters over the extended protocol; an upsert fires AFTER UPDATE for
    the rows it updated and AFTER INSERT for the others, in its rows' order."""
    t = table_name
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {t} (id int PRIMARY KEY, v int)")
        conn.execute(f"CREATE TABLE {t}_log (n serial, op text, id int, old_v int, new_v int)")
        conn.execute(
            f"CREATE FUNCTION {t}_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"INSERT INTO {t}_log (op, id, old_v, new_v) VALUES "
            "(TG_OP, COALESCE(NEW.id, OLD.id), OLD.v, NEW.v); RETURN NULL; END $$"
        )
        conn.execute(
            f"CREATE TRIGGER a AFTER INSERT OR UPDATE ON {t} FOR EACH ROW EXECUTE FUNCTION {t}_f()"
        )
        conn.execute(f"INSERT INTO {t} VALUES (%s, %s), (%s, %s)", (1, 10, 2, 20))
        conn.execute(f"UPDATE {t} SET v = v + %s WHERE id = %s", (5, 2))
        rows = conn.execute(
            f"INSERT INTO {t} (id, v) VALUES (%s, %s), (%s, %s) ON CONFLICT (id) "
            "DO UPDATE SET v = EXCLUDED.v + %s RETURNING id, v",
            (3, 30, 1, 11, 100),
        ).fetchall()
        assert sorted(rows) == [(1, 111), (3, 30)]
        log = conn.execute(f"SELECT op, id, old_v, new_v FROM {t}_log ORDER BY n").fetchall()
        assert log == [
            ("INSERT", 1, None, 10),
            ("INSERT", 2, None, 20),
            ("UPDATE", 2, 20, 25),
            ("INSERT", 3, None, 30),
            ("UPDATE", 1, 10, 111),
        ]
