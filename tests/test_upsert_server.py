"""INSERT ... ON CONFLICT over psycopg's extended protocol (parameters, executemany,
transactions, savepoints): rows that share a conflict key are PostgreSQL's outcome or an
error, never rows dropped without a word (transpiler/upsert_guard.py)."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import errors

from tests.conftest import ServerProcess

HINT = (
    "Ensure that no rows proposed for insertion within the same command have duplicate "
    "constrained values."
)


def _table(conn: psycopg.Connection, name: str) -> str:
    conn.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, email text UNIQUE, n int)")
    return name


def test_insert_select_with_duplicate_keys_do_update_is_21000(conn: psycopg.Connection) -> None:
    t = _table(conn, "us_sel_upd")
    with pytest.raises(errors.CardinalityViolation) as info:
        conn.execute(
            f"INSERT INTO {t} (id, email, n) SELECT id, e, 1 FROM "
            "(VALUES (%s, %s), (%s, %s)) s(id, e) ON CONFLICT (id) DO UPDATE SET n = 2",
            (1, "a", 1, "b"),
        )
    assert info.value.diag.message_primary == (
        "ON CONFLICT DO UPDATE command cannot affect row a second time"
    )
    assert info.value.diag.message_hint == HINT
    assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)


def test_insert_select_with_duplicate_keys_do_nothing_keeps_the_first(
    conn: psycopg.Connection,
) -> None:
    t = _table(conn, "us_sel_nothing")
    conn.execute(f"INSERT INTO {t} VALUES (1, 'old', 0)")
    cur = conn.execute(
        f"INSERT INTO {t} (id, email, n) SELECT g %% %s, 'e' || g, g FROM generate_series(1, %s) g "
        "ON CONFLICT (id) DO NOTHING RETURNING id, n",
        (3, 6),
    )
    assert cur.rowcount == 2
    assert sorted(cur.fetchall()) == [(0, 3), (2, 2)]
    assert conn.execute(f"SELECT id, email, n FROM {t} ORDER BY id").fetchall() == [
        (0, "e3", 3),
        (1, "old", 0),
        (2, "e2", 2),
    ]


def test_no_target_do_nothing_skips_rows_duplicating_any_unique_key(
    conn: psycopg.Connection,
) -> None:
    """Django's bulk_create(ignore_conflicts=True): ON CONFLICT DO NOTHING, no target."""
    t = _table(conn, "us_no_target")
    cur = conn.execute(
        f"INSERT INTO {t} (id, email, n) VALUES (%s, %s, 1), (%s, %s, 2), (%s, %s, 3) "
        "ON CONFLICT DO NOTHING",
        (1, "a", 2, "a", 3, "c"),
    )
    assert cur.rowcount == 2
    assert conn.execute(f"SELECT id, email FROM {t} ORDER BY id").fetchall() == [
        (1, "a"),
        (3, "c"),
    ]


def test_several_null_keys_are_refused_not_dropped(conn: psycopg.Connection) -> None:
    """PostgreSQL inserts every row whose key is NULL; DuckDB would keep one: 0A000."""
    t = _table(conn, "us_nulls")
    for target in ("(email)", ""):
        with pytest.raises(errors.FeatureNotSupported) as info:
            conn.execute(
                f"INSERT INTO {t} (id, email, n) SELECT g, NULL, g FROM generate_series(1, %s) g "
                f"ON CONFLICT {target} DO NOTHING",
                (3,),
            )
        assert info.value.diag.message_hint
    assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)


def test_executemany_upserts_each_row_in_turn(conn: psycopg.Connection) -> None:
    """One statement per parameter set: a key repeated across them updates (no 21000)."""
    t = _table(conn, "us_many")
    with conn.cursor() as cur:
        cur.executemany(
            f"INSERT INTO {t} (id, email, n) VALUES (%s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET n = us_many.n + EXCLUDED.n",
            [(1, "a", 1), (2, "b", 2), (1, "a", 10), (3, None, 3), (4, None, 4)],
        )
    assert conn.execute(f"SELECT id, email, n FROM {t} ORDER BY id").fetchall() == [
        (1, "a", 11),
        (2, "b", 2),
        (3, None, 3),
        (4, None, 4),
    ]


def test_errors_as_postgresql_words_them(conn: psycopg.Connection) -> None:
    t = _table(conn, "us_errors")
    conn.execute(f"INSERT INTO {t} VALUES (1, 'a', 1), (2, 'b', 2)")
    with pytest.raises(errors.InvalidColumnReference) as no_match:  # 42P10
        conn.execute(f"INSERT INTO {t} VALUES (%s, 'z', 0) ON CONFLICT (n) DO NOTHING", (1,))
    assert no_match.value.diag.message_primary == (
        "there is no unique or exclusion constraint matching the ON CONFLICT specification"
    )
    with pytest.raises(errors.SyntaxError) as no_target:  # 42601
        conn.execute(f"INSERT INTO {t} VALUES (%s, 'z', 0) ON CONFLICT DO UPDATE SET n = 0", (1,))
    assert no_target.value.diag.message_hint == "For example, ON CONFLICT (column_name)."
    with pytest.raises(errors.UniqueViolation):  # the update breaks another unique key
        conn.execute(
            f"INSERT INTO {t} VALUES (%s, %s, 0) ON CONFLICT (id) DO UPDATE SET email = "
            "EXCLUDED.email",
            (1, "b"),
        )
    assert conn.execute(f"SELECT id, email, n FROM {t} ORDER BY id").fetchall() == [
        (1, "a", 1),
        (2, "b", 2),
    ]


def test_in_a_transaction_the_21000_fails_the_block(conn: psycopg.Connection) -> None:
    t = _table(conn, "us_txn")
    conn.autocommit = False
    conn.execute(
        f"INSERT INTO {t} VALUES (%s, %s, 1), (%s, %s, 2) ON CONFLICT DO NOTHING", (1, "a", 1, "b")
    )
    with pytest.raises(errors.CardinalityViolation):
        conn.execute(
            f"INSERT INTO {t} VALUES (%s, 'x', 1), (%s, 'y', 2) ON CONFLICT (id) DO UPDATE "
            "SET n = 5",
            (7, 7),
        )
    with pytest.raises(errors.InFailedSqlTransaction):
        conn.execute("SELECT 1")
    conn.rollback()
    conn.autocommit = True
    assert conn.execute(f"SELECT count(*) FROM {t}").fetchone() == (0,)


def test_savepoint_rolled_back_after_a_multi_row_upsert(conn: psycopg.Connection) -> None:
    """ROLLBACK TO replays the block's earlier writes: a guarded VALUES upsert is one."""
    t = _table(conn, "us_savepoint")
    conn.autocommit = False
    conn.execute(
        f"INSERT INTO {t} VALUES (%s, %s, 1), (%s, %s, 2) ON CONFLICT (id) DO NOTHING",
        (40, "a", 40, "b"),
    )
    conn.execute("SAVEPOINT s1")
    conn.execute(f"INSERT INTO {t} VALUES (40, 'c', 3) ON CONFLICT (id) DO UPDATE SET n = 9")
    conn.execute("ROLLBACK TO SAVEPOINT s1")
    conn.execute(f"INSERT INTO {t} VALUES (41, 'd', 4) ON CONFLICT DO NOTHING")
    conn.commit()
    conn.autocommit = True
    assert conn.execute(f"SELECT id, email, n FROM {t} ORDER BY id").fetchall() == [
        (40, "a", 1),
        (41, "d", 4),
    ]


def test_asyncpg_parameters_keep_their_column_types(server: ServerProcess) -> None:
    """asyncpg encodes each argument by the type the server describes: a guarded
    multi-row upsert's parameters are typed by their columns, as in the INSERT written."""
    import asyncio
    import datetime as dt
    from decimal import Decimal

    import asyncpg

    async def run() -> list[tuple]:
        con = await asyncpg.connect(host=server.host, port=server.port, user="tester")
        try:
            await con.execute(
                "CREATE TABLE us_typed (id int PRIMARY KEY, ts timestamptz, n numeric(10,2), "
                "d date)"
            )
            sql = (
                "INSERT INTO us_typed (id, ts, n, d) VALUES ($1, $2, $3, $4), ($5, $6, $7, $8) "
                "ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n RETURNING id"
            )
            ts = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
            row = [1, ts, Decimal("1.50"), dt.date(2024, 1, 1)]
            await con.fetch(sql, *row, 2, ts, Decimal("2.25"), dt.date(2024, 1, 2))
            await con.fetch(sql, *row, 3, ts, Decimal("3"), dt.date(2024, 1, 3))
            with pytest.raises(asyncpg.CardinalityViolationError):
                await con.fetch(sql, *row, *row)
            rows = await con.fetch("SELECT id, n, d FROM us_typed ORDER BY id")
            return [tuple(r) for r in rows]
        finally:
            await con.close()

    assert asyncio.run(run()) == [
        (1, Decimal("1.50"), dt.date(2024, 1, 1)),
        (2, Decimal("2.25"), dt.date(2024, 1, 2)),
        (3, Decimal("3.00"), dt.date(2024, 1, 3)),
    ]
