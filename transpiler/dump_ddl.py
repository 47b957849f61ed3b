"""DDL that pg_dump writes (and people copy) in words DuckDB does not take.

- `ALTER <kind> name OWNER TO role`: hatiproxy has one owner of everything (role oid 10),
  so the statement is acknowledged and changes nothing (UtilityCommand "alter <kind>
  owner to <role>").
- `ALTER SEQUENCE s OWNED BY t.col`: DuckDB ties a sequence to a table, not a column:
  `OWNED BY t` (dropping the table drops the sequence, as in PostgreSQL); `public` is main.
- `CREATE SEQUENCE ... AS integer ... CACHE n`: DuckDB knows neither; both are dropped (a
  sequence's values are BIGINT; values are drawn one at a time).
- `CREATE SCHEMA [IF NOT EXISTS] [name] AUTHORIZATION role`: the schema (named after the
  role when no name is written), owned by the login that made it, as everything here.
- `CREATE FUNCTION f(a type) RETURNS t LANGUAGE sql AS $$SELECT ...$$`: a DuckDB macro
  (pg_proc shows macros so, and pg_dump writes them back so).
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
_PART = re.compile(_NAME)
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


def _main(parts: list[str]) -> list[str]:
    if len(parts) > 1 and parts[0].lower() == "public":
        parts = ["main", *parts[1:]]
    return parts


def owned_by(text: str) -> str | None:
    """DuckDB's form of an `ALTER SEQUENCE ... OWNED BY`, else None."""
    m = _OWNED_BY.match(text)
    if m is None:
        return None
    seq = ".".join(_main(_PART.findall(m[2])))
    if m[4].upper() == "NONE":
        return None  # DuckDB has no OWNED BY NONE: left to DuckDB's own message
    table = _PART.findall(m[4])
    if len(table) >= 2:
        table = table[:-1]  # the column: DuckDB's sequences belong to a table
    return f"{m[1]}{seq}{m[3]}{'.'.join(_main(table))}"


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
            after = (
                owned_by(
                    f"ALTER SEQUENCE {tree.this.sql('postgres')} OWNED BY {table.sql('postgres')}.{owned.this.sql('postgres')}"
                )
                or ""
            )
    return f"; {after}" if after else ""


_SQL_FUNCTION = re.compile(
    r"^\s*CREATE\s+(OR\s+REPLACE\s+)?FUNCTION\s+(.+?)\s*\((.*?)\)\s*RETURNS\s+(.+?)\s+"
    r"(?=LANGUAGE|AS|IMMUTABLE|STABLE|VOLATILE|STRICT|PARALLEL|COST|ROWS|SECURITY|CALLED"
    r"|RETURNS|LEAKPROOF|SET|WINDOW)(.*)$",
    re.IGNORECASE | re.DOTALL,
)
_BODY = re.compile(r"\bAS\s+(\$(\w*)\$)(.*?)\1", re.IGNORECASE | re.DOTALL)
_QUOTED_BODY = re.compile(r"\bAS\s+'((?:[^']|'')*)'", re.IGNORECASE | re.DOTALL)


def sql_function_macro(text: str) -> str | None:
    """`CREATE FUNCTION f(a type, ...) RETURNS t LANGUAGE sql AS $$SELECT ...$$` as DuckDB's
    `CREATE MACRO f(a, ...) AS ...` (a table macro for SETOF / TABLE results); None when
    `text` is no SQL-language function with one SELECT (or expression) as its body."""
    m = _SQL_FUNCTION.match(text)
    if m is None or not re.search(r"\bLANGUAGE\s+'?sql'?\b", m[5], re.IGNORECASE):
        return None
    body_m = _BODY.search(m[5])
    body = body_m[3] if body_m else None
    if body is None:
        quoted = _QUOTED_BODY.search(m[5])
        body = quoted[1].replace("''", "'") if quoted else None
    if body is None:
        return None
    body = body.strip().rstrip(";").strip()
    if not body or ";" in body:
        return None  # several statements: DuckDB macros hold one
    names = []
    for param in _split_params(m[3]):
        words = param.split()
        if words and words[0].upper() in ("IN", "INOUT", "VARIADIC"):
            words = words[1:]
        if words[:1] and words[0].upper() == "OUT":
            return None
        if len(words) < 2:
            return None  # unnamed parameters ($1): a macro needs names
        names.append(words[0])
    returns = m[4].strip().upper()
    head = body.split(None, 1)[0].upper() if body.split() else ""
    if returns.startswith(("SETOF", "TABLE")):
        definition = f"TABLE {body}"
    elif head in ("SELECT", "WITH", "VALUES"):
        simple = re.match(r"(?is)^SELECT\s+(.*)$", body)
        if simple and not re.search(r"(?i)\b(FROM|WHERE|GROUP|ORDER|LIMIT|UNION)\b", body):
            definition = simple[1]  # SELECT <expression>: the expression
        else:
            definition = f"({body})"
    else:
        definition = body  # an expression (what a DuckDB macro holds)
    replace = "OR REPLACE " if m[1] else ""
    name = ".".join(_main(_PART.findall(m[2])))
    return f"CREATE {replace}MACRO {name}({', '.join(names)}) AS {definition}"


def _split_params(text: str) -> list[str]:
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    if text.strip():
        out.append(text[start:].strip())
    return out
