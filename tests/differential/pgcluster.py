"""A throwaway PostgreSQL 15 cluster (initdb + pg_ctl as user `postgres`).

Used by the differential tests and by bench/wire.py. Everything lives in one
temp dir (data, log, unix socket) that is removed on stop.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass

PGBIN = "/usr/lib/postgresql/15/bin"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(cmd: list[str]) -> list[str]:
    # initdb refuses to run as root; when we are root, drop to `postgres`.
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@dataclass
class PgCluster:
    base: str
    port: int

    @property
    def data(self) -> str:
        return os.path.join(self.base, "data")

    @property
    def dsn(self) -> str:
        """TCP over loopback, like the hatiproxy side (fair for benchmarks)."""
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def stop(self) -> None:
        subprocess.run(
            _as_postgres([f"{PGBIN}/pg_ctl", "-D", self.data, "-m", "immediate", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(self.base, ignore_errors=True)


def start_pg() -> PgCluster:
    if not os.path.exists(f"{PGBIN}/initdb"):
        raise RuntimeError("PostgreSQL 15 is required at " + PGBIN)
    base = tempfile.mkdtemp(prefix="hati-pgdiff-")
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
    cluster = PgCluster(base, _free_port())
    try:
        subprocess.run(
            _as_postgres(
                [f"{PGBIN}/initdb", "-D", cluster.data, "-A", "trust", "-U", "postgres",
                 "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"]
            ),
            check=True, capture_output=True,
        )  # fmt: skip
        opts = (
            f"-p {cluster.port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
            " -c synchronous_commit=off -c full_page_writes=off -c TimeZone=UTC"
        )
        subprocess.run(
            _as_postgres(
                [f"{PGBIN}/pg_ctl", "-D", cluster.data, "-o", opts, "-w",
                 "-l", os.path.join(base, "log"), "start"]
            ),
            check=True, capture_output=True,
        )  # fmt: skip
    except BaseException:
        cluster.stop()
        raise
    return cluster
