"""ALTER TYPE on an enum inside a transaction (proxy/pgserver/enum_alter.py): rolled back,
the type and its columns are as they were; committed, other connections see the labels."""

from __future__ import annotations

import psycopg

from tests.conftest import ServerProcess


def _labels(conn: psycopg.Connection, name: str) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT enumlabel FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid "
            "WHERE t.typname = %s ORDER BY enumsortorder",
            (name,),
        ).fetchall()
    ]


def test_alter_type_follows_the_transaction(server: ServerProcess) -> None:
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.execute("CREATE TYPE ea_state AS ENUM ('new', 'done')")
        conn.execute("CREATE TABLE ea_task (id int PRIMARY KEY, s ea_state)")
        conn.execute("CREATE INDEX ea_task_s ON ea_task (s)")
        conn.execute("INSERT INTO ea_task VALUES (1, 'new'), (2, 'done')")
        conn.execute("BEGIN")
        conn.execute("ALTER TYPE ea_state ADD VALUE 'doing' AFTER 'new'")
        conn.execute("ALTER TYPE ea_state RENAME VALUE 'done' TO 'finished'")
        conn.execute("ROLLBACK")
        assert _labels(conn, "ea_state") == ["new", "done"]
        assert conn.execute("SELECT s::text FROM ea_task ORDER BY id").fetchall() == [
            ("new",),
            ("done",),
        ]
        with conn.transaction():
            conn.execute("ALTER TYPE ea_state ADD VALUE 'doing' AFTER 'new'")
            conn.execute("ALTER TYPE ea_state RENAME VALUE 'done' TO 'finished'")
            conn.execute("UPDATE ea_task SET s = 'doing' WHERE id = 1")
    with psycopg.connect(server.dsn, autocommit=True) as other:
        assert _labels(other, "ea_state") == ["new", "doing", "finished"]
        rows = other.execute("SELECT id, s::text FROM ea_task WHERE s >= 'doing' ORDER BY s")
        assert rows.fetchall() == [(1, "doing"), (2, "finished")]
