"""EmbeddingWorker: batching, flush interval, immediate path, event loop never blocked."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest

from proxy.embedding import EmbeddingWorker, HashEmbedder


class Slow(HashEmbedder):
    """Records each model call (texts, mode, thread) and sleeps like a real model."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__(8)
        self.delay = delay
        self.batches: list[tuple[list[str], str, str]] = []

    def embed_batch(self, texts, *, mode="passage"):
        self.batches.append((list(texts), mode, threading.current_thread().name))
        time.sleep(self.delay)  # blocking, as onnxruntime is
        return super().embed_batch(texts, mode=mode)


def run(coro):
    return asyncio.run(coro)


def test_submits_are_batched_up_to_batch_size():
    async def main():
        p = Slow()
        async with EmbeddingWorker(p, batch_size=4, flush_interval_ms=5000) as w:
            t0 = time.monotonic()
            res = await asyncio.gather(*(w.submit([f"t{i}"]) for i in range(8)))
            took = time.monotonic() - t0
        return p, res, took

    p, res, took = run(main())
    assert [len(b[0]) for b in p.batches] == [4, 4]  # flushed by size, not the 5 s interval
    assert took < 2.0
    for i, r in enumerate(res):
        assert r.shape == (1, 8) and np.array_equal(r[0], HashEmbedder(8).embed(f"t{i}"))
    assert all(b[2].startswith("hati-embed") for b in p.batches)


def test_flush_interval_sends_a_partial_batch():
    async def main():
        p = Slow()
        async with EmbeddingWorker(p, batch_size=100, flush_interval_ms=150) as w:
            t0 = time.monotonic()
            a, b = await asyncio.gather(w.submit(["x", "y"]), w.submit(["z"], "query"))
            return p, a, b, time.monotonic() - t0

    p, a, b, took = run(main())
    assert 0.12 <= took < 1.5
    assert a.shape == (2, 8) and b.shape == (1, 8)
    assert sorted((tuple(t), m) for t, m, _ in p.batches) == [
        (("x", "y"), "passage"),
        (("z",), "query"),
    ]


def test_embed_now_is_immediate_and_does_not_block_the_loop():
    async def main():
        p = Slow(delay=0.3)
        async with EmbeddingWorker(p, batch_size=32, flush_interval_ms=10_000) as w:
            ticks = 0

            async def heartbeat():
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            hb = asyncio.create_task(heartbeat())
            t0 = time.monotonic()
            vecs = await w.embed_now(["q1", "q2", "q3"], "query")
            took = time.monotonic() - t0
            hb.cancel()
            return p, vecs, took, ticks

    p, vecs, took, ticks = run(main())
    assert vecs.shape == (3, 8)
    assert took < 2.0  # not held for the 10 s flush interval
    assert len(p.batches) == 1 and p.batches[0][1] == "query"  # one batch for all markers
    assert ticks >= 10  # the loop kept running while the model worked


def test_stop_completes_pending_work_and_rejects_new():
    async def main():
        p = Slow()
        w = EmbeddingWorker(p, batch_size=100, flush_interval_ms=60_000)
        await w.start()
        fut = asyncio.ensure_future(w.submit(["late"]))
        await asyncio.sleep(0.05)
        t0 = time.monotonic()
        await w.stop()
        assert time.monotonic() - t0 < 2.0  # did not wait for the 60 s interval
        out = await fut
        with pytest.raises(RuntimeError):
            await w.submit(["after stop"])
        with pytest.raises(RuntimeError):
            await w.embed_now(["after stop"])
        return out

    assert run(main()).shape == (1, 8)


def test_model_errors_reach_every_waiting_caller():
    class Broken(HashEmbedder):
        def embed_batch(self, texts, *, mode="passage"):
            raise RuntimeError("model exploded")

    async def main():
        async with EmbeddingWorker(Broken(8), batch_size=2, flush_interval_ms=50) as w:
            results = await asyncio.gather(w.submit(["a"]), w.submit(["b"]), return_exceptions=True)
            return results

    results = run(main())
    assert all(isinstance(r, RuntimeError) and "exploded" in str(r) for r in results)


def test_env_defaults(monkeypatch):
    monkeypatch.delenv("HATIDATA_EMBEDDING_BATCH_SIZE", raising=False)
    monkeypatch.delenv("HATIDATA_EMBEDDING_FLUSH_INTERVAL_MS", raising=False)
    w = EmbeddingWorker(HashEmbedder(8))
    assert (w.batch_size, w.flush_interval) == (32, 1.0)
    monkeypatch.setenv("HATIDATA_EMBEDDING_BATCH_SIZE", "8")
    monkeypatch.setenv("HATIDATA_EMBEDDING_FLUSH_INTERVAL_MS", "250")
    w = EmbeddingWorker(HashEmbedder(8))
    assert (w.batch_size, w.flush_interval) == (8, 0.25)
    monkeypatch.setenv("HATIDATA_EMBEDDING_BATCH_SIZE", "lots")
    with pytest.raises(ValueError, match="HATIDATA_EMBEDDING_BATCH_SIZE"):
        EmbeddingWorker(HashEmbedder(8))


def test_a_query_ends_the_bulk_pass_in_progress_which_then_runs_again(tiny_model_dir):
    """A column fill's model pass is ended (onnxruntime's terminate flag) when a query
    starts embedding, and run again after it: the fill still gets every right vector."""
    from proxy.embedding.onnx_embedder import OnnxEmbedder

    model = OnnxEmbedder(tiny_model_dir)
    texts = [f"row {i} about billing and refunds" for i in range(8)]
    expected = model.embed_batch(texts)

    class QueryArrives:
        """The model, with a query starting during the first pass (on another thread)."""

        def __init__(self, gate):
            self.gate, self.calls, self.dimensions = gate, 0, model.dimensions

        def embed_batch(self, batch, *, mode="passage"):
            self.calls += 1
            if self.calls == 1:
                self.gate.enter()  # the query's embedding starts now...
                threading.Timer(0.2, self.gate.leave).start()  # ...and ends soon
            return model.embed_batch(batch, mode=mode)

    async def main():
        w = EmbeddingWorker(model)
        async with w:
            w.bulk.provider = fake = QueryArrives(w.gate)
            t0 = time.monotonic()
            got = await asyncio.to_thread(w.bulk.embed_batch, texts)
            return fake, w.bulk.restarts, got, time.monotonic() - t0

    fake, restarts, got, took = run(main())
    assert restarts == 1 and fake.calls == 2  # ended once, then run to its end
    assert took >= 0.15  # the second run waited for the query to finish
    np.testing.assert_allclose(got, expected, atol=1e-6)


def test_immediate_requests_arriving_together_share_one_model_pass():
    """Searches from many connections each embed their query at once: those arriving
    while a pass runs go together in the next one (any thread, any event loop), and
    each caller gets exactly its own vectors."""
    p = Slow(delay=0.3)
    plain = HashEmbedder(8)

    async def main():
        async with EmbeddingWorker(p) as w:
            first = asyncio.create_task(w.embed_now(["first"], "query"))
            await asyncio.sleep(0.1)  # the first pass is running now
            # one more from another thread's own event loop, as a client connection's
            other: list[np.ndarray] = []
            t = threading.Thread(
                target=lambda: other.append(asyncio.run(w.embed_now(["x", "y"], "query")))
            )
            t.start()
            rest = await asyncio.gather(*(w.embed_now([f"q{i}"], "query") for i in range(5)))
            await asyncio.to_thread(t.join)
            return await first, rest, other[0], w.now.passes

    t0 = time.monotonic()
    first, rest, other, passes = run(main())
    took = time.monotonic() - t0
    assert np.allclose(first, plain.embed_batch(["first"], mode="query"))
    for i, vec in enumerate(rest):
        assert np.allclose(vec, plain.embed_batch([f"q{i}"], mode="query"))
    assert np.allclose(other, plain.embed_batch(["x", "y"], mode="query"))
    assert passes == 2, p.batches  # not 7 passes one after another
    assert sorted(p.batches[1][0]) == sorted(["x", "y"] + [f"q{i}" for i in range(5)])
    assert took < 1.5  # two 0.3 s passes, not seven


def test_a_failing_text_fails_only_its_own_caller_in_a_shared_pass():
    class Picky(Slow):
        def embed_batch(self, texts, *, mode="passage"):
            if "bad" in texts:
                raise ValueError("cannot embed 'bad'")
            return super().embed_batch(texts, mode=mode)

    async def main():
        p = Picky(delay=0.2)
        async with EmbeddingWorker(p) as w:
            first = asyncio.create_task(w.embed_now(["first"], "query"))
            await asyncio.sleep(0.05)
            return await asyncio.gather(
                first,
                w.embed_now(["good"], "query"),
                w.embed_now(["bad"], "query"),
                return_exceptions=True,
            )

    first, good, bad = run(main())
    assert first.shape == (1, 8) and good.shape == (1, 8)
    assert isinstance(bad, ValueError) and "cannot embed 'bad'" in str(bad)
