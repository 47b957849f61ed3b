"""REST test helpers: servers that start with API keys already in their database.

Keys are created with proxy.access.keys on the database file before the server opens
it (a running server holds the DuckDB file lock), exactly as `hatiproxy keys create`
does with the server stopped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import requests

from proxy.access import keys
from tests.conftest import ServerProcess, start_server


@dataclass
class KeySpec:
    role: str = "agent"
    org_id: str = "local"
    agent_id: str | None = None
    scopes: list[str] | None = None
    allowed_schemas: list[str] | None = None
    allowed_tables: list[str] | None = None


def create_keys(data_dir: Path, specs: dict[str, KeySpec]) -> dict[str, str]:
    """name -> secret, for keys created in <data_dir>/hatiproxy.agent.duckdb (the agent
    database, beside the users' hatiproxy.duckdb)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(data_dir / "hatiproxy.agent.duckdb"))
    try:
        keys.ensure_schema(con)
        out = {}
        for name, spec in specs.items():
            _, secret = keys.create_key(
                con,
                spec.org_id,
                role=spec.role,
                agent_id=spec.agent_id,
                scopes=spec.scopes,
                allowed_schemas=spec.allowed_schemas,
                allowed_tables=spec.allowed_tables,
            )
            out[name] = secret
        return out
    finally:
        con.close()


@dataclass
class KeyedServer:
    server: ServerProcess
    secrets: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.server.rest_url

    def headers(self, key: str) -> dict[str, str]:
        return {"Authorization": f"ApiKey {self.secrets[key]}"}

    def request(self, method: str, path: str, key: str | None = None, **kw: Any):
        headers = {**(self.headers(key) if key else {}), **kw.pop("headers", {})}
        return requests.request(method, self.url + path, headers=headers, timeout=30, **kw)


# The usual cast: an admin, an auditor, a read-only analyst, two agent-bound keys and
# another organisation's admin.
STANDARD_KEYS = {
    "admin": KeySpec("admin"),
    "auditor": KeySpec("auditor"),
    "analyst": KeySpec("analyst"),
    "bot": KeySpec("agent", agent_id="bot"),
    "bot2": KeySpec("agent", agent_id="bot2"),
    "other": KeySpec("admin", org_id="org2"),
}


@contextlib.contextmanager
def standard_server(tmp: Path, *args: str) -> Iterator[KeyedServer]:
    """A keyed server with STANDARD_KEYS, stopped on exit."""
    server = keyed_server(tmp, STANDARD_KEYS, *args)
    try:
        yield server
    finally:
        server.server.stop()


def keyed_server(tmp: Path, specs: dict[str, KeySpec], *args: str) -> KeyedServer:
    """A server (hash embedder unless args say otherwise) whose database holds `specs`."""
    secrets = create_keys(tmp / "data", specs)
    if "--embedding-provider" not in args:
        args = (*args, "--embedding-provider", "hash")
    return KeyedServer(start_server(tmp, *args), secrets)
