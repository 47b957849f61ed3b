"""CREATE / ALTER / DROP DOMAIN, read from their text, and the CHECK a table column of a
domain type gets (the server carries them out: proxy/pgserver/domains.py).

A domain is a DuckDB type alias (`CREATE TYPE email AS VARCHAR`: its name works wherever
a type name does) plus a row in the registry `main.__hati_domains`. DuckDB forgets the
alias in a column (the column is VARCHAR), so a column of a domain type carries one
table CHECK that names the domain in a string (`'hati_domain:main.email' IS NULL`, never
true) and raises PostgreSQL's error when a constraint fails: the catalog reads the
column's domain back from it, and a rename of the column follows it (DuckDB rewrites
its CHECKs). Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot import exp, parse_one
from sqlglot import parse as parse_sql
from sqlglot.errors import ParseError, TokenError

from transpiler.errors import TranspileError

MARKER = "hati_domain:"
TOO_LONG = "value too long for type character varying"
VALUE = "__hati_value"  # what VALUE becomes in a CHECK's expression before it is transpiled
_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
_QNAME = rf"{_IDENT}(?:\s*\.\s*{_IDENT})?"
_CLAUSE_WORDS = ("COLLATE", "DEFAULT", "CONSTRAINT", "NOT", "NULL", "CHECK")


@dataclass(frozen=True, slots=True)
class DomainCheck:
    name: str | None  # as declared; None: <domain>_check (numbered when taken)
    expr: str  # PostgreSQL text, VALUE as written
    not_valid: bool = False


@dataclass(frozen=True, slots=True)
class DomainDdl:
    """One domain statement. action: create, drop, add_constraint, drop_constraint,
    set_default, drop_default, set_not_null, drop_not_null, rename, rename_constraint."""

    action: str
    schema: str | None  # folded; None: unqualified
    name: str
    base: str = ""  # CREATE: the base type as written
    default: str | None = None
    not_null: bool = False
    checks: tuple[DomainCheck, ...] = ()
    collation: str | None = None
    if_exists: bool = False
    cascade: bool = False
    target: str | None = None  # a constraint's name (DROP / RENAME CONSTRAINT)
    new_name: str | None = None
    names: tuple[tuple[str | None, str], ...] = field(default=())  # DROP DOMAIN a, b


def fold(ident: str) -> str:
    ident = ident.strip()
    if ident.startswith('"'):
        return ident[1:-1].replace('""', '"')
    return ident.lower()


def split_name(text: str) -> tuple[str | None, str]:
    parts = [fold(p) for p in re.findall(_IDENT, text)]
    if len(parts) == 1:
        return None, parts[0]
    schema = "main" if parts[0] == "public" else parts[0]
    return schema, parts[-1]


def _error(message: str) -> TranspileError:
    return TranspileError("42601", message, None)


def _words(text: str, nested: bool = False) -> list[tuple[int, int, str]]:
    """(start, end, upper word) of each word outside strings, quotes and (unless
    `nested`) parentheses."""
    out: list[tuple[int, int, str]] = []
    depth, i = 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "'\"":
            j = i + 1
            while j < len(text):
                if text[j] == ch:
                    if j + 1 < len(text) and text[j + 1] == ch:
                        j += 2
                        continue
                    break
                j += 1
            i = j + 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif (depth == 0 or nested) and (ch.isalpha() or ch == "_"):
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] in "_$"):
                j += 1
            out.append((i, j, text[i:j].upper()))
            i = j
            continue
        i += 1
    return out


def _paren(text: str, start: int) -> tuple[str, int]:
    """The text inside the parentheses opening at or after `start`, and the end."""
    i = text.index("(", start)
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return text[i + 1 : j].strip(), j + 1
    raise _error("syntax error at end of input")


def _no_subquery(expr: str, where: str) -> None:
    """PostgreSQL refuses a query inside a domain's CHECK or DEFAULT: it would read tables
    whenever anyone casts to the domain, with nobody's privileges checked."""
    try:
        tree = parse_one(f"SELECT {expr}", read="postgres")
    except (ParseError, TokenError):
        return  # the expression is refused where it is transpiled
    if any(node is not tree for node in tree.find_all(exp.Select)):
        raise TranspileError("0A000", f"cannot use subquery in {where}", None)


def _constraints(text: str) -> tuple[str | None, bool, list[DomainCheck], str | None]:
    """DEFAULT, NOT NULL, CHECKs and COLLATE of a CREATE DOMAIN after its type."""
    default = collation = None
    not_null, checks = False, []
    words = _words(text)
    clause_at = [w for w in words if w[2] in _CLAUSE_WORDS]
    name: str | None = None
    k = 0
    while k < len(clause_at):
        start, end, word = clause_at[k]
        nxt = clause_at[k + 1][0] if k + 1 < len(clause_at) else len(text)
        if word == "DEFAULT":
            # the expression runs to the next clause word that starts a clause
            stop = k + 1
            while stop < len(clause_at) and clause_at[stop][2] in ("NOT", "NULL"):
                if (
                    clause_at[stop][2] == "NOT"
                    and text[clause_at[stop][1] :].lstrip()[:4].upper() == "NULL"
                ):
                    break
                stop += 1
            nxt = clause_at[stop][0] if stop < len(clause_at) else len(text)
            default = text[end:nxt].strip()
            _no_subquery(default, "DEFAULT expression")
            k = stop
            continue
        if word == "COLLATE":
            collation = text[end:nxt].strip()
        elif word == "CONSTRAINT":
            name = fold(text[end:nxt].strip())
        elif word == "NOT":
            not_null, name = True, None
            k += 2  # NOT NULL
            continue
        elif word == "NULL":
            not_null, name = False, None
        elif word == "CHECK":
            expr, after = _paren(text, end)
            _no_subquery(expr, "check constraint")
            rest = text[after:].lstrip().upper()
            checks.append(DomainCheck(name, expr, rest.startswith("NOT VALID")))
            name = None
            while k + 1 < len(clause_at) and clause_at[k + 1][0] < after:
                k += 1
        k += 1
    return default, not_null, checks, collation


_CREATE = re.compile(rf"^\s*CREATE\s+DOMAIN\s+({_QNAME})\s+(?:AS\s+)?(.*?)\s*;?\s*$", re.I | re.S)
_DROP = re.compile(r"^\s*DROP\s+DOMAIN\s+(IF\s+EXISTS\s+)?(.*?)\s*;?\s*$", re.I | re.S)
_ALTER = re.compile(rf"^\s*ALTER\s+DOMAIN\s+({_QNAME})\s+(.*?)\s*;?\s*$", re.I | re.S)


def parse(text: str) -> DomainDdl:
    """The domain statement in `text` (CREATE / ALTER / DROP DOMAIN); 42601 if unreadable."""
    if m := _CREATE.match(text):
        schema, name = split_name(m[1])
        rest = m[2]
        first = [w for w in _words(rest) if w[2] in _CLAUSE_WORDS]
        cut = first[0][0] if first else len(rest)
        base = rest[:cut].strip()
        if not base:
            raise _error("syntax error at end of input")
        default, not_null, checks, collation = _constraints(rest[cut:])
        return DomainDdl("create", schema, name, base, default, not_null, tuple(checks), collation)
    if m := _DROP.match(text):
        body = m[2]
        cascade = bool(re.search(r"\s+CASCADE$", body, re.I))
        body = re.sub(r"\s+(CASCADE|RESTRICT)$", "", body, flags=re.I)
        names = tuple(split_name(p) for p in body.split(","))
        schema, name = names[0]
        return DomainDdl("drop", schema, name, if_exists=bool(m[1]), cascade=cascade, names=names)
    if m := _ALTER.match(text):
        schema, name = split_name(m[1])
        rest = m[2]
        up = " ".join(rest.upper().split())
        if up.startswith("ADD"):
            _, _, checks, _ = _constraints(rest[3:])
            if not checks:
                raise TranspileError("0A000", "ALTER DOMAIN ADD supports CHECK constraints", None)
            return DomainDdl("add_constraint", schema, name, checks=tuple(checks[:1]))
        if up.startswith("DROP CONSTRAINT"):
            words = rest.split()
            if_exists = len(words) > 3 and words[2].upper() == "IF"
            target = fold(words[4] if if_exists else words[2])
            return DomainDdl("drop_constraint", schema, name, target=target, if_exists=if_exists)
        if up.startswith("SET DEFAULT"):
            return DomainDdl("set_default", schema, name, default=rest.split(None, 2)[2])
        if up == "DROP DEFAULT":
            return DomainDdl("drop_default", schema, name)
        if up == "SET NOT NULL":
            return DomainDdl("set_not_null", schema, name)
        if up == "DROP NOT NULL":
            return DomainDdl("drop_not_null", schema, name)
        if rc := re.match(rf"RENAME\s+CONSTRAINT\s+({_IDENT})\s+TO\s+({_IDENT})$", rest, re.I):
            return DomainDdl(
                "rename_constraint", schema, name, target=fold(rc[1]), new_name=fold(rc[2])
            )
        if rn := re.match(rf"RENAME\s+TO\s+({_IDENT})$", rest, re.I):
            return DomainDdl("rename", schema, name, new_name=fold(rn[1]))
        if re.match(r"(OWNER\s+TO|VALIDATE\s+CONSTRAINT)\b", rest, re.I):
            return DomainDdl("noop", schema, name)
    raise TranspileError(
        "0A000", f"this form of {text.split()[0].upper()} DOMAIN is not supported", None
    )


def value_expr(expr: str) -> str:
    """A CHECK's expression with VALUE (a word outside strings) as the column VALUE."""
    text = f"({expr})"
    out, last = [], 0
    for start, end, word in _words(text, nested=True):
        if word == "VALUE":
            out.append(text[last:start] + VALUE)
            last = end
    return "".join(out) + text[last:]


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def column_check(
    qualified: str,
    shown: str,
    column: str,
    checks: list[tuple[str, str]],
    not_null: bool,
    max_length: int | None = None,
) -> str:
    """The table CHECK of a column of domain `qualified` (schema.name): `checks` are
    (constraint name, DuckDB expression over VALUE), in PostgreSQL's order (by name);
    `max_length`: n of a varchar(n) / char(n) base type (DuckDB's text has none)."""
    col = '"' + column.replace('"', '""') + '"'
    parts = [f"CASE WHEN {_lit(MARKER + qualified)} IS NULL THEN NULL"]
    if max_length is not None:
        message = f"{TOO_LONG}({max_length})"
        parts.append(f"WHEN length({col}) > {max_length} THEN error({_lit(message)})")
    if not_null:
        message = f"domain {shown} does not allow null values"
        parts.append(f"WHEN {col} IS NULL THEN error({_lit(message)})")
    for name, duck in checks:
        message = f'value for domain {shown} violates check constraint "{name}"'
        expr = re.sub(rf"\b{VALUE}\b", lambda _m: col, duck)
        parts.append(f"WHEN ({expr}) IS FALSE THEN error({_lit(message)})")
    # (the column named in every form: DuckDB lists a CHECK's columns, the catalog reads it)
    return " ".join(parts) + f" ELSE ({col} IS NULL OR TRUE) END"


def domain_columns(create_sql: str, known: set[str]) -> list[tuple[str, str, bool]]:
    """(column, type as written, has a default) of each column of a CREATE TABLE (DuckDB
    text) whose type is one of `known` (lower-case names, bare or schema-qualified)."""
    try:
        tree = parse_one(create_sql, read="duckdb")
    except ParseError:
        return []
    out = []
    for col in tree.find_all(exp.ColumnDef):
        kind = col.args.get("kind")
        if not isinstance(kind, exp.DataType) or kind.this != exp.DataType.Type.USERDEFINED:
            continue
        written = str(kind.args.get("kind") or "")
        if written.lower() in known or written.lower().split(".")[-1] in known:
            has_default = any(
                isinstance(c.args.get("kind"), exp.DefaultColumnConstraint)
                for c in col.args.get("constraints") or []
            )
            out.append((col.name, written, has_default))
    return out


def add_table_checks(create_sql: str, checks: list[str]) -> str:
    """`create_sql` (one CREATE TABLE) with table CHECKs added before its column list's
    closing parenthesis."""
    start = create_sql.index("(")
    _, end = _paren(create_sql, start)
    extra = "".join(f", CHECK ({c})" for c in checks)
    return create_sql[: end - 1] + extra + create_sql[end - 1 :]


def cast_macro(
    qualified: str,
    shown: str,
    duck_type: str,
    checks: list[tuple[str, str]],
    not_null: bool,
    max_length: int | None = None,
) -> str:
    """The body of the macro a cast to the domain becomes (rewrite_casts): the value as
    the base type (a varchar(n)'s cut to n, as an explicit cast does), or PostgreSQL's
    error when a constraint fails."""
    value = f"CAST(v AS {duck_type})"
    if max_length is not None:
        value = f"left({value}, {max_length})"
    parts = ["CASE"]
    if not_null:
        message = f"domain {shown} does not allow null values"
        parts.append(f"WHEN v IS NULL THEN error({_lit(message)})")
    for name, duck in checks:
        message = f'value for domain {shown} violates check constraint "{name}"'
        expr = re.sub(rf"\b{VALUE}\b", lambda _m: value, duck)
        parts.append(f"WHEN ({expr}) IS FALSE THEN error({_lit(message)})")
    if len(parts) == 1:
        return value
    return " ".join(parts) + f" ELSE {value} END"


def macro_name(schema: str, name: str) -> str:
    """The cast macro of domain schema.name (in the database's main schema)."""
    return "__hati_domain_" + re.sub(r"\W", "_", f"{schema}_{name}")


def rewrite_casts(sql: str, domains: dict[str, str]) -> str | None:
    """`sql` (DuckDB's words) with each CAST to a domain (`domains`: its lower-case name,
    bare and schema-qualified -> its macro) a call of the domain's macro, or None when it
    has none."""
    try:
        trees = [t for t in parse_sql(sql, read="duckdb") if t is not None]
    except (ParseError, TokenError):  # DuckDB text sqlglot cannot read: as it is
        return None
    changed = False
    for tree in trees:
        for cast in list(tree.find_all(exp.Cast)):
            to = cast.args.get("to")
            if not isinstance(to, exp.DataType) or to.this != exp.DataType.Type.USERDEFINED:
                continue
            macro = domains.get(str(to.args.get("kind") or "").lower())
            if macro is None:
                continue
            cast.replace(exp.Anonymous(this=macro, expressions=[cast.this.copy()]))
            changed = True
    if not changed:
        return None
    return "; ".join(t.sql(dialect="duckdb") for t in trees)


def added_column(alter_sql: str, known: set[str]) -> tuple[exp.Table, str, str, bool] | None:
    """(table, column, type as written, has a default) of an `ALTER TABLE ... ADD COLUMN`
    (DuckDB text, one action) whose type is one of `known`, else None."""
    try:
        tree = parse_one(alter_sql, read="duckdb")
    except ParseError:
        return None
    if not isinstance(tree, exp.Alter) or len(tree.args.get("actions") or []) != 1:
        return None
    table = tree.this
    found = domain_columns(f"CREATE TABLE t ({tree.args['actions'][0].sql('duckdb')})", known)
    if not isinstance(table, exp.Table) or not found:
        return None
    return (table, *found[0])
