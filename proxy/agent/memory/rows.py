"""The vector index's copies of memory rows: what it keeps of a row, and keeping it exact.

Search builds its results from the rows the index holds (`memory_index.Attrs.row`)
instead of reading them from the table. That is only right while every change of a
memory row reaches the index, so the rule for this package is: every UPDATE of the
memory table ends in `RETURNING_ROWS` (memory_schema) and the caller hands the returned
rows to `refresh_index` once the transaction has committed; a memory enters the index
with its row as read after its embedding was stored (`index_attrs`). Rows of memories
that are not in the index (not embedded yet) are ignored.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from proxy.agent.memory.index import VectorIndex
from proxy.agent.memory.index_types import TEXT_IN_RAM, Attrs
from proxy.agent.memory.schema import COL

_CONTENT, _CREATED = COL["content"], COL["created_at"]
# Columns with few distinct values: one shared string each instead of one per row.
_SHARED = frozenset(
    COL[c]
    for c in (
        "org_id",
        "agent_id",
        "session_id",
        "memory_type",
        "embedding_status",
        "embedding_model",
        "conflict_status",
    )
)


def _compact(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(
        sys.intern(v) if i in _SHARED and isinstance(v, str) else v for i, v in enumerate(row)
    )


def index_attrs(row: tuple[Any, ...]) -> Attrs:
    """What the index keeps of a memory, from its SELECT_COLUMNS row: the filter and
    scoring columns, and the whole row when the content is short enough to keep."""
    content = row[_CONTENT]
    kept = len(content) <= TEXT_IN_RAM
    return Attrs(
        memory_id=row[COL["memory_id"]],
        importance=row[COL["importance"]],
        expires_at=row[COL["expires_at"]],
        memory_type=row[COL["memory_type"]],
        session_id=row[COL["session_id"]],
        live=row[COL["conflict_status"]] == "none",
        created_at=row[_CREATED].timestamp(),
        confidence=row[COL["confidence"]],
        content=content if kept else None,
        row=_compact(row) if kept else None,
        words=None if kept else content,
    )


def pending_row(row: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """What the index keeps of a memory without a vector yet (`Unembedded.note`): its
    SELECT_COLUMNS row, when the content is short enough to keep."""
    return _compact(row) if len(row[_CONTENT]) <= TEXT_IN_RAM else None


def refresh_index(index: VectorIndex, returned: Iterable[tuple[Any, ...]]) -> None:
    """Rows an UPDATE returned (`RETURNING_ROWS`: seq, then the row): the index follows."""
    ids = []
    for seq, *row in returned:
        attrs = index_attrs(tuple(row))
        index.refresh(seq, attrs)
        ids.append(str(attrs.memory_id))
    if ids and index.on_refresh is not None:
        index.on_refresh(ids)
