"""DDL that pg_dump writes (and people copy) in words DuckDB does not take.

- `ALTER <kind> name OWNER TO role`: hatiproxy has one owner of everything (role oid 10),
  so the statement is acknowledged and changes nothing (UtilityCommand "alter <kind>
  owner to <role>").
- `ALTER SEQUENCE s OWNED BY t.col`: DuckDB ties a sequence to a table, not a column:
  `OWNED BY t` (dropping the table drops the sequence, as in PostgreSQL); `public` is main.
  A serial's sequence, `<t>_<col>_seq` in t's schema, is owned by its name already (the
  server drops it with its table, pg_depend says 'a': `serial_owned`): DuckDB's tie is left
  out, as it would refuse `DROP SEQUENCE` while the table exists (pg_restore --clean drops
  the sequence first) and any rename of the sequence.
- `CREATE SEQUENCE ... AS integer ... CACHE n`: DuckDB knows neither; both are dropped (a
  sequence's values are BIGINT; values are drawn one at a time).
- `CREATE SCHEMA [IF NOT EXISTS] [name] AUTHORIZATION role`: the schema (named after the
  role when no name is written), owned by the login that made it, as everything here.
- `CREATE FUNCTION f(a type) RETURNS t LANGUAGE sql AS $$SELECT ...$$`: see sql_functions.
"""

from __future__ import annotations

import re

from sqlglot import exp

_OWNER_TO = re.compile(
    r"^\s*ALTER\s+(TABLE|SEQUENCE|VIEW|MATERIALIZED\s+VIEW|SCHEMA|FUNCTION|PROCEDURE|INDEX"
    r"|TYPE|DOMAIN|FOREIGN\s+TABLE|AGGREGATE|DATABASE)\s+(?:ONLY\s+)?.+?\s+OWNER\s+TO\s+"
    r'("(?:[^"]|"")+"|[\w$]+)\s*;?\s*$',
    re.IGNORECASE | re.DOTALL,
)
_NAME = r'(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
_OWNED_BY = re.compile(
    rf"^(\s*ALTER\s+SEQUENCE\s+(?:IF\s+EXISTS\s+)?)({_NAME}(?:\s*\.\s*{_NAME})?)"
    rf"(\s+OWNED\s+BY\s+)({_NAME}(?:\s*\.\s*{_NAME}){{0,2}}|NONE)\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
PART = re.compile(_NAME)
_SCHEMA_AUTHORIZATION = re.compile(
    rf"^\s*CREATE\s+SCHEMA\s+(IF\s+NOT\s+EXISTS\s+)?(?:(?!AUTHORIZATION\b)({_NAME})\s+)?"
    rf"AUTHORIZATION\s+({_NAME})\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_ROLE_WORDS = frozenset({"current_user", "session_user", "current_role"})


def schema_authorization(text: str) -> str | None:
    """DuckDB's CREATE SCHEMA for a `CREATE SCHEMA ... AUTHORIZATION role`, else None."""
    m = _SCHEMA_AUTHORIZATION.match(text)
    if m is None:
        return None
    name = m[2]
    if name is None:  # the schema is named after the role
        if m[3].lower() in _ROLE_WORDS:
            return None  # (the login's name: not known here)
        name = m[3]
    return f"CREATE SCHEMA {m[1] or ''}{name}"


def owner_to(text: str) -> tuple[str, str] | None:
    """(object kind, role) of an `ALTER ... OWNER TO role`, else None."""
    m = _OWNER_TO.match(text)
    if m is None:
        return None
    return " ".join(m[1].upper().split()), m[2]


def main_schema(parts: list[str]) -> list[str]:
    if len(parts) > 1 and parts[0].lower() == "public":
        parts = ["main", *parts[1:]]
    return parts


def serial_owned(text: str) -> str | None:
    """The sequence's name as written when `text` is an `ALTER SEQUENCE s OWNED BY t.col`
    of a serial's sequence (`<t>_<col>_seq`, in t's schema); else None."""
    m = _OWNED_BY.match(text)
    if m is None or m[4].upper() == "NONE":
        return None
    seq = [_folded(p) for p in main_schema(PART.findall(m[2]))]
    owner = [_folded(p) for p in main_schema(PART.findall(m[4]))]
    if len(owner) < 2:
        return None
    table, column = owner[-2], owner[-1]
    seq_schema = seq[0] if len(seq) > 1 else None
    table_schema = owner[0] if len(owner) > 2 else None
    if seq[-1] != f"{table}_{column}_seq"[:63] or seq_schema != table_schema:
        return None
    return m[2]


def _folded(part: str) -> str:
    return part[1:-1].replace('""', '"') if part.startswith('"') else part.lower()


def owned_by(text: str) -> str | None:
    """DuckDB's form of an `ALTER SEQUENCE ... OWNED BY`, else None."""
    m = _OWNED_BY.match(text)
    if m is None:
        return None
    seq = ".".join(main_schema(PART.findall(m[2])))
    if m[4].upper() == "NONE":
        return None  # DuckDB has no OWNED BY NONE: left to DuckDB's own message
    table = PART.findall(m[4])
    if len(table) >= 2:
        table = table[:-1]  # the column: DuckDB's sequences belong to a table
    return f"{m[1]}{seq}{m[3]}{'.'.join(main_schema(table))}"


def sequence_options(tree: exp.Expr) -> str:
    """Drop `AS type` and `CACHE n` from a CREATE SEQUENCE tree; `OWNED BY t.c` (DuckDB's
    CREATE takes no such clause) becomes the returned `; ALTER SEQUENCE s OWNED BY t` to
    run after it ("" when there is none)."""
    if not isinstance(tree, exp.Create) or str(tree.args.get("kind", "")).upper() != "SEQUENCE":
        return ""
    tree.set("expression", None)
    after = ""
    for props in tree.find_all(exp.SequenceProperties):
        props.set("cache", None)
        owned = props.args.get("owned")
        props.set("owned", None)
        if isinstance(owned, exp.Column) and owned.table and isinstance(tree.this, exp.Table):
            table = exp.table_(owned.table, db=owned.args.get("db"))
            alter = (
                f"ALTER SEQUENCE {tree.this.sql('postgres')} OWNED BY "
                f"{table.sql('postgres')}.{owned.this.sql('postgres')}"
            )
            if serial_owned(alter) is None:
                after = owned_by(alter) or ""
    return f"; {after}" if after else ""
