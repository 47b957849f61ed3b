"""The lake benches' set-up: a throwaway PostgreSQL 15 catalog and hatiproxy processes
over one DuckLake (each proxy its own data directory, all on one lake data path)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.conftest import ServerProcess, start_server
from tests.differential.pgcluster import start_pg


class LakeCluster:
    """`with LakeCluster("name", *serve_args) as lake: a = lake.start()`: every proxy
    started is stopped, and the catalog removed, on the way out."""

    def __init__(self, prefix: str, *args: str) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix=f"{prefix}-"))
        self.pg = start_pg()
        lake = ("--lake-catalog", f"postgres:{self.pg.dsn}", "--lake-data", str(self.tmp / "lake"))
        self.args = (*args, *lake)
        self.procs: list[ServerProcess] = []

    def start(self, timeout: float = 300) -> ServerProcess:
        """One more proxy (one at a time: a loaded machine starts several slowly)."""
        proc = start_server(self.tmp / f"proxy{len(self.procs)}", *self.args, timeout=timeout)
        self.procs.append(proc)
        return proc

    def __enter__(self) -> LakeCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            p.stop()
        self.pg.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


def until(check: Callable[[], bool], limit: float = 30.0) -> float:
    """Seconds until `check()` holds (polled back to back), or inf after `limit`."""
    t0 = time.monotonic()
    while not check():
        if time.monotonic() - t0 > limit:
            return float("inf")
    return time.monotonic() - t0
