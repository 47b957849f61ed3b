"""Bulk append of session events including their embedding, against the raw model.

    python bench/session_bulk.py [--events 2000] [--batch 32]

`--events` distinct short turns go in through append_events, `--batch` a call, on a
fresh database with the default model; the clock stops when the last one is embedded
in the session index (the background pump, as a real agent loop has it), so the rate is
events/s written and searchable by vector. The baseline, in the same run: the raw
model's texts/s at batch 32 (bench/embed_column.py's plain onnxruntime loop) over texts
of the same shape, measured before and after; the ratio is against their mean (the
issue's target: at least 0.8x).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from embed_column import raw_rate  # noqa: E402
from memory import close_layer, open_layer  # noqa: E402
from sessions import CITIES, FILLER, WHO  # noqa: E402

from proxy.agent.sessions.tables import INDEX  # noqa: E402
from proxy.embedding import ensure_default_model, model_cache_dir  # noqa: E402


def texts(n: int, tag: str) -> list[str]:
    return [f"{FILLER[i % len(FILLER)]} {CITIES[i % len(CITIES)]} {tag}{i}" for i in range(n)]


async def bulk(layer, n: int, batch: int) -> float:
    """Seconds from the first append_events call until every event is embedded."""
    await layer.call("create_session", WHO, app_name="bulk", user_id="u", session_id="bulk")
    said = texts(n, "turn")

    def pending(cur: duckdb.DuckDBPyConnection) -> int:
        return cur.execute(
            f"SELECT count(*) FROM {INDEX} WHERE session_id = 'bulk' AND embedding IS NULL"
        ).fetchone()[0]

    t0 = time.perf_counter()
    for i in range(0, n, batch):
        events = [
            {"author": "user", "message": {"role": "user", "parts": [{"type": "text", "text": t}]}}
            for t in said[i : i + batch]
        ]
        await layer.call("append_events", WHO, session_id="bulk", events=events)
    written = time.perf_counter() - t0
    while await layer.db.run(pending):
        await asyncio.sleep(0.02)
    took = time.perf_counter() - t0
    print(f"append_events of {n} events, {batch} a call: written in {written:.1f} s, "
          f"all embedded after {took:.1f} s = {n / took:.1f} events/s")  # fmt: skip
    return took


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()
    model_dir = ensure_default_model(model_cache_dir())
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    sample = texts(640, "raw")
    before = raw_rate(model_dir, sample)
    print(f"raw model before: {before:.1f} texts/s (batch 32)")
    with tempfile.TemporaryDirectory() as d:
        engine, layer = await open_layer(Path(d), "onnx")
        try:
            took = await bulk(layer, args.events, args.batch)
        finally:
            await close_layer(engine, layer)
    after = raw_rate(model_dir, sample)
    mean = (before + after) / 2
    rate = args.events / took
    print(f"raw model after: {after:.1f} texts/s; bulk append with embedding {rate:.1f} "
          f"events/s = {rate / mean:.2f}x the mean {mean:.1f} (target >= 0.8x; load average "
          f"{os.getloadavg()[0]:.1f})")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
