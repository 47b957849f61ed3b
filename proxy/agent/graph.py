"""Knowledge graph: entities and typed relations per (org, agent).

Tables `hatidata_internal.kg_entities` and `kg_relations` in the agent database, read
in SQL through `_hatidata_kg_entities` and `_hatidata_kg_relations` (the caller's rows
only), so a recursive CTE can walk the graph like any other table.

- `kg_add(entity_id, entity_type, attributes, relations)` adds or updates an entity
  (type and attributes replaced) and its relations `[{"type": t, "target": id}, ...]`.
  Every relation A -t-> B is stored with its inverse B -inverse:t-> A (and an
  `inverse:t` relation with its plain inverse), each once: adding it again is a no-op.
  A target must already be an entity (an error names the missing ones).
- `kg_query(entity_id, depth)` walks breadth-first from the entity up to `depth` hops
  (default 2, at most MAX_DEPTH), each entity once however many paths reach it (cycles
  included), in the order discovered: depth 0 is the start, then its neighbours by the
  order their relations were added.
- `kg_delete(entity_id)` removes an entity and every relation to or from it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from typing import TYPE_CHECKING, Any

import duckdb

from proxy.agent.context import KeyedLocks
from proxy.agent.names import name
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from proxy.core.names import INTERNAL_SCHEMA
from proxy.core.registry import McpTool, Param, agent_function
from proxy.core.relations import agent_relation

if TYPE_CHECKING:
    from proxy.agent.context import AgentContext

ENTITIES = f"{INTERNAL_SCHEMA}.kg_entities"
RELATIONS = f"{INTERNAL_SCHEMA}.kg_relations"
INVERSE = "inverse:"
MAX_RELATIONS = 1000  # per kg_add call
MAX_DEPTH = 10
MAX_ATTRIBUTE_BYTES = 1 << 20
READ = "memory:read"
WRITE = "memory:write"

agent_relation(
    "_hatidata_kg_entities",
    "SELECT agent_id, entity_id, entity_type, attributes, created_at, updated_at "
    f"FROM {ENTITIES} WHERE org_id = $org_id AND agent_id = $agent_id",
    "The caller's knowledge-graph entities",
)
agent_relation(
    "_hatidata_kg_relations",
    "SELECT agent_id, source_id, relation, target_id, created_at "
    f"FROM {RELATIONS} WHERE org_id = $org_id AND agent_id = $agent_id",
    "The caller's knowledge-graph relations (each with its inverse)",
)


def inverse(relation: str) -> str:
    """The relation read the other way: t <-> inverse:t."""
    return relation[len(INVERSE) :] if relation.startswith(INVERSE) else INVERSE + relation


class Graph:
    def __init__(self, layer: AgentContext) -> None:
        self.layer = layer
        self._locks = KeyedLocks()  # one writer per agent graph at a time

    def _lock(self, who: Identity) -> asyncio.Lock:
        return self._locks((who.org_id, who.agent_id))

    def install(self, cur: duckdb.DuckDBPyConnection) -> None:
        """Create the tables (idempotent)."""
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {ENTITIES} (
                org_id VARCHAR NOT NULL,
                agent_id VARCHAR NOT NULL,
                entity_id VARCHAR NOT NULL,
                entity_type VARCHAR NOT NULL,
                attributes JSON NOT NULL,
                created_at TIMESTAMPTZ NOT NULL,
                updated_at TIMESTAMPTZ NOT NULL,
                PRIMARY KEY (org_id, agent_id, entity_id)
            )"""
        )
        cur.execute(
            f"""CREATE TABLE IF NOT EXISTS {RELATIONS} (
                org_id VARCHAR NOT NULL,
                agent_id VARCHAR NOT NULL,
                source_id VARCHAR NOT NULL,
                relation VARCHAR NOT NULL,
                target_id VARCHAR NOT NULL,
                seq BIGINT NOT NULL,
                created_at TIMESTAMPTZ NOT NULL,
                PRIMARY KEY (org_id, agent_id, source_id, relation, target_id)
            )"""
        )
        cur.execute(f"CREATE SEQUENCE IF NOT EXISTS {INTERNAL_SCHEMA}.kg_relation_seq")

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def add(
        self, who: Identity, entity_id: Any, entity_type: Any, attributes: Any, relations: Any
    ) -> dict[str, Any]:
        entity_id = name("entity_id", entity_id)
        entity_type = name("entity_type", entity_type)
        attrs = _attributes(attributes)
        edges = _relations(entity_id, relations)
        now = dt.datetime.now(dt.UTC)
        owner = [who.org_id, who.agent_id]

        def write(cur: duckdb.DuckDBPyConnection) -> int:
            cur.execute(
                f"""INSERT INTO {ENTITIES} AS e VALUES (?, ?, ?, ?, ?::JSON, ?, ?)
                    ON CONFLICT (org_id, agent_id, entity_id) DO UPDATE SET
                        entity_type = excluded.entity_type,
                        attributes = excluded.attributes,
                        updated_at = excluded.updated_at""",
                [*owner, entity_id, entity_type, attrs, now, now],
            )
            targets = sorted({t for _, t in edges})
            if targets:
                known = {
                    r[0]
                    for r in cur.execute(
                        f"SELECT entity_id FROM {ENTITIES} WHERE org_id = ? AND agent_id = ? "
                        "AND entity_id IN (SELECT unnest(?::VARCHAR[]))",
                        [*owner, targets],
                    ).fetchall()
                }
                missing = [t for t in targets if t not in known]
                if missing:
                    raise AgentError.invalid(
                        "relation target(s) not found: " + ", ".join(missing[:10]),
                        hint="add each target entity with kg_add first",
                    )
            added = 0
            for relation, target in edges:
                for src, rel, dst in (
                    (entity_id, relation, target),
                    (target, inverse(relation), entity_id),
                ):
                    added += len(
                        cur.execute(
                            f"INSERT INTO {RELATIONS} VALUES (?, ?, ?, ?, ?, "
                            f"nextval('{INTERNAL_SCHEMA}.kg_relation_seq'), ?) "
                            "ON CONFLICT DO NOTHING RETURNING 1",
                            [*owner, src, rel, dst, now],
                        ).fetchall()
                    )
            return added

        async with self._lock(who):
            added = await self.layer.db.transaction(write)
        return {"entity_id": entity_id, "stored": True, "relations_added": added}

    async def query(self, who: Identity, entity_id: Any, depth: Any) -> list[dict[str, Any]]:
        entity_id = name("entity_id", entity_id)
        if not isinstance(depth, int) or isinstance(depth, bool) or not 0 <= depth <= MAX_DEPTH:
            raise AgentError.invalid(f"depth must be between 0 and {MAX_DEPTH}, got {depth!r}")
        owner = [who.org_id, who.agent_id]

        def walk(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            # Breadth-first, one query per level: a visited entity is never queued again.
            found: dict[str, tuple[int, str | None, str | None]] = {entity_id: (0, None, None)}
            frontier = [entity_id]
            for level in range(1, depth + 1):
                if not frontier:
                    break
                rows = cur.execute(
                    f"SELECT r.source_id, r.relation, r.target_id FROM {RELATIONS} r "
                    "JOIN unnest(?::VARCHAR[]) WITH ORDINALITY AS f(id, pos) "
                    "ON r.source_id = f.id WHERE r.org_id = ? AND r.agent_id = ? "
                    "ORDER BY f.pos, r.seq",
                    [frontier, *owner],
                ).fetchall()
                frontier = []
                for src, rel, dst in rows:
                    if dst not in found:
                        found[dst] = (level, src, rel)
                        frontier.append(dst)
            entities = {
                r[0]: r[1:]
                for r in cur.execute(
                    f"SELECT entity_id, entity_type, attributes FROM {ENTITIES} "
                    "WHERE org_id = ? AND agent_id = ? AND entity_id IN (SELECT unnest(?))",
                    [*owner, list(found)],
                ).fetchall()
            }
            return [
                {
                    "entity_id": eid,
                    "entity_type": entities[eid][0],
                    "attributes": json.loads(entities[eid][1]),
                    "depth": level,
                    "via_entity": via,
                    "via_relation": rel,
                }
                for eid, (level, via, rel) in found.items()
                if eid in entities
            ]

        return await self.layer.db.run(walk)

    async def delete(self, who: Identity, entity_id: Any) -> dict[str, Any]:
        entity_id = name("entity_id", entity_id)
        owner = [who.org_id, who.agent_id]

        def remove(cur: duckdb.DuckDBPyConnection) -> tuple[bool, int]:
            gone = cur.execute(
                f"DELETE FROM {RELATIONS} WHERE org_id = ? AND agent_id = ? "
                "AND (source_id = ? OR target_id = ?) RETURNING 1",
                [*owner, entity_id, entity_id],
            ).fetchall()
            deleted = cur.execute(
                f"DELETE FROM {ENTITIES} WHERE org_id = ? AND agent_id = ? "
                "AND entity_id = ? RETURNING 1",
                [*owner, entity_id],
            ).fetchall()
            return bool(deleted), len(gone)

        async with self._lock(who):
            deleted, relations = await self.layer.db.transaction(remove)
        return {"entity_id": entity_id, "deleted": deleted, "relations_deleted": relations}


def _attributes(value: Any) -> str:
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise AgentError.invalid("attributes must be a JSON object")
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    if len(text.encode()) > MAX_ATTRIBUTE_BYTES:
        raise AgentError.invalid(f"attributes are over {MAX_ATTRIBUTE_BYTES} bytes of JSON")
    return text


def _relations(source: str, value: Any) -> list[tuple[str, str]]:
    """`[{"type": t, "target": id}, ...]` -> [(t, id)], checked, in the given order."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise AgentError.invalid('relations must be a JSON array of {"type", "target"} objects')
    if len(value) > MAX_RELATIONS:
        raise AgentError.invalid(f"{len(value)} relations; at most {MAX_RELATIONS} per call")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or set(item) - {"type", "target"}:
            raise AgentError.invalid(
                f'relations[{i}] must be an object with "type" and "target", got {item!r:.80}'
            )
        relation = name(f"relations[{i}].type", item.get("type"))
        target = name(f"relations[{i}].target", item.get("target"))
        if target == source:
            raise AgentError.invalid(f"relations[{i}]: an entity cannot relate to itself")
        out.append((relation, target))
    return out


# -- registered functions ------------------------------------------------------------

_ADD_COLUMNS = (("entity_id", "VARCHAR"), ("stored", "BOOLEAN"), ("relations_added", "BIGINT"))


@agent_function(
    "kg_add",
    params=[
        Param("entity_id", "VARCHAR", description="The entity's id (unique per agent)"),
        Param("entity_type", "VARCHAR", description="Its type, e.g. person, project, concept"),
        Param("attributes", "JSON", None, "Its attributes (a JSON object)", json_shape="object"),
        Param(
            "relations",
            "JSON",
            None,
            'Relations from it: [{"type": "works_on", "target": "<entity_id>"}, ...]',
            json_shape="array",
        ),
    ],
    columns=_ADD_COLUMNS,
    scope=WRITE,
    writes=True,
    mcp=McpTool(("entity_id", "entity_type", "attributes", "relations")),
)
async def kg_add(
    layer: AgentContext,
    who: Identity,
    *,
    entity_id: str,
    entity_type: str,
    attributes: Any,
    relations: Any,
) -> list[dict[str, Any]]:
    """Add or update a knowledge-graph entity and its relations; each relation A -t-> B is
    also recorded as B -inverse:t-> A, once."""
    return [await layer.graph.add(who, entity_id, entity_type, attributes, relations)]


@agent_function(
    "kg_query",
    params=[
        Param("entity_id", "VARCHAR", description="The entity to start from"),
        Param("depth", "BIGINT", 2, "Most hops to follow", minimum=0, maximum=MAX_DEPTH),
    ],
    columns=[
        ("entity_id", "VARCHAR"),
        ("entity_type", "VARCHAR"),
        ("attributes", "JSON"),
        ("depth", "BIGINT"),
        ("via_entity", "VARCHAR"),
        ("via_relation", "VARCHAR"),
    ],
    scope=READ,
    mcp=McpTool(("entity_id", "depth")),
)
async def kg_query(
    layer: AgentContext, who: Identity, *, entity_id: str, depth: int
) -> list[dict[str, Any]]:
    """Walk the knowledge graph breadth-first from an entity: each entity reached within
    `depth` hops once, in the order discovered, with the hop that reached it."""
    return await layer.graph.query(who, entity_id, depth)


@agent_function(
    "kg_delete",
    params=[Param("entity_id", "VARCHAR", description="The entity to remove")],
    columns=[("entity_id", "VARCHAR"), ("deleted", "BOOLEAN"), ("relations_deleted", "BIGINT")],
    scope=WRITE,
    writes=True,
    mcp=McpTool(("entity_id",)),
)
async def kg_delete(layer: AgentContext, who: Identity, *, entity_id: str) -> list[dict[str, Any]]:
    """Remove a knowledge-graph entity and every relation to or from it."""
    return [await layer.graph.delete(who, entity_id)]
