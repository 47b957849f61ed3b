"""Corrections as a user sees them (seed 003): process_memories over the wire, REST and
MCP retires a corrected fact (superseded_by_id -> the new one), searches and default
listings show current facts only, include_superseded shows the chain; the LLM path with a
local OpenAI-compatible server, and its fallback to the local rule on a garbage answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.agent.llm_support import FakeLlm
from tests.conftest import ServerProcess, start_server


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, model_dir: Path) -> Iterator[ServerProcess]:
    s = start_server(
        tmp_path_factory.mktemp("corrections"), env={"HATIDATA_MODEL_DIR": str(model_dir)}
    )
    yield s
    s.stop()


def sql(srv: ServerProcess, agent: str, text: str) -> list[tuple[Any, ...]]:
    with srv.agent_conn(agent, autocommit=False) as conn:
        return conn.execute(text).fetchall()


def pm(text: str) -> str:
    """process_memories over SQL: messages is JSON (here an array of one text)."""
    return f"process_memories('{json.dumps([text])}')"


def test_a_correction_over_the_wire_retires_the_old_fact(srv: ServerProcess) -> None:
    # Another agent knows the same fact: it must never be touched.
    other = sql(srv, "bystander", f"SELECT event, memory_id FROM {pm('I live in Paris.')}")
    assert other[0][0] == "ADD"
    q = "SELECT event, memory_id::VARCHAR, content, superseded_id::VARCHAR, method"
    (add,) = sql(srv, "wire", f"{q} FROM {pm('I live in Paris.')}")
    assert add[0] == "ADD" and add[2] == "I live in Paris." and add[4] == "local"
    turn = json.dumps(
        [
            {"role": "user", "content": "Actually I moved to Berlin."},
            {"role": "assistant", "content": "Updated."},
        ]
    )
    (upd,) = sql(srv, "wire", f"{q} FROM process_memories('{turn}')")
    assert upd[0] == "UPDATE" and upd[2] == "I moved to Berlin." and upd[3] == add[1]
    old = srv.function_rows("get_memory", "wire", memory_id=add[1])[0]
    assert old["conflict_status"] == "superseded" and old["superseded_by_id"] == upd[1]
    # Search and the default listing: the current fact only; include_superseded: both.
    found = sql(srv, "wire", "SELECT content FROM search_memory('where does the user live')")
    assert found == [("I moved to Berlin.",)]
    assert sql(srv, "wire", "SELECT content FROM list_memories()") == [("I moved to Berlin.",)]
    chain = sql(
        srv,
        "wire",
        "SELECT content, conflict_status, superseded_by_id::VARCHAR"
        " FROM list_memories(include_superseded := true) ORDER BY created_at",
    )
    assert chain == [
        ("I live in Paris.", "superseded", upd[1]),
        ("I moved to Berlin.", "none", None),
    ]
    both = sql(srv, "wire", "SELECT content FROM search_memory('live', include_superseded := true)")
    assert sorted(both) == [("I live in Paris.",), ("I moved to Berlin.",)]
    # A repeat (said otherwise too) is NOOP on the current memory; nothing is written.
    for again in ("I moved to Berlin.", "Yes, I really do live in Berlin now."):
        (noop,) = sql(srv, "wire", f"{q} FROM {pm(again)}")
        assert noop[0] == "NOOP" and noop[1] == upd[1], (again, noop)
    # An unrelated fact is ADD; Berlin stays current.
    (new,) = sql(srv, "wire", f"{q} FROM {pm('My favourite colour is green.')}")
    assert new[0] == "ADD" and new[3] is None
    assert len(sql(srv, "wire", "SELECT 1 FROM list_memories()")) == 2
    # The other agent's Paris is still its current fact.
    theirs = sql(srv, "bystander", "SELECT content, conflict_status FROM list_memories()")
    assert theirs == [("I live in Paris.", "none")]


def test_the_seed_example_over_rest(srv: ServerProcess) -> None:
    first = srv.function_rows(
        "process_memories",
        "rest",
        messages=[
            {
                "role": "user",
                "content": "My preferred IDE is Cursor and my timezone is America/New_York.",
            },
            {"role": "assistant", "content": "Noted."},
        ],
    )
    assert [(e["event"], e["content"]) for e in first] == [
        ("ADD", "My preferred IDE is Cursor"),
        ("ADD", "My timezone is America/New_York."),
    ]
    fix = srv.function_rows(
        "process_memories",
        "rest",
        messages=[
            {"role": "user", "content": "Actually, my preferred IDE is VS Code, not Cursor."},
            {"role": "assistant", "content": "Updated."},
        ],
    )
    assert len(fix) == 1 and fix[0]["event"] == "UPDATE"
    assert fix[0]["content"] == "My preferred IDE is VS Code."
    assert fix[0]["superseded_id"] == first[0]["memory_id"]
    assert fix[0]["previous_content"] == "My preferred IDE is Cursor"
    hits = srv.function_rows("search_memory", "rest", query="what is my preferred IDE")
    assert [h["content"] for h in hits if "IDE" in h["content"]] == ["My preferred IDE is VS Code."]
    current = {m["content"] for m in srv.function_rows("list_memories", "rest")}
    assert current == {"My preferred IDE is VS Code.", "My timezone is America/New_York."}
    audit = srv.function_rows("list_memories", "rest", include_superseded=True)
    retired = [m for m in audit if m["conflict_status"] == "superseded"]
    assert [(m["content"], m["superseded_by_id"]) for m in retired] == [
        ("My preferred IDE is Cursor", fix[0]["memory_id"])
    ]


def test_mcp_tool(srv: ServerProcess) -> None:
    def tool(name: str, arguments: dict[str, Any]) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        body["params"] = {"name": name, "arguments": arguments}
        r = requests.post(srv.mcp_url, json=body, headers={"X-HatiData-Agent-Id": "mcp"})
        assert r.status_code == 200, r.text
        result = r.json()["result"]
        assert not result.get("isError"), result
        return json.loads(result["content"][0]["text"])

    first = tool("process_memories", {"messages": "I work at Google."})
    assert [e["event"] for e in first] == ["ADD"]
    fix = tool("process_memories", {"messages": ["No, I now work at Microsoft."]})
    assert fix[0]["event"] == "UPDATE" and fix[0]["superseded_id"] == first[0]["memory_id"]
    found = tool("search_memory", {"query": "employer"})
    assert [m["content"] for m in found] == ["I now work at Microsoft."]


def test_the_llm_decides_and_a_garbage_answer_falls_back(tmp_path: Path) -> None:
    llm = FakeLlm(
        [
            '{"facts": [{"fact": "User lives in Paris.", "event": "ADD", "id": null}]}',
            '```json\n{"facts": [{"fact": "User lives in Berlin.", "event": "UPDATE",'
            ' "id": "m1"}]}\n```',
            "Sure! The user moved.",
            '{"facts": [{"fact": "x", "event": "UPDATE", "id": "m99"}]}',
        ]
    )
    with llm.serving():
        _llm_decides(llm, tmp_path)


def _llm_decides(llm: FakeLlm, tmp_path: Path) -> None:
    s = start_server(
        tmp_path, "--embedding-provider", "hash", "--summary-llm-url", llm.url,
        "--summary-llm-model", "tiny-judge",
    )  # fmt: skip
    try:
        add = s.function_rows("process_memories", "judge", messages="I live in Paris.")
        assert [(e["event"], e["content"], e["method"]) for e in add] == [
            ("ADD", "User lives in Paris.", "llm:tiny-judge")
        ]
        upd = s.function_rows("process_memories", "judge", messages="Actually I moved to Berlin.")
        assert upd[0]["event"] == "UPDATE" and upd[0]["superseded_id"] == add[0]["memory_id"]
        sent = json.loads(llm.seen[-1]["body"]["messages"][-1]["content"])
        assert sent["existing_memories"] == [{"id": "m1", "content": "User lives in Paris."}]
        assert llm.seen[-1]["body"]["model"] == "tiny-judge"
        # Garbage: the local rule decides, and the result says so.
        (g,) = s.function_rows("process_memories", "judge", messages="I work at Google.")
        assert g["event"] == "ADD" and g["method"] == "local"
        assert "unusable" in g["note"] and "not JSON" in g["note"]
        (h,) = s.function_rows("process_memories", "judge", messages="I now work at Microsoft.")
        assert h["event"] == "UPDATE" and h["superseded_id"] == g["memory_id"]
        assert h["method"] == "local" and "m99" in h["note"]
        current = {m["content"] for m in s.function_rows("list_memories", "judge")}
        assert current == {"User lives in Berlin.", "I now work at Microsoft."}
    finally:
        s.stop()
