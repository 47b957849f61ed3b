"""Agent memory: store throughput, search latency and recall, store-to-searchable time.

    python bench/memory.py [--sizes 10000,100000] [--stores 300] [--queries 200] [--hash]
                           [--precision fp32|int8] [--text-vectors PATH.npz]

- store: memories/s through store_memory with embedding excluded (insert only; the
  embedding pump is paused) and included (stored, then waited on until every one is
  embedded by the batching worker), with the real model unless --hash. --stores 0
  skips this and store-to-searchable.
- search: search_memory top-10 p50/p99 over N memories of one agent (the worst case
  for an agent-scoped search), without and with filters (memory_type, min_importance).
  By default the N memories and their vectors are SYNTHETIC (clustered random unit
  vectors: N/200 random centers plus noise; queries are other points near the
  centers), inserted directly into the tables, then loaded into the in-RAM index as
  at start. With --text-vectors they are the model's embeddings of distinct sentences
  from the Python standard library's docstrings, queries being other such sentences.
  Each search sends a fresh query text, and its model call (through the embedding
  cache: a miss) is part of the timed search; the vector searched for is then the data
  set's query vector, so results can be checked. Printed per search: p50/p99 with the
  model call, without it (the same search, the model call skipped), and the model
  call alone with its share of the p50.
- recall: the index as search uses it (50 candidates, the best 10 counted) against an
  exact brute-force search in DuckDB SQL over the same rows (ORDER BY
  array_cosine_distance LIMIT 10, same filters): recall@10 and latencies, plus the
  index's own exact scan in RAM.
- store-to-searchable: store, then poll get_memory until embedded (background path,
  default flush interval), and store with wait := true (read-after-write path).
- --ingest [N]: only bulk ingest. The raw model's texts/s at batch 32 (the ONNX
  provider called directly, before and after, averaged) against store_memories of N
  distinct short texts (default 2000) timed until every one is searchable: with
  wait := true, and without (then polled until none is pending); and a single
  store_memory without wait, p50/p99 in-process (--stores calls).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from proxy.agent.layer import AgentLayer  # noqa: E402
from proxy.agent.memory import search as ms  # noqa: E402
from proxy.agent.memory.index_types import RowFilter  # noqa: E402
from proxy.agent.memory.schema import T_MEM, T_VEC  # noqa: E402
from proxy.core import config  # noqa: E402
from proxy.core.identity import Identity  # noqa: E402
from proxy.db.engine import Engine  # noqa: E402
from proxy.semantic.engine import SemanticEngine  # noqa: E402

WHO = Identity("local", "bench-agent")
Vectors = tuple[np.ndarray, np.ndarray, list[str]]  # memories, queries, memory contents


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


async def open_layer(
    tmp: Path, provider: str, precision: str = "fp32"
) -> tuple[Engine, AgentLayer]:
    env = {
        "HATIDATA_DATA_DIR": str(tmp / "data"),
        "HATIDATA_DATABASE": str(tmp / "bench.duckdb"),
        "HATIDATA_EMBEDDING_PROVIDER": provider,
        "HATIDATA_EMBEDDING_PRECISION": precision,
    }
    os.environ.update(env)
    cfg = config.load(None, env)
    config.export_embedding_env(cfg)
    engine = Engine(cfg)
    layer = AgentLayer(engine, SemanticEngine(cfg, engine.db, engine.agent_db.db))
    await layer.semantic.start()
    await layer.start()
    return engine, layer


async def close_layer(engine: Engine, layer: AgentLayer) -> None:
    await layer.stop()
    await layer.semantic.stop()
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


def synthetic(n: int, dims: int, queries: int, rng: np.random.Generator) -> Vectors:
    """n clustered unit vectors (n/200 random centers + noise) and queries near centers."""
    centers = rng.standard_normal((max(n // 200, 10), dims)).astype(np.float32)
    labels = rng.integers(0, len(centers), n)
    vecs = centers[labels] + 0.6 * rng.standard_normal((n, dims)).astype(np.float32)
    qvecs = centers[rng.integers(0, len(centers), queries)] + 0.8 * rng.standard_normal(
        (queries, dims)
    ).astype(np.float32)
    return vecs, qvecs, [f"synthetic memory {i} cluster {c}" for i, c in enumerate(labels)]


def stdlib_sentences() -> list[str]:
    """Distinct sentences from the docstrings of Python's standard library (real text)."""
    import ast
    import re
    import sysconfig

    out: set[str] = set()
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(errors="ignore"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                for sent in re.split(r"(?<=[.!?])\s+|\n\s*\n", ast.get_docstring(node) or ""):
                    sent = " ".join(sent.split())
                    if 30 <= len(sent) <= 250 and sum(c.isalpha() for c in sent) > len(sent) * 0.6:
                        out.add(sent)
    return sorted(out)


def text_vectors(layer: AgentLayer, path: Path, n: int, queries: int) -> Vectors:
    """Model embeddings of n stdlib sentences (passages) and `queries` other ones (queries),
    cached in `path` (.npz): embedding 100k sentences takes about 10 minutes on 2 cores."""
    if path.exists():
        data = np.load(path)
        if len(data["memories"]) >= n and len(data["queries"]) >= queries:
            return data["memories"][:n], data["queries"][:queries], data["texts"][:n].tolist()
    texts = stdlib_sentences()
    random.Random(3).shuffle(texts)
    if len(texts) < n + queries:
        raise SystemExit(f"only {len(texts)} sentences in the standard library's docstrings")
    embed = layer.semantic.embedder.provider.embed_batch  # the model itself, not the cache
    order = sorted(range(n), key=lambda i: len(texts[i]))  # similar lengths pad less
    vecs = np.zeros((n, layer.dims), dtype=np.float32)
    for start in range(0, n, 128):
        rows = order[start : start + 128]
        vecs[rows] = embed([texts[i] for i in rows], mode="passage")
    qvecs = np.asarray(embed(texts[n : n + queries], mode="query"), dtype=np.float32)
    np.savez(path, memories=vecs, queries=qvecs, texts=np.array(texts[:n]))
    return vecs, qvecs, texts[:n]


async def load(layer: AgentLayer, vecs: np.ndarray, contents: list[str], rng: Any) -> None:
    """The vectors as WHO's memories, inserted straight into the tables, then indexed."""
    import pyarrow as pa

    n, dims = vecs.shape
    vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    ids = [str(uuid.uuid4()) for _ in range(n)]
    types = np.array(["fact", "episode", "preference", "context"])[rng.integers(0, 4, n)]
    table = pa.table(
        {
            "memory_id": ids,
            "content": contents,
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


FILTERS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("no filter", {}),
    ("memory_type + min_importance", {"memory_type": "fact", "min_importance": 0.5}),
)


async def bench_search(layer: AgentLayer, data: Vectors, queries: int, rng: Any) -> None:
    vecs, qvecs, contents = data
    n, dims = vecs.shape
    t0 = time.perf_counter()
    await load(layer, vecs, contents, rng)
    load_s = time.perf_counter() - t0
    qvecs = qvecs / np.linalg.norm(qvecs, axis=1, keepdims=True)
    worker = layer.semantic.worker
    real_embed_now = worker.embed_now
    state = {"i": 0, "model": True}

    async def embed_now(texts: list[str], mode: str = "query") -> np.ndarray:
        # The model call for the fresh query text (cache miss) stays in the timing; the
        # search then uses the data set's own query vector, so results can be checked.
        if state["model"]:
            await real_embed_now(texts, mode)
        return qvecs[state["i"] % len(qvecs)][None, :]

    worker.embed_now = embed_now
    real_read_best = ms.read_best
    rows_read: list[int] = []

    def read_best(*args: Any) -> Any:  # counts the rows a search scores exactly
        out = real_read_best(*args)
        rows_read.append(len(out))
        return out

    ms.read_best = read_best
    kind = "SYNTHETIC clustered" if contents[0].startswith("synthetic") else "stdlib sentences"
    print(f"\n{n} memories of one agent ({kind}, {dims} dims; loaded + indexed in {load_s:.1f} s)")
    try:
        for label, kw in FILTERS:
            full, bare, model = [], [], []
            for i in range(queries):
                state["i"] = i
                text = f"what do we know about subject {i} {uuid.uuid4().hex[:12]}"
                for model_on, lat in ((True, full), (False, bare)):
                    state["model"] = model_on
                    t0 = time.perf_counter()
                    hits = await layer.call("search_memory", WHO, [text], top_k=10, **kw)
                    lat.append(time.perf_counter() - t0)
                    assert len(hits) == 10
                t0 = time.perf_counter()
                fresh = f"what do we know about subject {i} {uuid.uuid4().hex[:12]}"
                await real_embed_now([fresh], "query")  # another text of the same shape
                model.append(time.perf_counter() - t0)
            print(
                f"  search_memory top-10, {label:28s}: p50 {pct(full, 50) * 1000:6.2f} ms"
                f"  p99 {pct(full, 99) * 1000:6.2f} ms with the model call;"
                f" without: p50 {pct(bare, 50) * 1000:5.2f}  p99 {pct(bare, 99) * 1000:6.2f}"
            )
            print(
                f"    model call for a fresh query text alone ({layer.memory.model_name}, via the"
                f" embedding cache): p50 {pct(model, 50) * 1000:5.2f} ms"
                f" = {pct(model, 50) / pct(full, 50):.0%} of the search p50"
            )
        print(
            f"  rows taken per search (of its 50 candidates; row copies in RAM): median"
            f" {statistics.median(rows_read):.0f}, max {max(rows_read)}"
        )
        await bench_recall(layer, qvecs, queries)
    finally:
        worker.embed_now = real_embed_now
        ms.read_best = real_read_best


async def bench_recall(layer: AgentLayer, qvecs: np.ndarray, queries: int) -> None:
    """The index as search uses it (50 candidates, of which the best 10 count) vs exact
    brute force in DuckDB SQL over the same rows, and vs the exact scan in RAM."""
    dims = qvecs.shape[1]
    agent = layer.memory.index.agent(WHO.org_id, WHO.agent_id)
    seq_of: dict[int, str] = dict(
        await layer.db.run(
            lambda cur: cur.execute(f"SELECT seq, memory_id::VARCHAR FROM {T_MEM}").fetchall()
        )
    )
    for label, kw in FILTERS:
        where = RowFilter(time.time(), **kw)
        sql = " AND m.memory_type = ? AND m.importance >= ?" if kw else ""
        recalls, fast_lat, ram_lat, exact_lat = [], [], [], []
        for i in range(min(queries, 50)):
            q = qvecs[i]
            t0 = time.perf_counter()
            seqs = ms.nearest([agent], q, 50, None, where).seqs
            fast_lat.append(time.perf_counter() - t0)
            fast = {seq_of[int(s)] for s in seqs[:10]}
            t0 = time.perf_counter()
            agent.nearest(q, 50, None, where, exact=True)
            ram_lat.append(time.perf_counter() - t0)

            def exact(cur: Any, q: np.ndarray = q, sql: str = sql, kw: dict = kw) -> list[tuple]:
                return cur.execute(
                    f"SELECT v.memory_id::VARCHAR FROM {T_VEC} v JOIN {T_MEM} m USING (memory_id)"
                    f" WHERE m.org_id = ? AND m.agent_id = ?{sql}"
                    f" ORDER BY array_cosine_distance(v.embedding, ?::FLOAT[{dims}]) LIMIT 10",
                    [WHO.org_id, WHO.agent_id, *kw.values(), q.tolist()],
                ).fetchall()

            t0 = time.perf_counter()
            truth = {r[0] for r in await layer.db.run(exact)}
            exact_lat.append(time.perf_counter() - t0)
            recalls.append(len(fast & truth) / 10)
        f50, r50, e50 = (pct(x, 50) * 1000 for x in (fast_lat, ram_lat, exact_lat))
        print(
            f"  nearest, {label:28s}: index p50 {f50:5.2f} ms | exact scan in RAM p50"
            f" {r50:5.2f} ms | exact brute force (DuckDB SQL) p50 {e50:7.2f} ms"
            f" ({e50 / f50:4.0f}x) | recall@10 {statistics.mean(recalls):.4f}"
            f" (min {min(recalls):.1f})"
        )


def ingest_texts(n: int, tag: str) -> list[str]:
    """Short distinct texts, like turns of a conversation (never in the embedding cache)."""
    topics = ("the release", "the budget", "hiring", "the outage", "the roadmap", "pricing")
    return [
        f"{tag} turn {i}: we talked about {topics[i % 6]} and agreed on step {i * 37 % 1009}"
        f" before {uuid.uuid4().hex[:8]}"
        for i in range(n)
    ]


def raw_model_rate(layer: AgentLayer, n: int) -> float:
    """The model alone (no cache, no queue): texts/s at batch 32, on this thread."""
    provider = layer.semantic.embedder.provider
    texts = ingest_texts(n, "raw")
    t0 = time.perf_counter()
    for i in range(0, n, 32):
        provider.embed_batch(texts[i : i + 32], mode="passage")
    return n / (time.perf_counter() - t0)


async def bench_ingest(layer: AgentLayer, n: int, singles: int) -> None:
    """store_memories of n texts until every one is searchable, against the raw model."""
    raw_before = raw_model_rate(layer, min(n, 640))
    t0 = time.perf_counter()
    rows = await layer.call("store_memories", WHO, contents=ingest_texts(n, "wait"), wait=True)
    wait_rate = n / (time.perf_counter() - t0)
    bad = [r for r in rows if r["embedding_status"] != "embedded"]
    t0 = time.perf_counter()
    await layer.call("store_memories", WHO, contents=ingest_texts(n, "bg"))
    returned = time.perf_counter() - t0
    await _drain(layer)
    bg_rate = n / (time.perf_counter() - t0)
    raw_after = raw_model_rate(layer, min(n, 640))
    raw = (raw_before + raw_after) / 2
    journal = layer.journal
    lat: dict[bool, list[float]] = {}
    for journaled in (False, True):  # the transaction path first: the baseline
        journal.enabled = journaled
        lat[journaled] = times = []
        tag = "single-journal" if journaled else "single-tx"
        for i, text in enumerate(ingest_texts(singles, tag)):
            t0 = time.perf_counter()
            await layer.call("store_memory", WHO, [text])
            times.append(time.perf_counter() - t0)
            if i % 32 == 31:
                await _drain(layer)  # one memory at a time, as a steady writer does
        await _drain(layer)
    journal.enabled = True
    print(
        f"raw model, batch 32           : {raw:7.1f} texts/s (before {raw_before:.1f}, after {raw_after:.1f})"
    )
    print(
        f"store_memories wait := true   : {wait_rate:7.1f} texts/s until all searchable"
        f" ({n} texts; {wait_rate / raw:.2f}x the raw model, target >= 0.8x;"
        f" not embedded: {len(bad)})"
    )
    print(
        f"store_memories, then poll     : {bg_rate:7.1f} texts/s until all searchable"
        f" ({bg_rate / raw:.2f}x; the call itself returned in {returned * 1000:.0f} ms)"
    )
    base, fast = lat[False], lat[True]
    print(
        f"store_memory (one, no wait)   : p50 {pct(fast, 50) * 1000:.2f} ms, p99"
        f" {pct(fast, 99) * 1000:.2f} ms in-process, journaled ({singles} calls; target p50"
        f" < 2 ms); transaction path p50 {pct(base, 50) * 1000:.2f} ms, p99"
        f" {pct(base, 99) * 1000:.2f} ms ({pct(base, 50) / pct(fast, 50):.1f}x)"
    )


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--stores", type=int, default=300)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--hash", action="store_true", help="hash embedder instead of the model")
    ap.add_argument("--precision", choices=("fp32", "int8"), default="fp32")
    ap.add_argument(
        "--ingest",
        type=int,
        nargs="?",
        const=2000,
        help="only the bulk-ingest figures: store_memories of N texts (default 2000)",
    )
    ap.add_argument(
        "--text-vectors",
        type=Path,
        help="search model embeddings of stdlib docstring sentences instead of synthetic"
        " vectors, cached in this .npz (built on first use: ~10 min for 100k)",
    )
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        provider = "hash" if args.hash else "onnx"
        engine, layer = await open_layer(Path(tmp), provider, args.precision)
        try:
            print(f"model: {layer.memory.model_name}, {os.cpu_count()} CPUs")
            if args.ingest:
                await bench_ingest(layer, args.ingest, args.stores)
                return
            if args.stores > 0:
                await bench_store(layer, args.stores)
                await bench_searchable(layer)
            for n in (int(x) for x in args.sizes.split(",")):
                if args.text_vectors is not None:
                    data = text_vectors(layer, args.text_vectors, n, args.queries)
                else:
                    data = synthetic(n, layer.dims, args.queries, rng)
                await bench_search(layer, data, args.queries, rng)
        finally:
            await close_layer(engine, layer)


if __name__ == "__main__":
    asyncio.run(main())
