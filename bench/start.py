"""How long a server takes from process start to its wire port answering, and where it goes.

    .venv/bin/python bench/start.py [--repeat 3] [--provider onnx|hash]

Three figures, in the same run so the machine's load is the same for all:

* baselines: a bare `python -c "import duckdb; duckdb.connect()"` process, and in one
  DuckDB connection a plain CREATE VIEW / CREATE MACRO loop of as many views and macros as
  the catalog emulation makes (so "the catalog costs N x a plain view" means something);
* end to end: `tests.conftest.start_server` (what every server test pays: MCP and REST
  ports, the shared converted model), wall time until the port speaks PostgreSQL;
* phases: a server process started with timers around each start-up step (imports, the
  DuckDB databases, each catalog .sql file, the agent layer, the model load, the HTTP
  listeners), reported by the process itself (the median over the repeats).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_OUT = "BENCH_START_OUT"  # the child's timings file
_T0 = "BENCH_START_T0"  # the parent's time.time() just before it started the child


# --- the child: a real server with timers --------------------------------------------------


def _child(argv: list[str]) -> None:
    from proxy.core.native_memory import exec_with_tcache

    exec_with_tcache()  # as `hatiproxy serve` does first (it runs itself again, once)
    t_main = time.time()
    phases: dict[str, list[float]] = {
        "interpreter start (twice: the glibc tcache re-exec)": [
            t_main - float(os.environ[_T0]),
            time.process_time(),
        ]
    }

    def add(name: str, seconds: float, cpu: float) -> None:
        wall_cpu = phases.setdefault(name, [0.0, 0.0])
        wall_cpu[0] += seconds
        wall_cpu[1] += cpu

    def timed(owner: Any, attr: str, name: str | Callable[..., str]) -> None:
        fn = getattr(owner, attr, None)
        if fn is None:  # an older tree without this step (an A/B against a baseline)
            return

        def label(args: tuple[Any, ...]) -> str:
            return name(*args) if callable(name) else name

        if asyncio.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def awrap(*args: Any, **kw: Any) -> Any:
                t, c = time.perf_counter(), time.process_time()
                try:
                    return await fn(*args, **kw)
                finally:
                    add(label(args), time.perf_counter() - t, time.process_time() - c)

            setattr(owner, attr, awrap)
        else:

            @functools.wraps(fn)
            def wrap(*args: Any, **kw: Any) -> Any:
                t, c = time.perf_counter(), time.process_time()
                try:
                    return fn(*args, **kw)
                finally:
                    add(label(args), time.perf_counter() - t, time.process_time() - c)

            setattr(owner, attr, wrap)

    t, c = time.perf_counter(), time.process_time()
    import proxy.app
    import proxy.cli

    add("imports (proxy.cli, proxy.app)", time.perf_counter() - t, time.process_time() - c)
    from proxy.access.service import AccessControl
    from proxy.agent.layer import AgentLayer
    from proxy.api.mcp import http as mcp_http
    from proxy.api.rest import app as rest_app
    from proxy.db import agent_db, engine, opening
    from proxy.db.catalog import functions

    install = sys.modules["proxy.db.catalog.install"]
    from proxy.pgserver.server import Server
    from proxy.semantic.engine import SemanticEngine

    timed(opening.OpenedFile, "__init__", "users' DuckDB open + extensions")
    timed(agent_db.AgentDatabase, "__init__", "agent DuckDB open")
    timed(engine.Engine, "_install_catalog", "catalog install (total)")
    timed(install, "_run_file", lambda _c, name, _p: f"  catalog {name}")
    timed(install, "_add_tableoid", "  catalog tableoid wrappers")
    timed(functions, "refresh", "  pg_proc rows (functions.refresh, every call)")
    timed(SemanticEngine, "__init__", "embedding model load (SemanticEngine)")
    timed(AgentLayer, "__init__", "agent layer build")
    timed(AgentLayer, "start", "agent layer start")
    timed(AccessControl, "__init__", "access control build")
    timed(mcp_http, "start", "MCP HTTP listener")
    timed(rest_app, "start", "REST HTTP listener")
    timed(Server, "start", "wire listener")

    wire_start = Server.start

    async def started(self: Any) -> None:
        await wire_start(self)
        phases["total to wire listening"] = [
            time.time() - float(os.environ[_T0]),
            time.process_time(),  # this life of the process (the first one was short)
        ]
        Path(os.environ[_OUT]).write_text(json.dumps(phases))

    Server.start = started  # type: ignore[method-assign]
    sys.argv = ["hatiproxy", *argv]
    sys.exit(proxy.cli.main())


# --- the parent ------------------------------------------------------------------------------


def _phases(provider: str, model_dir: str) -> dict[str, list[float]]:
    from tests.conftest import _speaks_postgres, free_ports

    port, mcp, rest = free_ports(3)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "phases.json"
        env = {
            **os.environ,
            _OUT: str(out),
            _T0: repr(time.time()),
            "HATIDATA_MODEL_DIR": model_dir,
            "HATIDATA_EMBEDDING_PROVIDER": provider,
        }
        args = ["serve", "--port", str(port), "--data-dir", tmp, "--database", ":memory:"]
        args += ["--mcp-port", str(mcp), "--rest-port", str(rest)]
        cmd = [sys.executable, __file__, "--child", *args]
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            deadline = time.monotonic() + 120
            while not (out.exists() and _speaks_postgres(port)):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the timed server did not start")
                time.sleep(0.02)
            return json.loads(out.read_text())
        finally:
            proc.terminate()
            proc.wait(30)


def _baselines(n_views: int, n_macros: int) -> dict[str, float]:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import duckdb; duckdb.connect()"], check=True)
    process = time.perf_counter() - t
    import duckdb

    conn = duckdb.connect()
    t = time.perf_counter()
    for i in range(n_views):
        conn.execute(f"CREATE VIEW v{i} AS SELECT {i} AS a, 'x' AS b")
    views = time.perf_counter() - t
    t = time.perf_counter()
    for i in range(n_macros):
        conn.execute(f"CREATE MACRO m{i}(x) AS x + {i}")
    macros = time.perf_counter() - t
    return {
        "python -c 'import duckdb; duckdb.connect()' (process)": process,
        f"{n_views} plain CREATE VIEW": views,
        f"{n_macros} plain CREATE MACRO": macros,
    }


def _catalog_size() -> tuple[int, int]:
    import duckdb

    from proxy.db.catalog import install

    conn = duckdb.connect()
    install(conn)
    q = "SELECT count(*) FROM {}() WHERE database_name = '__hati_catalog' AND NOT internal"
    views = conn.execute(q.format("duckdb_views")).fetchone()[0]
    macros = conn.execute(q.format("duckdb_functions")).fetchone()[0]
    conn.close()
    return views, macros


def _end_to_end() -> float:
    from tests.conftest import start_server

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        server = start_server(Path(tmp), "--database", ":memory:")
        took = time.perf_counter() - t
        server.stop()
    return took


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2:])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--provider", choices=("onnx", "hash"), default="onnx")
    args = ap.parse_args()
    from tests.conftest import shared_model_dir

    model_dir = os.environ.get("HATIDATA_MODEL_DIR") or shared_model_dir()
    os.environ["HATIDATA_MODEL_DIR"] = model_dir
    n_views, n_macros = _catalog_size()
    print(f"catalog emulation: {n_views} views, {n_macros} macros")
    for name, secs in _baselines(n_views, n_macros).items():
        print(f"  baseline {name:52s} {secs:6.3f} s")
    ends = [_end_to_end() for _ in range(args.repeat)]
    print(f"start_server (as tests), median of {args.repeat}: {statistics.median(ends):.3f} s "
          f"(runs: {', '.join(f'{x:.2f}' for x in ends)})")  # fmt: skip
    runs = [_phases(args.provider, model_dir) for _ in range(args.repeat)]
    print(f"phases (provider {args.provider}), median of {args.repeat}, seconds (wall, CPU):")
    for name in runs[0]:
        wall = statistics.median(r.get(name, [0.0, 0.0])[0] for r in runs)
        cpu = statistics.median(r.get(name, [0.0, 0.0])[1] for r in runs)
        print(f"  {name:58s} {wall:6.3f} {cpu:6.3f}")


if __name__ == "__main__":
    main()
