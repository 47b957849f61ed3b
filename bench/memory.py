"""Agent memory: store throughput, search latency and recall, store-to-searchable time.

    python bench/memory.py [--sizes 10000,100000] [--stores 300] [--queries 200] [--hash]

- store: memories/s through store_memory with embedding excluded (insert only; the
  embedding pump is paused) and included (stored, then waited on until every one is
  embedded by the batching worker), with the real model unless --hash.
- search: search_memory top-10 p50/p99 over N memories of one agent (the worst case
  for an agent-scoped scan), without and with filters (memory_type, min_importance).
  The N memories and their vectors are SYNTHETIC (clustered random unit vectors
  inserted directly into the tables, then loaded into the in-RAM index as at start);
  each search uses a fresh synthetic query vector in place of the query's model
  embedding, whose own cost is printed separately. Beside it, an exact brute-force
  search in DuckDB SQL over the same rows (ORDER BY array_cosine_distance LIMIT 10),
  recall@10 of the fast path against it, and the latency ratio.
- store-to-searchable: store, then poll get_memory until embedded (background path,
  default flush interval), and store with wait := true (read-after-write path).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from proxy import config  # noqa: E402
from proxy.agent import AgentLayer, Identity  # noqa: E402
from proxy.agent import memory_search as ms  # noqa: E402
from proxy.agent.memory_schema import T_MEM, T_VEC  # noqa: E402
from proxy.engine import Engine  # noqa: E402

WHO = Identity("local", "bench-agent")


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


async def open_layer(tmp: Path, provider: str) -> tuple[Engine, AgentLayer]:
    env = {
        "HATIDATA_DATA_DIR": str(tmp / "data"),
        "HATIDATA_DATABASE": str(tmp / "bench.duckdb"),
        "HATIDATA_EMBEDDING_PROVIDER": provider,
    }
    os.environ.update(env)
    cfg = config.load(None, env)
    config.export_embedding_env(cfg)
    engine = Engine(cfg)
    layer = AgentLayer(engine)
    await engine.semantic.start()
    await layer.start()
    return engine, layer


async def close_layer(engine: Engine, layer: AgentLayer) -> None:
    await layer.stop()
    await engine.semantic.stop()
    engine.close()


async def bench_store(layer: AgentLayer, n: int) -> None:
    mem = layer.memory
    worker = layer.semantic.worker
    real_submit = worker.submit
    gate = asyncio.Event()

    async def paused(texts: list[str], mode: str = "passage") -> Any:
        await gate.wait()
        return await real_submit(texts, mode)

    worker.submit = paused
    t0 = time.perf_counter()
    for i in range(n):
        await layer.call(
            "store_memory", WHO, [f"insert-only memory number {i} about topic {i % 7}"]
        )
    insert_rate = n / (time.perf_counter() - t0)
    gate.set()
    worker.submit = real_submit
    await _drain(layer)

    t0 = time.perf_counter()
    for i in range(n):
        await layer.call(
            "store_memory", WHO, [f"embedded memory {i}: the team discussed item {i * 31 % 997}"]
        )
    await _drain(layer)
    full_rate = n / (time.perf_counter() - t0)
    print(f"store, embedding excluded : {insert_rate:8.0f} memories/s  ({n} stores)")
    print(
        f"store, embedding included: {full_rate:8.0f} memories/s  (model {mem.model_name},"
        f" ratio {full_rate / insert_rate:.2f}x)"
    )


async def _drain(layer: AgentLayer) -> None:
    while True:
        s = (await layer.call("memory_embedding_stats", WHO))[0]
        if s["total_pending"] == 0:
            return
        await asyncio.sleep(0.01)


async def bench_searchable(layer: AgentLayer, rounds: int = 10) -> None:
    bg, rw = [], []
    for i in range(rounds):
        t0 = time.perf_counter()
        r = await layer.call("store_memory", WHO, [f"fresh fact {i} {uuid.uuid4()}"])
        while (await layer.call("get_memory", WHO, memory_id=r[0]["memory_id"]))[0][
            "embedding_status"
        ] != "embedded":
            await asyncio.sleep(0.002)
        bg.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await layer.call("store_memory", WHO, [f"urgent fact {i} {uuid.uuid4()}"], wait=True)
        rw.append(time.perf_counter() - t0)
    flush = layer.semantic.worker.flush_interval * 1000
    print(
        f"store -> searchable: background p50 {statistics.median(bg) * 1000:7.1f} ms"
        f" (flush interval {flush:.0f} ms); wait:=true p50 {statistics.median(rw) * 1000:6.1f} ms"
    )


async def load_synthetic(layer: AgentLayer, n: int, dims: int, rng: np.random.Generator) -> Any:
    """n clustered unit vectors for WHO, inserted straight into the tables."""
    import pyarrow as pa

    centers = rng.standard_normal((max(n // 200, 10), dims)).astype(np.float32)
    labels = rng.integers(0, len(centers), n)
    vecs = centers[labels] + 0.6 * rng.standard_normal((n, dims)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ids = [str(uuid.uuid4()) for _ in range(n)]
    types = np.array(["fact", "episode", "preference", "context"])[rng.integers(0, 4, n)]
    table = pa.table(
        {
            "memory_id": ids,
            "content": [f"synthetic memory {i} cluster {c}" for i, c in enumerate(labels)],
            "memory_type": types.tolist(),
            "importance": rng.random(n),
            "embedding": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), dims),
        }
    )
    model = layer.memory.model_name

    def write(cur: Any) -> None:
        cur.register("_bench", table)
        cur.execute(f"DELETE FROM {T_VEC}")
        cur.execute(f"DELETE FROM {T_MEM}")
        cur.execute(
            f"INSERT INTO {T_MEM} (memory_id, org_id, agent_id, memory_type, content, metadata,"
            " importance, has_embedding, embedding_status, embedding_model, created_at,"
            " updated_at, content_hash) SELECT memory_id::UUID, ?, ?, memory_type, content,"
            " '{}', importance, true, 'embedded', ?, now(), now(), sha256(content) FROM _bench",
            [WHO.org_id, WHO.agent_id, model],
        )
        cur.execute(
            f"INSERT INTO {T_VEC} SELECT memory_id::UUID, embedding::FLOAT[{dims}] FROM _bench"
        )
        cur.unregister("_bench")

    await layer.db.transaction(write)
    await layer.db.run(layer.memory._load)
    return centers


async def bench_search(layer: AgentLayer, n: int, queries: int, rng: np.random.Generator) -> None:
    dims = layer.dims
    t0 = time.perf_counter()
    centers = await load_synthetic(layer, n, dims, rng)
    load_s = time.perf_counter() - t0
    worker = layer.semantic.worker
    real_embed_now = worker.embed_now
    qvecs = centers[rng.integers(0, len(centers), queries)] + 0.8 * rng.standard_normal(
        (queries, dims)
    ).astype(np.float32)
    qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
    state = {"i": 0}

    async def synthetic_query(texts: list[str], mode: str = "query") -> np.ndarray:
        return qvecs[state["i"] : state["i"] + 1]

    worker.embed_now = synthetic_query
    print(
        f"\n{n} memories of one agent (SYNTHETIC clustered unit vectors, {dims} dims;"
        f" loaded + indexed in {load_s:.1f} s)"
    )
    try:
        for label, kw in (
            ("no filter", {}),
            ("memory_type + min_importance", {"memory_type": "fact", "min_importance": 0.5}),
        ):
            lat = []
            for i in range(queries):
                state["i"] = i
                t0 = time.perf_counter()
                hits = await layer.call("search_memory", WHO, ["synthetic query"], top_k=10, **kw)
                lat.append(time.perf_counter() - t0)
                assert len(hits) == 10
            print(
                f"  search_memory top-10, {label:30s}: p50 {pct(lat, 50) * 1000:6.2f} ms"
                f"  p99 {pct(lat, 99) * 1000:6.2f} ms"
            )
        # Recall of the fast path (in-RAM index) vs exact brute force in DuckDB SQL.
        agent = layer.memory.index.agent(WHO.org_id, WHO.agent_id)
        seq_of: dict[int, str] = dict(
            await layer.db.run(
                lambda cur: cur.execute(f"SELECT seq, memory_id::VARCHAR FROM {T_MEM}").fetchall()
            )
        )
        recalls, fast_lat, exact_lat = [], [], []
        for i in range(min(queries, 50)):
            q = qvecs[i]
            t0 = time.perf_counter()
            seqs, _, _ = ms.nearest([agent], q, 10, None)
            fast_lat.append(time.perf_counter() - t0)
            fast = {seq_of[int(s)] for s in seqs}

            def exact(cur: Any, q: np.ndarray = q) -> list[tuple]:
                return cur.execute(
                    f"SELECT v.memory_id::VARCHAR FROM {T_VEC} v JOIN {T_MEM} m USING (memory_id)"
                    " WHERE m.org_id = ? AND m.agent_id = ?"
                    f" ORDER BY array_cosine_distance(v.embedding, ?::FLOAT[{dims}]) LIMIT 10",
                    [WHO.org_id, WHO.agent_id, q.tolist()],
                ).fetchall()

            t0 = time.perf_counter()
            truth = {r[0] for r in await layer.db.run(exact)}
            exact_lat.append(time.perf_counter() - t0)
            recalls.append(len(fast & truth) / 10)
        f50, e50 = pct(fast_lat, 50) * 1000, pct(exact_lat, 50) * 1000
        print(
            f"  nearest-10 fast path p50 {f50:6.2f} ms | exact brute force (DuckDB SQL) p50"
            f" {e50:7.2f} ms | ratio {e50 / f50:5.1f}x faster | recall@10 {statistics.mean(recalls):.3f}"
        )
    finally:
        worker.embed_now = real_embed_now
    t0 = time.perf_counter()
    for i in range(20):
        await worker.embed_now([f"a fresh query text number {i} {uuid.uuid4()}"], "query")
    print(
        f"  (query embedding with {layer.memory.model_name}, not included above:"
        f" {(time.perf_counter() - t0) / 20 * 1000:.1f} ms per fresh query)"
    )


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--stores", type=int, default=300)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--hash", action="store_true", help="hash embedder instead of the model")
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        engine, layer = await open_layer(Path(tmp), "hash" if args.hash else "onnx")
        try:
            print(f"model: {layer.memory.model_name}, {os.cpu_count()} CPUs")
            await bench_store(layer, args.stores)
            await bench_searchable(layer)
            for n in (int(x) for x in args.sizes.split(",")):
                await bench_search(layer, n, args.queries, rng)
        finally:
            await close_layer(engine, layer)


if __name__ == "__main__":
    asyncio.run(main())
