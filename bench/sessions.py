"""Conversation sessions: evidence recall of session search, append and search latency,
index rebuild against the raw model, each with its baseline in the same run.

    python bench/sessions.py [--users 40] [--turns 60] [--events 20000] [--rebuild 2000]

The agent layer runs in process (the same code the server runs, without the wire), on
a fresh database with the default model (all-MiniLM-L6-v2).

1. recall@10: `--users` users, each with sessions of `--turns` filler turns and six
   planted facts (where they live, their pet, an allergy, their employer, a locker
   code such as QX-7731, and what a made-up "Dr Quillfeather3" said) in random
   sessions. Per user six questions: four paraphrased with no word of the fact ("Which
   town is home for me these days?"), the bare code, and "When is my dentist
   appointment with Dr Quillfeather3?", whose answer shares only the name while a fifth
   of the filler is dentist-appointment small talk (each turn with its own day and
   hour) closer in meaning. Searched by user, top 10, mode vector, keyword and hybrid:
   the share of questions whose fact is found. Then the same turns stored as memories
   (one agent per user): the cosine top 10, the BM25 top 10 and search_memory.
2. append_event p50 (in process) against a plain DuckDB INSERT of the same row.
3. search top-10 p50 at `--events` events (rows with synthetic unit vectors inserted
   directly into the index), each with a fresh query text (its model call included).
4. rebuild of `--rebuild` events (written straight into the events table): events/s
   against the raw model's texts/s at batch 32 (bench/embed_column.py's plain
   onnxruntime loop), same run, with progress. `--parts` picks what runs (`memrecall`:
   only the memory half of 1., the conversation stored as memories, no sessions).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from embed_column import raw_rate  # noqa: E402
from memory import close_layer, open_layer, pct  # noqa: E402

from proxy.agent.sessions.tables import EVENTS, INDEX  # noqa: E402
from proxy.core.identity import Identity  # noqa: E402
from proxy.embedding import ensure_default_model, model_cache_dir  # noqa: E402

WHO = Identity("local", "bench-sessions")
CITIES = ["Porto", "Tallinn", "Kraków", "Valparaíso", "Nagoya", "Winnipeg", "Accra", "Bergen"]
PETS = ["Biscuit", "Marmalade", "Pixel", "Juniper", "Waffles", "Noodle", "Pepper", "Comet"]
FOODS = ["peanuts", "shellfish", "sesame", "gluten", "soy", "kiwi", "mustard", "lupin"]
FIRMS = ["Nordwind Logistics", "Helix Biotech", "Quarry & Sons", "Bluefin Analytics"]
FACTS = (
    ("I relocated to {city} last month.", "Which town is home for me these days?"),
    ("My dog is called {pet}.", "What name did I give my puppy?"),
    ("I cannot eat {food}, they make me sick.", "Which ingredient am I allergic to?"),
    ("I work for {firm} as an engineer.", "Who is my employer?"),
    ("My locker code is {code}.", "{code}"),
    # Rare word shared, meaning not: the answer talks of a name, the question (and the
    # filler's dentist small talk) of appointments; only the name ties them.
    ("{doc} said the crown can wait until spring.", "When is my dentist appointment with {doc}?"),
)
DOCTORS = ["Quillfeather", "Vantongeren", "Okonkwo-Reyes", "Thistlewood", "Abernathy-Vance"]
FILLER = [
    "Can you move the meeting to Thursday afternoon?",
    "The weather looks rainy for the whole week.",
    "Please summarise the quarterly report in three bullet points.",
    "I live for the weekends, honestly.",
    "The company picnic was fun this year.",
    "What is the name of that song from the advert?",
    "Remind me to call the plumber tomorrow.",
    "Which train gets me to the airport fastest?",
    "My name is on the list for the conference.",
    "Home office setup: which monitor arm do you recommend?",
    "Translate 'good morning' into Portuguese.",
    "Order more printer paper for the office.",
    "How long should I boil an egg?",
    "Book a table for four on Saturday.",
    "Is the code review done yet?",
]
# Appointment small talk close in meaning to the rare-word questions, each turn different
# (a day and a time): near-duplicates, as real conversations repeat themselves.
DENTIST = [
    "I need to book a dentist appointment for {day} at {hour}.",
    "My dentist appointment is on {day} at {hour}.",
    "Can you move my dentist appointment to {day} at {hour}?",
    "Remind me about the dentist appointment on {day} at {hour}.",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]


def code(rng: random.Random) -> str:
    return f"{rng.choice('QXZJK')}{rng.choice('QXZJK')}-{rng.randint(1000, 9999)}"


def filler(rng: random.Random) -> str:
    """Small talk, a third of it with codes of other things (tickets, parcels, rooms)."""
    if rng.random() < 0.2:
        hour = f"{rng.randint(8, 17)}:{rng.choice(['00', '15', '30', '45'])}"
        return rng.choice(DENTIST).format(day=rng.choice(DAYS), hour=hour)
    if rng.random() < 0.33:
        thing = rng.choice(["ticket", "parcel tracking number", "room", "invoice", "flight"])
        return f"The {thing} is {code(rng)}, please note it."
    return rng.choice(FILLER)


def unit(rng: np.random.Generator, n: int, dims: int) -> np.ndarray:
    v = rng.standard_normal((n, dims)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


async def bench_recall(
    layer, users: int, turns: int, rng: random.Random, sessions_too: bool = True
) -> dict:
    """Session search recall; returns the conversation for the memory recall check
    (only that, without sessions, when not `sessions_too`: part `memrecall`)."""
    answers: list[tuple[str, str, str, str]] = []  # (user, question, session:seq, kind)
    said: dict[str, list[str]] = {}  # user -> texts in order
    fact_text: dict[str, str] = {}  # session:seq -> the fact's text
    for u in range(users):
        user = f"user{u}"
        values = {
            "city": rng.choice(CITIES),
            "pet": rng.choice(PETS),
            "food": rng.choice(FOODS),
            "firm": rng.choice(FIRMS),
            "code": code(rng),
            "doc": f"Dr {rng.choice(DOCTORS)}{u}",
        }
        sessions = [f"{user}-s{i}" for i in range(3)]
        for sid in sessions if sessions_too else ():
            await layer.call("create_session", WHO, app_name="bench", user_id=user, session_id=sid)
        plan = {rng.randrange(turns * len(sessions)): f for f in FACTS}
        while len(plan) < len(FACTS):  # two facts drew one slot: draw again
            plan[rng.randrange(turns * len(sessions))] = FACTS[len(plan)]
        for slot in range(turns * len(sessions)):
            sid = sessions[slot % len(sessions)]
            fact = plan.get(slot)
            text = fact[0].format(**values) if fact else filler(rng)
            said.setdefault(user, []).append(text)
            msg = {"role": "user", "parts": [{"type": "text", "text": text}]}
            row = {"seq": slot}
            if sessions_too:
                row = (await layer.call("append_event", WHO, session_id=sid, author="user",
                                        message=msg))[0]  # fmt: skip
            if fact:
                fact_text[f"{sid}:{row['seq']}"] = text
                kind = {FACTS[-2][0]: "code", FACTS[-1][0]: "rare word"}.get(fact[0], "paraphrase")
                answers.append((user, fact[1].format(**values), f"{sid}:{row['seq']}", kind))
    if not sessions_too:
        return {"answers": answers, "said": said, "fact_text": fact_text}
    while await layer.sessions.index.embed_pending(256):
        pass
    print(f"recall@10 over {len(answers)} questions ({users} users x 6), "
          f"{users * turns * 3} events:")  # fmt: skip
    kinds = ("paraphrase", "code", "rare word")
    for mode in ("vector", "keyword", "hybrid"):
        found = {k: 0 for k in kinds}
        totals = {k: 0 for k in kinds}
        for user, question, where, kind in answers:
            hits = await layer.call("search_sessions", WHO, query=question, app_name="bench",
                                    user_id=user, top_k=10, mode=mode)  # fmt: skip
            totals[kind] += 1
            found[kind] += any(f"{h['session_id']}:{h['seq']}" == where for h in hits)
        total = sum(found.values()) / len(answers)
        parts = ", ".join(f"{k} {found[k] / totals[k]:.2f}" for k in kinds)
        print(f"  {mode:8s} {total:.3f}  ({parts})")
    return {"answers": answers, "said": said, "fact_text": fact_text}


async def bench_memory_recall(layer, convo: dict) -> None:
    """The same conversation stored as memories (one agent per user, every turn a
    memory): recall@10 of the cosine top 10 (the index alone), the BM25 top 10 (the
    keyword index alone) and search_memory (the two rankings fused)."""
    from memory_search_helpers import keyword_top, vector_top

    where: dict[tuple[str, str], str] = {}  # (user, text) -> memory id
    for user, texts in convo["said"].items():
        who = Identity("local", f"mem-{user}")
        for text in texts:
            out = (await layer.call("store_memory", who, [text]))[0]
            where[(user, text)] = out["memory_id"]
    while sum(s.get("pending", 0) for s in [await pending(layer, u) for u in convo["said"]]):
        await asyncio.sleep(0.05)
    kinds = ("paraphrase", "code", "rare word")
    res = {m: {k: [0, 0] for k in kinds} for m in ("vector", "keyword", "hybrid")}
    for user, question, ref, kind in convo["answers"]:
        who = Identity("local", f"mem-{user}")
        fact = convo["fact_text"][ref]
        want = where[(user, fact)]
        got = {
            "vector": await vector_top(layer, who, question, 10),
            "keyword": keyword_top(layer, who, question, 10),
            "hybrid": [
                h["memory_id"] for h in await layer.call("search_memory", who, [question], top_k=10)
            ],
        }
        for mode, ids in got.items():
            res[mode][kind][0] += want in ids
            res[mode][kind][1] += 1
    print(f"memory search recall@10 over {len(convo['answers'])} questions:")
    for mode, per in res.items():
        total = sum(v[0] for v in per.values()) / max(1, sum(v[1] for v in per.values()))
        parts = ", ".join(f"{k} {v[0] / max(1, v[1]):.2f}" for k, v in per.items())
        print(f"  {mode:8s} {total:.3f}  ({parts})")


async def pending(layer, user: str) -> dict:
    who = Identity("local", f"mem-{user}")
    s = (await layer.call("memory_embedding_stats", who))[0]
    return {"pending": s["total_pending"]}


async def bench_append(layer, n: int) -> None:
    await layer.call("create_session", WHO, app_name="lat", user_id="u", session_id="lat")
    msg = {"role": "user", "parts": [{"type": "text", "text": "a short turn of a chat"}]}
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        await layer.call("append_event", WHO, session_id="lat", author="user", message=msg)
        times.append((time.perf_counter() - t0) * 1000)
    con = duckdb.connect()
    con.execute("CREATE TABLE e (s VARCHAR, seq BIGINT, m JSON, PRIMARY KEY (s, seq))")
    base = []
    for i in range(n):
        t0 = time.perf_counter()
        con.execute("INSERT INTO e VALUES ('lat', ?, ?::JSON)", [i, '{"role": "user"}'])
        base.append((time.perf_counter() - t0) * 1000)
    print(f"append_event p50 {statistics.median(times):.2f} ms, p99 {pct(times, 99):.2f} ms "
          f"(in process; plain DuckDB INSERT p50 {statistics.median(base):.3f} ms)")  # fmt: skip
    await layer.call("create_session", WHO, app_name="lat", user_id="u", session_id="bulk")
    t0 = time.perf_counter()
    for _ in range(0, n, 32):
        await layer.call("append_events", WHO, session_id="bulk", events=[
            {"author": "user", "message": msg}] * 32)  # fmt: skip
    rate = (n // 32 + (n % 32 > 0)) * 32 / (time.perf_counter() - t0)
    one = 1000 / statistics.median(times)
    print(f"append_events, 32 a call: {rate:.0f} events/s written (append_event one at a time:"
          f" {one:.0f}/s at its p50; embedding not included)")  # fmt: skip


BIG = Identity("local", "bench-sessions-big")  # its own agent: loaded on first search


async def bench_search(layer, events: int, queries: int) -> None:
    rng = np.random.default_rng(7)
    dims = layer.dims
    vecs = unit(rng, events, dims)
    texts = [FILLER[i % len(FILLER)] + f" ({i})" for i in range(events)]

    def load(cur: duckdb.DuckDBPyConnection) -> None:
        import pyarrow as pa

        n = len(texts)
        table = pa.table({
            "session_id": [f"big-{i // 100}" for i in range(n)],
            "seq": list(range(n)),
            "text": texts,
            "embedding": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), dims),
        })  # fmt: skip
        cur.register("_big", table)
        cur.execute(
            f"INSERT INTO {INDEX} SELECT 'local', 'bench-sessions-big', session_id, seq, "
            "session_id || ':' || seq, 'big', 'u', 'user', now(), text, lower(text), "
            f"embedding::FLOAT[{dims}] FROM _big"
        )
        cur.unregister("_big")

    await layer.db.run(load)
    t0 = time.perf_counter()
    await layer.call("search_sessions", BIG, query="warm up", app_name="big", top_k=10)
    print(f"first search (loads {events} events into RAM): {time.perf_counter() - t0:.1f} s")
    times = []
    for i in range(queries):
        t0 = time.perf_counter()
        await layer.call("search_sessions", BIG, query=f"reschedule the meeting {i}",
                         app_name="big", top_k=10)  # fmt: skip
        times.append((time.perf_counter() - t0) * 1000)
    print(f"search_sessions top-10 at {events} events: p50 {statistics.median(times):.1f} ms, "
          f"p99 {pct(times, 99):.1f} ms (hybrid, fresh query texts)")  # fmt: skip


async def bench_rebuild(layer, n: int, raw: float) -> float:
    """`n` events written straight into the events table (appending them one by one is
    bench_append's subject), then the scope's index rebuilt from them."""
    await layer.call("create_session", WHO, app_name="rb", user_id="u", session_id="rb")
    filler = [f"{f} {c}" for f in FILLER for c in CITIES]

    def load(cur: duckdb.DuckDBPyConnection) -> None:
        cur.execute(
            f"INSERT INTO {EVENTS} SELECT 'local', 'bench-sessions', 'rb', i, 'rb-' || i, NULL, "
            "'user', NULL, json_object('role', 'user', 'parts', [json_object('type', 'text', "
            "'text', ($1::VARCHAR[])[1 + (hash(i) % len($1))::BIGINT] || ' ' || i)]), "
            "'{}'::JSON, '{}'::JSON, now() FROM range(1, $2 + 1) t(i)",
            [filler, n],
        )

    await layer.db.run(load)

    def progress(done: int, total: int) -> None:
        if done == total or done % 4096 < 512:
            print(f"  rebuild: {done}/{total} embedded", flush=True)

    t0 = time.perf_counter()
    out = await layer.sessions.index.rebuild(WHO, "rb", None, progress=progress)
    took = time.perf_counter() - t0
    rate = out["events_embedded"] / took
    print(f"rebuild of {out['events_indexed']} events: {took:.1f} s = {rate:.1f} events/s = "
          f"{rate / raw:.2f}x the raw model's {raw:.1f} texts/s (target >= 0.8x)")  # fmt: skip
    await check_rebuilt(layer, n)
    return took


async def check_rebuilt(layer, n: int) -> None:
    """The rebuilt index is what the append path gives: every event indexed once, a
    sample's vectors equal to the model's vector of its text, and a search for an
    event's exact words finds it first."""
    rng = random.Random(5)
    sample = rng.sample(range(1, n + 1), min(100, n))

    def read(cur: duckdb.DuckDBPyConnection) -> tuple[int, list[tuple]]:
        count = cur.execute(
            f"SELECT count(*), count(DISTINCT seq) FROM {INDEX} WHERE session_id = 'rb'"
        ).fetchone()
        rows = cur.execute(
            f"SELECT seq, text, embedding FROM {INDEX} WHERE session_id = 'rb' "
            "AND seq IN (SELECT unnest(?::BIGINT[])) ORDER BY seq",
            [sample],
        ).fetchall()
        return count, rows

    (total, distinct), rows = await layer.db.run(read)
    fresh = np.asarray(await layer.semantic.worker.embed_now([r[1] for r in rows], "passage"))
    got = np.asarray([r[2] for r in rows], np.float32)
    cos = np.sum(got * fresh, axis=1) / np.linalg.norm(got, axis=1) / np.linalg.norm(fresh, axis=1)
    first = 0
    for seq, text, _ in rows[:20]:
        hits = await layer.call("search_sessions", WHO, query=text, app_name="rb", top_k=10)
        first += bool(hits) and hits[0]["seq"] == seq
    ok = total == distinct == n and len(rows) == len(sample) and cos.min() > 0.999
    print(f"  rebuilt index: {total} rows for {n} events, sample of {len(rows)} vectors "
          f"min cosine to a fresh embedding {cos.min():.5f}, exact-text search finds the "
          f"event first {first}/20: {'same as the append path' if ok else 'DIFFERS'}")  # fmt: skip


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--users", type=int, default=40)
    ap.add_argument("--turns", type=int, default=100)
    ap.add_argument("--appends", type=int, default=500)
    ap.add_argument("--events", type=int, default=20000)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--rebuild", type=int, default=2000)
    ap.add_argument("--parts", default="recall,append,search,rebuild", help="which to run")
    args = ap.parse_args()
    import os

    model_dir = ensure_default_model(model_cache_dir())
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as d:
        engine, layer = await open_layer(Path(d), "onnx")
        try:
            parts = set(args.parts.split(","))
            if "recall" in parts or "memrecall" in parts:
                rng = random.Random(11)
                convo = await bench_recall(layer, args.users, args.turns, rng, "recall" in parts)
                await bench_memory_recall(layer, convo)
            if "append" in parts:
                await bench_append(layer, args.appends)
            if "search" in parts:
                await bench_search(layer, args.events, args.queries)
            if "rebuild" in parts:
                # The raw model's rate before and after (the machine is shared: its load
                # moves during a long rebuild); the ratio is against their mean.
                sample = [f"{random.choice(FILLER)} {i}" for i in range(640)]
                raw = raw_rate(model_dir, sample)
                took = await bench_rebuild(layer, args.rebuild, raw)
                after = raw_rate(model_dir, sample)
                mean = (raw + after) / 2
                print(f"raw model after the rebuild: {after:.1f} texts/s; against the mean "
                      f"{mean:.1f}: {args.rebuild / took / mean:.2f}x")  # fmt: skip
        finally:
            await close_layer(engine, layer)


if __name__ == "__main__":
    asyncio.run(main())
