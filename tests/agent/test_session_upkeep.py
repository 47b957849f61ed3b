"""Session compaction (offline extractive summary, and a local OpenAI-compatible
endpoint) and the seven-phase repair, idempotent, on a real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import psycopg
import pytest

from tests.agent.llm_support import FakeLlm
from tests.conftest import ServerProcess, start_server


def chat(srv: ServerProcess, sid: str, lines: list[tuple[str, str]]) -> None:
    srv.function_rows("create_session", "keeper", app_name="upkeep", user_id="u", session_id=sid)
    for author, text in lines:
        role = "user" if author == "user" else "agent"
        msg = {"role": role, "parts": [{"type": "text", "text": text}]}
        srv.function_rows("append_event", "keeper", session_id=sid, author=author, message=msg)


LINES = [
    ("user", "I moved to Porto last month."),
    ("bot", "Noted: you live in Porto now."),
    ("user", "My daughter Ines starts school in September."),
    ("bot", "I will remember that Ines starts school in September."),
    ("user", "I prefer vegetarian restaurants."),
    ("bot", "Vegetarian restaurants it is."),
    ("user", "Book a table for Friday."),
    ("bot", "Booked a vegetarian restaurant in Porto for Friday at 8 pm."),
    ("user", "Thanks. What is the weather like?"),
    ("bot", "Sunny and 24 degrees in Porto on Friday."),
    ("user", "Great, remind me on Thursday."),
    ("bot", "I will remind you on Thursday."),
]


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = start_server(tmp_path_factory.mktemp("upkeep"))
    yield srv
    srv.stop()


def test_compaction_offline_keeps_recent_events_and_stores_a_summary_memory(
    offline: ServerProcess,
) -> None:
    chat(offline, "long", LINES)
    small = offline.function_rows("compact_session", "keeper", session_id="long", threshold=50)[0]
    assert small["compacted"] is False and small["kept"] == 12  # under the threshold
    out = offline.function_rows(
        "compact_session", "keeper", session_id="long", threshold=10, keep_recent=4
    )[0]
    assert out["compacted"] is True and out["summarized"] == 8 and out["kept"] == 4
    assert out["method"] == "extractive"  # no endpoint configured: the local summary
    events = offline.function_rows("session_events", "keeper", session_id="long")
    assert [e["author"] for e in events] == ["system", "user", "bot", "user", "bot"]
    assert [e["seq"] for e in events] == [1, 9, 10, 11, 12]  # order kept
    summary = events[0]["message"]["parts"][0]["text"]
    assert "Porto" in summary and events[0]["metadata"]["compacted_events"] == 8
    memory = offline.function_rows("get_memory", "keeper", memory_id=out["memory_id"])[0]
    assert memory["importance"] == pytest.approx(0.9) and memory["content"] == summary
    assert memory["session_id"] == "long"
    # The recent events are verbatim; a second compaction has nothing left to do.
    assert events[-1]["message"]["parts"][0]["text"] == LINES[-1][1]
    again = offline.function_rows(
        "compact_session", "keeper", session_id="long", threshold=5, keep_recent=4
    )[0]
    assert again["summarized"] == 1  # only the summary event itself is older than 4
    # summary_buffer: the latest summary, then the most recent events.
    window = offline.function_rows(
        "working_memory", "keeper", session_id="long", strategy="summary_buffer", max_messages=2
    )
    assert window[0]["author"] == "system" and "compacted_events" in window[0]["metadata"]
    assert [e["seq"] for e in window[1:]] == [11, 12]


def test_compaction_with_an_openai_compatible_endpoint(tmp_path: Path) -> None:
    llm = FakeLlm(["User lives in Porto; likes veggie food."])
    with llm.serving():
        _compaction_by_llm(llm, tmp_path)


def _compaction_by_llm(llm: FakeLlm, tmp_path: Path) -> None:
    srv = start_server(
        tmp_path, "--embedding-provider", "hash", "--summary-llm-url", llm.url,
        "--summary-llm-model", "tiny-summarizer", env={"HATIDATA_SUMMARY_LLM_API_KEY": "s3cret"},
    )  # fmt: skip
    try:
        chat(srv, "llm", LINES)
        out = srv.function_rows(
            "compact_session", "keeper", session_id="llm", threshold=10, keep_recent=2
        )[0]
        assert out["method"] == "llm:tiny-summarizer" and out["summarized"] == 10
        first = srv.function_rows("session_events", "keeper", session_id="llm")[0]
        assert first["message"]["parts"][0]["text"] == "User lives in Porto; likes veggie food."
        req = llm.seen[-1]
        assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer s3cret"
        assert req["body"]["model"] == "tiny-summarizer"
        assert "Ines starts school" in req["body"]["messages"][-1]["content"]
    finally:
        srv.stop()


def test_repair_fixes_a_corrupted_session_and_a_second_run_changes_nothing(
    tmp_path: Path,
) -> None:
    srv = start_server(tmp_path, "--embedding-provider", "hash")
    chat(srv, "broken", LINES[:6])
    srv.stop()
    # Corrupt it as a crash or a bad import might: the file edited with the server down.
    agent_file = next(p for p in (tmp_path / "data").rglob("*.agent.duckdb"))
    con = duckdb.connect(str(agent_file))
    t = "hatidata_internal.session_events"
    con.execute(f"UPDATE {t} SET event_id = '' WHERE seq = 2")  # 1: no id
    con.execute(  # 2: a duplicate id
        f"UPDATE {t} SET event_id = (SELECT event_id FROM {t} WHERE seq = 1) WHERE seq = 4"
    )
    con.execute(f"UPDATE {t} SET timestamp = timestamp - INTERVAL 1 DAY WHERE seq = 6")  # 5
    con.close()
    srv = start_server(tmp_path, "--embedding-provider", "hash")
    try:
        out = srv.function_rows("repair_session", "keeper", session_id="broken")[0]
        stats = out["stats"]
        assert stats["empty_ids"] == 1 and stats["duplicates"] == 1
        # With 2 and 4 gone, the user's 1, 3 and 5 are consecutive: merged into 1.
        assert stats["merged"] == 2 and stats["reordered"] == 1
        assert out["repaired"] is True and out["fixes"] == 5
        events = srv.function_rows("session_events", "keeper", session_id="broken")
        assert [e["seq"] for e in events] == [1, 6]
        texts = [p["text"] for p in events[0]["message"]["parts"]]
        assert texts == [LINES[0][1], LINES[2][1], LINES[4][1]]
        stamps = [e["timestamp"] for e in events]
        assert stamps == sorted(stamps)
        again = srv.function_rows("repair_session", "keeper", session_id="broken")[0]
        assert again["repaired"] is False and again["fixes"] == 0
        assert srv.function_rows("session_events", "keeper", session_id="broken") == events
        with psycopg.connect(srv.dsn, options="-c hatidata_agent_id=keeper") as conn:
            n = conn.execute("SELECT count(*) FROM session_events('broken')").fetchone()
        assert n == (2,)
    finally:
        srv.stop()
