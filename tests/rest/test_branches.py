"""REST branches (the SDK's ControlPlaneClient paths) and merge approval from a CoT session,
against a live server: shapes, figures computed from the data, isolation, scopes."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from tests.rest.rest_support import KeyedServer, standard_server

BASE = "/v1/organizations/local/branches"


@pytest.fixture(scope="module")
def ks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    with standard_server(tmp_path_factory.mktemp("rest-branches")) as server:
        with wire(server, "admin") as con:
            con.execute("CREATE TABLE acct (id INT PRIMARY KEY, bal INT, owner VARCHAR)")
            con.execute("INSERT INTO acct SELECT i, i * 10, 'o' || i FROM range(1, 11) r(i)")
            con.execute("CREATE TABLE notes (msg VARCHAR)")
            con.execute("INSERT INTO notes VALUES ('a'), ('b')")
        yield server


def wire(ks: KeyedServer, key: str) -> psycopg.Connection:
    return psycopg.connect(
        host="127.0.0.1", port=ks.server.port, user=key, password=ks.secrets[key],
        dbname="hatidata", autocommit=True,
    )  # fmt: skip


def create(ks: KeyedServer, key: str = "admin", **body) -> dict:
    r = ks.request("POST", BASE, key=key, json={"agent_id": "bot", "tables": [], **body})
    assert r.status_code == 200, r.text
    return r.json()


def bquery(ks: KeyedServer, branch_id: str, sql: str, key: str = "bot") -> list:
    with wire(ks, key) as con:
        rows = con.execute("SELECT row FROM branch_query(%s, %s)", [branch_id, sql]).fetchall()
    return [r[0] for r in rows]


def test_create_list_get(ks: KeyedServer) -> None:
    b = create(ks, tables=["acct"], description="what-if", name="wi")
    assert b["id"] == b["branch_id"] and len(b["id"]) == 32
    assert (b["org_id"], b["agent_id"], b["name"], b["status"]) == ("local", "bot", "wi", "active")
    assert b["description"] == "what-if" and b["schema_name"] == "branch_" + b["id"]
    assert {"acct", "notes"} <= set(b["tables"])
    assert [c["table"] for c in b["tables_copied"]] == ["acct"]
    assert b["query_count"] == 0 and b["approval"] is None
    assert b["id"] in {x["id"] for x in ks.request("GET", BASE, key="admin").json()}
    assert b["id"] in {x["id"] for x in ks.request("GET", BASE, key="bot").json()}
    active = ks.request("GET", BASE, key="admin", params={"status": "active"}).json()
    assert all(x["status"] == "active" for x in active)
    got = ks.request("GET", f"{BASE}/{b['id']}", key="bot").json()
    assert [a["event"] for a in got["audit"]] == ["created"]
    assert got["audit"][0]["details"] == {"tables_copied": ["acct"]}
    dashed = str(uuid.UUID(b["id"]))  # the UUID form names the same branch
    assert ks.request("GET", f"{BASE}/{dashed}", key="bot").json()["id"] == b["id"]
    # The same branch over SQL: one implementation.
    with wire(ks, "bot") as con:
        listed = con.execute("SELECT branch_id, query_count FROM branch_list()").fetchall()
    assert (b["id"], 0) in listed


def test_create_validation(ks: KeyedServer) -> None:
    bad = [
        {"agent_id": "bot", "tables": ["no_such_table"]},
        {"agent_id": "bot", "tables": "acct"},
        {"agent_id": "bot", "tables": [], "ttl_seconds": 0},
        {"agent_id": "bot", "tables": [], "ttl_seconds": "60"},
        {"agent_id": "", "tables": []},
    ]
    for body in bad:
        r = ks.request("POST", BASE, key="admin", json=body)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["error"] in ("invalid_request", "invalid_argument")
    r = ks.request("POST", BASE, key="bot", json={"agent_id": "bot2", "tables": []})
    assert r.status_code == 403  # an agent key acts only as its own agent
    assert create(ks, key="bot2", agent_id=None)["agent_id"] == "bot2"


def test_isolation_and_scopes(ks: KeyedServer) -> None:
    b = create(ks)
    path = f"{BASE}/{b['id']}"
    # Another organisation: its own org path does not know the branch, ours is not its.
    foreign = f"/v1/organizations/org2/branches/{b['id']}"
    for method, suffix in [("GET", ""), ("GET", "/diff"), ("GET", "/cost"), ("DELETE", "")]:
        assert ks.request(method, foreign + suffix, key="other").status_code == 404
    assert ks.request("POST", foreign + "/merge", key="other", json={}).status_code == 404
    assert ks.request("GET", path, key="other").status_code == 404
    assert b["id"] not in {x["id"] for x in ks.request(
        "GET", "/v1/organizations/org2/branches", key="other").json()}  # fmt: skip
    # Another agent of the org (agent-bound key): not found, not listed.
    assert ks.request("GET", path, key="bot2").status_code == 404
    assert ks.request("DELETE", path, key="bot2").status_code == 404
    assert b["id"] not in {x["id"] for x in ks.request("GET", BASE, key="bot2").json()}
    # A path segment that is no id is a name; no branch has this one.
    assert ks.request("GET", f"{BASE}/not-a-branch", key="admin").status_code == 404
    assert ks.request("GET", f"{BASE}/{'x' * 1001}", key="admin").status_code == 422
    assert ks.request("GET", f"{BASE}/{uuid.uuid4().hex}/cost", key="admin").status_code == 404
    # Scopes: the analyst reads, never writes; no key, 401.
    assert ks.request("GET", path, key="analyst").status_code == 200
    assert ks.request("GET", f"{path}/cost", key="analyst").status_code == 200
    r = ks.request("POST", BASE, key="analyst", json={"agent_id": "bot", "tables": []})
    assert r.status_code == 403 and r.json()["error"] == "forbidden"
    assert ks.request("POST", f"{path}/merge", key="analyst", json={}).status_code == 403
    assert ks.request("DELETE", path, key="analyst").status_code == 403
    assert ks.request("GET", path).status_code == 401
    assert ks.request("GET", path, key="bot").json()["status"] == "active"


def test_diff_conflicts_cost(ks: KeyedServer) -> None:
    b = create(ks)
    bid = b["id"]
    bquery(ks, bid, "UPDATE acct SET bal = 0 WHERE id IN (1, 2)")  # copies acct
    bquery(ks, bid, "DELETE FROM acct WHERE id = 3; INSERT INTO acct VALUES (100, 1, 'b')")
    bquery(ks, bid, "INSERT INTO notes VALUES ('c')")
    bquery(ks, bid, "CREATE TABLE scratch AS SELECT 42 AS x")
    assert bquery(ks, bid, "SELECT count(*) AS n FROM acct") == [{"n": 10}]
    with wire(ks, "admin") as con:  # meanwhile main changes: key 1 on both sides, key 4 main only
        con.execute("UPDATE acct SET bal = 999 WHERE id IN (1, 4)")
        con.execute("INSERT INTO acct VALUES (100, 2, 'm')")
    try:
        d = ks.request("GET", f"{BASE}/{bid}/diff", key="bot").json()
        tables = {t["table"]: t for t in d["tables"]}
        assert set(tables) == {"acct", "notes", "scratch"}
        acct = tables["acct"]
        assert acct["origin"] == "copied" and acct["key"] == ["id"]
        assert acct["branch"] == {"added": 1, "removed": 1, "changed": 2}
        assert acct["main"] == {"added": 1, "removed": 0, "changed": 2}
        assert (acct["rows_in_branch"], acct["rows_in_main"]) == (10, 11)
        assert tables["notes"]["branch"] == {"added": 1, "removed": 0, "changed": None}
        assert tables["notes"]["main"] == {"added": 0, "removed": 0, "changed": None}
        assert (
            tables["scratch"]["origin"] == "created" and tables["scratch"]["branch"]["added"] == 1
        )
        assert (d["rows_added"], d["rows_removed"], d["rows_changed"]) == (3, 1, 2)

        c = ks.request("GET", f"{BASE}/{bid}/conflicts", key="admin").json()
        assert c["has_conflicts"] is True and c["conflict_count"] == 2
        acct_c = next(t for t in c["tables"] if t["table"] == "acct")
        assert acct_c["conflicts"] == [
            {"key": {"id": 1}, "kind": "changed_on_both_sides"},
            {"key": {"id": 100}, "kind": "inserted_on_both_sides"},
        ]
        notes_c = next(t for t in c["tables"] if t["table"] == "notes")
        assert notes_c["conflict_count"] is None and "primary key" in notes_c["note"]

        cost = ks.request("GET", f"{BASE}/{bid}/cost", key="bot").json()
        assert cost["query_count"] == 5 and cost["query_time_ms"] > 0
        assert cost["tables"] == 3 and cost["tables_copied"] == 2
        assert cost["rows"] == 10 + 3 + 1
        # acct: 10 rows of INT, INT and a short VARCHAR ('o4', 'b', ...): 8 bytes + text each
        assert 100 <= cost["data_bytes"] <= 10 * (8 + 3) + 3 + 4
        assert cost["snapshot_bytes"] > 0
        assert cost["storage_bytes"] == cost["data_bytes"] + cost["snapshot_bytes"]
        assert cost["estimated_cost_usd"] is None and cost["ttl_remaining_seconds"] > 3000
    finally:
        with wire(ks, "admin") as con:
            con.execute("DELETE FROM acct WHERE id = 100")
            con.execute("UPDATE acct SET bal = id * 10 WHERE id IN (1, 4)")


def test_merge_and_discard(ks: KeyedServer) -> None:
    b = create(ks)
    bquery(ks, b["id"], "INSERT INTO notes VALUES ('merged-row')")
    r = ks.request("POST", f"{BASE}/{b['id']}/merge", key="admin", json={"strategy": "main_wins"})
    assert r.status_code == 200, r.text
    m = r.json()
    assert (m["id"], m["status"], m["strategy"]) == (b["id"], "merged", "main_wins")
    assert {"table": "notes", "action": "inserted_missing", "key": None,
            "rows_inserted": 1} in m["tables"]  # fmt: skip
    with wire(ks, "admin") as con:
        assert con.execute("SELECT count(*) FROM notes WHERE msg = 'merged-row'").fetchone()[0] == 1
        con.execute("DELETE FROM notes WHERE msg = 'merged-row'")
    again = ks.request("POST", f"{BASE}/{b['id']}/merge", key="admin", json={})
    assert again.status_code == 409 and again.json()["error"] == "conflict"
    assert ks.request("DELETE", f"{BASE}/{b['id']}", key="admin").status_code == 409
    assert ks.request("GET", f"{BASE}/{b['id']}/diff", key="admin").status_code == 409
    done = ks.request("GET", f"{BASE}/{b['id']}", key="admin").json()
    assert done["status"] == "merged" and [a["event"] for a in done["audit"]] == [
        "created", "merged"]  # fmt: skip
    assert ks.request("GET", f"{BASE}/{b['id']}/cost", key="admin").json()["storage_bytes"] == 0
    bad = ks.request("POST", f"{BASE}/{b['id']}/merge", key="admin", json={"strategy": "x"})
    assert bad.status_code == 422

    d = create(ks)
    r = ks.request("DELETE", f"{BASE}/{d['id']}", key="bot")
    assert r.status_code == 200 and r.json()["status"] == "discarded" and r.json()["id"] == d["id"]
    assert ks.request("GET", f"{BASE}/{d['id']}", key="bot").json()["status"] == "discarded"


def _session(ks: KeyedServer, agent: str = "bot") -> str:
    sid = f"review-{uuid.uuid4().hex[:8]}"
    trace = {
        "trace_id": str(uuid.uuid4()), "session_id": sid, "agent_id": agent,
        "timestamp": "2026-03-20T15:00:00Z", "trace_type": "decision",
        "content": {"text": "the what-if branch looks right"},
    }  # fmt: skip
    r = ks.request("POST", "/v1/cot/ingest", key="admin", json={"traces": [trace]})
    assert r.status_code == 200, r.text
    return sid


def test_merge_approval_reject_blocks_merge(ks: KeyedServer) -> None:
    b = create(ks)
    sid = _session(ks)
    path = f"/v1/cot/sessions/{sid}/merge-approval"
    body = {"branch_id": str(uuid.UUID(b["id"])), "decision": "reject", "reason": "too risky",
            "cot_step_references": ["step-1", "step-2"]}  # fmt: skip
    r = ks.request("POST", path, key="admin", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert {k: out[k] for k in ("session_id", "branch_id", "decision", "cot_logged",
                                "branch_updated")} == {
        "session_id": sid, "branch_id": b["id"], "decision": "reject", "cot_logged": True,
        "branch_updated": True}  # fmt: skip
    # Refused on every interface until a later approve.
    r = ks.request("POST", f"{BASE}/{b['id']}/merge", key="admin", json={})
    assert r.status_code == 409 and r.json()["error"] == "merge_rejected"
    assert "rejected by" in r.json()["message"] and "too risky" in r.json()["message"]
    with wire(ks, "bot") as con, pytest.raises(psycopg.Error) as err:
        con.execute("SELECT * FROM branch_merge(%s)", [b["id"]])
    assert err.value.sqlstate == "55000" and "rejected by" in str(err.value)
    got = ks.request("GET", f"{BASE}/{b['id']}", key="admin").json()
    assert got["approval"]["decision"] == "reject" and got["approval"]["session_id"] == sid
    events = [a["event"] for a in got["audit"]]
    assert events == ["created", "rejected", "merge_refused", "merge_refused"]
    assert got["audit"][1]["details"]["cot_step_references"] == ["step-1", "step-2"]
    # The ledger has the same decision, linked to the branch.
    export = ks.request("GET", f"/v1/cot/sessions/{sid}/export", key="admin").json()
    (approval,) = export["approvals"]
    assert approval["decision"] == "reject" and b["id"] in approval["reason"]
    assert approval["id"] == got["audit"][1]["details"]["cot_approval_id"]

    body = {"branch_id": b["id"], "decision": "approve"}
    assert ks.request("POST", path, key="admin", json=body).json()["decision"] == "approve"
    assert ks.request("GET", f"{BASE}/{b['id']}", key="admin").json()["status"] == "active"
    r = ks.request("POST", f"{BASE}/{b['id']}/merge", key="admin", json={})
    assert r.status_code == 200 and r.json()["status"] == "merged"
    # A merged branch has no merge left to decide.
    assert ks.request("POST", path, key="admin", json=body).status_code == 409


def test_merge_approval_errors(ks: KeyedServer) -> None:
    b = create(ks)
    sid = _session(ks)
    path = f"/v1/cot/sessions/{sid}/merge-approval"
    ok = {"branch_id": b["id"], "decision": "approve"}
    assert ks.request("POST", path, key="bot", json=ok).status_code == 403  # admin keys only
    assert ks.request("POST", path, key="analyst", json=ok).status_code == 403
    unknown = f"/v1/cot/sessions/no-such-{uuid.uuid4().hex[:6]}/merge-approval"
    assert ks.request("POST", unknown, key="admin", json=ok).status_code == 404
    missing = {"branch_id": uuid.uuid4().hex, "decision": "approve"}
    assert ks.request("POST", path, key="admin", json=missing).status_code == 404
    theirs = ks.request("POST", "/v1/organizations/org2/branches", key="other",
                        json={"agent_id": "x", "tables": []}).json()  # fmt: skip
    foreign = {"branch_id": theirs["id"], "decision": "reject"}
    assert ks.request("POST", path, key="admin", json=foreign).status_code == 404
    assert ks.request("POST", path, key="other", json=ok).status_code == 404  # not its session
    for bad in [{**ok, "decision": "maybe"}, {"decision": "approve"}, {**ok, "extra": 1},
                {**ok, "cot_step_references": "step-1"}]:  # fmt: skip
        assert ks.request("POST", path, key="admin", json=bad).status_code == 422, bad
    assert ks.request("GET", f"{BASE}/{b['id']}", key="admin").json()["approval"] is None


def test_analytics(ks: KeyedServer) -> None:
    b = create(ks)
    bquery(ks, b["id"], "SELECT 1")
    a = ks.request("GET", f"{BASE}/analytics", key="admin").json()
    listed = ks.request("GET", BASE, key="admin").json()
    assert a["org_id"] == "local" and a["agent_id"] is None
    assert a["total"] == len(listed) == sum(a["by_status"].values())
    assert a["by_status"]["active"] == sum(x["status"] == "active" for x in listed)
    assert a["query_count"] == sum(x["query_count"] for x in listed) >= 1
    assert a["agents"] == len({x["agent_id"] for x in listed})
    ended = [x for x in listed if x["status"] != "active"]
    merged = sum(x["status"] == "merged" for x in ended)
    assert a["merge_rate"] == (merged / len(ended) if ended else None)
    assert a["active_storage_bytes"] >= 0 and a["active_rows"] >= 0
    mine = ks.request("GET", f"{BASE}/analytics", key="bot2").json()
    assert mine["agent_id"] == "bot2"
    assert mine["total"] == len(ks.request("GET", BASE, key="bot2").json())
    assert ks.request("GET", "/v1/organizations/org2/branches/analytics", key="admin").status_code \
        == 404  # fmt: skip
    assert json.dumps(a)  # plain JSON figures


def test_branches_by_name(ks: KeyedServer) -> None:
    """Paths (and the merge approval body) take a branch's name where they take its id."""
    b = create(ks, name="rest-what-if", tables=["notes"])
    named = f"{BASE}/rest-what-if"
    got = ks.request("GET", named, key="bot").json()
    assert got["id"] == b["id"] and got["name"] == "rest-what-if"
    bquery(ks, "rest-what-if", "INSERT INTO notes VALUES ('c')")  # SQL takes the name too
    assert ks.request("GET", f"{named}/diff", key="admin").json()["rows_added"] == 1
    assert ks.request("GET", f"{named}/cost", key="admin").json()["branch_id"] == b["id"]
    assert ks.request("GET", f"{named}/conflicts", key="admin").json()["branch_id"] == b["id"]
    # Not the other agent's, nor the other org's.
    assert ks.request("GET", named, key="bot2").status_code == 404
    foreign = "/v1/organizations/org2/branches/rest-what-if"
    assert ks.request("GET", foreign, key="other").status_code == 404
    # Another agent's active branch of the same name: the org key cannot tell which is meant.
    twin = create(ks, name="rest-what-if", agent_id="bot2")
    r = ks.request("GET", named, key="admin")
    assert r.status_code == 422 and r.json()["error"] == "invalid_argument", r.text
    assert b["id"] in r.json()["message"] and twin["id"] in r.json()["message"]
    # Each agent's key sees only its own.
    assert ks.request("GET", named, key="bot2").json()["id"] == twin["id"]
    r = ks.request("DELETE", named, key="bot2")
    assert r.status_code == 200 and r.json()["id"] == twin["id"], r.text
    # One active branch of the name again: the org key's merge picks it.
    r = ks.request("POST", f"{named}/merge", key="admin", json={})
    assert r.status_code == 200 and r.json()["id"] == b["id"], r.text
    with wire(ks, "admin") as con:
        assert con.execute("SELECT count(*) FROM notes WHERE msg = 'c'").fetchone() == (1,)
