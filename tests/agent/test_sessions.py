"""Conversation sessions (proxy/agent/sessions): ordered events, scoped state (session,
user:, app:, temp:), working memory; over SQL, MCP and REST."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import requests

from tests.conftest import ServerProcess, start_server
from tests.mcp.mcp_support import HttpAgent


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    tmp = tmp_path_factory.mktemp("sessions")
    s = start_server(tmp)  # the default model: token_window counts with its tokenizer
    yield s
    s.stop()


def sql(srv: ServerProcess, query: str, *params: Any, agent: str = "helper") -> list[tuple]:
    with srv.agent_conn(agent) as c:
        return c.execute(query, params or None).fetchall()


def rest(srv: ServerProcess, fn: str, agent: str = "helper", **args: Any) -> requests.Response:
    return requests.post(
        f"{srv.rest_url}/v1/functions/{fn}",
        json=args,
        headers={"X-HatiData-Agent-Id": agent},
        timeout=30,
    )


def state(srv: ServerProcess, sid: str, agent: str = "helper") -> dict[str, Any]:
    r = rest(srv, "get_session", agent, session_id=sid)
    assert r.status_code == 200, r.text
    return r.json()["rows"][0]["state"]


def say(srv: ServerProcess, sid: str, author: str, text: str, **extra: Any) -> dict[str, Any]:
    msg = {
        "role": "user" if author == "user" else "agent",
        "parts": [{"type": "text", "text": text}],
    }
    r = rest(srv, "append_event", session_id=sid, author=author, message=msg, **extra)
    assert r.status_code == 200, r.text
    return r.json()["rows"][0]


def test_events_keep_their_order_and_compose_with_sql(srv: ServerProcess) -> None:
    sql(srv, "SELECT * FROM create_session('shop', 'u1', session_id := 's-order')")
    for i in range(5):
        say(srv, "s-order", "user" if i % 2 == 0 else "helper", f"turn {i}")
    rows = sql(
        srv,
        "SELECT seq, author, message->'parts'->0->>'text' FROM session_events('s-order') "
        "WHERE author = 'user' ORDER BY seq",
    )
    assert rows == [(1, "user", "turn 0"), (3, "user", "turn 2"), (5, "user", "turn 4")]
    last = sql(srv, "SELECT seq FROM session_events('s-order', last_n := 2)")
    assert last == [(4,), (5,)]
    assert sql(srv, "SELECT event_count FROM get_session('s-order')") == [(5,)]
    # The relations are plain SQL for an analyst.
    assert sql(
        srv, "SELECT count(*) FROM _hatidata_session_events WHERE session_id = 's-order'"
    ) == [(5,)]


def test_state_scopes(srv: ServerProcess) -> None:
    rest(
        srv,
        "create_session",
        app_name="bank",
        user_id="ann",
        session_id="a1",
        state={"step": 1, "app:version": "2.0"},
    )
    rest(srv, "create_session", app_name="bank", user_id="ann", session_id="a2")
    rest(srv, "create_session", app_name="bank", user_id="bob", session_id="b1")
    rest(srv, "create_session", app_name="other", user_id="ann", session_id="o1")
    say(
        srv,
        "a1",
        "user",
        "I prefer French",
        invocation_id="inv-1",
        actions={"state_delta": {"user:lang": "fr", "temp:draft": "x", "step": 2}},
    )
    assert state(srv, "a1") == {
        "app:version": "2.0",
        "step": 2,
        "temp:draft": "x",
        "user:lang": "fr",
    }
    # user: keys reach the same user's other sessions of the app, not another user's.
    assert state(srv, "a2") == {"app:version": "2.0", "user:lang": "fr"}
    assert state(srv, "b1") == {"app:version": "2.0"}
    assert state(srv, "o1") == {}  # another app
    # temp: keys end with their invocation: a new invocation's event clears them...
    say(srv, "a1", "helper", "Bien sûr", invocation_id="inv-2")
    assert "temp:draft" not in state(srv, "a1")
    # ... and so does end_invocation.
    rest(
        srv,
        "set_session_state",
        session_id="a1",
        key="temp:scratch",
        value=[1],
        invocation_id="inv-2",
    )
    assert state(srv, "a1")["temp:scratch"] == [1]
    r = rest(srv, "end_invocation", session_id="a1", invocation_id="inv-2")
    assert r.json()["rows"][0]["temp_keys_cleared"] == 1
    assert "temp:scratch" not in state(srv, "a1")
    # JSON null deletes a key; a temp: key without its invocation is refused.
    rest(srv, "set_session_state", session_id="a1", key="user:lang", value=None)
    assert "user:lang" not in state(srv, "a2")
    r = rest(srv, "set_session_state", session_id="a1", key="temp:x", value=1)
    assert r.status_code == 422 and "invocation_id" in r.json()["message"]


def test_working_memory_strategies(srv: ServerProcess) -> None:
    sql(srv, "SELECT * FROM create_session('wm', 'u', session_id := 'wm1')")
    texts = [f"message number {i} " + "word " * (i * 5) for i in range(10)]
    for t in texts:
        say(srv, "wm1", "user", t)
    seqs = lambda rows: [r[0] for r in rows]  # noqa: E731
    assert seqs(sql(srv, "SELECT seq FROM working_memory('wm1', strategy := 'all')")) == list(
        range(1, 11)
    )
    assert seqs(sql(srv, "SELECT seq FROM working_memory('wm1', max_messages := 3)")) == [8, 9, 10]
    rows = sql(
        srv, "SELECT seq, tokens FROM working_memory('wm1', 'token_window', max_tokens := 120)"
    )
    assert rows and rows[-1][0] == 10  # the newest events, with no gap
    assert seqs(rows) == list(range(rows[0][0], 11))
    used = sum(t for _, t in rows)
    assert used <= 120
    # One more event would not have fitted.
    first = rows[0][0]
    more = sql(srv, f"SELECT tokens FROM working_memory('wm1', 'token_window', {used + 1000})")
    assert first == 1 or sum(t for (t,) in more[-(len(rows) + 1) :]) > 120
    with pytest.raises(psycopg.errors.InvalidParameterValue, match="strategy"):
        sql(srv, "SELECT * FROM working_memory('wm1', strategy := 'everything')")


def test_isolation_paging_delete_and_mcp(srv: ServerProcess) -> None:
    for i in range(5):
        sql(srv, f"SELECT * FROM create_session('page', 'p', session_id := 'pg{i}')")
    first = rest(srv, "list_sessions", app_name="page", page_size=2).json()["rows"]
    nxt = rest(srv, "list_sessions", app_name="page", page_size=2, after=first[-1]["session_id"])
    ids = [r["session_id"] for r in first + nxt.json()["rows"]]
    assert ids == ["pg0", "pg1", "pg2", "pg3"]
    # Another agent sees none of it.
    assert sql(srv, "SELECT count(*) FROM list_sessions()", agent="intruder") == [(0,)]
    with pytest.raises(psycopg.errors.UndefinedObject):
        sql(srv, "SELECT * FROM session_events('pg0')", agent="intruder")
    # MCP sees the same sessions as SQL for the same agent.
    agent = HttpAgent(srv, "helper")
    agent.data("append_event", {"session_id": "pg0", "author": "user", "message": "hi"})
    events = agent.data("session_events", {"session_id": "pg0"})
    assert [e["message"] for e in events] == ["hi"]
    gone = sql(srv, "SELECT deleted, events_deleted FROM delete_session('pg0')")
    assert gone == [(True, 1)]
    r = rest(srv, "get_session", session_id="pg0")
    assert r.status_code == 404, r.text


def test_duplicate_session_is_a_conflict(srv: ServerProcess) -> None:
    sql(srv, "SELECT * FROM create_session('dup', 'u', session_id := 'd1')")
    r = rest(srv, "create_session", app_name="dup", user_id="u", session_id="d1")
    assert r.status_code == 409, r.text
    assert json.loads(r.text)["error"] == "conflict"


def _until_embedded(srv: ServerProcess, n: int) -> None:
    """Appends return before their vectors exist; wait for the pump (bounded)."""
    import time

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        r = rest(srv, "search_sessions", query="x", app_name="search", mode="vector", top_k=100)
        rows = r.json()["rows"]
        if len(rows) >= n:
            return
        time.sleep(0.2)
    raise AssertionError(f"fewer than {n} events embedded after 60 s")


def test_search_finds_keyword_and_meaning_and_a_rebuild_gives_the_same(
    srv: ServerProcess,
) -> None:
    talk = {
        "trip": ["I want to book a flight to Lisbon in May", "Window seat please"],
        "bank": ["My card was charged twice for one order", "Refund the duplicate charge"],
        "code": ["The build fails with error ZX-4471 on arm64", "Pin the compiler version"],
    }
    for sid, lines in talk.items():
        rest(srv, "create_session", app_name="search", user_id="sam", session_id=f"q-{sid}")
        for line in lines:
            say(srv, f"q-{sid}", "user", line)
    _until_embedded(srv, 6)

    def top(query: str, mode: str = "hybrid") -> list[tuple[str, int]]:
        r = rest(srv, "search_sessions", query=query, app_name="search", mode=mode, top_k=3)
        assert r.status_code == 200, r.text
        return [(h["session_id"], h["seq"]) for h in r.json()["rows"]]

    # Meaning: no shared word with "money back for a double payment".
    assert top("money back for a double payment")[0][0] == "q-bank"
    # An exact rare token the model knows nothing about: the keyword side finds it.
    assert top("ZX-4471")[0] == ("q-code", 1)
    assert top("ZX-4471", "keyword")[0] == ("q-code", 1)
    before = {q: top(q) for q in ("flight to Lisbon", "compiler", "duplicate charge")}
    assert before["flight to Lisbon"][0] == ("q-trip", 1)

    rebuilt = rest(srv, "rebuild_session_index", app_name="search").json()["rows"][0]
    assert rebuilt == {"events_indexed": 6, "events_embedded": 6}
    assert {q: top(q) for q in before} == before
    # Scoped to the caller's agent and the app / user asked for.
    r = rest(srv, "search_sessions", "intruder", query="flight to Lisbon")
    assert r.json()["rows"] == []
    r = rest(srv, "search_sessions", query="flight to Lisbon", app_name="search", user_id="zed")
    assert r.json()["rows"] == []


def test_a_deleted_session_is_gone_from_search_at_once(srv: ServerProcess) -> None:
    import time

    rest(srv, "create_session", app_name="gone", user_id="u", session_id="g1")
    say(srv, "g1", "user", "the velociraptor invoice VX-9921 is overdue")

    def hits(mode: str) -> list[dict[str, Any]]:
        r = rest(srv, "search_sessions", query="velociraptor VX-9921", app_name="gone", mode=mode)
        assert r.status_code == 200, r.text
        return r.json()["rows"]

    deadline = time.monotonic() + 60
    while not hits("vector"):  # embedded by the pump after the append returned
        assert time.monotonic() < deadline, "the event was never embedded"
        time.sleep(0.1)
    assert [h["session_id"] for h in hits("keyword")] == ["g1"]
    assert sql(srv, "SELECT deleted FROM delete_session('g1')") == [(True,)]
    for mode in ("keyword", "vector", "hybrid"):
        assert hits(mode) == [], mode


def test_artifacts_keep_their_bytes_and_versions(srv: ServerProcess) -> None:
    import base64

    sql(srv, "SELECT * FROM create_session('files', 'u', session_id := 'art')")
    pdf = bytes(range(256)) * 3
    one = rest(
        srv,
        "save_artifact",
        session_id="art",
        name="r.pdf",
        mime_type="application/pdf",
        data_base64=base64.b64encode(pdf).decode(),
    ).json()["rows"][0]
    assert one["version"] == 1 and one["size"] == 768
    sql(
        srv,
        "SELECT * FROM save_artifact('art', 'r.pdf', %s, 'application/pdf')",
        base64.b64encode(b"v2").decode(),
    )
    latest = rest(srv, "load_artifact", session_id="art", name="r.pdf").json()["rows"][0]
    assert latest["version"] == 2 and base64.b64decode(latest["data_base64"]) == b"v2"
    first = rest(srv, "load_artifact", session_id="art", name="r.pdf", version=1).json()["rows"][0]
    assert base64.b64decode(first["data_base64"]) == pdf and first["mime_type"] == "application/pdf"
    assert sql(srv, "SELECT name, version FROM list_artifacts('art')") == [
        ("r.pdf", 1),
        ("r.pdf", 2),
    ]
    r = rest(srv, "save_artifact", session_id="art", name="x", data_base64="not base64!")
    assert r.status_code == 422 and "base64" in r.json()["message"]
    assert rest(srv, "load_artifact", "intruder", session_id="art", name="r.pdf").status_code == 404
    sql(srv, "SELECT * FROM delete_session('art')")
    assert rest(srv, "load_artifact", session_id="art", name="r.pdf").status_code == 404


def test_append_events_in_one_call_as_append_event_does_each(srv: ServerProcess) -> None:
    sql(srv, "SELECT * FROM create_session('bulk', 'b1', session_id := 's-bulk')")
    say(srv, "s-bulk", "user", "first, alone")
    events = [
        {"author": "user", "message": {"role": "user", "parts": [{"type": "text", "text": "a"}]}},
        {"author": "helper", "message": "b", "actions": {"state_delta": {"mood": "ok"}}},
        {"author": "user", "message": "c", "actions": {"state_delta": {"user:lang": "en"}}},
    ]
    rows = sql(
        srv,
        "SELECT seq, event_id IS NOT NULL FROM append_events('s-bulk', %s::JSON) ORDER BY seq",
        json.dumps(events),
    )
    assert rows == [(2, True), (3, True), (4, True)]  # after the single one, in order
    assert state(srv, "s-bulk") == {"mood": "ok", "user:lang": "en"}
    # REST and MCP take the same call; seqs go on.
    r = rest(srv, "append_events", session_id="s-bulk", events=[{"author": "user", "message": "d"}])
    assert r.status_code == 200, r.text
    assert [row["seq"] for row in r.json()["rows"]] == [5]
    mcp = HttpAgent(srv, "helper").data(
        "append_events", {"session_id": "s-bulk", "events": [{"author": "u", "message": "e"}]}
    )
    assert [row["seq"] for row in mcp] == [6]
    # One bad event: none is written, and the error names what is wrong.
    bad = rest(
        srv, "append_events", session_id="s-bulk", events=[{"author": "user"}, {"message": "x"}]
    )
    assert bad.status_code == 422, bad.text
    assert "author" in bad.text
    texts = sql(srv, "SELECT message::VARCHAR FROM session_events('s-bulk') ORDER BY seq")
    assert len(texts) == 6
