"""Who is calling: the identity every read and write is scoped to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from proxy.core.errors import AgentError


class RelationLimits(Protocol):
    """A key's allowed_schemas / allowed_tables (proxy.access.table_limits.TableLimits)."""

    def allows(self, schema: str, table: str) -> bool: ...

    def covers(self, other: RelationLimits | None) -> bool: ...


class Meter(Protocol):
    """Counts a key's use (proxy.access.usage.KeyMeter)."""

    def agent_call(self, name: str) -> None: ...


@dataclass(frozen=True)
class Identity:
    """Who is calling: every read and write is scoped to (org_id, agent_id)."""

    org_id: str
    agent_id: str
    user: str = ""
    # None: unrestricted (trust / configured users); an API key sets its real scopes.
    scopes: frozenset[str] | None = None
    role: str | None = None  # the API key's role (proxy.access.scopes.ROLES); None = no key
    key_id: str | None = None
    # The key's allowed_schemas / allowed_tables (None: any relation); see sql_policy.
    limits: RelationLimits | None = None
    # Counts the key's queries and agent calls (proxy.access.usage); None: not counted.
    meter: Meter | None = field(default=None, compare=False, repr=False)

    def require(self, scope: str) -> None:
        if self.scopes is not None and scope not in self.scopes:
            raise AgentError.forbidden(f"this identity lacks the {scope} scope")

    @property
    def sql_read_only(self) -> bool:
        """SQL that changes data is refused (a key without query:write)."""
        return self.scopes is not None and "query:write" not in self.scopes

    @property
    def server_files(self) -> bool:
        """May SQL read or write files on the server (read_csv, COPY TO, ATTACH)? Admins only."""
        return self.role is None or self.role == "admin"
