"""A shared DuckLake cluster for the tests in tests/lake/: one PostgreSQL 15 catalog, one
shared data path and three hatiproxy processes over them (the issue asks for three
processes in CI). Session-scoped: every lake test module that runs on one xdist worker
shares the same cluster, so a new lake test module costs no start-up.

Fixtures:

- ``lake`` -> ``LakeCluster``: ``lake.pg`` (the ``PgCluster``; ``lake.pg.dsn``),
  ``lake.data`` (the shared data path), ``lake.proxies`` (the three running proxies),
  ``lake.catalog`` (the ``--lake-catalog`` value), ``lake.start_proxy()`` (one more proxy
  over the same lake, stopped at the end of the session) and ``lake.kill(p)`` (SIGKILL,
  then wait for the process to be gone).
- ``proxies`` -> ``lake.proxies``, a list of three ``ServerProcess`` (``p.dsn``,
  ``p.rest_url``, ``p.mcp_url``, ``p.log()``).

Rules, because modules share the cluster: never stop or kill one of the three shared
proxies (start an extra one with ``lake.start_proxy()`` and kill that); use table names,
state keys, session ids and namespaces unique to your test; never assume what the lake
holds besides your own rows.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import ServerProcess, start_server
from tests.differential.pgcluster import PgCluster, start_pg

PROXIES = 3
# seconds a proxy may take to listen: three start at once (and race to create the lake's
# catalog tables) on a shared 2-core machine
START_TIMEOUT = 300


@dataclass
class LakeCluster:
    pg: PgCluster
    data: Path
    tmp: pytest.TempPathFactory
    proxies: list[ServerProcess] = field(default_factory=list)
    extra: list[ServerProcess] = field(default_factory=list)

    @property
    def catalog(self) -> str:
        return f"postgres:{self.pg.dsn}"

    def start_proxy(self, *, env: bool = False) -> ServerProcess:
        """One more proxy over this lake (settings as flags, or as HATIDATA_LAKE_* with
        env=True); stopped with the cluster unless the test kills it first."""
        p = self._start(env=env)
        self.extra.append(p)
        return p

    def kill(self, p: ServerProcess) -> None:
        """SIGKILL: no shutdown code runs, as when a machine dies."""
        p.proc.send_signal(signal.SIGKILL)
        p.proc.wait(10)

    def _start(self, *, env: bool = False) -> ServerProcess:
        tmp = self.tmp.mktemp("proxy")
        args = ("--embedding-provider", "hash", "--mcp-port", "0")
        # API keys are shared by the lake's proxies: a key a test creates would end trust
        # mode on all of them. Explicit trust keeps keyless logins for the other modules
        # (keys are still checked when REST clients present one: p.rest_url).
        args += ("--auth-method", "trust")
        settings = {"HATIDATA_LAKE_CATALOG": self.catalog, "HATIDATA_LAKE_DATA": str(self.data)}
        if env:
            return start_server(tmp, *args, env=settings, timeout=START_TIMEOUT)
        lake = ("--lake-catalog", self.catalog, "--lake-data", str(self.data))
        return start_server(tmp, *args, *lake, timeout=START_TIMEOUT)

    def stop(self) -> None:
        for p in self.proxies + self.extra:
            p.stop()


@pytest.fixture(scope="session")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LakeCluster]:
    pg = start_pg()
    cluster = LakeCluster(pg, tmp_path_factory.mktemp("lake-data"), tmp_path_factory)
    try:
        # started at once on a new catalog: they race to create DuckLake's tables in it
        # (the second takes its settings from the environment, the others from flags)
        with ThreadPoolExecutor(PROXIES) as pool:
            futures = [pool.submit(cluster._start, env=i == 1) for i in range(PROXIES)]
            errors: list[BaseException] = []
            for f in futures:
                try:
                    cluster.proxies.append(f.result())
                except Exception as e:  # noqa: BLE001 - stop the others, then raise
                    errors.append(e)
            if errors:
                raise errors[0]
        yield cluster
    finally:
        cluster.stop()
        pg.stop()


@pytest.fixture(scope="module")
def proxies(lake: LakeCluster) -> list[ServerProcess]:
    return lake.proxies
