"""Vector search: exact scan vs DuckDB's HNSW index, and semantic_rank end to end.

    python bench/vector.py [--sizes 100000,1000000] [--queries 100] [--ef 64,128,256]
                           [--wire-rows 100000] [--skip-wire] [--data uniform|clustered]

1. In-process DuckDB (the engine hatiproxy runs), per size N of random unit vectors
   (384 dims, SYNTHETIC: uniform on the sphere by default, the hardest case for a graph
   index; `--data clustered` puts them around 1,000 centres, closer to real embeddings):
   top-10 by cosine distance with `ORDER BY array_cosine_distance(..) LIMIT 10`, once
   as an exact scan (no index) and once through `CREATE INDEX .. USING HNSW (..)
   WITH (metric = 'cosine')` at several `hnsw_ef_search` values. Prints p50/p99,
   recall@10 of HNSW against the exact answer, the index build time and the on-disk
   size the index adds to the database file (persistence on, as the server runs it).
2. End to end over the wire: a hatiproxy server with a real model, a table of N rows
   with a FLOAT[384] column and an HNSW index, and psycopg running
   `ORDER BY semantic_rank(embedding, '<fresh text>') DESC LIMIT 10`, every query text
   new (so the model runs each time). Prints p50/p99 and, beside it, the model call
   alone and the same ORDER BY with an already-bound vector, so the split is visible.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import duckdb
import duckdb_extensions
import numpy as np
import psycopg

ROOT = Path(__file__).resolve().parents[1]
from hatiserver import start_hatiproxy  # noqa: E402

DIMS = 384
TOP_SQL = "SELECT id FROM items ORDER BY array_cosine_distance(embedding, ?::FLOAT[{d}]) LIMIT 10"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIMS), dtype=np.float32)
    if CENTERS is not None:  # --data clustered: points around topic centres, as texts are
        v = CENTERS[rng.integers(0, len(CENTERS), n)] + 0.6 * v / np.sqrt(DIMS)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v


CENTERS: np.ndarray | None = None


def load_items(con: duckdb.DuckDBPyConnection, rng: np.random.Generator, n: int) -> None:
    import pyarrow as pa

    con.execute(f"CREATE TABLE items (id INTEGER, embedding FLOAT[{DIMS}])")
    step = 100_000
    for start in range(0, n, step):
        vecs = unit_vectors(rng, min(step, n - start))
        chunk = pa.table(
            {
                "id": pa.array(range(start, start + len(vecs)), pa.int32()),
                "embedding": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), DIMS),
            }
        )
        con.register("chunk", chunk)
        con.execute("INSERT INTO items SELECT id, embedding FROM chunk")
        con.unregister("chunk")
    con.execute("CHECKPOINT")


def top10(con: duckdb.DuckDBPyConnection, queries: np.ndarray) -> tuple[list[set], list[float]]:
    sql = TOP_SQL.format(d=DIMS)
    answers, lat = [], []
    for q in queries:
        t0 = time.perf_counter()
        rows = con.execute(sql, [q.tolist()]).fetchall()
        lat.append(time.perf_counter() - t0)
        answers.append({r[0] for r in rows})
    return answers, lat


def bench_size(n: int, queries: int, efs: list[int], tmp: Path) -> None:
    rng = np.random.default_rng(n)
    path = tmp / f"vectors-{n}.duckdb"
    con = duckdb.connect(str(path))
    duckdb_extensions.import_extension("vss")
    con.execute("LOAD vss")
    con.execute("SET hnsw_enable_experimental_persistence = true")
    t0 = time.perf_counter()
    load_items(con, rng, n)
    load_s = time.perf_counter() - t0
    qs = unit_vectors(rng, queries)
    top10(con, qs[:3])  # warm-up
    exact, exact_lat = top10(con, qs)
    size_before = path.stat().st_size
    t0 = time.perf_counter()
    con.execute("CREATE INDEX items_hnsw ON items USING HNSW (embedding) WITH (metric = 'cosine')")
    con.execute("CHECKPOINT")
    build_s = time.perf_counter() - t0
    index_mb = (path.stat().st_size - size_before) / 1e6
    plan = con.execute("EXPLAIN " + TOP_SQL.format(d=DIMS), [qs[0].tolist()]).fetchall()
    assert "HNSW_INDEX_SCAN" in plan[0][1], "the top-10 query does not use the HNSW index"
    print(
        f"\n{n:,} random unit vectors x {DIMS} (SYNTHETIC, {'clustered' if CENTERS is not None else 'uniform'}), {queries} queries;"
        f" loaded in {load_s:.1f} s; HNSW build {build_s:.1f} s, index +{index_mb:.0f} MB on disk"
    )
    e50 = pct(exact_lat, 50) * 1000
    print(
        f"  exact scan (no index)        p50 {e50:8.2f} ms  p99 {pct(exact_lat, 99) * 1000:8.2f} ms"
    )
    for ef in efs:
        con.execute(f"SET hnsw_ef_search = {ef}")
        top10(con, qs[:3])
        got, lat = top10(con, qs)
        recall = statistics.mean(len(g & e) / 10 for g, e in zip(got, exact, strict=True))
        h50 = pct(lat, 50) * 1000
        print(
            f"  HNSW ef_search={ef:<4}          p50 {h50:8.2f} ms  p99 {pct(lat, 99) * 1000:8.2f} ms"
            f"  recall@10 {recall:.3f}  ({e50 / h50:.0f}x faster than exact)"
        )
    con.close()
    path.unlink()
    Path(str(path) + ".wal").unlink(missing_ok=True)


# --- end to end over the wire ---------------------------------------------------------------


def bench_wire(rows: int, queries: int, tmp: Path) -> None:
    proc, port = start_hatiproxy(tmp, database=None, timeout=120)
    dsn = f"host=127.0.0.1 port={port} user=bench dbname=hatidata"
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(
                f"CREATE TABLE docs AS SELECT i AS id, 'doc ' || i AS title,"
                f" list_transform(range({DIMS}), x -> random()::FLOAT - 0.5)::FLOAT[{DIMS}]"
                f" AS embedding FROM range({rows}) t(i)"
            )
            t0 = time.perf_counter()
            conn.execute(
                "CREATE INDEX docs_hnsw ON docs USING HNSW (embedding) WITH (metric = 'cosine')"
            )
            build_s = time.perf_counter() - t0
            sql = "SELECT id, title FROM docs ORDER BY semantic_rank(embedding, %s) DESC LIMIT 10"
            plan = "\n".join(r[-1] for r in conn.execute("EXPLAIN " + sql, ("warm-up",)))
            assert "HNSW_INDEX_SCAN" in plan, plan
            for i in range(3):
                conn.execute(sql, (f"warm-up {i}",)).fetchall()
            lat = []
            for i in range(queries):
                text = f"customer asks about invoice {i} {uuid.uuid4().hex[:8]}"
                t0 = time.perf_counter()
                assert len(conn.execute(sql, (text,)).fetchall()) == 10
                lat.append(time.perf_counter() - t0)
            # The model call alone: a fresh marker with nothing to search.
            model = []
            for i in range(queries):
                t0 = time.perf_counter()
                conn.execute(
                    "SELECT semantic_rank(embedding, %s) FROM docs LIMIT 0",
                    (f"another fresh text {i} {uuid.uuid4().hex[:8]}",),
                ).fetchall()
                model.append(time.perf_counter() - t0)
            # The same search with a repeated text: the embedding comes from the cache.
            cached = []
            for _ in range(queries):
                t0 = time.perf_counter()
                conn.execute(sql, ("customer asks about invoice",)).fetchall()
                cached.append(time.perf_counter() - t0)
        print(f"\nEnd to end over the wire (psycopg 3): {rows:,} rows, HNSW build {build_s:.1f} s")
        for label, xs in (
            ("semantic_rank .. LIMIT 10, fresh text", lat),
            ("  of which: model call (LIMIT 0 query)", model),
            ("semantic_rank .. LIMIT 10, cached text", cached),
        ):
            print(
                f"  {label:40s} p50 {pct(xs, 50) * 1000:7.2f} ms  p99 {pct(xs, 99) * 1000:7.2f} ms"
            )
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--ef", default="64,128,256", help="hnsw_ef_search values to try")
    ap.add_argument("--wire-rows", type=int, default=100_000)
    ap.add_argument("--skip-wire", action="store_true")
    ap.add_argument(
        "--data",
        choices=("uniform", "clustered"),
        default="uniform",
        help="uniform on the sphere (the issue's case) or clustered around 1,000 centres",
    )
    args = ap.parse_args()
    if args.data == "clustered":
        global CENTERS
        c = np.random.default_rng(7).standard_normal((1000, DIMS), dtype=np.float32)
        CENTERS = c / np.linalg.norm(c, axis=1, keepdims=True)
    started = time.perf_counter()
    print(f"{os.cpu_count()} CPUs, DuckDB {duckdb.__version__}, {args.data} vectors")
    with tempfile.TemporaryDirectory(prefix="hati-vec-") as d:
        tmp = Path(d)
        for n in (int(s) for s in args.sizes.split(",") if s):
            bench_size(n, args.queries, [int(e) for e in args.ef.split(",")], tmp)
        if not args.skip_wire:
            bench_wire(args.wire_rows, args.queries, tmp)
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
