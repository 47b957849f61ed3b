"""Storing memories: `store_memory` (one) and `store_memories` (many in one call).

Both run the same path, `store_items`: every input is checked first (nothing is
written when one is invalid), then one transaction deduplicates (by SHA-256 of the
content, per (org, agent), among live memories and within the batch: a repeated text
returns the first one's id with deduplicated = true), inserts the new ones and retires
the memories they supersede. The new ones are queued for the embedding pump, which
embeds them at the model's batch size and hands each one to the semantic triggers as
it becomes searchable; `wait := true` returns once all of them are.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proxy.agent.memory import search as memory_search
from proxy.agent.memory.args import content_hash, now, parse_metadata, parse_uuid, text_arg
from proxy.agent.memory.embed_pump import WAIT_TIMEOUT, EmbedJob
from proxy.agent.memory.journal import Row, insert_rows
from proxy.agent.memory.rows import pending_row, refresh_index
from proxy.agent.memory.schema import RETURNING_ROWS, T_MEM
from proxy.agent.memory.service import (
    LIVE,
    MAX_CONTENT_BYTES,
    MAX_METADATA_BYTES,
    MAX_TYPE_CHARS,
    Memory,
)
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.registry import McpTool, Param, agent_function
from proxy.core.sqltext import in_values

if TYPE_CHECKING:
    import duckdb

    from proxy.agent.context import AgentContext

MAX_BATCH = 10_000  # memories one store_memories call takes

STORE_COLUMNS = (
    ("memory_id", "UUID"),
    ("status", "VARCHAR"),  # 'stored' (new or already present)
    ("deduplicated", "BOOLEAN"),
    ("has_embedding", "BOOLEAN"),
    ("embedding_status", "VARCHAR"),
    ("embedding_model", "VARCHAR"),
    ("content_hash", "VARCHAR"),
    ("superseded_id", "UUID"),
    ("created_at", "TIMESTAMPTZ"),
)

# The fields one input of store_memories may give (an object); a string is the content.
ITEM_FIELDS = (
    "content",
    "memory_type",
    "metadata",
    "importance",
    "session_id",
    "supersedes",
    "expires_at",
    "ttl_seconds",
)


@dataclass
class Item:
    """One memory to store, checked."""

    content: str
    memory_type: str
    meta_text: str
    importance: float
    session_id: str | None
    supersedes: str | None
    expires_at: dt.datetime | None
    digest: str


def memory_of(layer: AgentContext) -> Memory:
    mem: Memory = layer.memory
    mem.check_enabled()
    return mem


def _expiry(expires_at: Any, ttl_seconds: Any) -> dt.datetime | None:
    if expires_at is not None and ttl_seconds is not None:
        raise AgentError.invalid("give expires_at or ttl_seconds, not both")
    if ttl_seconds is not None:
        if int(ttl_seconds) <= 0:
            raise AgentError.invalid(f"ttl_seconds must be positive, got {ttl_seconds}")
        try:
            return now() + dt.timedelta(seconds=int(ttl_seconds))
        except OverflowError:
            raise AgentError.invalid(f"ttl_seconds {ttl_seconds} is too large") from None
    if expires_at is None:
        return None
    if isinstance(expires_at, str):
        try:
            expires_at = dt.datetime.fromisoformat(expires_at)
        except ValueError:
            raise AgentError.invalid("expires_at must be an ISO 8601 timestamp") from None
    if not isinstance(expires_at, dt.datetime):
        raise AgentError.invalid("expires_at must be a timestamp")
    if expires_at.tzinfo is None:
        expires_at = expires_at.replace(tzinfo=dt.UTC)
    if expires_at <= now():
        raise AgentError.invalid("expires_at is in the past")
    return expires_at


def check_item(
    content: Any,
    memory_type: Any = "fact",
    metadata: Any = None,
    importance: Any = 0.5,
    session_id: Any = None,
    supersedes: Any = None,
    expires_at: Any = None,
    ttl_seconds: Any = None,
) -> Item:
    """One memory's arguments as a checked Item (AgentError 22023 when one is wrong)."""
    content = text_arg(content, "content", required=True)
    size = len(content.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise AgentError.invalid(
            f"content is {size} bytes; a memory holds at most {MAX_CONTENT_BYTES} bytes",
            hint="split the text into several memories",
        )
    memory_type = text_arg(
        "fact" if memory_type is None else memory_type,
        "memory_type",
        required=True,
        limit=MAX_TYPE_CHARS,
    ).strip()
    imp = memory_search.check_importance(0.5 if importance is None else importance, "importance")
    meta = parse_metadata(metadata)
    meta_text = json.dumps(meta if meta is not None else {}, ensure_ascii=False)
    if len(meta_text.encode("utf-8")) > MAX_METADATA_BYTES:
        raise AgentError.invalid(f"metadata is larger than {MAX_METADATA_BYTES} bytes")
    return Item(
        content=content,
        memory_type=memory_type,
        meta_text=meta_text,
        importance=imp,
        session_id=text_arg(session_id, "session_id", limit=1000),
        supersedes=parse_uuid(supersedes, "supersedes") if supersedes is not None else None,
        expires_at=_expiry(expires_at, ttl_seconds),
        digest=content_hash(content),
    )


def _store_tx(
    cur: duckdb.DuckDBPyConnection, who: Identity, items: list[Item], at: dt.datetime
) -> tuple[list[dict[str, Any]], list[tuple[Any, ...]]]:
    """In one transaction: dedup, insert, supersede. Per item its info; the retired rows."""
    olds: dict[str, tuple[Any, ...]] = {}
    for old_id in {it.supersedes for it in items if it.supersedes is not None}:
        old = cur.execute(
            f"SELECT conflict_status, superseded_by_id::VARCHAR, seq FROM {T_MEM}"
            " WHERE memory_id = ? AND org_id = ? AND agent_id = ?",
            [old_id, who.org_id, who.agent_id],
        ).fetchone()
        if old is None:
            raise AgentError.not_found(f"memory {old_id} (to supersede) not found")
        olds[old_id] = old
    by_hash, hash_params = in_values("content_hash", list({it.digest for it in items}), "VARCHAR")
    found: dict[str, dict[str, Any]] = {}
    for row in cur.execute(
        "SELECT DISTINCT ON (content_hash) content_hash, memory_id::VARCHAR, seq,"
        f" has_embedding, embedding_status, embedding_model, created_at FROM {T_MEM}"
        f" WHERE org_id = ? AND agent_id = ? AND {by_hash} AND {LIVE} ORDER BY content_hash, seq",
        [who.org_id, who.agent_id, *hash_params],
    ).fetchall():
        found[row[0]] = dict(
            memory_id=row[1],
            seq=row[2],
            has_embedding=row[3],
            embedding_status=row[4],
            embedding_model=row[5],
            created_at=row[6],
            deduplicated=True,
        )
    infos: list[dict[str, Any]] = []
    fresh: list[tuple[Item, dict[str, Any]]] = []
    for it in items:
        if it.digest in found:
            infos.append(dict(found[it.digest], deduplicated=True))
            continue
        info = dict(
            memory_id=str(uuid.uuid4()),
            seq=None,
            has_embedding=False,
            embedding_status="pending",
            embedding_model=None,
            created_at=at,
            deduplicated=False,
        )
        found[it.digest] = info  # a repeat later in the batch is this one
        infos.append(info)
        fresh.append((it, info))
    # Every check before the first write: the group commit (write_batch.py) lets an
    # AgentError fail only its own call when nothing of it was written.
    retiring: list[tuple[str, str]] = []
    for it, info in zip(items, infos, strict=True):
        old_id = it.supersedes
        if old_id is None or old_id == info["memory_id"]:
            continue
        status, by, _ = olds[old_id]
        if status == "superseded" and by not in (None, info["memory_id"]):
            raise AgentError.conflict(f"memory {old_id} is already superseded by {by}")
        olds[old_id] = ("superseded", info["memory_id"], None)
        retiring.append((info["memory_id"], old_id))
    for info, (seq, row) in zip((i for _, i in fresh), _insert(cur, who, fresh, at), strict=True):
        info["seq"] = seq
        info["row"] = row  # as committed (the retiring below changes only older rows)
    retired: list[tuple[Any, ...]] = []
    for new_id, old_id in retiring:
        retired += cur.execute(
            f"UPDATE {T_MEM} SET conflict_status = 'superseded', superseded_by_id = ?,"
            f" updated_at = ? WHERE memory_id = ? {RETURNING_ROWS}",
            [new_id, at, old_id],
        ).fetchall()
    return infos, retired


def _insert(
    cur: duckdb.DuckDBPyConnection,
    who: Identity,
    fresh: list[tuple[Item, dict[str, Any]]],
    at: dt.datetime,
) -> list[tuple[int, tuple[Any, ...]]]:
    """Insert the new memories; their seqs and rows in order."""
    return insert_rows(cur, [_row(who, it, info["memory_id"], at) for it, info in fresh])


def _row(who: Identity, it: Item, memory_id: str, at: dt.datetime) -> Row:
    return (
        memory_id,
        who.org_id,
        who.agent_id,
        it.session_id,
        it.memory_type,
        it.content,
        it.meta_text,
        it.importance,
        at,
        at,
        it.digest,
        it.expires_at,
    )


async def store_items(
    layer: AgentContext, who: Identity, items: list[Item], wait: bool
) -> list[dict[str, Any]]:
    """Store checked items (one transaction); one result row per item, in order."""
    mem = memory_of(layer)
    await layer.journal.settled(who.org_id, who.agent_id)  # this agent's earlier stores first
    at = now()

    def indexed(result: tuple[list[dict[str, Any]], list[tuple[Any, ...]]]) -> None:
        # Under the write lock, in commit order.
        infos, retired = result
        refresh_index(mem.index, retired)
        for info in infos:
            if not info["deduplicated"]:
                row = pending_row(info["row"])
                mem.index.unembedded.note(who.org_id, who.agent_id, info["seq"], row)

    # Before the transaction: a store of the same text meanwhile then waits for it.
    for it in items:
        mem.journal.note_stored(who.org_id, who.agent_id, it.digest)
    # Stores waiting together share one transaction and commit (write_batch.py).
    infos, _ = await mem.stores.run(lambda cur: _store_tx(cur, who, items, at), indexed)
    waiters: dict[str, Any] = {}
    if mem.embedder is not None:
        jobs = []
        for it, info in zip(items, infos, strict=True):
            mid = info["memory_id"]
            if not info["deduplicated"]:
                jobs.append(EmbedJob(mid, info["seq"], who.org_id, who.agent_id, it.content))
            elif wait and info["embedding_status"] == "pending" and mid in mem._queued:
                waiters.setdefault(mid, mem.add_waiter(mid))
        if wait:
            for j in jobs:
                mem._queued.add(j.memory_id)
                waiters[j.memory_id] = mem.add_waiter(j.memory_id)
            await mem.embed_now(jobs)
        else:
            for j in jobs:  # the pump embeds them at the model's batch size
                mem._enqueue(j)
    if waiters:
        done = await mem.wait_all(waiters, WAIT_TIMEOUT)
        for info in infos:
            if info["memory_id"] in done:
                info["embedding_status"] = done[info["memory_id"]]
                if info["embedding_status"] == "embedded":
                    info["has_embedding"] = True
                    info["embedding_model"] = mem.model_name
    return [
        {
            "memory_id": info["memory_id"],
            "status": "stored",
            "deduplicated": info["deduplicated"],
            "has_embedding": bool(info["has_embedding"]),
            "embedding_status": info["embedding_status"],
            "embedding_model": info["embedding_model"],
            "content_hash": it.digest,
            "superseded_id": it.supersedes,
            "created_at": info["created_at"],
        }
        for it, info in zip(items, infos, strict=True)
    ]


def store_memory_fast(
    layer: AgentContext, who: Identity, *, wait: Any = False, **fields: Any
) -> list[dict[str, Any]] | None:
    """Without `wait` or `supersedes`: acknowledged once the memory is in the fsynced agent
    journal (journal.py), on the caller's thread; None: the transaction path."""
    if wait or fields.get("supersedes") is not None:
        return None
    mem = memory_of(layer)
    item = check_item(**fields)
    got = mem.journal.try_append(
        who.org_id, who.agent_id, item.digest, lambda mid: _row(who, item, mid, now())
    )
    if got is None:
        return None
    row, dedup = got
    return [
        {
            "memory_id": row[0],
            "status": "stored",
            "deduplicated": dedup,
            "has_embedding": False,
            "embedding_status": "pending",
            "embedding_model": None,
            "content_hash": item.digest,
            "superseded_id": None,
            "created_at": row[8],
        }
    ]


@agent_function(
    "store_memory",
    params=[
        Param("content", "VARCHAR", description="The memory text", nonempty=True),
        Param(
            "memory_type",
            "VARCHAR",
            "fact",
            "fact, observation, instruction, preference or episode",
        ),
        Param("metadata", "JSON", None, "Key-value metadata", json_shape="object"),
        Param("importance", "DOUBLE", 0.5, "Importance 0.0-1.0", minimum=0, maximum=1),
        Param("session_id", "VARCHAR", None, "The session the memory belongs to"),
        Param("supersedes", "UUID", None, "A memory this one replaces (it stops showing up)"),
        Param("expires_at", "TIMESTAMPTZ", None, "Forget the memory after this time"),
        Param("ttl_seconds", "BIGINT", None, "Forget the memory after this many seconds"),
        Param("wait", "BOOLEAN", False, "Return only once the memory is searchable"),
    ],
    columns=STORE_COLUMNS,
    scope="memory:write",
    writes=True,
    mcp=McpTool(
        ("content", "memory_type", "metadata", "importance"),
        "Store a memory in this agent's long-term memory; returns its memory_id.",
    ),
    fast=store_memory_fast,
)
async def store_memory(
    layer: AgentContext, who: Identity, *, wait: Any = False, **fields: Any
) -> list[dict[str, Any]]:
    """Store a memory; it is embedded in the background (wait := true waits for it)."""
    return await store_items(layer, who, [check_item(**fields)], bool(wait))


def batch_items(contents: Any, metadata: Any, defaults: dict[str, Any]) -> list[Item]:
    """store_memories' inputs as checked Items; an error names the input (1-based)."""
    if isinstance(contents, str):
        try:
            contents = json.loads(contents)
        except json.JSONDecodeError:
            raise AgentError.invalid("contents must be a JSON array") from None
    if not isinstance(contents, list):
        raise AgentError.invalid("contents must be an array of texts or objects")
    if len(contents) > MAX_BATCH:
        raise AgentError.invalid(
            f"{len(contents)} memories in one call; store_memories takes at most {MAX_BATCH}",
            hint="split the input into several calls",
        )
    if isinstance(metadata, str):
        metadata = json.loads(metadata) if metadata.strip() else None
    if isinstance(metadata, list) and len(metadata) != len(contents):
        raise AgentError.invalid(
            f"metadata has {len(metadata)} entries for {len(contents)} contents"
        )
    items = []
    for n, raw in enumerate(contents):
        fields = dict(defaults)
        fields["metadata"] = metadata[n] if isinstance(metadata, list) else metadata
        if isinstance(raw, dict):
            unknown = set(raw) - set(ITEM_FIELDS)
            if unknown:
                raise AgentError.invalid(
                    f"input {n + 1}: unknown field {sorted(unknown)[0]!r}",
                    hint="fields: " + ", ".join(ITEM_FIELDS),
                )
            fields.update({k: v for k, v in raw.items() if v is not None})
        else:
            fields["content"] = raw
        try:
            items.append(check_item(**fields))
        except AgentError as exc:
            raise AgentError(
                exc.code,
                f"input {n + 1}: {exc.message}",
                sqlstate=exc.sqlstate,
                http_status=exc.http_status,
                hint=exc.hint,
            ) from None
    return items


@agent_function(
    "store_memories",
    params=[
        Param(
            "contents",
            "JSON",
            description="The memories: texts, or objects with content and the other fields",
            json_shape="array",
        ),
        Param("metadata", "JSON", None, "One object for all, or an array with one per memory"),
        Param("memory_type", "VARCHAR", "fact", "Type of the memories that give none"),
        Param(
            "importance", "DOUBLE", 0.5, "Importance of those that give none", minimum=0, maximum=1
        ),
        Param("session_id", "VARCHAR", None, "Session of those that give none"),
        Param("ttl_seconds", "BIGINT", None, "Forget them after this many seconds"),
        Param("wait", "BOOLEAN", False, "Return only once every memory is searchable"),
    ],
    columns=(("ordinality", "BIGINT"), *STORE_COLUMNS),
    scope="memory:write",
    writes=True,
    mcp=McpTool(
        ("contents", "metadata", "memory_type", "importance", "wait"),
        "Store many memories in one call (up to 10,000); one result per input, in order.",
    ),
)
async def store_memories(
    layer: AgentContext,
    who: Identity,
    *,
    contents: Any,
    metadata: Any = None,
    memory_type: Any = "fact",
    importance: Any = 0.5,
    session_id: Any = None,
    ttl_seconds: Any = None,
    wait: Any = False,
) -> list[dict[str, Any]]:
    """Store many memories at once, deduplicated as store_memory does (also within the
    batch); all or none are stored. One row per input with its position (ordinality)."""
    memory_of(layer)
    defaults = {
        "memory_type": memory_type,
        "importance": importance,
        "session_id": session_id,
        "ttl_seconds": ttl_seconds,
    }
    items = batch_items(contents, metadata, defaults)
    if not items:
        return []
    rows = await store_items(layer, who, items, bool(wait))
    return [{"ordinality": n, **row} for n, row in enumerate(rows, start=1)]
