"""Agent frameworks' chat histories on Postgres (.ci/tools/agentfw.txt), run by
tests/tools/chat_history_script.py against PostgreSQL 15 and against a real server: every
step's result (or error class and SQLSTATE) must be the same.

- langchain-postgres 0.0.19 PostgresChatMessageHistory over psycopg 3, sync and async:
  create_tables twice (a BIGSERIAL key, a UUID session id, JSONB messages, CREATE INDEX IF
  NOT EXISTS), add_messages (system / human / AI with additional_kwargs, non-ASCII),
  messages of two sessions, information_schema.columns, clear, a session id that is not
  a UUID (the library's ValueError), drop_table.
- LlamaIndex llama-index-storage-chat-store-postgres 0.5 PostgresChatStore over SQLAlchemy
  2 (psycopg 3; asyncpg 0.30 for the async methods), with json[] and with jsonb[]
  (use_jsonb) columns: its table made through SQLAlchemy's metadata (a unique constraint
  and an index named with a colon), set_messages (INSERT ... ON CONFLICT (key) DO UPDATE),
  get, add_message (`array_cat(t.value, :value)` in the upsert), get_keys, delete_message
  (`array_cat(value[:n], value[n+2:])`), delete_last_message (`value[1:array_length(value,
  1) - 1]`), delete_messages (DELETE ... RETURNING).
"""

from __future__ import annotations

from pathlib import Path

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("chat_history_script.py")
PARTS = "langchain,langchain_async,llamaindex,llamaindex_jsonb,llamaindex_async"


def test_chat_histories_answer_as_postgresql(tmp_path: Path) -> None:
    theirs, ours = run_on_postgres_and_hatiproxy(
        "agentfw",
        SCRIPT,
        tmp_path,
        lambda host, port, user, db: [f"{host}:{port}", user, db, PARTS],
    )
    # What the script checks, as PostgreSQL answers it.
    assert theirs["langchain.messages_1"] == [
        ["system", "be brief", {}],
        ["human", "hi ☃", {}],
        ["ai", "hello", {"n": 1, "tags": ["x"]}],
    ]
    assert theirs["langchain.clear"][1:] == [[], [["human", "other session", {}]]]
    assert theirs["langchain.bad_session"][:2] == ["error", "ValueError"]
    assert theirs["langchain_async.add"] == [["human", "q1", {}], ["ai", "a1", {}], ["human", "q2", {}]]  # fmt: skip
    for part in ("llamaindex", "llamaindex_jsonb"):
        assert theirs[f"{part}.keys"] == ["k1", "k2"]
        assert theirs[f"{part}.delete_message"][0] == [["assistant", "yo", {}]]
        assert theirs[f"{part}.delete_messages"][2] == ["k1"]
    assert theirs["llamaindex_async.get_after_add"][-1] == ["user", "3", {}]
    failed = {
        k: v
        for k, v in theirs.items()
        if isinstance(v, list) and v[:1] == ["error"] and k != "langchain.bad_session"
    }
    assert failed == {}, failed
    assert {k: v for k, v in ours.items() if v != theirs.get(k)} == {}
    assert ours == theirs
