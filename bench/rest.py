"""REST control plane overhead: memory create / search over HTTP vs in-process calls.

    python bench/rest.py [--ops 400] [--clients 1,16]

- in-process: `layer.call("store_memory" | "search_memory", identity, ...)` on an
  AgentLayer over its own Engine in this process; N clients = N asyncio tasks.
- REST: a real `hatiproxy serve` subprocess (own fresh database, rate limit off, one
  admin API key so authentication is included), `POST /v1/organizations/local/
  agent-memory` and `GET .../agent-memory/search`; N clients = N threads, each with
  its own keep-alive requests.Session. Client-side JSON and HTTP costs are included.

Both sides use the HASH embedder (deterministic test vectors, no model cost), so the
figures are the price of the HTTP/JSON/auth layer, not of embedding. Stores do not
wait for the background embedding (wait=false on both sides). Per op: ops/s (wall
time of the whole run), p50/p99 latency of single calls, and REST / in-process ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import duckdb
import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.memory import close_layer, open_layer, pct  # noqa: E402
from proxy.access import keys  # noqa: E402
from proxy.core.identity import Identity  # noqa: E402

AGENT = "bench-agent"
WHO = Identity("local", AGENT)
QUERIES = [f"what did the team decide about topic {i}" for i in range(20)]
BASE = "/v1/organizations/local/agent-memory"


def content(worker: int, i: int) -> str:
    return f"memory {worker}-{i}: the team discussed topic {i % 20} and item {i * 31 % 997}"


class Result:
    def __init__(self, wall: float, latencies: list[float]) -> None:
        self.ops = len(latencies) / wall
        self.p50 = pct(latencies, 50) * 1000
        self.p99 = pct(latencies, 99) * 1000


# --- in-process ----------------------------------------------------------------------


async def run_async(clients: int, ops: int, op: Callable[[int, int], Awaitable[None]]) -> Result:
    latencies: list[float] = []

    async def client(w: int) -> None:
        for i in range(w, ops, clients):
            t0 = time.perf_counter()
            await op(w, i)
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(client(w) for w in range(clients)))
    return Result(time.perf_counter() - t0, latencies)


async def in_process(tmp: Path, ops: int, fanouts: list[int]) -> dict[tuple[str, int], Result]:
    engine, layer = await open_layer(tmp, "hash")
    out = {}
    try:

        async def store(w: int, i: int) -> None:
            await layer.call("store_memory", WHO, content=content(w, i), memory_type="semantic")

        async def search(w: int, i: int) -> None:
            await layer.call("search_memory", WHO, query=QUERIES[i % len(QUERIES)], top_k=10)

        await run_async(1, 20, store)  # warm up
        await run_async(1, 20, search)
        for n in fanouts:
            out["create", n] = await run_async(n, ops, store)
        for n in fanouts:
            out["search", n] = await run_async(n, ops, search)
    finally:
        await close_layer(engine, layer)
    return out


# --- REST ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(tmp: Path) -> tuple[subprocess.Popen, str, str]:
    data = tmp / "data"
    data.mkdir(parents=True)
    con = duckdb.connect(str(data / "hatiproxy.duckdb"))  # keys exist before the server
    keys.ensure_schema(con)
    _, secret = keys.create_key(con, "local", role="admin")
    con.close()
    rest = free_port()
    cmd = [
        sys.executable, "-m", "proxy", "serve", "--data-dir", str(data),
        "--port", str(free_port()), "--mcp-port", str(free_port()), "--rest-port", str(rest),
        "--embedding-provider", "hash", "--rate-limit-per-minute", "0",
    ]  # fmt: skip
    log = open(tmp / "server.log", "wb")  # noqa: SIM115 - lives as long as the server
    # open_layer exported HATIDATA_* for the in-process engine; the server gets its own.
    env = {k: v for k, v in os.environ.items() if not k.startswith("HATIDATA_")}
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{rest}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(url + "/health", timeout=1).ok:
                return proc, url, secret
        except requests.ConnectionError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"server did not start; see {tmp / 'server.log'}")


def run_threads(clients: int, ops: int, op: Callable[[requests.Session, int, int], None]):
    latencies: list[float] = []
    lock = threading.Lock()
    sessions = [requests.Session() for _ in range(clients)]

    def client(w: int) -> None:
        mine = []
        for i in range(w, ops, clients):
            t0 = time.perf_counter()
            op(sessions[w], w, i)
            mine.append(time.perf_counter() - t0)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(w,)) for w in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    for s in sessions:
        s.close()
    if len(latencies) != ops:
        raise SystemExit(f"{ops - len(latencies)} REST calls failed")
    return Result(wall, latencies)


def over_rest(tmp: Path, ops: int, fanouts: list[int]) -> dict[tuple[str, int], Result]:
    proc, url, secret = start_server(tmp)
    headers = {"Authorization": f"ApiKey {secret}"}
    try:

        def store(s: requests.Session, w: int, i: int) -> None:
            body = {"agent_id": AGENT, "memory_type": "semantic", "content": content(w, i)}
            r = s.post(url + BASE, json=body, headers=headers, timeout=30)
            r.raise_for_status()

        def search(s: requests.Session, w: int, i: int) -> None:
            params = {"query": QUERIES[i % len(QUERIES)], "agent_id": AGENT, "top_k": 10}
            r = s.get(url + BASE + "/search", params=params, headers=headers, timeout=30)
            r.raise_for_status()

        run_threads(1, 20, store)  # warm up
        run_threads(1, 20, search)
        out = {}
        for n in fanouts:
            out["create", n] = run_threads(n, ops, store)
        for n in fanouts:
            out["search", n] = run_threads(n, ops, search)
        return out
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=400, help="calls per operation and fan-out")
    ap.add_argument("--clients", default="1,16", help="concurrent clients, comma-separated")
    args = ap.parse_args()
    fanouts = [int(x) for x in args.clients.split(",")]
    os.environ["HATIDATA_EMBEDDING_PROVIDER"] = "hash"
    with tempfile.TemporaryDirectory() as tmp:
        local = asyncio.run(in_process(Path(tmp) / "inproc", args.ops, fanouts))
        rest = over_rest(Path(tmp) / "rest", args.ops, fanouts)
    print("REST vs in-process agent layer; HASH embedder (test vectors: no model cost)")
    print(f"{args.ops} calls per row; REST includes the client's HTTP/JSON and API-key auth")
    print(
        f"{'op':7} {'clients':>7} | {'in-proc ops/s':>13} {'p50 ms':>7} {'p99 ms':>7} | "
        f"{'REST ops/s':>10} {'p50 ms':>7} {'p99 ms':>7} | {'ops/s ratio':>11} {'p50 ratio':>9}"
    )
    for (op, n), a in local.items():
        b = rest[op, n]
        print(
            f"{op:7} {n:>7} | {a.ops:13.0f} {a.p50:7.2f} {a.p99:7.2f} | "
            f"{b.ops:10.0f} {b.p50:7.2f} {b.p99:7.2f} | {b.ops / a.ops:11.2f} {b.p50 / a.p50:9.2f}"
        )


if __name__ == "__main__":
    main()
