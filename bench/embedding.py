"""Embedding throughput: OnnxEmbedder vs a plain onnxruntime + tokenizers loop, same run.

    python bench/embedding.py [--model-dir DIR] [--threads 1] [--n 500] [--rounds 2]
                              [--compare-precision]

Both sides use the same model files, the same SessionOptions (threads, spinning off,
ORT_ENABLE_ALL) and do the same work per batch: tokenize with truncation, pad, run,
pool, L2-normalise (the ratio column). The last column is how a server calls it: the whole
corpus in one call, sorted by length and cut into batches of at most `batch` rows and
1024 padded tokens. Corpora: ~12-token and ~100-token synthetic sentences. Prints texts/s
at batch 1, 8 and 32 and the ratio (target >= 0.9x), then the cost of cache hits.
Without --model-dir the default model is used (installed offline on first run).

--compare-precision compares fp32 with int8 (the quantized copy, made once) instead:
per-text latency (p50) of short queries, texts/s for lists of 32 texts and for a whole
corpus in one call (int8 runs one text per forward pass: see onnx_embedder.py), and the
cosine similarity of int8 vectors to fp32 vectors on real sentences (min / mean).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from proxy.embedding import CachedEmbedder, ensure_default_model, model_cache_dir  # noqa: E402
from proxy.embedding.modelconfig import load_model_config  # noqa: E402
from proxy.embedding.onnx_embedder import (  # noqa: E402
    DEFAULT_MAX_BATCH_TOKENS,
    OnnxEmbedder,
    session_options,
)
from proxy.embedding.quantize import INT8_FILE  # noqa: E402

VOCAB = (
    "customer billing invoice refund charge account login password reset error server "
    "database query index vector search semantic model latency throughput cache request "
    "payment card bank transfer delivery order package warehouse ticket support agent "
    "dispute policy contract supplier quarterly revenue forecast meeting schedule report"
)
WORDS = VOCAB.split(" ")


def corpus(n: int, words: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = max(3, int(rng.gauss(words, words * 0.15)))
        out.append(" ".join(rng.choice(WORDS) for _ in range(k)).capitalize() + ".")
    return out


class PlainLoop:
    """What a hand-written loop does: encode_batch with padding, run, pool, normalise."""

    def __init__(self, model_dir: Path, threads: int) -> None:
        cfg = load_model_config(model_dir)
        self.pooling, self.normalize = cfg.pooling, cfg.normalize
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.enable_truncation(cfg.max_length)
        self.tok.enable_padding(pad_id=self.tok.token_to_id("[PAD]") or 0)
        self.sess = ort.InferenceSession(
            str(model_dir / "model.onnx"),
            sess_options=session_options(threads),
            providers=["CPUExecutionProvider"],
        )
        self.names = [i.name for i in self.sess.get_inputs()]

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self.sess.run(None, {k: feeds[k] for k in self.names})[0]
        if self.pooling == "cls":
            v = hidden[:, 0]
        else:
            m = mask[:, :, None].astype(np.float32)
            v = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        if self.normalize:
            v = v / np.linalg.norm(v, axis=1, keepdims=True)
        return v.astype(np.float32)


# Real sentences (not word salad) for the int8-vs-fp32 cosine: support tickets, notes,
# questions, facts, code and a few other languages, short and long.
REAL_SENTENCES = [
    "The customer prefers email communication over phone calls",
    "Revenue grew 15% in Q4 driven by the enterprise segment",
    "Our office dog is a golden retriever named Biscuit",
    "The production database runs PostgreSQL 15 on three replicas",
    "Alice is allergic to peanuts",
    "The quarterly board meeting is on the first Friday of March",
    "Deployments are frozen during the holiday season",
    "The CEO flies to Tokyo next week for a partner summit",
    "Invoices are paid within 30 days of receipt",
    "The mobile app crashes on older Android phones",
    "The warehouse in Rotterdam handles all European shipments",
    "Passwords must be rotated every 90 days",
    "I was charged twice on my credit card, please refund",
    "I cannot log in, my password reset link expired",
    "How do I export my invoices as PDF?",
    "My package arrived damaged and the box was wet.",
    "Can I change the delivery address after the order has shipped?",
    "The refund has not shown up on my statement after two weeks.",
    "Why was my account suspended without any warning?",
    "Please cancel my subscription at the end of this billing period.",
    "The weather in Lisbon is sunny and warm today.",
    "A man is playing a guitar on the street.",
    "Quantum entanglement links the states of two particles.",
    "Photosynthesis converts light energy into chemical energy in plants.",
    "The central bank raised interest rates by 25 basis points.",
    "Inflation fell to 2.1% in the third quarter.",
    "To be, or not to be, that is the question.",
    "The API returns HTTP 429 Too Many Requests when rate limited.",
    "Kubernetes pods are scheduled onto nodes by the scheduler.",
    "PostgreSQL uses MVCC to provide snapshot isolation.",
    "The meeting was moved to Thursday at 3pm because the CFO is travelling.",
    "Embeddings map text to vectors so that similar meanings are close together.",
    "Reset your two-factor authentication from the security settings page.",
    "The train to Amsterdam was delayed by forty minutes due to a signal failure.",
    "She finished the marathon in just under four hours.",
    "Add two cups of flour and stir until the batter is smooth.",
    "The museum is closed on Mondays and public holidays.",
    "Our support team answers tickets within one business day.",
    "The new laptop has sixteen gigabytes of memory and a fast SSD.",
    "Water boils at 100 degrees Celsius at sea level.",
    "The contract renews automatically unless cancelled 30 days in advance.",
    "He forgot his umbrella and got soaked on the way home.",
    "The library lends e-books as well as printed books.",
    "Sales of electric cars doubled compared with last year.",
    "The patient reported a mild headache and a slight fever.",
    "Backups run every night at 2 am and are kept for thirty days.",
    "The hotel room had a view of the harbour and the old town.",
    "Our competitor announced a cheaper plan for small businesses.",
    "The intern is learning Rust this summer",
    "Server room temperature must stay below 25 degrees Celsius",
    "SELECT name, email FROM users WHERE created_at > now() - interval '7 days';",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)",
    "Order #12345 shipped on 2024-03-17 via UPS, tracking 1Z999AA10123456784.",
    "Le service client a répondu rapidement à ma demande de remboursement.",
    "Die Lieferung kam einen Tag zu spät, aber vollständig an.",
    "El pedido llegó a tiempo y en perfectas condiciones.",
    "how should I contact this client",
    "sales increase last quarter",
    "what food can she not eat",
    "credential change policy",
    "billing dispute",
    "weather forecast",
    " ".join(
        f"Clause {i}: the supplier shall deliver the goods to the warehouse before noon on day {i}."
        for i in range(1, 12)
    ),
    "The quarterly report shows that operating costs rose faster than revenue, mainly because "
    "of higher energy prices and the new office lease, while headcount stayed flat.",
]


def onnx_path(emb: OnnxEmbedder) -> Path:
    return emb.model_dir / (INT8_FILE if emb.precision == "int8" else "model.onnx")


def p50_latencies_ms(a: OnnxEmbedder, b: OnnxEmbedder, texts: list[str], rounds: int):
    """Median ms per single-text query call of each side, calls interleaved (order flipped
    every text) so background load on a shared machine hits both alike."""
    ta: list[float] = []
    tb: list[float] = []
    flip = False
    for _ in range(rounds):
        for text in texts:
            for side in (1, 0) if flip else (0, 1):
                emb, out = (a, ta) if side == 0 else (b, tb)
                t0 = time.perf_counter()
                emb.embed(text, mode="query")
                out.append((time.perf_counter() - t0) * 1e3)
            flip = not flip
    return statistics.median(ta), statistics.median(tb)


def compare_precision(model_dir: Path, threads: int, n: int, rounds: int) -> None:
    t0 = time.perf_counter()
    q8 = OnnxEmbedder(model_dir, threads=threads, precision="int8")
    ready = time.perf_counter() - t0
    f32 = OnnxEmbedder(model_dir, threads=threads)
    mb = {e.precision: onnx_path(e).stat().st_size / 1e6 for e in (f32, q8)}
    print(f"model {f32.model_name} from {model_dir}; onnxruntime {ort.__version__}, "
          f"intra-op threads {threads}, {rounds} rounds")  # fmt: skip
    print(f"fp32 model.onnx {mb['fp32']:.0f} MB, int8 {INT8_FILE} {mb['int8']:.0f} MB "
          f"(int8 ready in {ready:.1f} s: made now, or checked and reused)")  # fmt: skip
    ratios: dict[str, float] = {}

    short = corpus(min(n, 200), 10, 3)
    for e in (f32, q8):
        e.embed("warm up", mode="query")
    toks = statistics.mean(len(f32.tokenizer.encode(t).ids) for t in short)
    f_ms, q_ms = p50_latencies_ms(f32, q8, short, rounds)
    ratios["query latency p50, fp32/int8"] = f_ms / q_ms
    print(f"\nshort queries ({len(short)} texts, mean {toks:.0f} tokens), one call each, p50:")
    print(f"  fp32 {f_ms:.2f} ms   int8 {q_ms:.2f} ms")

    print("\ntexts/s: embed_batch of 32 texts (interleaved) | whole corpus in one call:")
    for name, words in (("short", 10), ("medium", 90)):
        texts = corpus(n, words, 4 if name == "short" else 5)
        q_rate, f_rate = interleaved(q8.embed_batch, f32.embed_batch, texts, 32, rounds)
        # one big batch, fp32 and int8 alternating (and who goes first) for each round
        q_all, f_all = interleaved(q8.embed_batch, f32.embed_batch, texts, len(texts), rounds)
        ratios[f"{name} batch-32 throughput, int8/fp32"] = q_rate / f_rate
        ratios[f"{name} whole-corpus throughput, int8/fp32"] = q_all / f_all
        print(
            f"  {name:<6} fp32 {f_rate:7.1f}  int8 {q_rate:7.1f}"
            f" | fp32 {f_all:7.1f}  int8 {q_all:7.1f}"
        )

    print(f"\ncosine(int8 vector, fp32 vector), {len(REAL_SENTENCES)} real sentences:")
    for mode in ("passage", "query") if f32.query_prefix else ("passage",):
        a = q8.embed_batch(REAL_SENTENCES, mode=mode)
        b = f32.embed_batch(REAL_SENTENCES, mode=mode)
        cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        print(f"  as {mode:<7}: min {cos.min():.4f}  mean {cos.mean():.4f}")

    print("\nratios (> 1: int8 better):")
    for what, r in ratios.items():
        print(f"  {what:<42} {r:5.2f}x")


def interleaved(
    ours: Callable, plain: Callable, texts: list[str], batch: int, rounds: int
) -> tuple[float, float]:
    """texts/s of each side. Chunks alternate between the sides (and which goes first), so
    load from other processes on a shared machine hits both alike."""
    t_ours = t_plain = 0.0
    flip = False
    for _ in range(rounds):
        for i in range(0, len(texts), batch):
            chunk = texts[i : i + batch]
            for side in (0, 1) if flip else (1, 0):
                t0 = time.perf_counter()
                (ours if side == 0 else plain)(chunk)
                dt = time.perf_counter() - t0
                if side == 0:
                    t_ours += dt
                else:
                    t_plain += dt
            flip = not flip
    n = len(texts) * rounds
    return n / t_ours, n / t_plain


def whole(fn: Callable, texts: list[str]) -> float:
    t0 = time.perf_counter()
    fn(texts)
    return len(texts) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", type=Path, default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n", type=int, default=500, help="texts per corpus")
    ap.add_argument("--rounds", type=int, default=2, help="passes over each corpus")
    ap.add_argument(
        "--compare-precision", action="store_true", help="fp32 vs int8 (see above), then exit"
    )
    args = ap.parse_args()
    model_dir = args.model_dir or ensure_default_model(model_cache_dir())
    if args.compare_precision:
        compare_precision(model_dir, args.threads, args.n, args.rounds)
        return
    ours = OnnxEmbedder(model_dir, threads=args.threads)
    plain = PlainLoop(model_dir, args.threads)
    print(f"model {ours.model_name} ({ours.dimensions} dims) from {model_dir}")
    print(f"onnxruntime {ort.__version__}, intra-op threads {args.threads}, {args.rounds} rounds")
    corpora = {"short": corpus(args.n, 10, 1), "medium": corpus(args.n, 90, 2)}
    for name, texts in corpora.items():
        toks = statistics.mean(len(ours.tokenizer.encode(t).ids) for t in texts)
        print(f"\n{name}: {len(texts)} texts, mean {toks:.0f} tokens")
        print(
            f"{'batch':>5} {'OnnxEmbedder/s':>15} {'plain loop/s':>13} {'ratio':>6}"
            f" {'whole corpus, sorted/s':>23}"
        )
        for batch in (1, 8, 32):
            ours.max_batch = batch
            a = ours.embed_batch(texts[:batch])
            b = plain.embed_batch(texts[:batch])
            assert np.allclose(a, b, atol=1e-4), "the two sides must compute the same vectors"
            # same work as the plain loop: one forward pass per chunk, no token budget
            ours.max_batch_tokens = 1 << 30
            o, p = interleaved(ours.embed_batch, plain.embed_batch, texts, batch, args.rounds)
            # how the server calls it: one list, sorted by length, cut by rows and tokens
            ours.max_batch_tokens = DEFAULT_MAX_BATCH_TOKENS
            w = whole(ours.embed_batch, texts)
            print(f"{batch:>5} {o:>15.1f} {p:>13.1f} {o / p:>5.2f}x {w:>23.1f}")

    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect(str(Path(tmp) / "cache.duckdb"))
        cached = CachedEmbedder(ours, con.cursor())
        text = "billing dispute about a double charge"
        cached.embed(text, mode="query")
        n = 20_000
        t0 = time.perf_counter()
        for _ in range(n):
            cached.embed(text, mode="query")
        lru_us = (time.perf_counter() - t0) / n * 1e6
        cached.embed_batch(corpora["short"][:100])
        cached.clear_memory()  # as after a restart: the DuckDB table answers
        t0 = time.perf_counter()
        cached.embed_batch(corpora["short"][:100])
        table_us = (time.perf_counter() - t0) / 100 * 1e6
        t0 = time.perf_counter()
        ours.embed(text, mode="query")
        model_us = (time.perf_counter() - t0) * 1e6
        print(
            f"\ncache: repeat text (LRU hit) {lru_us:.1f} us/text (target < 50 us); "
            f"after restart (DuckDB table, batch of 100) {table_us:.1f} us/text; "
            f"model call {model_us:.0f} us"
        )


if __name__ == "__main__":
    main()
