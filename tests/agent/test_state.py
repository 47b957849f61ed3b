"""Agent state: versions, isolation between agents and orgs, bad input, persistence, SQL."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agent_support import open_layer, run, who

from proxy.core.errors import AgentError
from proxy.execution.executor import execute_sql
from proxy.wire.errors import PgError


def test_set_increments_version_and_get_returns_the_value(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            a = who("a")
            first = await layer.call("set_agent_state", a, key="phase", value="collect")
            assert first[0]["version"] == 1
            second = await layer.call("set_agent_state", a, key="phase", value={"n": [1, 2]})
            assert second[0]["version"] == 2
            assert second[0]["updated_at"] >= first[0]["updated_at"]
            got = (await layer.call("get_agent_state", a, key="phase"))[0]
            assert got["value"] == {"n": [1, 2]}
            assert got["version"] == 2 and got["found"] is True

    run(go())


def test_missing_key_is_a_null_value_not_an_error(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            got = await layer.call("get_agent_state", who(), key="never")
            assert got == [
                {"key": "never", "value": None, "version": None, "updated_at": None, "found": False}
            ]

    run(go())


def test_any_json_value_round_trips(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            for value in ["text", 42, 1.5, True, None, [1, "x"], {"ü": {"deep": [None]}}]:
                await layer.call("set_agent_state", who(), key="k", value=value)
                got = (await layer.call("get_agent_state", who(), key="k"))[0]
                assert got["value"] == value and got["found"] is True

    run(go())


def test_delete_and_list(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            for key in ["b", "a", "user:x", "user:y"]:
                await layer.call("set_agent_state", who(), key=key, value=key.upper())
            keys = [r["key"] for r in await layer.call("list_agent_state", who())]
            assert keys == ["a", "b", "user:x", "user:y"]
            users = await layer.call("list_agent_state", who(), prefix="user:")
            assert [(r["key"], r["value"]) for r in users] == [
                ("user:x", "USER:X"),
                ("user:y", "USER:Y"),
            ]
            assert len(await layer.call("list_agent_state", who(), limit=1)) == 1
            assert (await layer.call("delete_agent_state", who(), key="a"))[0]["deleted"] is True
            assert (await layer.call("delete_agent_state", who(), key="a"))[0]["deleted"] is False
            assert (await layer.call("get_agent_state", who(), key="a"))[0]["found"] is False
            # A key set again after delete starts over at version 1.
            again = await layer.call("set_agent_state", who(), key="a", value=1)
            assert again[0]["version"] == 1

    run(go())


def test_agents_and_orgs_are_isolated(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            await layer.call("set_agent_state", who("a"), key="secret", value="a's")
            await layer.call("set_agent_state", who("a", "org2"), key="secret", value="org2's")
            for other in (who("b"), who("a", "org3")):
                got = (await layer.call("get_agent_state", other, key="secret"))[0]
                assert got["value"] is None and got["found"] is False
                assert await layer.call("list_agent_state", other) == []
                assert (await layer.call("delete_agent_state", other, key="secret"))[0][
                    "deleted"
                ] is False
            # b's own key of the same name is independent, with its own version.
            b = await layer.call("set_agent_state", who("b"), key="secret", value="b's")
            assert b[0]["version"] == 1
            assert (await layer.call("get_agent_state", who("a"), key="secret"))[0][
                "value"
            ] == "a's"
            org2 = await layer.call("get_agent_state", who("a", "org2"), key="secret")
            assert org2[0]["value"] == "org2's"

    run(go())


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"key": "", "value": 1}, "non-empty"),
        ({"key": "k" * 257, "value": 1}, "256"),
        ({"key": 5, "value": 1}, "non-empty string"),
        ({"key": "k", "value": float("nan")}, "JSON"),
        ({"key": "k", "value": {"x": object()}}, "JSON"),
        ({"key": "k", "value": "x" * (1 << 20)}, "1 MiB"),
    ],
)
def test_invalid_arguments_write_nothing(tmp_path: Path, kwargs: dict, words: str) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            with pytest.raises(AgentError) as err:
                await layer.call("set_agent_state", who(), **kwargs)
            assert err.value.sqlstate == "22023" and err.value.http_status == 422
            assert words in err.value.message
            assert await layer.call("list_agent_state", who()) == []

    run(go())


def test_list_limit_is_checked(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            for bad in (0, -1, 10_001, "5"):
                with pytest.raises(AgentError):
                    await layer.call("list_agent_state", who(), limit=bad)

    run(go())


def test_concurrent_sets_count_every_version(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            rows = await asyncio.gather(
                *[layer.call("set_agent_state", who(), key="n", value=i) for i in range(20)]
            )
            versions = sorted(r[0]["version"] for r in rows)
            assert versions == list(range(1, 21))

    run(go())


def test_state_survives_a_restart(tmp_path: Path) -> None:
    db = str(tmp_path / "state.duckdb")

    async def write() -> None:
        async with open_layer(tmp_path, database=db) as layer:
            await layer.call("set_agent_state", who(), key="k", value={"kept": True})
            await layer.call("set_agent_state", who(), key="k", value={"kept": "yes"})

    async def read() -> None:
        async with open_layer(tmp_path, database=db) as layer:
            got = (await layer.call("get_agent_state", who(), key="k"))[0]
            assert got["value"] == {"kept": "yes"} and got["version"] == 2

    run(write())
    run(read())


def test_sql_functions_and_the_identity_view(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            a, b = who("a"), who("b")
            await execute_sql(layer, a, "SELECT * FROM set_agent_state('mood', '{\"ok\": 1}')")
            await layer.call("set_agent_state", b, key="mood", value="b's")
            cols, rows = await execute_sql(
                layer, a, "SELECT key, value->>'ok', version, found FROM get_agent_state('mood')"
            )
            assert rows == [("mood", "1", 1, True)]
            cols, rows = await execute_sql(
                layer, a, "SELECT agent_id, key, value FROM main._hatidata_agent_state"
            )
            assert rows == [("a", "mood", '{"ok": 1}')]
            with pytest.raises(PgError) as err:
                await execute_sql(layer, a, "SELECT * FROM hatidata_internal.agent_state")
            assert err.value.sqlstate == "42P01"  # in the agent database: not nameable

    run(go())
