"""ALTER TABLE t DISABLE / ENABLE TRIGGER ALL turns the server's foreign key checks of t off
and on, as PostgreSQL's foreign key triggers (Rails fixtures load so); a table made again
under the name has them on."""

from __future__ import annotations

import psycopg
import pytest

from tests.conftest import ServerProcess


def test_trigger_all_switches_foreign_key_checks(server: ServerProcess, table_name: str) -> None:
    p, c = f"{table_name}_p", f"{table_name}_c"
    child = f"CREATE TABLE {c} (id int, p_id int REFERENCES {p} (id) ON DELETE CASCADE)"
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {p} (id int PRIMARY KEY)")
        conn.execute(child)
        conn.execute(f"INSERT INTO {p} VALUES (1)")
        conn.execute(f"INSERT INTO {c} VALUES (1, 1)")
        assert conn.execute(f"ALTER TABLE {c} DISABLE TRIGGER ALL").statusmessage == "ALTER TABLE"
        conn.execute(f"INSERT INTO {c} VALUES (2, 10)")  # no parent 10: not checked
        conn.execute(f"ALTER TABLE {p} DISABLE TRIGGER ALL")
        conn.execute(f"DELETE FROM {p} WHERE id = 1")  # no cascade, no check
        assert conn.execute(f"SELECT count(*) FROM {c}").fetchone() == (2,)
        conn.execute(f"INSERT INTO {p} VALUES (1), (10)")
        conn.execute(f"ALTER TABLE {p} ENABLE TRIGGER ALL")
        conn.execute(f"ALTER TABLE {c} ENABLE TRIGGER ALL")
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute(f"INSERT INTO {c} VALUES (3, 99)")
        conn.execute(f"DELETE FROM {p} WHERE id = 10")  # the cascade again
        assert conn.execute(f"SELECT id FROM {c} ORDER BY id").fetchall() == [(1,)]
        conn.execute(f"ALTER TABLE {c} DISABLE TRIGGER USER")  # not the foreign keys
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute(f"INSERT INTO {c} VALUES (4, 99)")
        conn.execute(f"ALTER TABLE {c} DISABLE TRIGGER ALL")
        conn.execute(f"DROP TABLE {c}")
        conn.execute(child)  # made again: its triggers are on
        with pytest.raises(psycopg.errors.ForeignKeyViolation):
            conn.execute(f"INSERT INTO {c} VALUES (5, 99)")
