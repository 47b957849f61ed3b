"""LangGraph 1.2's Postgres persistence (langgraph-checkpoint-postgres 3.2 over psycopg 3;
.ci/tools/agentfw.txt) run by tests/tools/langgraph_script.py against PostgreSQL 15 and
against a real server: every step's result (or error class and SQLSTATE) must be the same.

- PostgresSaver: `setup()` twice (its ten migrations: CREATE TABLE / INDEX CONCURRENTLY IF
  NOT EXISTS, `ALTER TABLE ... ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT ''`),
  a three-node StateGraph over three threads: an `interrupt()` resumed with
  `Command(resume=...)`, a static breakpoint (interrupt_before) continued, get_state,
  get_state_history (limit, filter), `list` (all threads, one thread, metadata filter,
  `before`), a fork by update_state from an older checkpoint, delete_thread. Its reads
  are `jsonb_each_text(checkpoint -> 'channel_versions')` joined in a correlated
  subquery, `array_agg(array[...::bytea, convert_to(task_path, 'UTF8')])`, jsonb `@>`.
- AsyncPostgresSaver in pipeline mode (psycopg's pipeline: many Parse / Bind / Execute
  before one Sync), two graphs running at once on the one connection.
- PostgresStore (TTL configured): `setup()` twice (its TTL migration is one ALTER TABLE
  with two ADD COLUMN IF NOT EXISTS, a prepared statement), put / overwrite / get,
  search by namespace prefix with `LIKE ... ESCAPE '\\'`, jsonb filters (equality,
  $gt / $lte / $ne), limit / offset, list_namespaces (prefix, suffix, `*`: a
  `prefix ~ '^users(\\.|\\Z)'` regex), delete; TTL: put with ttl, the ttl_minutes /
  expires_at columns, sweep_ttl, a get refreshing the TTL (a data-modifying WITH: an
  UPDATE of expires_at read beside the rows' values).
- AsyncPostgresStore in pipeline mode: concurrent puts, search, filter, get, delete.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.tools.conftest import run_on_postgres_and_hatiproxy

SCRIPT = Path(__file__).with_name("langgraph_script.py")


def _compare(tmp_path: Path, which: str) -> dict:
    theirs, ours = run_on_postgres_and_hatiproxy(
        "agentfw",
        SCRIPT,
        tmp_path,
        lambda host, port, user, db: [f"{host}:{port}", user, db, which],
    )
    failed = {k: v for k, v in theirs.items() if isinstance(v, list) and v[:1] == ["error"]}
    assert failed == {}, failed  # the script asks only what PostgreSQL answers
    assert {k: v for k, v in ours.items() if v != theirs.get(k)} == {}
    assert ours == theirs
    return {k.removeprefix(which + "."): v for k, v in theirs.items()}


def test_postgres_saver(tmp_path: Path) -> None:
    out = _compare(tmp_path, "saver")
    assert out["migrations"] == list(range(10))
    assert out["state_a_interrupted"]["interrupts"] == [{"count": 2, "question": "go?"}]
    assert out["resume_a"] == {"count": 24, "log": ["plan1", "act:yes", "report"]}
    assert [h[0] for h in out["history_a"]] == [3, 2, 1, 0, -1]
    assert out["time_travel"]["resumed"]["log"] == ["plan1", "forked", "act:again", "report"]
    assert out["breakpoint_continue"] == {"count": 22, "log": ["plan0", "act:ok", "report"]}
    assert out["after_delete"] == ["a", "c"]


def test_async_postgres_saver_pipeline(tmp_path: Path) -> None:
    out = _compare(tmp_path, "async_saver")
    assert out["state_b"]["values"] == {"count": 32, "log": ["b", "plan5", "act:no", "report"]}
    assert len(out["concurrent"]) == 2
    assert out["after_delete"] == []
    assert {t[2] for t in out["others_kept"]} == {"b", "p", "q"}


@pytest.mark.parametrize("which", ["store", "async_store"])
def test_postgres_store(tmp_path: Path, which: str) -> None:
    out = _compare(tmp_path, which)
    if which == "store":
        assert out["list_namespaces_wild"] == [["users", "u1", "notes"]]
        assert out["ttl_sweep"] == [1, ["long", "none"]]
        assert out["search_filter"] == [[["users", "u2", "prefs"], "theme", {"color": "light", "size": 12}]]  # fmt: skip
    else:
        assert out["search_filter"] == [[["chat", "t1"], "m1", {"n": 1, "role": "user"}], [["chat", "t2"], "m1", {"n": 3, "role": "user"}]]  # fmt: skip


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_postgres_store_with_pgvector_index(tmp_path: Path) -> None:
    """PostgresStore with an `index` (dims 4, a deterministic embedding function): its
    vector migration (`DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE
    extname = 'vector') THEN CREATE EXTENSION vector; END IF; END $$`, a `vector(4)`
    column with a composite foreign key ON DELETE CASCADE), puts (one not indexed), search
    by `<=>` with its score (1 - cosine distance, in a data-modifying WITH), a filter, the
    cascade. The PostgreSQL 15 here has no pgvector: the scores are computed here."""
    from tests.conftest import start_server
    from tests.tools.conftest import run_tool_script

    srv = start_server(tmp_path, "--database", ":memory:")
    try:
        out = run_tool_script(
            "agentfw", SCRIPT, f"{srv.host}:{srv.port}", "tester", "hatidata", "vector_store"
        )
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{srv.log()[-4000:]}") from None
    finally:
        srv.stop()
    out = {k.removeprefix("vector_store."): v for k, v in out.items()}

    def embed(text: str) -> list[float]:  # langgraph_script.fake_embed
        return [float(text.lower().count(c)) + 0.1 for c in "aeio"]

    texts = {"1": "aaaa apple banana", "2": "eeee beech tree", "3": "iiii kiwi"}

    def ranked(query: str, limit: int = 10) -> list:
        scores = {k: round(_cosine(embed(query), embed(t)), 4) for k, t in texts.items()}
        return sorted(([k, s] for k, s in scores.items()), key=lambda ks: -ks[1])[:limit]

    assert out["setup"] is None and out["setup_again"] is None
    assert out["put"] == [None] * 4
    assert out["search_a"] == ranked("a lot of aaaa")
    assert out["search_i"] == ranked("kiwi iii", limit=2)
    assert out["search_filter"] == [["3", round(_cosine(embed("eee"), embed(texts["3"])), 4)]]
    assert out["vectors"] == [{"field_name": "text", "key": k} for k in ("1", "2", "3")]
    assert out["delete_cascades"] == [None, ["2", "3"]]
