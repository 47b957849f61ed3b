"""What the ownership tests share: two organisations' agent keys, an admin key of each,
a key limited to one table and a configured superuser (root), on a real server."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator

import psycopg
import pytest
import requests

from tests.conftest import start_server
from tests.rest.rest_support import KeyedServer, KeySpec, create_keys

SPECS = {
    "alice": KeySpec("agent", org_id="orga", agent_id="alice"),
    "bob": KeySpec("agent", org_id="orgb", agent_id="bob"),
    "adm": KeySpec("admin", org_id="orgb"),
    "adma": KeySpec("admin", org_id="orga"),
    "narrow": KeySpec("agent", org_id="orga", agent_id="nar", allowed_tables=["public.ok"]),
}
ARGS = ("--users", "root:rootpw", "--embedding-provider", "hash")


def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyedServer]:
    """A module's server with the keys above (yield from it in a module-scoped fixture)."""
    tmp = tmp_path_factory.mktemp("ownership")
    secrets = create_keys(tmp / "data", SPECS)
    server = KeyedServer(start_server(tmp, *ARGS), secrets)
    server.tmp = tmp  # type: ignore[attr-defined]
    yield server
    server.server.stop()


def connect(ks: KeyedServer, who: str, dbname: str = "hatidata") -> psycopg.Connection:
    password = "rootpw" if who == "root" else ks.secrets[who]
    # a key's login is not the name it types
    return psycopg.connect(
        host="127.0.0.1", port=ks.server.port, user="root" if who == "root" else "postgres",
        password=password, dbname=dbname, autocommit=True,
    )  # fmt: skip


def refused(con: psycopg.Connection, sql: str, message: str) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege) as info:
        con.execute(sql)
    assert info.value.diag.message_primary == message, (sql, str(info.value))


def restart(ks: KeyedServer) -> None:
    ks.server.stop()
    ks.server = start_server(ks.tmp, *ARGS)  # type: ignore[attr-defined]


def psql(ks: KeyedServer, who: str, command: str, check: bool = True) -> str:
    psql_bin = shutil.which("psql") or "/usr/lib/postgresql/15/bin/psql"
    password = "rootpw" if who == "root" else ks.secrets[who]
    user = "root" if who == "root" else "someone"
    out = subprocess.run(
        [psql_bin, "-X", "-h", "127.0.0.1", "-p", str(ks.server.port), "-U", user,
         "-d", "hatidata", "-v", "ON_ERROR_STOP=1", "-c", command],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PGPASSWORD": password},
    )  # fmt: skip
    assert out.returncode == 0 or not check, out.stderr
    return out.stdout


def mcp_call(
    url: str, tool: str, args: dict, key: str | None = None, agent: str | None = None
) -> requests.Response:
    """An MCP `tools/call` of `tool` at `url` with API key `key` and agent header `agent`."""
    headers = {"X-Hatidata-Agent-Id": agent} if agent else {}
    if key is not None:
        headers["Authorization"] = f"ApiKey {key}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": tool, "arguments": args}
    return requests.post(url, json=body, headers=headers, timeout=30)


def mcp_query(ks: KeyedServer, who: str, sql: str) -> tuple[bool, str]:
    """SQL through the MCP `query` tool with `who`'s key: (isError, the tool's text)."""
    r = mcp_call(ks.server.mcp_url, "query", {"sql": sql}, ks.secrets[who])
    result = r.json()["result"]
    return bool(result.get("isError")), result["content"][0]["text"]
