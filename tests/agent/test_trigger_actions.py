"""Semantic triggers: actions and webhooks, isolation, and the SQL / ledger ways in.

Hash embedder (identical text -> similarity 1.0); `receiver` is a local webhook endpoint
(fixture in conftest.py).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

from agent_support import open_layer, run, who
from trigger_support import (
    Receiver,
    call,
    expect_error,
    fires,
    notify_and_drain,
    register,
    rows,
)

from proxy.core.identity import Identity
from tests.conftest import free_port

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
            assert (
                time.perf_counter() - started < 0.5
            )  # notify only enqueues (a delivery would wait >= 1 s)
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

            # The agent relations show each agent only its own rows (the SQL path).
            from proxy.execution.executor import execute_sql

            async def view(ident: Identity) -> list[str]:
                sql = "SELECT name FROM main._hatidata_triggers ORDER BY name"
                return [r[0] for r in (await execute_sql(layer, ident, sql))[1]]

            assert await view(a) == ["mine"] and await view(b) == ["org-wide", "theirs"]

    run(go())


# --- the other ways in ----------------------------------------------------------------


def test_sql_functions_and_views(tmp_path: Path) -> None:
    from proxy.execution.executor import execute_sql

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
