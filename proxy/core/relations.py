"""The `_hatidata_*` relations: a connection's own agent rows, readable in SQL.

`SELECT * FROM _hatidata_agent_memory` shows the caller's memories. No such view is
stored anywhere: the agent data is in a database client SQL cannot reach
(proxy/db/agent_db.py), so for each statement that names one of these relations the
server reads the caller's rows from the agent database (`select`, with `$org_id` and
`$agent_id` bound to the caller's identity) and registers them on that connection's
cursor under the name (proxy/execution/sql_bridge.py). Nobody can replace or drop what
another connection reads, and a name built at run time finds nothing.

Each service declares its relations once, at import (`agent_relation`); the transpiler
is told the names (it reports which ones a statement references, like the agent
functions: see proxy/agent/__init__.py). The columns and their types are those of
`select`, read once from the agent database when the layer starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AgentRelation:
    name: str  # lower case, starts with _hatidata_
    select: str  # SQL over the agent database; $org_id / $agent_id: the caller's
    doc: str


class Relations:
    def __init__(self) -> None:
        self._by_name: dict[str, AgentRelation] = {}
        self._watchers: list[Callable[[frozenset[str]], None]] = []

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[AgentRelation]:
        return iter(list(self._by_name.values()))

    def get(self, name: str) -> AgentRelation:
        return self._by_name[name]

    def names(self) -> frozenset[str]:
        return frozenset(self._by_name)

    def watch(self, on_change: Callable[[frozenset[str]], None]) -> None:
        """Call on_change(names) now and after every declaration."""
        self._watchers.append(on_change)
        on_change(self.names())

    def add(self, relation: AgentRelation) -> None:
        if not relation.name.startswith("_hatidata_") or relation.name != relation.name.lower():
            raise ValueError(f"agent relation {relation.name!r}: a lower-case _hatidata_ name")
        self._by_name[relation.name] = relation
        for watcher in self._watchers:
            watcher(self.names())


RELATIONS = Relations()


def agent_relation(name: str, select: str, doc: str) -> AgentRelation:
    """Declare a relation of the caller's own agent rows (see the module docstring)."""
    relation = AgentRelation(name, select, doc)
    RELATIONS.add(relation)
    return relation
