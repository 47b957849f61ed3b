"""Start a hatiproxy server process for a benchmark and wait until it answers SQL.

One place for what every benchmark needs: a free port, no MCP/REST listeners unless
asked, warnings-only logging into tmp/hatiproxy.log, and a clear error with the log when
the server exits or does not come up.

The server runs in a session of its own, as PostgreSQL does (pg_ctl detaches the
postmaster with setsid). With the kernel's autogroup scheduling (on by default) each
session shares CPU as one group: a server left in the benchmark's session splits one
group's share with the client driving it, while PostgreSQL gets a whole share, which on
a loaded machine made hatiproxy look up to 2x slower than it is. The server is also
told to exit when the benchmark does (PR_SET_PDEATHSIG), so a killed run leaves none.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _exit_with_parent() -> None:
    """In the child before exec: SIGTERM when the benchmark process exits (Linux)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start_hatiproxy(
    tmp: Path,
    *args: str,
    root: Path = ROOT,
    database: str | None = ":memory:",
    timeout: float = 90,
    env: dict[str, str] | None = None,
) -> tuple[subprocess.Popen, int]:
    """A running server of the tree at root (this one by default) and its SQL port.

    database None keeps the server's default file in tmp/data; args are passed to serve;
    env adds to (or overrides) this process's environment for the server.
    """
    tmp.mkdir(parents=True, exist_ok=True)
    port = free_port()
    cmd = [
        sys.executable, "-m", "proxy", "serve", "--port", str(port), "--mcp-port", "0",
        "--rest-port", "0", "--data-dir", str(tmp / "data"), "--log-level", "WARNING",
    ]  # fmt: skip
    if database is not None:
        cmd += ["--database", database]
    log_path = tmp / "hatiproxy.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [*cmd, *args],
            cwd=root,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own scheduling group, as PostgreSQL's
            preexec_fn=_exit_with_parent,
            env={**os.environ, **env} if env else None,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"hatiproxy exited with {proc.returncode}:\n{log_path.read_text()}")
        try:
            psycopg.connect(f"host=127.0.0.1 port={port} user=bench dbname=hatidata").close()
            return proc, port
        except psycopg.OperationalError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"hatiproxy did not start in {timeout:.0f} s; see {log_path}")


@contextlib.contextmanager
def this_tree_and_base(tmp: Path, base: str) -> Iterator[dict[str, tuple[subprocess.Popen, int]]]:
    """A server of this tree and one of git revision `base` (checked out in a throwaway
    worktree), for A/B benchmarks in one run: {name: (process, port)}. Both are killed
    and the worktree removed at exit."""
    base_root = tmp / "base"
    subprocess.run(
        ["git", "worktree", "add", "-q", "--detach", str(base_root), base], cwd=ROOT, check=True
    )
    servers: dict[str, tuple[subprocess.Popen, int]] = {}
    try:
        for name, root in (("this tree", ROOT), (f"base {base}", base_root)):
            (tmp / name).mkdir()
            servers[name] = start_hatiproxy(tmp / name, root=root)
        yield servers
    finally:
        for proc, _ in servers.values():
            proc.kill()
            proc.wait()
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(base_root)], cwd=ROOT, check=False
        )
