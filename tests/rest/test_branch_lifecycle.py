"""Branch lifecycle triggers (seed 001 "Branch Lifecycle Triggers") against a live server:
registration over REST and SQL, fires from the real branch paths, their actions."""

from __future__ import annotations

import http.server
import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.rest.rest_support import KeyedServer, standard_server

TRIGGERS = "/v1/organizations/local/triggers"
LIFECYCLE = TRIGGERS + "/branch-lifecycle"
BRANCHES = "/v1/organizations/local/branches"


class Receiver:
    """A local webhook endpoint on a thread; keeps every JSON body it is sent."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.bodies.append(json.loads(body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/branch-events"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    with standard_server(tmp_path_factory.mktemp("rest-lifecycle")) as server:
        with wire(server, "admin") as con:
            con.execute("CREATE TABLE items (id INT PRIMARY KEY, label VARCHAR)")
        yield server


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def wire(ks: KeyedServer, key: str, agent: str | None = None) -> psycopg.Connection:
    options = f"-c hatidata_agent_id={agent}" if agent else ""
    return psycopg.connect(
        host="127.0.0.1", port=ks.server.port, user=key, password=ks.secrets[key],
        dbname="hatidata", autocommit=True, options=options,
    )  # fmt: skip


def lifecycle(ks: KeyedServer, key: str = "admin", **body: Any) -> dict:
    payload = {"name": f"lc-{uuid.uuid4().hex[:8]}", "actions": ["write_event"], **body}
    r = ks.request("POST", LIFECYCLE, key=key, json=payload)
    assert r.status_code == 200, r.text
    return r.json()


def branch(ks: KeyedServer, key: str = "admin", agent: str | None = "bot") -> str:
    r = ks.request("POST", BRANCHES, key=key, json={"agent_id": agent, "tables": []})
    assert r.status_code == 200, r.text
    return r.json()["id"]


def bquery(ks: KeyedServer, branch_id: str, sql: str, key: str = "bot") -> None:
    with wire(ks, key) as con:
        con.execute("SELECT * FROM branch_query(%s, %s)", [branch_id, sql]).fetchall()


def fires(ks: KeyedServer, trigger: dict, branch_id: str | None = None) -> list[dict]:
    r = ks.request("GET", f"{TRIGGERS}/{trigger['id']}/fires", key="admin")
    assert r.status_code == 200, r.text
    return [f for f in r.json() if branch_id is None or f["source_id"] == branch_id]


def delete(ks: KeyedServer, *triggers: dict) -> None:
    for t in triggers:
        assert ks.request("DELETE", f"{TRIGGERS}/{t['id']}", key="admin").status_code == 200


def test_register_shapes_and_validation(ks: KeyedServer, receiver: Receiver) -> None:
    t = lifecycle(
        ks,
        name="branch-idle-alert",
        event_type="idle_timeout",
        actions=["webhook", "agent_notify"],
        webhook_url=receiver.url,
        threshold=3600,
        enabled=True,
    )  # fmt: skip (the seed's example)
    assert (t["event_source"], t["event_type"], t["concept"]) == (
        "branch_lifecycle", "idle_timeout", "idle_timeout")  # fmt: skip
    assert t["threshold"] == 3600 and t["cooldown_secs"] == 0 and t["enabled"] is True
    assert t["embedding_model"] is None and t["scope"] == "org"
    assert t["id"] in {x["id"] for x in ks.request("GET", LIFECYCLE, key="admin").json()}
    listed = {x["id"]: x for x in ks.request("GET", TRIGGERS, key="admin").json()}
    assert listed[t["id"]]["event_source"] == "branch_lifecycle"
    # The plain create takes event_source too: the event in event_type, or in concept.
    plain = {"name": "plain", "threshold": 5, "actions": ["flag_for_review"],
             "event_source": "branch_lifecycle"}  # fmt: skip
    a = ks.request("POST", TRIGGERS, key="admin", json={**plain, "event_type": "storage_exceeded"})
    b = ks.request("POST", TRIGGERS, key="admin",
                   json={**plain, "name": "plain2", "concept": "query_count_exceeded"})  # fmt: skip
    assert a.status_code == b.status_code == 200, (a.text, b.text)
    assert (a.json()["event_type"], b.json()["event_type"]) == (
        "storage_exceeded", "query_count_exceeded")  # fmt: skip
    bad_lifecycle = [
        {"name": "x", "event_type": "idle_timeout", "actions": ["write_event"]},  # no threshold
        {"name": "x", "event_type": "idle_timeout", "actions": ["write_event"], "threshold": 0},
        {"name": "x", "event_type": "exploded", "actions": ["write_event"]},
        {"name": "x", "event_type": "branch_created", "actions": []},
        {"name": "x", "event_type": "branch_created", "actions": ["webhook"],
         "webhook_url": "http://169.254.169.254/latest/meta-data"},  # the SSRF guard
    ]  # fmt: skip
    for body in bad_lifecycle:
        r = ks.request("POST", LIFECYCLE, key="admin", json=body)
        assert r.status_code == 422, (body, r.text)
    for body in [{**plain, "name": "y"}, {**plain, "name": "y", "concept": "semantic text"},
                 {**plain, "name": "y", "event_source": "semantic", "threshold": 1.5,
                  "concept": "c"}]:  # fmt: skip
        assert ks.request("POST", TRIGGERS, key="admin", json=body).status_code == 422, body
    # No concept to test or change; thresholds are counts, not similarities.
    path = f"{TRIGGERS}/{t['id']}"
    assert ks.request("POST", path + "/test", key="admin", json={"text": "x"}).status_code == 422
    assert ks.request("PUT", path, key="admin", json={"concept": "c"}).status_code == 422
    r = ks.request("PUT", path, key="admin", json={"threshold": 7200})
    assert r.status_code == 200 and r.json()["threshold"] == 7200
    assert ks.request("POST", path + "/re-embed-concept", key="admin").status_code == 422
    # Scopes and organisations.
    assert ks.request("POST", LIFECYCLE, key="analyst", json=bad_lifecycle[0]).status_code == 403
    assert ks.request("GET", LIFECYCLE, key="analyst").status_code == 200
    assert ks.request("GET", "/v1/organizations/org2/triggers/branch-lifecycle",
                      key="admin").status_code == 404  # fmt: skip
    assert t["id"] not in {x["id"] for x in ks.request(
        "GET", "/v1/organizations/org2/triggers/branch-lifecycle", key="other").json()}  # fmt: skip
    delete(ks, t, a.json(), b.json())


def test_branch_created_performs_every_action(ks: KeyedServer, receiver: Receiver) -> None:
    t = lifecycle(
        ks, event_type="branch_created",
        actions=["write_event", "agent_notify", "flag_for_review", "webhook"],
        webhook_url=receiver.url, action_config={"agent_id": "bot"},
    )  # fmt: skip
    bid = branch(ks)
    (f,) = fires(ks, t)
    assert (f["source"], f["source_id"], f["source_agent_id"]) == ("branch", bid, "bot")
    assert f["similarity"] is None and bid in f["input_text"] and "created" in f["input_text"]
    assert f["details"]["event_type"] == "branch_created"
    assert set(f["action_taken"].split(",")) == {
        "write_event", "agent_notify", "flag_for_review", "webhook"}  # fmt: skip
    with wire(ks, "bot") as con:  # agent_notify: bot's inbox
        inbox = con.execute(
            "SELECT trigger_id::VARCHAR, message FROM agent_inbox() WHERE trigger_id = %s",
            [t["id"]],
        ).fetchall()
    assert len(inbox) == 1 and bid in inbox[0][1]
    with wire(ks, "admin", agent=t["agent_id"]) as con:  # write_event: the owner's events
        events = con.execute(
            "SELECT event_type, payload FROM _hatidata_trigger_events WHERE trigger_id = %s",
            [t["id"]],
        ).fetchall()
    assert [e[0] for e in events] == ["branch_created"]
    assert events[0][1]["branch_id"] == bid  # psycopg decodes JSON
    deadline = time.time() + 15
    while time.time() < deadline and (
        not receiver.bodies or fires(ks, t)[0]["status"] == "pending"
    ):
        time.sleep(0.1)
    (body,) = receiver.bodies
    assert (body["event"], body["event_type"], body["branch_id"]) == (
        "trigger.fired", "branch_created", bid)  # fmt: skip
    assert fires(ks, t)[0]["status"] == "delivered"
    listed = {x["id"]: x for x in ks.request("GET", LIFECYCLE, key="admin").json()}
    assert listed[t["id"]]["fire_count"] == 1
    delete(ks, t)


def test_query_count_and_storage(ks: KeyedServer) -> None:
    r = ks.request(
        "POST",
        TRIGGERS,
        key="admin",
        json={
            "name": "busy-branch",
            "event_source": "branch_lifecycle",
            "event_type": "query_count_exceeded",
            "threshold": 2,
            "actions": ["flag_for_review"],
        },
    )
    assert r.status_code == 200, r.text  # fmt: skip
    busy = r.json()
    big = lifecycle(ks, event_type="storage_exceeded", threshold=200)
    bid = branch(ks)
    bquery(ks, bid, "SELECT 1")
    bquery(ks, bid, "INSERT INTO items VALUES (1, 'small')")
    assert fires(ks, busy, bid) == [] and fires(ks, big, bid) == []
    bquery(ks, bid, "SELECT count(*) FROM items")  # the third query: more than 2
    (f,) = fires(ks, busy, bid)
    assert "3 queries" in f["input_text"] and f["details"]["value"] == 3
    bquery(ks, bid, "INSERT INTO items SELECT i, repeat('x', 50) FROM range(2, 12) r(i)")
    (s,) = fires(ks, big, bid)  # 10 rows of 54 bytes: over 200 bytes
    assert s["details"]["value"] > 200
    bquery(ks, bid, "SELECT 1")  # once per branch: no second fire of either
    assert len(fires(ks, busy, bid)) == 1 and len(fires(ks, big, bid)) == 1
    cost = ks.request("GET", f"{BRANCHES}/{bid}/cost", key="admin").json()
    assert cost["query_count"] == 5 and cost["storage_bytes"] == pytest.approx(
        s["details"]["value"], rel=0.5)  # fmt: skip
    delete(ks, busy, big)


def test_idle_timeout_and_merge_requested(ks: KeyedServer) -> None:
    idle = lifecycle(ks, event_type="idle_timeout", threshold=1)
    merge = lifecycle(ks, event_type="merge_requested", actions=["agent_notify"],
                      action_config={"agent_id": "bot"})  # fmt: skip
    bid = branch(ks)
    time.sleep(1.3)
    ks.request("GET", BRANCHES, key="admin")  # listing runs the sweep (also every 60 s)
    (first,) = fires(ks, idle, bid)
    assert "idle" in first["input_text"] and first["details"]["value"] >= 1
    ks.request("GET", BRANCHES, key="admin")
    assert len(fires(ks, idle, bid)) == 1  # once per idle spell
    bquery(ks, bid, "SELECT 1")  # activity ends the spell
    time.sleep(1.3)
    ks.request("GET", BRANCHES, key="bot")  # an agent key sweeps its own branches
    assert len(fires(ks, idle, bid)) == 2
    r = ks.request("POST", f"{BRANCHES}/{bid}/merge", key="admin", json={})
    assert r.status_code == 200, r.text
    (m,) = fires(ks, merge, bid)
    assert "merge" in m["input_text"]
    with wire(ks, "bot") as con:
        (n,) = con.execute(
            "SELECT count(*) FROM agent_inbox() WHERE trigger_id = %s", [merge["id"]]
        ).fetchone()
    assert n == 1
    time.sleep(1.2)
    ks.request("GET", BRANCHES, key="admin")
    assert len(fires(ks, idle, bid)) == 2  # merged: no longer idle, just gone
    delete(ks, idle, merge)


def test_enabled_and_cooldown(ks: KeyedServer) -> None:
    slow = lifecycle(ks, event_type="branch_created", cooldown_secs=3600)
    off = lifecycle(ks, event_type="branch_created", enabled=False)
    one, two = branch(ks), branch(ks)
    assert len(fires(ks, slow, one)) + len(fires(ks, slow, two)) == 1
    assert fires(ks, off) == []
    r = ks.request("PUT", f"{TRIGGERS}/{off['id']}", key="admin", json={"enabled": True})
    assert r.status_code == 200
    three = branch(ks)
    assert [f["source_id"] for f in fires(ks, off)] == [three]
    assert fires(ks, slow, three) == []  # still cooling down
    delete(ks, slow, off)


def test_agent_triggers_watch_their_own_branches(ks: KeyedServer) -> None:
    mine = lifecycle(ks, key="bot2", event_type="branch_created")
    assert mine["scope"] == "agent" and mine["agent_id"] == "bot2"
    assert {x["id"] for x in ks.request("GET", LIFECYCLE, key="bot2").json()} == {mine["id"]}
    assert mine["id"] not in {x["id"] for x in ks.request("GET", LIFECYCLE, key="bot").json()}
    others = branch(ks, agent="bot")
    own = branch(ks, key="bot2", agent=None)
    assert [f["source_id"] for f in fires(ks, mine)] == [own]
    assert fires(ks, mine, others) == []
    # The same trigger kind over SQL, as the agent.
    with wire(ks, "bot2") as con:
        row = con.execute(
            "SELECT event_source, event_type, threshold FROM register_trigger('sql-lc', "
            "event_source := 'branch_lifecycle', event_type := 'query_count_exceeded', "
            "threshold := 1, actions := '[\"write_event\"]')"
        ).fetchone()
    assert row == ("branch_lifecycle", "query_count_exceeded", 1.0)
    bquery(ks, own, "SELECT 1", key="bot2")
    bquery(ks, own, "SELECT 2", key="bot2")
    sql_trigger = next(x for x in ks.request("GET", LIFECYCLE, key="bot2").json()
                       if x["name"] == "sql-lc")  # fmt: skip
    assert len(fires(ks, sql_trigger, own)) == 1
    delete(ks, mine, sql_trigger)
