"""Semantic triggers over one DuckLake (tests/lake/conftest.py's three proxies): a trigger
registered through one proxy is one trigger for all, and it fires exactly once for a
memory stored through another while three proxies run; its fire and inbox message read
the same through every proxy."""

from __future__ import annotations

import time
import uuid

import psycopg

from tests.conftest import ServerProcess

LATE = 30.0  # seconds a fire or a memory may take to show on a loaded test machine


def _connect(p: ServerProcess) -> psycopg.Connection:
    return psycopg.connect(p.dsn, autocommit=True)


def _fires(c: psycopg.Connection, name: str) -> list[tuple]:
    return c.execute(
        "SELECT source, source_id, trigger_name FROM trigger_fires(%s)", (name,)
    ).fetchall()


def _has(c: psycopg.Connection, mid: object) -> bool:
    try:
        c.execute("SELECT 1 FROM get_memory(%s)", (str(mid),)).fetchall()
    except psycopg.errors.UndefinedObject:
        return False  # not applied on this proxy yet
    return True


def _until(what: str, check, late: float = LATE):  # noqa: ANN001, ANN202 - a test helper
    deadline = time.monotonic() + late
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            assert value, f"{what} within {late} s"
            return value


def test_a_trigger_registered_on_one_proxy_fires_once_for_a_memory_stored_on_another(
    proxies: list[ServerProcess],
) -> None:
    a, b, c = proxies
    name = f"lake-trigger-{uuid.uuid4().hex[:8]}"
    text = f"customer {name} asks for a refund of the annual plan"
    with _connect(a) as ca, _connect(b) as cb, _connect(c) as cc:
        (tid,) = ca.execute(
            "SELECT trigger_id FROM register_trigger(%s, concept := %s, threshold := 0.9, "
            'actions := \'["agent_notify", "write_event"]\', cooldown_secs := 0)',
            (name, text),
        ).fetchone()
        # one definition for every proxy
        for conn in (ca, cb, cc):
            assert conn.execute(
                "SELECT trigger_id FROM list_triggers() WHERE name = %s", (name,)
            ).fetchall() == [(tid,)]
        (mid,) = cb.execute(
            "SELECT memory_id FROM store_memory(%s, wait := true)", (text,)
        ).fetchone()
        fires = _until("the fire through A", lambda: _fires(ca, name))
        assert fires == [("memory", str(mid), name)]
        # every proxy has the memory (and could have evaluated it) before counting again
        for conn in (ca, cc):
            _until("the memory on every proxy", lambda conn=conn: _has(conn, mid))
        for conn in (ca, cb, cc):
            assert _fires(conn, name) == [("memory", str(mid), name)]
            inbox = conn.execute(
                "SELECT source_id FROM agent_inbox() WHERE trigger_name = %s", (name,)
            ).fetchall()
            assert inbox == [(str(mid),)]
            assert conn.execute(
                "SELECT fire_count FROM list_triggers() WHERE name = %s", (name,)
            ).fetchone() == (1,)
        # a delete through C is seen by A: no second proxy keeps firing it
        assert cc.execute("SELECT deleted FROM delete_trigger(%s)", (name,)).fetchone() == (True,)
        assert ca.execute(
            "SELECT count(*) FROM list_triggers() WHERE name = %s", (name,)
        ).fetchone() == (0,)
