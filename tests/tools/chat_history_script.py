"""Agent chat-history stores on Postgres, run in the agentfw tool venv by
tests/tools/test_chat_history.py against PostgreSQL 15 and hatiproxy.

Usage: chat_history_script.py HOST:PORT USER DBNAME PARTS, PARTS a comma-separated list of
langchain, langchain_async, llamaindex, llamaindex_jsonb, llamaindex_async. Prints one JSON
object: every step's result as "<part>.<step>", or ["error", exception class, SQLSTATE,
message] for a step that failed."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

OUT: dict[str, Any] = {}
PREFIX = [""]  # the part running: its steps' keys start with "<part>."


def failure(exc: BaseException) -> list:
    state = getattr(exc, "sqlstate", None) or getattr(getattr(exc, "orig", None), "sqlstate", None)
    return ["error", type(exc).__name__, state, str(exc)[:300]]


def step(name: str, fn: Callable[[], Any]) -> Any:
    try:
        OUT[PREFIX[0] + name] = fn()
    except Exception as exc:  # noqa: BLE001 - the step's error is its result
        OUT[PREFIX[0] + name] = failure(exc)
    return OUT[PREFIX[0] + name]


async def astep(name: str, fn: Callable[[], Awaitable[Any]]) -> Any:
    try:
        OUT[PREFIX[0] + name] = await fn()
    except Exception as exc:  # noqa: BLE001
        OUT[PREFIX[0] + name] = failure(exc)
    return OUT[PREFIX[0] + name]


def lc_messages(msgs: list) -> list:
    return [[m.type, m.content, m.additional_kwargs] for m in msgs]


def run_langchain(dsn: str) -> None:
    import psycopg
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    from langchain_postgres import PostgresChatMessageHistory

    conn = psycopg.connect(dsn)
    table = "chat_history"
    s1, s2 = str(uuid.UUID(int=1)), str(uuid.UUID(int=2))
    step("create_tables", lambda: PostgresChatMessageHistory.create_tables(conn, table))
    step("create_again", lambda: PostgresChatMessageHistory.create_tables(conn, table))
    h1 = PostgresChatMessageHistory(table, s1, sync_connection=conn)
    h2 = PostgresChatMessageHistory(table, s2, sync_connection=conn)
    step("add", lambda: [
        h1.add_messages([SystemMessage("be brief"), HumanMessage("hi ☃")]),
        h1.add_messages([AIMessage("hello", additional_kwargs={"n": 1, "tags": ["x"]})]),
        h2.add_messages([HumanMessage("other session")]),
    ])  # fmt: skip
    step("messages_1", lambda: lc_messages(h1.messages))
    step("messages_2", lambda: lc_messages(h2.get_messages()))
    step("columns", lambda: conn.execute(
        "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_name = %s ORDER BY ordinal_position", [table]).fetchall())  # fmt: skip
    step("ids_ordered", lambda: conn.execute(
        f"SELECT session_id::text, count(*), min(id) < max(id) FROM {table} "
        "GROUP BY 1 ORDER BY 1").fetchall())  # fmt: skip
    step("clear", lambda: [h1.clear(), lc_messages(h1.messages), lc_messages(h2.messages)])
    step("bad_session", lambda: PostgresChatMessageHistory(table, "not-a-uuid", sync_connection=conn))  # fmt: skip
    step("drop", lambda: [
        PostgresChatMessageHistory.drop_table(conn, table),
        conn.execute("SELECT to_regclass(%s) IS NULL", [table]).fetchone()[0],
    ])  # fmt: skip
    conn.close()


async def run_langchain_async(dsn: str) -> None:
    import psycopg
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_postgres import PostgresChatMessageHistory

    conn = await psycopg.AsyncConnection.connect(dsn)
    table = "chat_history_async"
    sid = str(uuid.UUID(int=3))
    await astep("create_tables", lambda: PostgresChatMessageHistory.acreate_tables(conn, table))
    h = PostgresChatMessageHistory(table, sid, async_connection=conn)

    async def add() -> list:
        await h.aadd_messages([HumanMessage("q1"), AIMessage("a1")])
        await h.aadd_messages([HumanMessage("q2")])
        return lc_messages(await h.aget_messages())

    await astep("add", add)

    async def clear() -> list:
        await h.aclear()
        return lc_messages(await h.aget_messages())

    await astep("clear", clear)
    await astep("drop", lambda: PostgresChatMessageHistory.adrop_table(conn, table))
    await conn.close()


def li_messages(msgs: list | None) -> Any:
    if msgs is None:
        return None
    return [[str(m.role.value), m.content, m.additional_kwargs] for m in msgs]


def run_llamaindex(uri: str, use_jsonb: bool) -> None:
    table = "li_chat_jsonb" if use_jsonb else "li_chat"
    from llama_index.core.llms import ChatMessage
    from llama_index.storage.chat_store.postgres import PostgresChatStore

    store = step("init", lambda: PostgresChatStore.from_uri(
        uri, table_name=table, use_jsonb=use_jsonb))  # fmt: skip
    if isinstance(store, list):
        return
    OUT[PREFIX[0] + "init"] = None
    u, a = ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="yo")
    step("set", lambda: store.set_messages("k1", [u, a]))
    step("get", lambda: li_messages(store.get_messages("k1")))
    step("set_again", lambda: [
        store.set_messages("k1", [u, a, ChatMessage(role="user", content="more ☃")]),
        li_messages(store.get_messages("k1")),
    ])  # fmt: skip
    step("add", lambda: [
        store.add_message("k1", ChatMessage(role="assistant", content="sure", additional_kwargs={"t": 1})),
        store.add_message("k2", ChatMessage(role="user", content="new key")),
        li_messages(store.get_messages("k1")),
        li_messages(store.get_messages("k2")),
    ])  # fmt: skip
    step("keys", lambda: sorted(store.get_keys()))
    step("delete_message", lambda: [
        li_messages([store.delete_message("k1", 1)]),
        li_messages(store.get_messages("k1")),
    ])  # fmt: skip
    step("delete_last", lambda: [
        li_messages([store.delete_last_message("k1")]),
        li_messages(store.get_messages("k1")),
    ])  # fmt: skip
    step("delete_out_of_range", lambda: store.delete_message("k1", 9))
    step("delete_messages", lambda: [
        li_messages(store.delete_messages("k2")),
        li_messages(store.get_messages("k2")),
        sorted(store.get_keys()),
    ])  # fmt: skip


async def run_llamaindex_async(uri: str) -> None:
    from llama_index.core.llms import ChatMessage
    from llama_index.storage.chat_store.postgres import PostgresChatStore

    store = PostgresChatStore.from_uri(uri, table_name="li_achat")
    u, a = ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="yo")
    await astep("set", lambda: store.aset_messages("k1", [u, a]))

    async def get(key: str) -> Any:
        return li_messages(await store.aget_messages(key))

    await astep("get", lambda: get("k1"))
    await astep("add", lambda: store.async_add_message("k1", ChatMessage(role="user", content="3")))
    await astep("get_after_add", lambda: get("k1"))
    await astep("keys", lambda: store.aget_keys())

    async def delete_one() -> list:
        return [li_messages([await store.adelete_message("k1", 0)]), await get("k1")]

    await astep("delete_message", delete_one)

    async def delete_last() -> list:
        return [li_messages([await store.adelete_last_message("k1")]), await get("k1")]

    await astep("delete_last", delete_last)
    await astep("delete_messages", lambda: store.adelete_messages("k1"))
    await astep("get_deleted", lambda: get("k1"))


def main() -> None:
    hostport, user, db, parts = sys.argv[1:5]
    host, port = hostport.rsplit(":", 1)
    dsn = f"postgresql://{user}@{host}:{port}/{db}"
    uri = f"postgresql+psycopg://{user}:x@{host}:{port}/{db}"
    runs: dict[str, Callable[[], Any]] = {
        "langchain": lambda: run_langchain(dsn),
        "langchain_async": lambda: asyncio.run(run_langchain_async(dsn)),
        "llamaindex": lambda: run_llamaindex(uri, use_jsonb=False),
        "llamaindex_jsonb": lambda: run_llamaindex(uri, use_jsonb=True),
        "llamaindex_async": lambda: asyncio.run(run_llamaindex_async(uri)),
    }
    for part in parts.split(","):
        PREFIX[0] = part + "."
        try:
            runs[part]()
        except Exception as exc:  # noqa: BLE001 - what ran so far is still printed
            OUT[part + ".fatal"] = failure(exc)
    print(json.dumps(OUT, default=str, sort_keys=True))


if __name__ == "__main__":
    main()
