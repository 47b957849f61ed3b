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
    # The agent an API key is bound to (hd_agent_ keys); None for organisation keys, whose
    # agent_id the client chooses. With org_id it names the login objects belong to.
    key_agent: str | None = None
    # A wire session on a database its organisation created (proxy/db/databases.py):
    # everything there is the organisation's, so no boundary between organisations is
    # checked inside it (the database is the boundary: other organisations' keys never
    # connect to it).
    own_database: bool = False

    @property
    def login(self) -> tuple[str, str, str]:
        """Who owns what this identity creates: ("user", "", name) for a server superuser,
        ("key", org, bound agent or "") for an API key. Never what a client types for a
        key (the PG user name, an unbound agent id), and the same after a key rotation."""
        if self.superuser:
            return ("user", "", self.user)
        return ("key", self.org_id, self.key_agent or "")

    def require(self, scope: str) -> None:
        """Refuse unless this identity has `scope` (an empty scope: anyone may)."""
        if scope and self.scopes is not None and scope not in self.scopes:
            raise AgentError.forbidden(f"this identity lacks the {scope} scope")

    @property
    def sql_read_only(self) -> bool:
        """SQL that changes data is refused (a key without query:write)."""
        return self.scopes is not None and "query:write" not in self.scopes

    @property
    def superuser(self) -> bool:
        """A server superuser: a login without an API key (trust mode, a configured user).
        Every API key, an organisation's admin key included, is an ordinary login."""
        return self.role is None

    @property
    def server_files(self) -> bool:
        """May SQL read or write files on the server (read_csv, COPY TO, ATTACH, INSTALL,
        DuckDB-wide SET)? Server superusers only: an organisation's admin key may not, since
        the server's files and settings are shared by every organisation."""
        return self.superuser
