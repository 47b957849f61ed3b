"""Shared fixtures: a real hatiproxy server process on a free port."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_ports(n: int) -> list[int]:
    """n distinct free ports: all are held open together, so none is handed out twice."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


def free_port() -> int:
    return free_ports(1)[0]


_SSL_REQUEST = struct.pack("!ii", 8, 80877103)


def _speaks_postgres(port: int) -> bool | None:
    """True when a PostgreSQL server answers on port, False when something else does,
    None when nothing listens yet (an SSLRequest is answered 'S' or 'N')."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(_SSL_REQUEST)
            return s.recv(1) in (b"N", b"S")
    except OSError:
        return None


@dataclass
class ServerProcess:
    host: str
    port: int
    proc: subprocess.Popen
    log_path: Path
    data_dir: Path
    mcp_port: int = 0
    rest_port: int = 0

    @property
    def mcp_url(self) -> str:
        return f"http://{self.host}:{self.mcp_port}/mcp"

    @property
    def rest_url(self) -> str:
        return f"http://{self.host}:{self.rest_port}"

    @property
    def dsn(self) -> str:
        return f"host={self.host} port={self.port} user=tester dbname=hatidata"

    def agent_conn(
        self, agent: str, *, user: str = "tester", autocommit: bool = True
    ) -> psycopg.Connection:
        """psycopg 3 as HatiDataAgent connects: the agent id in `options -c`."""
        return psycopg.connect(
            host=self.host, port=self.port, user=user, dbname="hatidata",
            options=f"-c hatidata_agent_id={agent}", autocommit=autocommit,
        )  # fmt: skip

    def function_rows(self, fn: str, agent: str, **args: Any) -> list[dict[str, Any]]:
        """An agent function through the REST API, as `agent`: its rows (200 asserted)."""
        import requests  # only REST tests need it

        r = requests.post(
            f"{self.rest_url}/v1/functions/{fn}",
            json=args,
            headers={"X-HatiData-Agent-Id": agent},
            timeout=120,
        )
        assert r.status_code == 200, (fn, r.status_code, r.text)
        return r.json()["rows"]

    def url(self, driver: str = "postgresql+psycopg") -> str:
        return f"{driver}://tester@{self.host}:{self.port}/hatidata"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> bool:
        """SIGTERM, then SIGKILL after 10 s; whether it exited by itself (shutdown after any
        workload is promised to take under 10 s)."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
                return False
        return True


def psql_command(srv: ServerProcess, command: str) -> str:
    """Run one psql -c command against the server as user x; its stdout, or AssertionError."""
    import shutil

    psql_bin = shutil.which("psql") or "/usr/lib/postgresql/15/bin/psql"
    out = subprocess.run(
        [psql_bin, "-X", "-h", srv.host, "-p", str(srv.port), "-U", "x", "-d", "hatidata",
         "-v", "ON_ERROR_STOP=1", "-c", command],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    if out.returncode != 0 or "ERROR" in out.stderr:
        raise AssertionError(f"psql {command!r} failed: {out.stderr.strip()}")
    return out.stdout


@functools.cache
def shared_model_dir() -> str:
    """The default model converted once per test process: a server started on a fresh
    data dir would otherwise convert it again (2-10 s) for every test module. Tests of
    the conversion itself pass their own HATIDATA_MODEL_DIR."""
    from proxy.embedding.manage import ensure_default_model

    path = tempfile.mkdtemp(prefix="hati-test-models-")
    atexit.register(shutil.rmtree, path, True)
    ensure_default_model(Path(path))
    return path


def start_server(
    tmp: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    wrap: Sequence[str] = (),
) -> ServerProcess:
    """`wrap`: a command the server runs under (bench/rss.py --heaptrack); the process
    returned is then the wrapper's."""
    # A port picked free can be taken by another process before the server binds it
    # (CI saw an HTTP server answer on the SQL port): start again on fresh ports.
    for attempt in range(3):
        try:
            return _start_server(tmp, args, env, timeout, wrap)
        except _PortTaken:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


class _PortTaken(RuntimeError):
    pass


def _start_server(
    tmp: Path,
    args: tuple[str, ...],
    env: dict[str, str] | None,
    timeout: float = 120,
    wrap: Sequence[str] = (),
) -> ServerProcess:
    port, mcp_port, rest_port = free_ports(3)
    # Every test server gets its own MCP and REST ports, so servers never collide.
    if "--mcp-port" in args:
        mcp_port = 0
    if "--rest-port" in args:
        rest_port = 0
    data_dir = tmp / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = tmp / "server.log"
    cmd = [
        *wrap, sys.executable, "-m", "proxy", "serve",
        "--port", str(port), "--data-dir", str(data_dir), *args,
    ]  # fmt: skip
    if mcp_port:
        cmd += ["--mcp-port", str(mcp_port)]
    if rest_port:
        cmd += ["--rest-port", str(rest_port)]
    full_env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "HATIDATA_MODEL_DIR": os.environ.get("HATIDATA_MODEL_DIR") or shared_model_dir(),
        **(env or {}),
    }
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=full_env)
    server = ServerProcess("127.0.0.1", port, proc, log_path, data_dir, mcp_port, rest_port)
    deadline = time.monotonic() + timeout  # two test workers on a loaded 2-core machine
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log_text = server.log()
            if "address already in use" in log_text.lower():
                raise _PortTaken(log_text)
            raise RuntimeError(f"server exited with {proc.returncode}:\n{log_text}")
        answer = _speaks_postgres(port)
        if answer:
            return server
        if answer is False:
            server.stop()
            raise _PortTaken(f"port {port} is answered by another process")
        time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"server did not start listening:\n{server.log()}")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One shared server with an in-memory database for the whole test session."""
    srv = start_server(tmp_path_factory.mktemp("server"), "--database", ":memory:")
    yield srv
    srv.stop()


@pytest.fixture
def conn(server: ServerProcess) -> Iterator[psycopg.Connection]:
    """An autocommit psycopg connection to the shared server (a module's own `conn`
    fixture overrides it)."""
    with psycopg.connect(server.dsn, autocommit=True) as c:
        yield c


@pytest.fixture
def table_name(request: pytest.FixtureRequest) -> str:
    """A table name unique to the test, so tests sharing a server do not collide."""
    return (
        "t_" + request.node.name.lower().replace("[", "_").replace("]", "").replace("-", "_")[:50]
    )


# --- no silent skips ---------------------------------------------------------------------


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A skipped test fails the run: .ci/run installs everything every test needs."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped and exitstatus == 0:
        reporter.write_line(f"{len(skipped)} test(s) skipped: this suite does not skip", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# --- scheduling --------------------------------------------------------------------------

# Modules that share one expensive session fixture run on one xdist worker: with
# `--dist loadfile` each module of tests/lake/ could land on another worker, and each
# worker would start its own PostgreSQL catalog and three proxies.
_SHARED_SCOPES = ("tests/lake/",)


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    from xdist.scheduler import LoadFileScheduling

    class _LoadFileSharing(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            for prefix in _SHARED_SCOPES:
                if nodeid.startswith(prefix):
                    return prefix
            return super()._split_scope(nodeid)

    if config.getvalue("dist") != "loadfile":
        return None
    return _LoadFileSharing(config, log)  # type: ignore[arg-type]


# --- long modules first ------------------------------------------------------------------

# With --dist loadfile each worker takes whole modules in collection order, so a long
# module handed out last decides when the run ends while the other worker idles. These
# (the longest in the `--durations` lists of CI runs) go first; small modules fill the end.
LONG_FIRST = (
    "tests/tools/",
    "tests/lake/",
    "tests/rest/test_openapi.py",
    "tests/test_embed_background.py",
    "tests/test_bad_input.py",
    "tests/clients/test_hatidata_sdk.py",
    "tests/agent/test_ledger_tamper_server.py",
    "tests/rest/test_triggers_api.py",
    "tests/test_second_server.py",
    "tests/test_semantic_server.py",
    "tests/wire/test_event_loop.py",
    "tests/wire/test_connection_threads.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(LONG_FIRST))  # stable sort
