"""Multi-row INSERT ... ON CONFLICT whose rows share a conflict key (transpiler/upsert_keys.py):
DuckDB would keep the first such row and drop the rest silently; the server refuses instead,
also when the keys arrive as bound parameters (Django's bulk_create(update_conflicts=True),
SQLAlchemy's on_conflict_do_update over a list)."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

UPSERT = (
    "INSERT INTO {t} (id, email, n) VALUES (%s, %s, %s), (%s, %s, %s) "
    "ON CONFLICT ({key}) DO UPDATE SET n = excluded.n"
)


def _table(conn: psycopg.Connection, name: str) -> str:
    conn.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, email text UNIQUE, n int)")
    return name


def test_bound_duplicate_keys_are_21000_and_nothing_is_written(conn: psycopg.Connection) -> None:
    t = _table(conn, "ub_dup")
    with pytest.raises(errors.CardinalityViolation) as info:
        conn.execute(UPSERT.format(t=t, key="email"), (1, "a", 1, 2, "a", 2))
    assert info.value.diag.message_primary == (
        "ON CONFLICT DO UPDATE command cannot affect row a second time"
    )
    assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)


def test_distinct_bound_keys_upsert_every_row(conn: psycopg.Connection) -> None:
    t = _table(conn, "ub_ok")
    conn.execute(f"INSERT INTO {t} VALUES (1, 'a', 0)")
    cur = conn.execute(UPSERT.format(t=t, key="id"), (1, "a", 5, 2, "b", 6))
    assert cur.rowcount == 2
    assert conn.execute(f"SELECT id, n FROM {t} ORDER BY id").fetchall() == [(1, 5), (2, 6)]


def test_null_keys_are_refused_rather_than_dropped(conn: psycopg.Connection) -> None:
    """PostgreSQL inserts both (NULLs never conflict); DuckDB would keep one: 0A000."""
    t = _table(conn, "ub_null")
    for action in ("DO UPDATE SET n = excluded.n", "DO NOTHING"):
        with pytest.raises(errors.FeatureNotSupported) as info:
            conn.execute(
                f"INSERT INTO {t} (id, email, n) VALUES (%s, %s, 1), (%s, %s, 2) "
                f"ON CONFLICT (email) {action}",
                (1, None, 2, None),
            )
        assert info.value.diag.message_hint
    assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)
    # one NULL key beside other keys is fine
    conn.execute(UPSERT.format(t=t, key="email"), (3, None, 1, 4, "x", 2))
    assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (2,)
