"""Where MCP tools run: in the server process, or over the wire to a running hatiproxy.

`LayerTarget` (MCP over HTTP, inside the server): agent tools call the agent layer's
registered functions as the caller's `Identity`; SQL tools run through
`proxy.execution.executor.execute_sql`, the same path as wire SQL.

`WireTarget` (`hatiproxy mcp` over stdio): one psycopg 3 connection carrying the
agent identity in its startup options (`-c hatidata_agent_id=...`), exactly like the
public HatiData clients; agent tools become `SELECT * FROM fn("arg" := $1, ...)` and
the server checks identity and scopes. SQL tools are plain queries.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from proxy.api.mcp.tools import Json
from proxy.core.errors import AgentError
from proxy.core.identity import Identity

if TYPE_CHECKING:
    import psycopg

    from proxy.agent.layer import AgentLayer

log = logging.getLogger("hatiproxy.mcp")
READ_KINDS = frozenset({"select", "show", "explain"})


class LayerTarget:
    def __init__(self, layer: AgentLayer, who: Identity) -> None:
        self.layer = layer
        self.who = who

    def require(self, scope: str) -> None:
        self.who.require(scope)

    def may_write_sql(self) -> bool:
        return self.who.scopes is None or "query:write" in self.who.scopes

    async def agent(self, function: str, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
        from proxy.execution.sql_bridge import convert_arg

        if function not in self.layer.registry:
            raise AgentError.unavailable(f"{function}() is not available in this server")
        fn = self.layer.registry.get(function)
        types = {p.name: p.type for p in fn.params}
        args: dict[str, Any] = {}
        for name, value in kwargs.items():
            if isinstance(value, Json):  # already a JSON value: no text to parse
                args[name] = value.value
            elif name in types and value is not None:  # e.g. ISO text -> datetime, UUIDs
                args[name] = convert_arg(fn, name, types[name], value)
            else:
                args[name] = value
        # fn.call, not layer.call(name, ...): a tool argument may itself be called "name".
        return await fn.call(self.layer, self.who, [], args)

    async def sql(self, sql: str, *, read_only: bool = False) -> list[dict[str, Any]]:
        from proxy.execution.executor import execute_sql

        columns, rows = await execute_sql(self.layer, self.who, sql, read_only=read_only)
        return [dict(zip(columns, row, strict=False)) for row in rows]


def check_read_only(sql: str) -> None:
    """Refuse non-reads before they reach the server (the wire has no read-only mode).

    Mirrors execute_sql: only SELECT / SHOW / EXPLAIN, and no agent function that writes.
    """
    from proxy.agent.all_functions import load_functions
    from transpiler import TranspileError, transpile

    registry = load_functions()  # also tells the transpiler every agent function name

    try:
        statements = transpile(sql)
    except TranspileError as exc:
        raise AgentError.invalid(exc.message) from None
    for st in statements:
        if st.kind not in READ_KINDS:
            raise AgentError(
                "read_only",
                f"read-only: {st.tag or st.kind} statements are refused",
                sqlstate="25006",
                http_status=403,
            )
        for call in st.agent_calls:
            if call.name not in registry or registry.get(call.name).writes:
                raise AgentError(
                    "read_only",
                    f"{call.name}() writes data and cannot run in a read-only statement",
                    sqlstate="25006",
                    http_status=403,
                )


def _option(value: str) -> str:
    # libpq options: backslash-escape spaces and backslashes inside one -c value.
    return value.replace("\\", "\\\\").replace(" ", "\\ ")


class WireTarget:
    """A psycopg 3 connection to hatiproxy; calls are serialised on it."""

    def __init__(
        self,
        *,
        host: str = "localhost",
        port: int = 5439,
        database: str = "hatidata",
        user: str = "agent",
        password: str = "",
        agent_id: str = "",
        framework: str = "mcp",
    ) -> None:
        self.agent_id = agent_id  # "": the server decides (the key's, or its default agent)
        options = f"-c hatidata_framework={_option(framework)}"
        if agent_id:
            options = f"-c hatidata_agent_id={_option(agent_id)} {options}"
        self.params: dict[str, Any] = {
            "host": host,
            "port": port,
            "dbname": database,
            "user": user,
            "options": options,
            "application_name": f"hatidata-agent/{framework}",
            "autocommit": True,
            "connect_timeout": 10,
        }
        if password:
            self.params["password"] = password
        self._conn: psycopg.AsyncConnection | None = None
        self._lock = asyncio.Lock()

    def require(self, scope: str) -> None:
        pass  # the server checks the scopes of the identity it authenticated

    def may_write_sql(self) -> bool:
        return True  # the server refuses what the identity may not do

    async def connect(self) -> psycopg.AsyncConnection:
        import psycopg

        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = await psycopg.AsyncConnection.connect(**self.params)
        return self._conn

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def agent(self, function: str, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
        # %t: text-format parameters, typed by the server from the function's declaration.
        args = ", ".join(f'"{name}" := %t' for name in kwargs)
        values = [json.dumps(v.value) if isinstance(v, Json) else v for v in kwargs.values()]
        return await self._fetch(f"SELECT * FROM {function}({args})", values)

    async def sql(self, sql: str, *, read_only: bool = False) -> list[dict[str, Any]]:
        if read_only:
            check_read_only(sql)
        return await self._fetch(sql, None)

    async def _fetch(self, sql: str, params: list[Any] | None) -> list[dict[str, Any]]:
        from psycopg.rows import dict_row

        async with self._lock:
            conn = await self.connect()
            async with conn.cursor(row_factory=dict_row) as cur:
                # Without parameters psycopg uses the simple protocol: several statements
                # may run, and (as execute_sql does) the last result with rows is returned.
                await cur.execute(sql, params, prepare=False)  # type: ignore[arg-type]
                rows: list[dict[str, Any]] = []
                while True:
                    if cur.description is not None:
                        rows = await cur.fetchall()
                    if not cur.nextset():
                        return rows
