"""Semantic triggers: registration, matching, cooldowns, actions, webhooks, isolation.

Most tests use the hash embedder (identical text -> similarity 1.0, different text ->
near 0), which makes firing exact; matching quality uses the real all-MiniLM-L6-v2.
Content reaches triggers through `layer.triggers.notify` (what memory and ledger call);
`drain()` waits until it is evaluated and its webhooks are done.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from agent_support import open_layer, run, who
from trigger_support import (
    call,
    expect_error,
    fires,
    notify_and_drain,
    register,
    rows,
)

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
            # "nope" is no id: a name, and no trigger has it.
            await expect_error("not_found", call(layer, "delete_trigger", who(), trigger_id="nope"))
            await expect_error(
                "invalid_argument", call(layer, "delete_trigger", who(), trigger_id="")
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
