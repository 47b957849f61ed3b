"""GRANT, REVOKE, ALTER DEFAULT PRIVILEGES and role statements.

hatiproxy has no roles or per-object privileges: every login reads and writes every
table within its API key's limits, and objects belong to the login that created them.

- GRANT / REVOKE / ALTER DEFAULT PRIVILEGES: acknowledged, changing nothing, with the
  WARNING PostgreSQL gives for a GRANT that grants nothing (01007) or a REVOKE that
  revokes nothing (01006) and a DETAIL saying why. pg_dump writes them after every
  object and before REFRESH MATERIALIZED VIEW, so a dump of a database with privileges
  restores to its end, and the person restoring is told what was not kept.
- CREATE / ALTER / DROP ROLE | USER | GROUP: refused (0A000) with what to do instead,
  never a syntax error a user would take for a typo (pg_dumpall writes them; a role
  that cannot log in would be a silent lie).
"""

from __future__ import annotations

from transpiler.errors import TranspileError
from transpiler.model import Statement, UtilityCommand

_ROLE_TAGS = frozenset(
    f"{verb} {obj}" for verb in ("CREATE", "ALTER", "DROP") for obj in ("ROLE", "USER", "GROUP")
)


def is_privilege_tag(tag: str) -> bool:
    return tag in ("GRANT", "REVOKE") or tag in _ROLE_TAGS or tag.startswith("ALTER DEFAULT")


def privilege_statement(tag: str, words: list[str], text: str, start: int) -> Statement | None:
    """The Statement for a privilege or role statement (`words`: its upper-cased tokens),
    None for any other; raises TranspileError for role statements."""
    if tag in _ROLE_TAGS:
        raise TranspileError(
            "0A000",
            f"{tag} is not supported: hatiproxy has no roles or per-object privileges. A "
            "table, view or sequence belongs to the login that created it; only its owner "
            "or a superuser may alter or drop it. Logins are API keys and configured users.",
            start + 1,
        )
    if tag in ("GRANT", "REVOKE"):
        action = tag.lower()
    elif words[:3] == ["ALTER", "DEFAULT", "PRIVILEGES"]:
        tag = "ALTER DEFAULT PRIVILEGES"
        action = "default " + ("revoke" if "REVOKE" in words else "grant")
    else:
        return None
    return Statement(
        sql=text, kind="utility", tag=tag, command=UtilityCommand(f"privileges {action}")
    )
