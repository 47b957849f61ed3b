"""Session artifacts (seed 002): named files a conversation produced or used, each save a
new version (1, 2, ...), bytes kept as they were given, with their MIME type.

Over SQL, MCP and REST the bytes travel as base64 text (`data_base64`)."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.names import name as checked
from proxy.agent.sessions.tables import ARTIFACTS
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import McpTool, Param, agent_function
from proxy.db.agent_lake_views import target

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

MAX_BYTES = 16 << 20
_META = (
    ("session_id", "VARCHAR"),
    ("name", "VARCHAR"),
    ("version", "BIGINT"),
    ("mime_type", "VARCHAR"),
    ("size", "BIGINT"),
    ("sha256", "VARCHAR"),
    ("created_at", "TIMESTAMPTZ"),
)


def install(cur: duckdb.DuckDBPyConnection) -> None:
    cur.execute(
        f"""CREATE TABLE IF NOT EXISTS {ARTIFACTS} (
            org_id VARCHAR NOT NULL, agent_id VARCHAR NOT NULL,
            session_id VARCHAR NOT NULL, name VARCHAR NOT NULL, version BIGINT NOT NULL,
            mime_type VARCHAR NOT NULL, size BIGINT NOT NULL, sha256 VARCHAR NOT NULL,
            created_at TIMESTAMPTZ NOT NULL, data BLOB NOT NULL,
            PRIMARY KEY (org_id, agent_id, session_id, name, version))"""
    )


def _decode(data_base64: Any) -> bytes:
    if not isinstance(data_base64, str):
        raise AgentError.invalid("data_base64 must be base64 text")
    try:
        data = base64.b64decode(data_base64, validate=True)
    except (binascii.Error, ValueError):
        raise AgentError.invalid("data_base64 is not valid base64") from None
    if len(data) > MAX_BYTES:
        raise AgentError.invalid(f"the artifact is {len(data)} bytes; the limit is {MAX_BYTES}")
    return data


@agent_function(
    "save_artifact",
    params=[
        Param("session_id", "VARCHAR", description="The session's id"),
        Param("name", "VARCHAR", description="The artifact's name, e.g. report.pdf"),
        Param("data_base64", "VARCHAR", description="Its bytes, base64-encoded"),
        Param("mime_type", "VARCHAR", "application/octet-stream", "Its MIME type"),
    ],
    columns=_META,
    scope="memory:write",
    writes=True,
    mcp=McpTool(("session_id", "name", "data_base64", "mime_type")),
)
async def save_artifact(
    layer: AgentContext, who: Identity, *, session_id: str, name: str, data_base64: str,
    mime_type: str,
) -> list[dict[str, Any]]:  # fmt: skip
    """Save a session artifact as its next version."""
    sid, art, mime = (
        checked("session_id", session_id),
        checked("name", name),
        checked("mime", mime_type),
    )
    data = _decode(data_base64)
    now = dt.datetime.now(dt.UTC)
    digest = hashlib.sha256(data).hexdigest()

    def work(cur: duckdb.DuckDBPyConnection) -> int:
        layer.sessions.check(cur, who, sid)
        (version,) = cur.execute(
            f"SELECT coalesce(max(version), 0) + 1 FROM {ARTIFACTS} WHERE org_id = ? "
            "AND agent_id = ? AND session_id = ? AND name = ?",
            [who.org_id, who.agent_id, sid, art],
        ).fetchone()
        cur.execute(
            f"INSERT INTO {target(ARTIFACTS)} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [who.org_id, who.agent_id, sid, art, version, mime, len(data), digest, now, data],
        )
        return version

    version = await layer.sessions.transaction(who, sid, work)
    return [
        {"session_id": sid, "name": art, "version": version, "mime_type": mime}
        | {"size": len(data), "sha256": digest, "created_at": now}
    ]


@agent_function(
    "load_artifact",
    params=[
        Param("session_id", "VARCHAR", description="The session's id"),
        Param("name", "VARCHAR", description="The artifact's name"),
        Param("version", "BIGINT", None, "Which version (the latest when not given)", minimum=1),
    ],
    columns=[*_META, ("data_base64", "VARCHAR")],
    scope="memory:read",
    mcp=McpTool(("session_id", "name", "version")),
)
async def load_artifact(
    layer: AgentContext, who: Identity, *, session_id: str, name: str, version: Any
) -> list[dict[str, Any]]:
    """A session artifact's bytes (base64) and metadata; the latest version by default."""
    sid, art = checked("session_id", session_id), checked("name", name)
    sql = (
        f"SELECT {', '.join(c for c, _ in _META)}, data FROM {ARTIFACTS} WHERE org_id = ? "
        "AND agent_id = ? AND session_id = ? AND name = ?"
    )
    args: list[Any] = [who.org_id, who.agent_id, sid, art]
    if version is not None:
        sql += " AND version = ?"
        args.append(version)
    row = await layer.db.run(
        lambda cur: cur.execute(sql + " ORDER BY version DESC LIMIT 1", args).fetchone()
    )
    if row is None:
        raise AgentError.not_found(f"no artifact {art!r} in session {sid!r}")
    out = dict(zip([c for c, _ in _META], row[:-1], strict=True))
    return [out | {"data_base64": base64.b64encode(row[-1]).decode()}]


@agent_function(
    "list_artifacts",
    params=[Param("session_id", "VARCHAR", description="The session's id")],
    columns=_META,
    scope="memory:read",
)
async def list_artifacts(layer: AgentContext, who: Identity, *, session_id: str) -> list[dict]:
    """A session's artifacts, every version, by name then version."""
    sid = checked("session_id", session_id)
    rows = await layer.db.run(
        lambda cur: cur.execute(
            f"SELECT {', '.join(c for c, _ in _META)} FROM {ARTIFACTS} WHERE org_id = ? "
            "AND agent_id = ? AND session_id = ? ORDER BY name, version",
            [who.org_id, who.agent_id, sid],
        ).fetchall()
    )
    return [dict(zip([c for c, _ in _META], r, strict=True)) for r in rows]
