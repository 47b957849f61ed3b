"""What this machine allows any wire server over in-process DuckDB, measured in the run.

Two floors that the wire benchmark prints beside its targets:
- the loopback TCP round trip between two processes: every query over the wire pays it
  on top of the engine's own time, whatever the server is written in;
- how in-process DuckDB scales from 1 to 8 Python threads, with and without some pure
  Python work per query: DuckDB's Python binding takes the GIL back several times
  inside each `execute`, so any Python work a server does per query (decoding,
  encoding, its event loop) competes with the engine's own progress.
"""

from __future__ import annotations

import random
import socket
import statistics
import subprocess
import sys
import threading
import time

import duckdb

_ECHO = """
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while data := s.recv(65536):
    s.sendall(data)
"""


def loopback_rtt_us(seconds: float) -> float:
    """p50 of a 60-byte ping-pong between this process and a child over loopback TCP."""
    listener = socket.create_server(("127.0.0.1", 0))
    child = subprocess.Popen([sys.executable, "-c", _ECHO, str(listener.getsockname()[1])])
    try:
        listener.settimeout(30)
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        lat: list[float] = []
        end = time.perf_counter() + seconds
        while (t0 := time.perf_counter()) < end:
            conn.sendall(b"x" * 60)
            got = 0
            while got < 60:
                got += len(conn.recv(65536))
            lat.append((time.perf_counter() - t0) * 1e6)
        conn.close()
        return statistics.median(lat[len(lat) // 10 :])
    finally:
        listener.close()
        child.wait(10)


def _python_work(until: float) -> None:
    while time.perf_counter() < until:  # pure Python: holds the GIL throughout
        pass


def inprocess_qps(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    rows: int,
    threads: int,
    seconds: float,
    python_us: float = 0.0,
) -> float:
    """Point queries/s from `threads` Python threads, each with its own cursor."""
    counts = [0] * threads
    end = time.perf_counter() + seconds

    def worker(i: int) -> None:
        cur, rng, n = con.cursor(), random.Random(i), 0
        while (now := time.perf_counter()) < end:
            if python_us:
                _python_work(now + python_us / 1e6)
            cur.execute(sql, [rng.randint(1, rows)]).fetchall()
            n += 1
        counts[i] = n

    t0 = time.perf_counter()
    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return sum(counts) / (time.perf_counter() - t0)
