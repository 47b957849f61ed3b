"""Semantic triggers: registration, matching, cooldowns, actions, webhooks, isolation.

Most tests use the hash embedder (identical text -> similarity 1.0, different text ->
near 0), which makes firing exact; matching quality uses the real all-MiniLM-L6-v2.
Content reaches triggers through `layer.triggers.notify` (what memory and ledger call);
`drain()` waits until it is evaluated and its webhooks are done.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from agent_support import open_layer, run, who

from proxy.agent import AgentError, Identity
from proxy.agent.layer import AgentLayer


async def call(layer: AgentLayer, fn: str, ident: Identity, /, **kwargs: Any) -> list[dict]:
    # Through the registry (not layer.call): a `name` argument would clash with its own.
    return await layer.registry.get(fn).call(layer, ident, [], kwargs)


async def register(layer: AgentLayer, ident: Identity | None = None, /, **kwargs: Any) -> dict:
    kwargs.setdefault("name", "t")
    kwargs.setdefault("concept", "refund request")
    return (await call(layer, "register_trigger", ident or who(), **kwargs))[0]


def rows(layer: AgentLayer, sql: str, params: list | None = None) -> list[tuple]:
    return layer.db.run_sync(lambda cur: cur.execute(sql, params or []).fetchall())


async def fires(layer: AgentLayer, trigger_id: str, ident: Identity | None = None) -> list[dict]:
    return await call(layer, "trigger_fires", ident or who(), trigger_id=trigger_id)


async def notify_and_drain(layer: AgentLayer, text: str, ident: Identity | None = None) -> None:
    layer.triggers.notify(ident or who(), "memory", f"m-{time.monotonic_ns()}", text, None)
    await layer.triggers.drain()


async def expect_error(code: str, coro: Any) -> AgentError:
    with pytest.raises(AgentError) as err:
        await coro
    assert err.value.code == code, err.value.message
    return err.value


# --- a local webhook receiver ---------------------------------------------------------


class Receiver:
    """http.server on a thread: answers with queued status codes (then 200), keeps bodies."""

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.requests: list[tuple[dict[str, str], dict]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.requests.append((dict(self.headers), json.loads(body)))
                status = outer.statuses.pop(0) if outer.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- registration and management ------------------------------------------------------


def test_register_with_mcp_and_rest_shapes(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            mcp = await register(
                layer,
                name="refunds",
                concept="customer wants a refund",
                threshold=0.8,
                action_type="agent_notify",
                action_config={"agent_id": "support-bot"},
            )
            assert mcp["action_type"] == "agent_notify" and mcp["actions"] == ["agent_notify"]
            assert mcp["action_config"] == {"agent_id": "support-bot"}
            assert mcp["threshold"] == 0.8 and mcp["cooldown_secs"] == 300
            assert mcp["enabled"] is True and mcp["status"] == "active"
            assert mcp["fire_count"] == 0 and mcp["event_source"] == "semantic"
            assert mcp["embedding_model"] == layer.semantic.model_name
            assert mcp["embedding_dimensions"] == layer.dims
            assert mcp["id"] == mcp["trigger_id"] and mcp["scope"] == "agent"

            rest = await register(
                layer,
                name="pii",
                concept="personal data like SSN",
                actions=["flag_for_review", "write_event"],
                cooldown_secs=60,
            )
            assert rest["actions"] == ["flag_for_review", "write_event"]
            assert rest["cooldown_secs"] == 60 and rest["threshold"] == 0.7
            default = await register(layer, name="plain")
            assert default["actions"] == ["flag_for_review"]

            # The concept vector is stored once, unit length, with the model's dimensions.
            (vec,) = rows(
                layer,
                "SELECT concept_embedding FROM hatidata_internal.triggers WHERE id = ?",
                [mcp["trigger_id"]],
            )[0]
            assert len(vec) == layer.dims and abs(np.linalg.norm(vec) - 1) < 1e-4

            listed = await call(layer, "list_triggers", who())
            assert [t["name"] for t in listed] == ["refunds", "pii", "plain"]

    run(go())


def test_update_list_status_reembed_and_delete(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            t = await register(layer, name="a", concept="one thing")
            await register(layer, name="b", concept="another")
            tid = t["trigger_id"]
            up = (await call(layer, "update_trigger", who(), trigger_id=tid, threshold=0.9))[0]
            assert up["threshold"] == 0.9 and up["name"] == "a" and up["concept"] == "one thing"
            up = (
                await call(layer, "update_trigger", who(), trigger_id=tid, enabled=False, name="a2")
            )[0]
            assert up["enabled"] is False and up["status"] == "inactive" and up["name"] == "a2"
            assert [
                x["name"] for x in await call(layer, "list_triggers", who(), status="active")
            ] == ["b"]
            assert [
                x["name"] for x in await call(layer, "list_triggers", who(), status="inactive")
            ] == ["a2"]
            assert len(await call(layer, "list_triggers", who(), status="all")) == 2

            # A new concept is embedded again: the old text no longer matches, the new one does.
            await call(layer, "update_trigger", who(), trigger_id=tid, concept="new concept")
            score = await call(layer, "test_trigger", who(), trigger_id=tid, content="new concept")
            assert score[0]["score"] > 0.99
            sql = "SELECT concept_embedding FROM hatidata_internal.triggers WHERE id = ?"
            rows(
                layer,
                f"UPDATE hatidata_internal.triggers SET concept_embedding = NULL WHERE id = '{tid}'",
            )
            re = await call(layer, "reembed_trigger", who(), trigger_id=tid)
            assert re == [
                {
                    "trigger_id": tid,
                    "status": "reembedded",
                    "embedding_model": layer.semantic.model_name,
                    "embedding_dimensions": layer.dims,
                }
            ]
            assert rows(layer, sql, [tid])[0][0] is not None

            out = await call(layer, "delete_trigger", who(), trigger_id=tid)
            assert out == [{"trigger_id": tid, "status": "deleted", "deleted": True}]
            await expect_error("not_found", call(layer, "delete_trigger", who(), trigger_id=tid))
            await expect_error(
                "not_found", call(layer, "test_trigger", who(), trigger_id=tid, content="x")
            )
            assert [x["name"] for x in await call(layer, "list_triggers", who())] == ["b"]

    run(go())


def test_invalid_arguments_are_clear_and_write_nothing(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            bad: list[tuple[dict, str]] = [
                ({"name": ""}, "name"),
                ({"concept": "   "}, "concept"),
                ({"threshold": 1.5}, "threshold"),
                ({"threshold": -0.1}, "threshold"),
                ({"threshold": "high"}, "threshold"),
                ({"action_type": "email"}, "email"),
                ({"actions": ["webhook", "shout"]}, "shout"),
                ({"actions": []}, "at least one action"),
                ({"action_type": "webhook"}, "url"),
                ({"action_type": "webhook", "action_config": {"url": "ftp://x/y"}}, "http"),
                ({"action_type": "webhook", "action_config": {"url": "not a url"}}, "http"),
                ({"action_type": "webhook", "action_config": "[1]"}, "object"),
                ({"action_config": "{nope"}, "JSON"),
                ({"cooldown_secs": -1}, "cooldown_secs"),
                ({"scope": "world"}, "scope"),
                ({"event_source": "branch_lifecycle"}, "event_source"),
            ]
            for kwargs, words in bad:
                err = await expect_error("invalid_argument", register(layer, **kwargs))
                assert words in err.message, (kwargs, err.message)
                assert err.sqlstate == "22023" and err.http_status == 422
            assert rows(layer, "SELECT count(*) FROM hatidata_internal.triggers") == [(0,)]

            t = await register(layer, name="dup")
            await expect_error("conflict", register(layer, name="dup"))
            tid = t["trigger_id"]
            await expect_error(
                "invalid_argument",
                call(layer, "update_trigger", who(), trigger_id=tid, threshold=2),
            )
            await expect_error(
                "invalid_argument",
                call(layer, "update_trigger", who(), trigger_id=tid, action_type="webhook"),
            )
            await expect_error("invalid_argument", call(layer, "list_triggers", who(), status="x"))
            await expect_error(
                "invalid_argument", call(layer, "delete_trigger", who(), trigger_id="nope")
            )
            await expect_error(
                "invalid_argument", call(layer, "test_trigger", who(), trigger_id=tid)
            )
            await expect_error(
                "invalid_argument", call(layer, "trigger_fires", who(), trigger_id=tid, limit=0)
            )
            unknown = "00000000-0000-0000-0000-000000000000"
            await expect_error(
                "not_found", call(layer, "update_trigger", who(), trigger_id=unknown)
            )
            (after,) = await call(layer, "list_triggers", who())
            assert after["threshold"] == 0.7 and after["actions"] == ["flag_for_review"]

    run(go())


def test_without_a_model_register_is_unavailable(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            t = await register(layer)
            embedder = layer.semantic.embedder
            layer.semantic.embedder = None  # as when no model is installed
            try:
                err = await expect_error("unavailable", register(layer, name="other"))
                assert "hatiproxy model install-default" in (err.hint or "")
                assert err.sqlstate == "58000" and err.http_status == 503
                await expect_error(
                    "unavailable",
                    call(layer, "test_trigger", who(), trigger_id=t["trigger_id"], content="x"),
                )
                layer.triggers.notify(who(), "memory", "m", "refund request", None)  # a no-op
                await layer.triggers.drain()
            finally:
                layer.semantic.embedder = embedder
            assert await fires(layer, t["trigger_id"]) == []

    run(go())


# --- matching -------------------------------------------------------------------------


def test_matching_quality_with_the_real_model(tmp_path: Path, model_dir: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path, provider="onnx", model_dir=model_dir) as layer:
            # MiniLM puts paraphrases around 0.5-0.75 and unrelated text near 0.
            t = await register(
                layer,
                name="refunds",
                concept="customer wants a refund for a billing error",
                threshold=0.45,
                action_type="write_event",
            )
            tid = t["trigger_id"]
            hit = (
                await call(
                    layer,
                    "test_trigger",
                    who(),
                    trigger_id=tid,
                    content="I was charged twice and need my money back",
                )
            )[0]
            miss = (
                await call(
                    layer, "test_trigger", who(), trigger_id=tid, text="the weather is sunny"
                )
            )[0]
            assert hit["matched"] and hit["would_fire"] and hit["score"] > 0.45
            assert not miss["matched"] and miss["score"] < 0.2
            assert hit["trigger_name"] == "refunds" and hit["threshold"] == 0.45
            assert hit["model_used"] == "all-minilm-l6-v2" and hit["model_dimensions"] == 384

            # test_trigger had no side effects: no fire, no count, no cooldown started.
            assert await fires(layer, tid) == []
            assert (await call(layer, "list_triggers", who()))[0]["fire_count"] == 0

            await notify_and_drain(layer, "the weather is sunny")
            assert await fires(layer, tid) == []
            await notify_and_drain(layer, "I was charged twice and need my money back")
            (fire,) = await fires(layer, tid)
            assert fire["input_text"] == "I was charged twice and need my money back"
            assert abs(fire["similarity"] - hit["score"]) < 1e-4
            assert fire["action_taken"] == "write_event" and fire["status"] == "done"

            # A caller-supplied passage vector is used as is.
            vec = (await layer.semantic.worker.embed_now(["refund my double charge"], "passage"))[0]
            await call(layer, "update_trigger", who(), trigger_id=tid, cooldown_secs=0)
            layer.triggers.notify(who(), "reasoning", "step-1", "refund my double charge", vec)
            await layer.triggers.drain()
            assert [f["source"] for f in await fires(layer, tid)] == ["reasoning", "memory"]

    run(go())


def test_cooldown_and_disabled_triggers(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            slow = await register(layer, name="slow", concept="alert", cooldown_secs=300)
            fast = await register(layer, name="fast", concept="alert", cooldown_secs=0)
            off = await register(layer, name="off", concept="alert", enabled=False)
            for _ in range(3):
                await notify_and_drain(layer, "alert")
            assert len(await fires(layer, slow["trigger_id"])) == 1
            assert len(await fires(layer, fast["trigger_id"])) == 3
            assert await fires(layer, off["trigger_id"]) == []
            assert layer.triggers.stats["cooldown_skipped"] == 2
            counts = {t["name"]: t["fire_count"] for t in await call(layer, "list_triggers", who())}
            assert counts == {"slow": 1, "fast": 3, "off": 0}

            # Disabling stops firing at once; enabling resumes it.
            await call(layer, "update_trigger", who(), trigger_id=fast["trigger_id"], enabled=False)
            await notify_and_drain(layer, "alert")
            assert len(await fires(layer, fast["trigger_id"])) == 3
            await call(layer, "update_trigger", who(), trigger_id=off["trigger_id"], enabled=True)
            await notify_and_drain(layer, "alert")
            assert len(await fires(layer, off["trigger_id"])) == 1

            # Lowering a cooldown takes effect for the next content.
            await call(
                layer, "update_trigger", who(), trigger_id=slow["trigger_id"], cooldown_secs=0
            )
            await notify_and_drain(layer, "alert")
            assert len(await fires(layer, slow["trigger_id"])) == 2

    run(go())


def test_cooldown_survives_a_restart_and_stop_finishes_the_queue(tmp_path: Path) -> None:
    db = str(tmp_path / "t.duckdb")

    async def first() -> str:
        async with open_layer(tmp_path, database=db) as layer:
            t = await register(layer, concept="alert", cooldown_secs=3600)
            layer.triggers.notify(who(), "memory", "m1", "alert", None)
            return t["trigger_id"]  # not drained: stop() must evaluate it

    async def second(tid: str) -> None:
        async with open_layer(tmp_path, database=db) as layer:
            assert len(await fires(layer, tid)) == 1
            await notify_and_drain(layer, "alert")
            assert len(await fires(layer, tid)) == 1  # still cooling down

    run(second(run(first())))


# --- actions --------------------------------------------------------------------------


def test_each_action_writes_its_row(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            t = await register(
                layer,
                concept="alert",
                actions=["write_event", "flag_for_review", "agent_notify"],
                cooldown_secs=0,
            )
            other = await register(
                layer,
                name="to-bot",
                concept="alert",
                action_type="agent_notify",
                action_config={"agent_id": "bot"},
                cooldown_secs=0,
            )
            await notify_and_drain(layer, "alert")
            (fire,) = await fires(layer, t["trigger_id"])
            assert fire["action_taken"] == "write_event,flag_for_review,agent_notify"
            assert fire["source_agent_id"] == "agent-a" and fire["agent_id"] == "agent-a"

            events = rows(
                layer, "SELECT event_type, fire_id, payload FROM hatidata_internal.trigger_events"
            )
            assert [(e[0], str(e[1])) for e in events] == [("trigger_fired", fire["id"])]
            assert json.loads(events[0][2])["input_text"] == "alert"
            flags = rows(
                layer,
                "SELECT status, fire_id, input_text FROM hatidata_internal.trigger_review_flags",
            )
            assert [(f[0], str(f[1]), f[2]) for f in flags] == [("open", fire["id"], "alert")]

            inbox = await call(layer, "agent_inbox", who())
            assert [m["trigger_name"] for m in inbox] == ["t"] and inbox[0]["read"] is False
            assert inbox[0]["fire_id"] == fire["id"] and "fired" in inbox[0]["message"]
            (bot,) = await call(layer, "agent_inbox", who("bot"))
            assert bot["trigger_id"] == other["trigger_id"] and bot["from_agent_id"] == "agent-a"

            read = await call(layer, "agent_inbox", who(), unread_only=True, mark_read=True)
            assert len(read) == 1 and read[0]["read"] is True
            assert await call(layer, "agent_inbox", who(), unread_only=True) == []
            assert len(await call(layer, "agent_inbox", who())) == 1

    run(go())


def test_webhook_retries_a_500_then_delivers(tmp_path: Path, receiver: Receiver) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            layer.triggers.webhook_backoff_secs = 0.01
            receiver.statuses = [500]
            t = await register(
                layer,
                concept="alert",
                action_type="webhook",
                action_config={
                    "url": receiver.url,
                    "headers": {"X-Team": "ops", "Authorization": "Bearer s3cret"},
                    "secret": "shh",
                },
            )
            assert t["action_config"]["headers"] == {"X-Team": "ops", "Authorization": "***"}
            assert t["action_config"]["secret"] == "***"
            await notify_and_drain(layer, "alert")
            (fire,) = await fires(layer, t["trigger_id"])
            assert fire["status"] == "delivered"
            assert fire["details"]["webhook"]["attempts"] == 2
            attempts = rows(
                layer,
                "SELECT attempt, status_code, ok, error FROM hatidata_internal.webhook_deliveries "
                "ORDER BY attempt",
            )
            assert attempts[0][:3] == (1, 500, False) and "500" in attempts[0][3]
            assert attempts[1] == (2, 200, True, None)
            headers, body = receiver.requests[-1]
            assert body["event"] == "trigger.fired" and body["trigger_name"] == "t"
            assert body["input_text"] == "alert" and body["fire_id"] == fire["id"]
            assert headers["X-Team"] == "ops" and headers["Authorization"] == "Bearer s3cret"
            assert headers["X-Hatidata-Signature"].startswith("sha256=")

    run(go())


def test_webhook_failures_are_recorded_and_block_nothing(
    tmp_path: Path, receiver: Receiver
) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            layer.triggers.webhook_backoff_secs = 0.2
            dead = f"http://127.0.0.1:{free_port()}/hook"
            unreachable = await register(
                layer, name="dead", concept="alert", action_type="webhook",
                action_config={"url": dead, "timeout_secs": 1},
            )  # fmt: skip
            receiver.statuses = [404]
            gone = await register(
                layer, name="gone", concept="alert", action_type="webhook",
                action_config={"url": receiver.url},
            )  # fmt: skip
            local = await register(layer, name="local", concept="other", action_type="write_event")

            started = time.perf_counter()
            layer.triggers.notify(who(), "memory", "m1", "alert", None)
            layer.triggers.notify(who(), "memory", "m2", "other", None)
            assert time.perf_counter() - started < 0.5  # notify only enqueues (a delivery would wait >= 1 s)
            # The non-webhook action lands while the dead endpoint is still being retried.
            for _ in range(100):
                if await fires(layer, local["trigger_id"]):
                    break
                await asyncio.sleep(0.02)
            assert await fires(layer, local["trigger_id"])
            assert layer.triggers._inflight  # deliveries still going on in the background
            await layer.triggers.drain()

            (fire,) = await fires(layer, unreachable["trigger_id"])
            assert fire["status"] == "failed" and fire["details"]["webhook"]["attempts"] == 3
            dead_rows = rows(
                layer,
                "SELECT attempt, ok, status_code, error FROM hatidata_internal.webhook_deliveries "
                "WHERE url = ? ORDER BY attempt",
                [dead],
            )
            assert [(r[0], r[1], r[2]) for r in dead_rows] == [
                (1, False, None),
                (2, False, None),
                (3, False, None),
            ]
            assert all(r[3] for r in dead_rows)
            (fire,) = await fires(layer, gone["trigger_id"])  # 404 is final: one attempt
            assert fire["status"] == "failed" and fire["details"]["webhook"]["status_code"] == 404
            assert layer.triggers.stats["webhook_failures"] == 2

    run(go())


# --- isolation ------------------------------------------------------------------------


def test_isolation_between_orgs_and_agents(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            a, b, other_org = who("agent-a"), who("agent-b"), who("agent-a", org_id="org-2")
            mine = await register(layer, a, name="mine", concept="alert", cooldown_secs=0)
            theirs = await register(layer, b, name="theirs", concept="alert", cooldown_secs=0)
            watch = await register(
                layer, b, name="org-wide", concept="alert", cooldown_secs=0, scope="org"
            )
            foreign = await register(
                layer, other_org, name="foreign", concept="alert", cooldown_secs=0, scope="org"
            )
            await notify_and_drain(layer, "alert", a)
            assert len(await fires(layer, mine["trigger_id"], a)) == 1
            assert await fires(layer, theirs["trigger_id"], b) == []  # agent scope: own content
            assert len(await fires(layer, watch["trigger_id"], b)) == 1  # org scope: whole org
            assert await fires(layer, foreign["trigger_id"], other_org) == []  # never other orgs

            # Another agent (or org) cannot see, change, test or delete my trigger.
            tid = mine["trigger_id"]
            for ident in (b, other_org):
                assert tid not in [
                    t["trigger_id"] for t in await call(layer, "list_triggers", ident)
                ]
                for fn, kw in [
                    ("update_trigger", {"threshold": 0.1}),
                    ("delete_trigger", {}),
                    ("test_trigger", {"content": "alert"}),
                    ("trigger_fires", {}),
                    ("reembed_trigger", {}),
                ]:
                    await expect_error("not_found", call(layer, fn, ident, trigger_id=tid, **kw))
            assert [t["name"] for t in await call(layer, "list_triggers", a)] == ["mine"]
            assert (await call(layer, "list_triggers", a))[0]["threshold"] == 0.7

            # Restricted identities need trigger:org for an org-wide trigger.
            limited = Identity("local", "agent-c", scopes=frozenset({"trigger:write"}))
            await expect_error("forbidden", register(layer, limited, scope="org"))
            reader = Identity("local", "agent-c", scopes=frozenset({"trigger:read"}))
            await expect_error("forbidden", register(layer, reader))

            # The identity views show each agent only its own rows.
            def view(ident: Identity) -> list[str]:
                with layer.engine.db.cursor() as cur:  # a fresh connection, like a session's
                    cur.execute(f"SET VARIABLE hatidata_org_id = '{ident.org_id}'")
                    cur.execute(f"SET VARIABLE hatidata_agent_id = '{ident.agent_id}'")
                    names = cur.execute("SELECT name FROM main._hatidata_triggers ORDER BY name")
                    return [r[0] for r in names.fetchall()]

            assert view(a) == ["mine"] and view(b) == ["org-wide", "theirs"]

    run(go())


# --- the other ways in ----------------------------------------------------------------


def test_sql_functions_and_views(tmp_path: Path) -> None:
    from proxy.agent.sql_bridge import execute_sql

    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            a = who()
            cols, out = await execute_sql(
                layer,
                a,
                "SELECT name, action_type, actions, cooldown_secs FROM register_trigger("
                "'sql-t', 'alert', 0.9, 'agent_notify', cooldown_secs := 0)",
            )
            assert cols == ["name", "action_type", "actions", "cooldown_secs"]
            assert out == [("sql-t", "agent_notify", '["agent_notify"]', 0)]
            _, listed = await execute_sql(
                layer, a, "SELECT trigger_id FROM list_triggers('active')"
            )
            tid = str(listed[0][0])
            _, tested = await execute_sql(
                layer, a, f"SELECT matched, score FROM test_trigger('{tid}', 'alert')"
            )
            assert tested[0][0] is True and tested[0][1] > 0.99

            await notify_and_drain(layer, "alert", a)
            _, fired = await execute_sql(
                layer, a, f"SELECT source, input_text FROM trigger_fires('{tid}')"
            )
            assert fired == [("memory", "alert")]
            _, viewed = await execute_sql(layer, a, "SELECT count(*) FROM _hatidata_trigger_fires")
            assert viewed == [(1,)]
            _, unread = await execute_sql(
                layer, a, "SELECT trigger_name FROM agent_inbox(unread_only := true)"
            )
            assert unread == [("sql-t",)]
            _, other = await execute_sql(
                layer, who("agent-b"), "SELECT count(*) FROM _hatidata_agent_inbox"
            )
            assert other == [(0,)]
            _, gone = await execute_sql(layer, a, f"SELECT status FROM delete_trigger('{tid}')")
            assert gone == [("deleted",)]

    run(go())


def test_notify_from_another_thread_and_from_the_ledger(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            t = await register(layer, concept="deploy to production", cooldown_secs=0)
            thread = threading.Thread(
                target=layer.triggers.notify,
                args=(who(), "memory", "m-thread", "deploy to production", None),
            )
            thread.start()
            thread.join()
            await layer.triggers.drain()
            assert [f["source_id"] for f in await fires(layer, t["trigger_id"])] == ["m-thread"]

            if "log_reasoning_step" in layer.registry:  # the ledger hands every step over
                await call(
                    layer, "log_reasoning_step", who(), session_id="s1",
                    content="deploy to production",
                )  # fmt: skip
                await layer.triggers.drain()
                sources = [f["source"] for f in await fires(layer, t["trigger_id"])]
                assert sources == ["reasoning", "memory"]

    run(go())
