"""LISTEN / NOTIFY are scoped by organisation (proxy/core/notify_hub.py): a key never
hears another organisation's notifications on a channel of the same name; keys of one
organisation, and password logins among themselves (the default organisation), do.
Over MCP NOTIFY and pg_notify() reach the key's organisation's wire listeners; LISTEN
(no wire session to deliver on) is 0A000."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from tests.rest.rest_support import KeyedServer
from tests.security.ownership_support import connect, keyed_server, mcp_query


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    yield from keyed_server(tmp_path_factory)


def _heard(con: psycopg.Connection) -> list[str]:
    return [n.payload for n in con.notifies(timeout=0.5)]


def test_organisations_do_not_hear_each_other(ks: KeyedServer) -> None:
    with (
        connect(ks, "alice") as alice,
        connect(ks, "adma") as adma,
        connect(ks, "bob") as bob,
        connect(ks, "root") as root,
    ):
        for con in (alice, adma, bob, root):
            con.execute("LISTEN org_chan")
        bob.execute("NOTIFY org_chan, 'from orgb'")
        alice.execute("SELECT pg_notify('org_chan', 'from orga')")
        root.execute("NOTIFY org_chan, 'from the operators'")
        assert _heard(adma) == ["from orga"]  # alice's organisation
        assert _heard(alice) == ["from orga"]  # her own too
        assert _heard(bob) == ["from orgb"]
        assert _heard(root) == ["from the operators"]


def test_notify_over_mcp_reaches_its_organisations_listeners(ks: KeyedServer) -> None:
    with connect(ks, "adma") as adma, connect(ks, "bob") as bob:
        adma.execute("LISTEN org_mcp")
        bob.execute("LISTEN org_mcp")
        error, text = mcp_query(ks, "alice", "NOTIFY org_mcp, 'over mcp'")
        assert not error, text
        assert [(n.payload, n.pid) for n in adma.notifies(timeout=2)] == [("over mcp", 0)]
        assert _heard(bob) == []
        sql = "SELECT pg_notify('org_mcp', 'row ' || i::text) FROM range(2) t(i)"
        error, text = mcp_query(ks, "alice", sql)
        assert not error, text
        assert sorted(n.payload for n in adma.notifies(timeout=1)) == ["row 0", "row 1"]
        error, text = mcp_query(ks, "alice", "SELECT pg_notify('org_mcp', 1/0)")
        assert error, text  # a statement that fails sends nothing
        assert _heard(bob) == [] and _heard(adma) == []
        error, text = mcp_query(ks, "alice", "NOTIFY org_mcp, '" + "x" * 8000 + "'")
        assert error and "payload string too long" in text, text


def test_listen_over_mcp_is_refused(ks: KeyedServer) -> None:
    error, text = mcp_query(ks, "alice", "LISTEN org_chan")
    assert error and "wire connection" in text, text
    error, text = mcp_query(ks, "alice", "SELECT count(*) AS n FROM pg_listening_channels()")
    assert not error and '"n": 0' in text, text
