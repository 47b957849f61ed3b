"""LangGraph's Postgres persistence (langgraph-checkpoint-postgres, psycopg 3), run in the
agentfw tool venv by tests/tools/test_langgraph.py against PostgreSQL 15 and hatiproxy.

Usage: langgraph_script.py HOST:PORT USER DBNAME PARTS, PARTS a comma-separated list of
saver, async_saver, store, async_store, vector_store (each its own tables or threads: the
savers share the checkpoint tables, so async_saver uses threads of its own). Prints one
JSON object: every step's result as "<part>.<step>", or ["error", exception class,
SQLSTATE, message] for a step that failed. Checkpoint ids and
timestamps differ from run to run, so only what they imply is printed (order, counts,
parents)."""

from __future__ import annotations

import asyncio
import json
import operator
import sys
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.types import Command, interrupt

OUT: dict[str, Any] = {}
PREFIX = [""]  # the part running: its steps' keys start with "<part>."


def failure(exc: BaseException) -> list:
    return ["error", type(exc).__name__, getattr(exc, "sqlstate", None), str(exc)[:300]]


def plain(result: Any) -> Any:
    """A graph's output without its interrupts' random ids."""
    if isinstance(result, dict) and "__interrupt__" in result:
        return {**result, "__interrupt__": [i.value for i in result["__interrupt__"]]}
    if isinstance(result, list):
        return [plain(r) for r in result]
    return result


def step(name: str, fn: Callable[[], Any]) -> Any:
    try:
        OUT[PREFIX[0] + name] = plain(fn())
    except Exception as exc:  # noqa: BLE001 - the step's error is its result
        OUT[PREFIX[0] + name] = failure(exc)
    return OUT[PREFIX[0] + name]


async def astep(name: str, fn: Callable[[], Any]) -> Any:
    try:
        OUT[PREFIX[0] + name] = plain(await fn())
    except Exception as exc:  # noqa: BLE001
        OUT[PREFIX[0] + name] = failure(exc)
    return OUT[PREFIX[0] + name]


class State(TypedDict):
    log: Annotated[list[str], operator.add]
    count: int


def build(saver: Any, interrupt_before: list[str] | None = None) -> Any:
    """plan -> act (asks a human through interrupt()) -> report; three steps a run."""

    def plan(state: State) -> dict:
        return {"log": [f"plan{state['count']}"], "count": state["count"] + 1}

    def act(state: State) -> dict:
        answer = interrupt({"question": "go?", "count": state["count"]})
        return {"log": [f"act:{answer}"], "count": state["count"] + 10}

    def report(state: State) -> dict:
        return {"log": ["report"], "count": state["count"] * 2}

    g = StateGraph(State)
    g.add_node("plan", plan)
    g.add_node("act", act)
    g.add_node("report", report)
    g.add_edge(START, "plan")
    g.add_edge("plan", "act")
    g.add_edge("act", "report")
    g.add_edge("report", END)
    return g.compile(checkpointer=saver, interrupt_before=interrupt_before)


def cfg(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


def snapshot(snap: Any) -> dict:
    return {
        "values": snap.values,
        "next": list(snap.next),
        "step": snap.metadata.get("step") if snap.metadata else None,
        "source": snap.metadata.get("source") if snap.metadata else None,
        "has_parent": snap.parent_config is not None,
        "interrupts": [i.value for task in snap.tasks for i in task.interrupts],
    }


def history(snaps: list) -> list:
    return [[s.metadata.get("step"), s.metadata.get("source"), list(s.next)] for s in snaps]


def tuples(items: list) -> list:
    return [
        [t.metadata.get("step"), t.metadata.get("source"), t.config["configurable"]["thread_id"]]
        for t in items
    ]


def checkpointer_steps(saver: Any) -> None:
    """The sync graph run over two threads, an interrupt resumed, history, list, delete."""
    graph = build(saver)
    step("run_a", lambda: graph.invoke({"log": [], "count": 1}, cfg("a")))
    step("state_a_interrupted", lambda: snapshot(graph.get_state(cfg("a"))))
    step("resume_a", lambda: graph.invoke(Command(resume="yes"), cfg("a")))
    step("run_b", lambda: graph.invoke({"log": ["b"], "count": 5}, cfg("b")))
    step("resume_b", lambda: graph.invoke(Command(resume="no"), cfg("b")))
    step("state_a", lambda: snapshot(graph.get_state(cfg("a"))))
    step("history_a", lambda: history(list(graph.get_state_history(cfg("a")))))
    step("history_a_limit", lambda: history(list(graph.get_state_history(cfg("a"), limit=2))))
    step("history_a_filter", lambda: history(list(
        graph.get_state_history(cfg("a"), filter={"source": "input"})
    )))  # fmt: skip
    step("list_all", lambda: sorted(tuples(list(saver.list(None)))))
    step("list_b", lambda: tuples(list(saver.list(cfg("b")))))
    step("list_meta", lambda: tuples(list(saver.list(None, filter={"step": 2}))))

    def before() -> list:
        snaps = list(graph.get_state_history(cfg("a")))
        older = snaps[2].config  # the state after `plan`, before the interrupt
        return tuples(list(saver.list(cfg("a"), before=older)))

    step("list_before", before)

    def time_travel() -> dict:
        snaps = list(graph.get_state_history(cfg("a")))
        after_plan = next(s for s in snaps if s.next == ("act",))
        forked = graph.update_state(after_plan.config, {"log": ["forked"]})
        return {
            "resumed": plain(graph.invoke(Command(resume="again"), forked)),
            "history": len(list(graph.get_state_history(cfg("a")))),
        }

    step("time_travel", time_travel)
    # interrupt_before: a static breakpoint, resumed with None.
    brk = build(saver, interrupt_before=["report"])
    step("breakpoint_run", lambda: brk.invoke({"log": [], "count": 0}, cfg("c")))
    step("breakpoint_resume", lambda: brk.invoke(Command(resume="ok"), cfg("c")))
    step("breakpoint_state", lambda: snapshot(brk.get_state(cfg("c"))))
    step("breakpoint_continue", lambda: brk.invoke(None, cfg("c")))
    step("delete_b", lambda: saver.delete_thread("b"))
    step("after_delete", lambda: sorted({t[2] for t in tuples(list(saver.list(None)))}))
    step("state_b_deleted", lambda: snapshot(graph.get_state(cfg("b"))))


def run_saver(dsn: str) -> None:
    with PostgresSaver.from_conn_string(dsn) as saver:
        step("setup", saver.setup)
        step("setup_again", saver.setup)  # its migrations are idempotent
        step("migrations", lambda: [r["v"] for r in saver.conn.execute(
            "SELECT v FROM checkpoint_migrations ORDER BY v").fetchall()])  # fmt: skip
        checkpointer_steps(saver)


async def run_async_saver(dsn: str) -> None:
    # setup() outside pipeline mode, as LangGraph says: PostgreSQL refuses its CREATE
    # INDEX CONCURRENTLY in a pipeline (an implicit transaction).
    async with AsyncPostgresSaver.from_conn_string(dsn) as saver:
        await astep("setup", saver.setup)
        await astep("setup_again", saver.setup)
    async with AsyncPostgresSaver.from_conn_string(dsn, pipeline=True) as saver:
        graph = build(saver)
        await astep("run_a", lambda: graph.ainvoke({"log": [], "count": 1}, cfg("a")))
        await astep("run_b", lambda: graph.ainvoke({"log": ["b"], "count": 5}, cfg("b")))
        await astep("resume_a", lambda: graph.ainvoke(Command(resume="yes"), cfg("a")))
        await astep("resume_b", lambda: graph.ainvoke(Command(resume="no"), cfg("b")))

        async def state(thread: str) -> dict:
            return snapshot(await graph.aget_state(cfg(thread)))

        async def hist(thread: str, **kw: Any) -> list:
            return history([s async for s in graph.aget_state_history(cfg(thread), **kw)])

        async def listed(config: Any, **kw: Any) -> list:
            return tuples([t async for t in saver.alist(config, **kw)])

        async def sorted_listed(config: Any) -> list:  # two threads' ids interleave
            return sorted(await listed(config))

        await astep("state_a", lambda: state("a"))
        await astep("state_b", lambda: state("b"))
        await astep("history_a", lambda: hist("a"))
        await astep("history_b_limit", lambda: hist("b", limit=3))
        await astep("list_all", lambda: listed(None))
        await astep("list_meta", lambda: listed(None, filter={"source": "loop"}))

        async def concurrent() -> list:
            # Two graphs on one pipelined connection at once (the saver's lock orders them).
            return list(await asyncio.gather(
                graph.ainvoke({"log": [], "count": 2}, cfg("p")),
                graph.ainvoke({"log": [], "count": 3}, cfg("q")),
            ))  # fmt: skip

        await astep("concurrent", concurrent)
        await astep("delete_a", lambda: saver.adelete_thread("a"))
        await astep("after_delete", lambda: listed(cfg("a")))
        await astep("others_kept", lambda: sorted_listed(None))


def store_steps(store: Any) -> None:
    step("setup", store.setup)
    step("setup_again", store.setup)
    step("put", lambda: [
        store.put(("users", "u1", "prefs"), "theme", {"color": "dark", "size": 12}),
        store.put(("users", "u1", "prefs"), "lang", {"code": "nb", "size": 3}),
        store.put(("users", "u2", "prefs"), "theme", {"color": "light", "size": 12}),
        store.put(("users", "u1", "notes"), "n1", {"text": "buy milk", "tags": ["home"]}),
        store.put(("docs",), "readme", {"text": "hello", "nested": {"a": {"b": 1}}}),
    ])  # fmt: skip

    def item(it: Any) -> Any:
        return None if it is None else [list(it.namespace), it.key, it.value]

    def found(items: list) -> list:
        return [[list(i.namespace), i.key, i.value] for i in items]

    step("get", lambda: item(store.get(("users", "u1", "prefs"), "theme")))
    step("get_missing", lambda: item(store.get(("users", "u1", "prefs"), "nope")))
    step("overwrite", lambda: [
        store.put(("users", "u1", "prefs"), "theme", {"color": "blue", "size": 14}),
        item(store.get(("users", "u1", "prefs"), "theme")),
    ])  # fmt: skip
    step("search_prefix", lambda: sorted(found(store.search(("users", "u1")))))
    step("search_users", lambda: sorted(found(store.search(("users",), limit=10))))
    step("search_filter", lambda: sorted(found(store.search(("users",), filter={"size": 12}))))
    step("search_filter_ops", lambda: sorted(found(
        store.search(("users",), filter={"size": {"$gt": 5, "$lte": 14}})
    )))  # fmt: skip
    step("search_filter_ne", lambda: sorted(found(
        store.search(("users",), filter={"color": {"$ne": "light"}})
    )))  # fmt: skip
    step("search_page", lambda: len(store.search(("users",), limit=2, offset=1)))
    step("list_namespaces", lambda: sorted(map(list, store.list_namespaces())))
    step("list_namespaces_prefix", lambda: sorted(map(list, store.list_namespaces(
        prefix=("users",), max_depth=2))))  # fmt: skip
    step("list_namespaces_suffix", lambda: sorted(map(list, store.list_namespaces(
        suffix=("prefs",)))))  # fmt: skip
    step("list_namespaces_wild", lambda: sorted(map(list, store.list_namespaces(
        prefix=("users", "*", "notes")))))  # fmt: skip
    step("delete", lambda: [
        store.delete(("users", "u2", "prefs"), "theme"),
        item(store.get(("users", "u2", "prefs"), "theme")),
        sorted(map(list, store.list_namespaces(prefix=("users",)))),
    ])  # fmt: skip


def ttl_steps(store: Any) -> None:
    """Items put with a TTL: get refreshes it; an item whose time is past is swept."""
    store.setup()
    step("ttl_put", lambda: [
        store.put(("ttl",), "short", {"v": 1}, ttl=0.001),  # 60 ms
        store.put(("ttl",), "long", {"v": 2}, ttl=60),
        store.put(("ttl",), "none", {"v": 3}, ttl=None),
    ])  # fmt: skip

    def columns() -> list:
        with store._cursor() as cur:
            cur.execute(
                "SELECT key, ttl_minutes, expires_at IS NOT NULL AS has_expiry,"
                " expires_at > now() + interval '59 minutes' AS far"
                " FROM store WHERE prefix = 'ttl' ORDER BY key"
            )
            return [list(r.values()) for r in cur.fetchall()]

    step("ttl_columns", columns)

    def sweep() -> list:
        import time

        time.sleep(0.3)
        return [store.sweep_ttl(), sorted(i.key for i in store.search(("ttl",)))]

    step("ttl_sweep", sweep)
    step("ttl_refresh", lambda: [store.get(("ttl",), "long", refresh_ttl=True).value, columns()])


def run_store(dsn: str) -> None:
    ttl = {"default_ttl": None, "refresh_on_read": True}
    with PostgresStore.from_conn_string(dsn, ttl=ttl) as store:
        store_steps(store)
        ttl_steps(store)


async def run_async_store(dsn: str) -> None:
    async with AsyncPostgresStore.from_conn_string(dsn) as store:
        await astep("setup", store.setup)
    async with AsyncPostgresStore.from_conn_string(dsn, pipeline=True) as store:
        await astep("put", lambda: asyncio.gather(
            store.aput(("chat", "t1"), "m1", {"role": "user", "n": 1}),
            store.aput(("chat", "t1"), "m2", {"role": "ai", "n": 2}),
            store.aput(("chat", "t2"), "m1", {"role": "user", "n": 3}),
        ))  # fmt: skip

        async def search(*ns: str, **kw: Any) -> list:
            items = await store.asearch(ns, **kw)
            return sorted([[list(i.namespace), i.key, i.value] for i in items])

        await astep("search", lambda: search("chat"))
        await astep("search_filter", lambda: search("chat", filter={"role": "user"}))
        await astep("get", lambda: _aitem(store.aget(("chat", "t1"), "m2")))
        await astep("delete", lambda: store.adelete(("chat", "t1"), "m1"))
        await astep("namespaces", lambda: _anamespaces(store))


async def _aitem(coro: Any) -> Any:
    it = await coro
    return None if it is None else [list(it.namespace), it.key, it.value]


async def _anamespaces(store: Any) -> list:
    return sorted(map(list, await store.alist_namespaces()))


def fake_embed(texts: list[str]) -> list[list[float]]:
    """Deterministic 4-dimensional vectors: counts of a few letters (no model needed)."""
    out = []
    for t in texts:
        t = t.lower()
        out.append([float(t.count(c)) + 0.1 for c in "aeio"])
    return out


def run_vector_store(dsn: str) -> None:
    index = {"dims": 4, "embed": fake_embed, "fields": ["text"]}
    with PostgresStore.from_conn_string(dsn, index=index) as store:
        step("setup", store.setup)
        step("setup_again", store.setup)
        step("put", lambda: [
            store.put(("mem",), "1", {"text": "aaaa apple banana"}),
            store.put(("mem",), "2", {"text": "eeee beech tree"}),
            store.put(("mem",), "3", {"text": "iiii kiwi"}),
            store.put(("mem",), "4", {"text": "no index"}, index=False),
        ])  # fmt: skip

        def search(query: str, **kw: Any) -> list:
            hits = store.search(("mem",), query=query, **kw)
            return [[h.key, None if h.score is None else round(h.score, 4)] for h in hits]

        step("search_a", lambda: search("a lot of aaaa"))
        step("search_i", lambda: search("kiwi iii", limit=2))
        step("search_filter", lambda: search("eee", filter={"text": "iiii kiwi"}))
        step("vectors", lambda: store.conn.execute(
            "SELECT key, field_name FROM store_vectors ORDER BY key").fetchall())  # fmt: skip
        step("delete_cascades", lambda: [
            store.delete(("mem",), "1"),
            [r["key"] for r in store.conn.execute(
                "SELECT key FROM store_vectors ORDER BY key").fetchall()],
        ])  # fmt: skip


def main() -> None:
    hostport, user, db, parts = sys.argv[1:5]
    host, port = hostport.rsplit(":", 1)
    dsn = f"postgresql://{user}@{host}:{port}/{db}"
    runs: dict[str, Callable[[], Any]] = {
        "saver": lambda: run_saver(dsn),
        "async_saver": lambda: asyncio.run(run_async_saver(dsn)),
        "store": lambda: run_store(dsn),
        "async_store": lambda: asyncio.run(run_async_store(dsn)),
        "vector_store": lambda: run_vector_store(dsn),
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
