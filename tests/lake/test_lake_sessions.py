"""Conversation sessions shared by the proxies of one DuckLake (issue 25): a session and
its events, state and artifacts written through one proxy are read through another at
once; another proxy's search index follows within seconds; appends to one session from
two proxies keep one order; a delete, a compaction and a repair are seen everywhere; a
proxy killed with -9 loses no acknowledged event; sessions from before the lake are kept
aside (not moved) and logged.

Agent ids here start with `sess25-` (no other lake test uses them)."""

from __future__ import annotations

import base64
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import requests

from tests.conftest import ServerProcess, start_server
from tests.lake.conftest import LakeCluster

DEADLINE = 20.0  # seconds; the poll interval is 250 ms, a loaded CI machine is slow


def status(p: ServerProcess, fn: str, agent: str, **args: Any) -> int:
    r = requests.post(
        f"{p.rest_url}/v1/functions/{fn}",
        json=args,
        headers={"X-HatiData-Agent-Id": agent},
        timeout=120,
    )
    return r.status_code


def msg(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"type": "text", "text": text}]}


def _until(check, what: str) -> float:
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < DEADLINE, f"{what} not within {DEADLINE} s"
        time.sleep(0.02)
    return time.monotonic() - start


def _found(p: ServerProcess, agent: str, query: str, mode: str) -> list[str]:
    rows = p.function_rows("search_sessions", agent, query=query, mode=mode, top_k=10)
    return [r["text"] for r in rows]


def test_a_session_written_on_one_proxy_is_read_on_another_at_once(
    proxies: list[ServerProcess],
) -> None:
    a, b, c = proxies
    agent, sid = "sess25-read", f"s-{uuid.uuid4().hex[:8]}"
    a.function_rows("create_session", agent, app_name="app1", user_id="u1", session_id=sid,
         state={"plain": 1, "user:lang": "pt", "app:theme": "dark"})  # fmt: skip
    with a.agent_conn(agent) as ca:
        for i in range(3):
            ca.execute(
                "SELECT * FROM append_event(%s, 'user', %s::JSON)",
                (sid, f'{{"role": "user", "parts": [{{"text": "line {i}"}}]}}'),
            )
            # read-after-write on the same connection
            (n,) = ca.execute("SELECT event_count FROM get_session(%s)", (sid,)).fetchone()
            assert n == i + 1
    # on B at once (its reads go to the lake), no waiting
    got = b.function_rows("get_session", agent, session_id=sid)[0]
    assert got["event_count"] == 3 and got["app_name"] == "app1" and got["user_id"] == "u1"
    assert got["state"] == {"app:theme": "dark", "plain": 1, "user:lang": "pt"}
    events = b.function_rows("session_events", agent, session_id=sid)
    assert [e["seq"] for e in events] == [1, 2, 3]
    assert [e["message"]["parts"][0]["text"] for e in events] == ["line 0", "line 1", "line 2"]
    last = c.function_rows("session_events", agent, session_id=sid, last_n=2)
    assert [e["seq"] for e in last] == [2, 3]
    after = c.function_rows("session_events", agent, session_id=sid, after=events[0]["timestamp"])
    assert [e["seq"] for e in after] == [2, 3]
    listed = c.function_rows("list_sessions", agent, app_name="app1")
    assert sid in [s["session_id"] for s in listed]
    # another agent sees none of it, through any proxy
    assert status(b, "get_session", "sess25-other", session_id=sid) == 404
    # artifacts
    data = base64.b64encode(b"%PDF-1 shared").decode()
    a.function_rows("save_artifact", agent, session_id=sid, name="r.pdf", data_base64=data,
         mime_type="application/pdf")  # fmt: skip
    b.function_rows("save_artifact", agent, session_id=sid, name="r.pdf", data_base64=data,
         mime_type="application/pdf")  # fmt: skip
    versions = [r["version"] for r in c.function_rows("list_artifacts", agent, session_id=sid)]
    assert versions == [1, 2]
    loaded = c.function_rows("load_artifact", agent, session_id=sid, name="r.pdf", version=1)[0]
    assert base64.b64decode(loaded["data_base64"]) == b"%PDF-1 shared"


def test_search_on_another_proxy_finds_new_events_within_seconds(
    proxies: list[ServerProcess],
) -> None:
    a, b, _ = proxies
    agent, sid = "sess25-search", f"s-{uuid.uuid4().hex[:8]}"
    a.function_rows("create_session", agent, app_name="app", user_id="u", session_id=sid)
    took = []
    for i in range(3):
        word = f"zebra{uuid.uuid4().hex[:6]}"
        text = f"the {word} flight number {i}"
        a.function_rows("append_event", agent, session_id=sid, author="user", message=msg(text))
        took.append(_until(lambda w=word, t=text: t in _found(b, agent, w, "keyword"), "keyword"))
        _until(lambda t=text: t in _found(b, agent, t, "vector"), "vector search on B")
    print(f"search on B after an append on A: {[round(t, 2) for t in took]} s")
    # the proxy that wrote them finds them too
    assert text in _found(a, agent, word, "keyword")


def test_appends_to_one_session_from_two_proxies_at_once_keep_one_order(
    proxies: list[ServerProcess],
) -> None:
    a, b, c = proxies
    agent, sid = "sess25-race", f"s-{uuid.uuid4().hex[:8]}"
    a.function_rows("create_session", agent, app_name="app", user_id="u", session_id=sid)
    per = 6

    def writer(args: tuple[int, ServerProcess]) -> list[int]:
        n, p = args
        return [
            p.function_rows(
                "append_event", agent, session_id=sid, author=f"w{n}", message=msg(f"w{n}-{i}")
            )[0]["seq"]  # fmt: skip
            for i in range(per)
        ]

    with ThreadPoolExecutor(2) as pool:
        acked = list(pool.map(writer, [(0, a), (1, b)]))
    assert sorted(acked[0] + acked[1]) == list(range(1, 2 * per + 1))  # distinct positions
    events = c.function_rows("session_events", agent, session_id=sid)
    assert [e["seq"] for e in events] == list(range(1, 2 * per + 1))
    texts = [e["message"]["parts"][0]["text"] for e in events]
    for n in range(2):  # each writer's events in its order, none lost
        assert [t for t in texts if t.startswith(f"w{n}-")] == [f"w{n}-{i}" for i in range(per)]
    for n, seqs in enumerate(acked):  # each acknowledged seq holds that writer's event
        assert all(texts[s - 1].startswith(f"w{n}-") for s in seqs)


def test_user_and_app_state_are_shared_and_temp_state_ends_with_its_invocation(
    proxies: list[ServerProcess],
) -> None:
    a, b, c = proxies
    agent, tag = "sess25-state", uuid.uuid4().hex[:8]
    app, s1, s2 = f"app-{tag}", f"s1-{tag}", f"s2-{tag}"
    a.function_rows("create_session", agent, app_name=app, user_id="ana", session_id=s1)
    b.function_rows("create_session", agent, app_name=app, user_id="ana", session_id=s2)
    a.function_rows("set_session_state", agent, session_id=s1, key="user:color", value="green")
    a.function_rows("set_session_state", agent, session_id=s1, key="app:limit", value=5)
    a.function_rows("set_session_state", agent, session_id=s1, key="mine", value=True)
    state = b.function_rows("get_session", agent, session_id=s2)[0]["state"]
    assert state == {"app:limit": 5, "user:color": "green"}  # not s1's own key
    # written at once on two proxies: one value, not two rows
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda pv: pv[0].function_rows("set_session_state", agent, session_id=s2,
                                      key="app:limit", value=pv[1]), [(b, 6), (c, 7)]))  # fmt: skip
    seen = {
        p.function_rows("get_session", agent, session_id=s1)[0]["state"]["app:limit"]
        for p in (a, b)
    }
    assert len(seen) == 1 and seen <= {6, 7}
    # temp: lives for its invocation, wherever it continues
    a.function_rows("set_session_state", agent, session_id=s1, key="temp:step", value=1,
         invocation_id="inv1")  # fmt: skip
    assert b.function_rows("get_session", agent, session_id=s1)[0]["state"]["temp:step"] == 1
    b.function_rows("append_event", agent, session_id=s1, author="user", message=msg("next turn"),
         invocation_id="inv2")  # fmt: skip
    assert "temp:step" not in a.function_rows("get_session", agent, session_id=s1)[0]["state"]


def test_a_session_deleted_on_one_proxy_is_gone_on_the_others(
    proxies: list[ServerProcess],
) -> None:
    a, b, _ = proxies
    agent, sid, word = "sess25-del", f"s-{uuid.uuid4().hex[:8]}", f"okapi{uuid.uuid4().hex[:6]}"
    a.function_rows("create_session", agent, app_name="app", user_id="u", session_id=sid)
    a.function_rows("append_event", agent, session_id=sid, author="user", message=msg(f"an {word}"))
    _until(lambda: _found(b, agent, word, "keyword") != [], "the event in B's index")
    out = a.function_rows("delete_session", agent, session_id=sid)[0]
    assert out["deleted"] is True and out["events_deleted"] == 1
    assert status(b, "get_session", agent, session_id=sid) == 404  # at once
    assert sid not in [s["session_id"] for s in b.function_rows("list_sessions", agent)]
    _until(lambda: _found(b, agent, word, "keyword") == [], "the delete in B's index")


def test_compaction_and_repair_on_one_proxy_are_seen_on_another(
    proxies: list[ServerProcess],
) -> None:
    a, b, _ = proxies
    agent, sid = "sess25-upkeep", f"s-{uuid.uuid4().hex[:8]}"
    a.function_rows("create_session", agent, app_name="app", user_id="u", session_id=sid)
    for i in range(8):
        a.function_rows("append_event", agent, session_id=sid, author="user" if i % 2 else "bot",
             message=msg(f"turn {i} about the harbour"))  # fmt: skip
    out = a.function_rows("compact_session", agent, session_id=sid, threshold=5, keep_recent=3)[0]
    assert out["compacted"] is True and out["summarized"] == 5
    events = b.function_rows("session_events", agent, session_id=sid)
    assert len(events) == 4 and events[0]["author"] == "system"
    assert [e["message"]["parts"][0]["text"] for e in events[1:]] == [
        f"turn {i} about the harbour" for i in range(5, 8)
    ]
    # B's index drops the compacted events and takes the summary
    _until(
        lambda: "turn 0 about the harbour" not in _found(b, agent, "harbour", "keyword"),
        "the compaction in B's index",
    )
    # a repair run through B (it merges the summary's neighbours, say) is seen on A
    b.function_rows("repair_session", agent, session_id=sid)
    repaired = b.function_rows("session_events", agent, session_id=sid)
    assert a.function_rows("session_events", agent, session_id=sid) == repaired
    assert a.function_rows("repair_session", agent, session_id=sid)[0]["fixes"] == 0  # nothing left


def test_a_proxy_killed_with_minus_9_loses_no_acknowledged_event(
    lake: LakeCluster, proxies: list[ServerProcess]
) -> None:
    a = proxies[0]
    x = lake.start_proxy()
    agent, sid = "sess25-kill", f"s-{uuid.uuid4().hex[:8]}"
    x.function_rows("create_session", agent, app_name="app", user_id="u", session_id=sid)
    acked: list[int] = []

    def writer() -> None:
        for i in range(200):
            try:
                r = x.function_rows("append_event", agent, session_id=sid, author="user",
                         message=msg(f"e{i}"))  # fmt: skip
            except (requests.RequestException, AssertionError):
                return
            acked.append(r[0]["seq"])

    with ThreadPoolExecutor(1) as pool:
        done = pool.submit(writer)
        _until(lambda: len(acked) >= 5, "five acknowledged appends")
        lake.kill(x)
        done.result()
    events = a.function_rows("session_events", agent, session_id=sid)
    seqs = [e["seq"] for e in events]
    assert set(acked) <= set(seqs), (acked, seqs)
    assert seqs == list(range(1, len(seqs) + 1))
    # at most the one append in flight at the kill is there without its answer
    assert len(seqs) - len(acked) <= 1


def test_sessions_from_before_the_lake_are_kept_aside_and_logged(
    lake: LakeCluster, proxies: list[ServerProcess], tmp_path: Path
) -> None:
    agent, sid = "sess25-before", f"s-{uuid.uuid4().hex[:8]}"
    alone = start_server(tmp_path, "--embedding-provider", "hash", "--mcp-port", "0")
    try:
        alone.function_rows("create_session", agent, app_name="app", user_id="u", session_id=sid)
        alone.function_rows(
            "append_event", agent, session_id=sid, author="user", message=msg("old")
        )
    finally:
        alone.stop()
    flags = ("--lake-catalog", lake.catalog, "--lake-data", str(lake.data))
    joined = start_server(tmp_path, "--embedding-provider", "hash", "--mcp-port", "0",
                          "--auth-method", "trust", *flags, timeout=300)  # fmt: skip
    lake.extra.append(joined)  # stopped with the cluster
    log = joined.log()
    assert (
        "sessions: rows from before the lake kept in hatidata_internal.sessions_before_lake" in log
    )
    assert "session_events_before_lake" in log
    # not shared: the lake's proxies (this one too) do not know it; the id is free there
    assert status(joined, "get_session", agent, session_id=sid) == 404
    assert status(proxies[0], "get_session", agent, session_id=sid) == 404
    joined.function_rows("create_session", agent, app_name="app", user_id="u", session_id=sid)
    assert proxies[0].function_rows("get_session", agent, session_id=sid)[0]["event_count"] == 0
