"""Scopes and roles: what an API key may do, in one vocabulary for every interface.

Canonical scope names are the MCP ones (`memory:read`); the brief's REST names
(`MemoryRead`, `TriggerManage`, ...) are accepted as aliases wherever a person
types a scope. A role is a named default set of scopes.
"""

from __future__ import annotations

SCOPES: tuple[str, ...] = (
    "query:read",  # run SELECT / SHOW / EXPLAIN over SQL and MCP
    "query:write",  # run DML / DDL; without it a key is read-only on the wire too
    "memory:read",
    "memory:write",
    "cot:read",
    "cot:write",
    "cot:admin",  # read / approve other agents' reasoning in the organisation
    "trigger:read",
    "trigger:write",  # the brief's TriggerManage
    "trigger:org",  # triggers that watch the whole organisation, not one agent
    "query_audit:read",  # trigger fire history (the brief's QueryAuditRead)
    "branch:read",
    "branch:create",
    "branch:query",
    "branch:merge",
    "branch:discard",
    "keys:manage",  # create / list / revoke / rotate API keys of the key's organisation
)

ALIASES: dict[str, str] = {
    "QueryRead": "query:read",
    "QueryWrite": "query:write",
    "MemoryRead": "memory:read",
    "MemoryWrite": "memory:write",
    "CotRead": "cot:read",
    "CotWrite": "cot:write",
    "TriggerRead": "trigger:read",
    "TriggerManage": "trigger:write",
    "trigger:manage": "trigger:write",
    "QueryAuditRead": "query_audit:read",
    "KeysManage": "keys:manage",
}

_READS = frozenset(s for s in SCOPES if s.endswith(":read"))

ROLES: dict[str, frozenset[str]] = {
    "admin": frozenset(SCOPES),
    # Reviews what agents did: reads everything, ingests traces, records no data changes.
    "auditor": _READS | {"cot:write", "cot:admin"},
    # An agent works on its own data: no key management, audit history, org-wide triggers
    # or other agents' reasoning.
    "agent": frozenset(SCOPES) - {"keys:manage", "query_audit:read", "trigger:org", "cot:admin"},
    # Read-only analyst: reads, never writes, through any interface.
    "analyst": _READS - {"query_audit:read"},
}
ROLE_ALIASES = {"read-only": "analyst", "readonly": "analyst", "read_only": "analyst"}

WRITE_SCOPES = frozenset(s for s in SCOPES if not s.endswith(":read")) - {"branch:query"}


def normalise_scope(name: str) -> str:
    """A scope as typed by a person -> its canonical name (ValueError when unknown)."""
    name = name.strip()
    canonical = ALIASES.get(name, name)
    if canonical not in SCOPES:
        raise ValueError(f"unknown scope {name!r}; known scopes: {', '.join(SCOPES)}")
    return canonical


def normalise_role(name: str) -> str:
    role = ROLE_ALIASES.get(name.strip().lower(), name.strip().lower())
    if role not in ROLES:
        raise ValueError(f"unknown role {name!r}; known roles: {', '.join(ROLES)}")
    return role


def parse_scopes(names: str | list[str] | None, role: str) -> frozenset[str]:
    """Explicit scopes (comma-separated or a list) or, when none are given, the role's."""
    if names is None or names == "" or names == []:
        return ROLES[role]
    items = names.split(",") if isinstance(names, str) else names
    return frozenset(normalise_scope(n) for n in items if n.strip())
