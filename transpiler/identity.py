"""Identity columns (`GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY`) as PostgreSQL 15 has
them, over DuckDB, which has none.

An identity column runs as a serial one (serial_columns.py: a sequence and a nextval
default); the server keeps which columns are identity, and how, in its registry
(proxy/pgserver/identity_ddl.py), which the catalog reads (attidentity, is_identity) and
which reaches the transpiler as ColumnHints. Here:
- `declared`: the identity columns a CREATE TABLE / ALTER TABLE ADD COLUMN declares, for
  the server to record once the statement ran;
- `strip_overriding`: `INSERT ... OVERRIDING {SYSTEM | USER} VALUE`, which sqlglot cannot
  parse, taken out of the tokens (and remembered);
- `check_write`: an INSERT or UPDATE against the table's identity columns: a value into a
  GENERATED ALWAYS column is 428C9 unless OVERRIDING SYSTEM VALUE; OVERRIDING USER VALUE
  makes the given values of identity columns their defaults;
- `alter`: `ALTER TABLE ... ALTER [COLUMN] c {ADD GENERATED ... AS IDENTITY [(...)] |
  SET GENERATED ... | SET <sequence option> | RESTART [[WITH] n] | DROP IDENTITY [IF
  EXISTS]}` read into a request the server carries out (DuckDB: "No support for that
  ALTER TABLE option yet!").
A table whose identity the hints do not know (made in the same open transaction) takes
given values, as a serial column does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.tokens import Token

from transpiler.column_hints import ColumnHints
from transpiler.errors import TranspileError

ALWAYS, BY_DEFAULT = "a", "d"


@dataclass(frozen=True, slots=True)
class IdentityColumns:
    """The identity columns a CREATE TABLE or ALTER TABLE ... ADD COLUMN declares."""

    schema: str | None
    table: str
    columns: tuple[tuple[str, str], ...]  # (column, ALWAYS | BY_DEFAULT)


@dataclass(frozen=True, slots=True)
class IdentityAlter:
    """ALTER TABLE ... ALTER COLUMN c <identity action>."""

    schema: str | None
    table: str
    column: str
    if_exists: bool = False  # ALTER TABLE IF EXISTS
    add: str | None = None  # ADD GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY
    generated: str | None = None  # SET GENERATED {ALWAYS | BY DEFAULT}
    # sequence options: (word, value): start / increment / minvalue / maxvalue (value None:
    # NO MINVALUE / NO MAXVALUE), cycle ('1' / '0'), cache, name (SEQUENCE NAME)
    options: tuple[tuple[str, str | None], ...] = ()
    restart: str | None = None  # RESTART: '' (the start) or the value
    drop: bool = False  # DROP IDENTITY
    drop_if_exists: bool = False


def declared(tree: exp.Expr) -> IdentityColumns | None:
    """The identity columns of a CREATE TABLE / ALTER TABLE ADD COLUMN (before
    serial_columns turns them into sequence defaults)."""
    if isinstance(tree, exp.Create) and isinstance(tree.this, exp.Schema):
        table, columns = tree.this.this, tree.this.expressions
    elif isinstance(tree, exp.Alter) and isinstance(tree.this, exp.Table):
        table, columns = tree.this, tree.args.get("actions") or []
    else:
        return None
    if not isinstance(table, exp.Table):
        return None
    found = []
    for column in columns:
        if not isinstance(column, exp.ColumnDef):
            continue
        for constraint in column.args.get("constraints") or []:
            kind = constraint.args.get("kind")
            if (
                isinstance(kind, exp.GeneratedAsIdentityColumnConstraint)
                and kind.args.get("expression") is None
            ):
                found.append((column.name, ALWAYS if kind.this else BY_DEFAULT))
    if not found:
        return None
    return IdentityColumns(_schema(table.db or None), table.name, tuple(found))


_IDENTITY_OPEN = re.compile(r"\bAS\s+IDENTITY\s*\(", re.IGNORECASE)
_CANONICAL = (("start", "START WITH"), ("increment", "INCREMENT BY"),
              ("minvalue", "MINVALUE"), ("maxvalue", "MAXVALUE"))  # fmt: skip


def normalize_options(text: str) -> tuple[str, tuple[str | None, ...]] | None:
    """A CREATE TABLE / ADD COLUMN's identity options in the one order sqlglot reads
    (START WITH, INCREMENT BY, MINVALUE, MAXVALUE, [NO] CYCLE: SQLAlchemy writes INCREMENT
    BY first), without what a DuckDB sequence has no use for (CACHE, AS type, NO MINVALUE /
    NO MAXVALUE: the defaults); each identity column's SEQUENCE NAME (or None), in order.
    None: no options to rewrite, or ones not understood."""
    out: list[str] = []
    names: list[str | None] = []
    pos = 0
    for m in _IDENTITY_OPEN.finditer(text):
        close = text.find(")", m.end())
        parsed = _sequence_options(_WORD.findall(text[m.end() : close])) if close > 0 else None
        if parsed is None or parsed[1] is not None:
            return None
        options = dict(parsed[0])
        names.append(options.get("name"))
        words = [f"{sql} {options[k]}" for k, sql in _CANONICAL if options.get(k) is not None]
        if "cycle" in options:
            words.append("CYCLE" if options["cycle"] == "1" else "NO CYCLE")
        out.append(
            text[pos : m.start()] + "AS IDENTITY" + (f" ({' '.join(words)})" if words else "")
        )
        pos = close + 1
    if not out:
        return None
    return "".join(out) + text[pos:], tuple(names)


def strip_overriding(tokens: list[Token]) -> tuple[list[Token], str | None]:
    """An INSERT's tokens without `OVERRIDING {SYSTEM | USER} VALUE`, and which it was
    ('system' / 'user'; None: not there)."""
    for i in range(len(tokens) - 2):
        word = tokens[i].text.upper()
        if word == "OVERRIDING" and tokens[i + 2].text.upper() == "VALUE":
            which = tokens[i + 1].text.upper()
            if which in ("SYSTEM", "USER"):
                return tokens[:i] + tokens[i + 3 :], which.lower()
    return tokens, None


def _is_default(value: exp.Expr) -> bool:
    if isinstance(value, exp.Var):
        return value.name.upper() == "DEFAULT"
    return (
        isinstance(value, exp.Column)
        and not value.table
        and isinstance(value.this, exp.Identifier)
        and not value.this.quoted
        and value.name.upper() == "DEFAULT"
    )


def _always(name: str) -> str:
    return f'Column "{name}" is an identity column defined as GENERATED ALWAYS.'


def _insert_error(name: str) -> TranspileError:
    return TranspileError(
        "428C9",
        f'cannot insert a non-DEFAULT value into column "{name}"',
        detail=_always(name),
        hint="Use OVERRIDING SYSTEM VALUE to override.",
    )


def _check_sets(sets: list[exp.Expr], identity: dict[str, tuple[str, str]]) -> None:
    for item in sets:
        if isinstance(item, exp.EQ) and isinstance(item.this, exp.Column):
            found = identity.get(item.this.name.lower())
            if found and found[1] == ALWAYS and not _is_default(item.expression):
                name = found[0]
                raise TranspileError(
                    "428C9", f'column "{name}" can only be updated to DEFAULT', detail=_always(name)
                )


def check_write(tree: exp.Expr, hints: ColumnHints | None, overriding: str | None) -> None:
    """Refuse (428C9) what PostgreSQL refuses of a write to identity columns; carry out
    OVERRIDING USER VALUE (the given values of identity columns become DEFAULT)."""
    if isinstance(tree, exp.Update):  # SET c = DEFAULT: the keyword, not a column "DEFAULT"
        for item in tree.expressions:
            if isinstance(item, exp.EQ) and _is_default(item.expression):
                item.set("expression", exp.var("DEFAULT"))
    if hints is None:
        return
    if isinstance(tree, exp.Merge):
        _check_merge(tree, hints)
        return
    if isinstance(tree, exp.Update):
        target = tree.this
        if isinstance(target, exp.Table):
            _check_sets(tree.expressions, hints.identity(target.name.lower()))
        return
    if not isinstance(tree, exp.Insert):
        return
    target = tree.this
    names: list[str] | None = None
    table = target.this if isinstance(target, exp.Schema) else target
    if not isinstance(table, exp.Table):
        return
    identity = hints.identity(table.name.lower())
    if not identity:
        return
    if isinstance(target, exp.Schema):
        names = [c.name for c in target.expressions]
    else:
        names = list(hints.column_order(table.name.lower()) or ()) or None
    if names is not None and overriding != "system":
        _check_insert(tree, table, names, identity, overriding)
    conflict = tree.args.get("conflict")
    if isinstance(conflict, exp.OnConflict):
        _check_sets(conflict.expressions or [], identity)


def _check_merge(tree: exp.Merge, hints: ColumnHints) -> None:
    """MERGE ... WHEN NOT MATCHED THEN INSERT / WHEN MATCHED THEN UPDATE: as INSERT and
    UPDATE."""
    target = tree.this
    if not isinstance(target, exp.Table):
        return
    identity = hints.identity(target.name.lower())
    whens = tree.args.get("whens")
    if not identity or not isinstance(whens, exp.Whens):
        return
    for when in whens.expressions:
        then = when.args.get("then")
        if isinstance(then, exp.Update):
            _check_sets(then.expressions, identity)
        elif isinstance(then, exp.Insert) and isinstance(then.expression, exp.Tuple):
            columns = then.this.expressions if isinstance(then.this, exp.Tuple) else None
            names = (
                [c.name for c in columns] if columns else hints.column_order(target.name.lower())
            )
            for name, value in zip(names or (), then.expression.expressions, strict=False):
                found = identity.get(name.lower())
                if found and found[1] == ALWAYS and not _is_default(value):
                    raise _insert_error(found[0])


def _check_insert(
    tree: exp.Insert,
    table: exp.Table,
    names: list[str],
    identity: dict[str, tuple[str, str]],
    overriding: str | None,
) -> None:
    positions = [
        (i, identity[n.lower()])
        for i, n in enumerate(names)
        if n.lower() in identity and (overriding == "user" or identity[n.lower()][1] == ALWAYS)
    ]
    if not positions:
        return
    values = tree.expression
    skip = {i for i, _ in positions}
    if isinstance(values, exp.Values):
        rows = [
            row.expressions if isinstance(row, exp.Tuple) else [row] for row in values.expressions
        ]
        given = [row[i] for row in rows for i in skip if i < len(row) and not _is_default(row[i])]
        if given and overriding != "user":
            at = next(
                i for row in rows for i in sorted(skip) if i < len(row) and not _is_default(row[i])
            )
            raise _insert_error(dict(positions)[at][0])
        if any(v.find(exp.Placeholder, exp.Parameter) for v in given):
            # a parameter stays bound (the client sends it): the row read through a query
            _user_value_query(tree, table, names, skip, values)
        else:
            for value in given:
                value.replace(exp.var("DEFAULT"))
    elif overriding != "user":
        raise _insert_error(positions[0][1][0])
    elif isinstance(values, exp.Query):
        _user_value_query(tree, table, names, skip, values)


def _user_value_query(
    tree: exp.Insert, table: exp.Table, names: list[str], skip: set[int], query: exp.Expr
) -> None:
    """INSERT ... OVERRIDING USER VALUE SELECT / VALUES ...: the identity columns leave the
    column list, and their values the query (read through a subquery of numbered columns)."""
    width = len(names)
    if isinstance(query, exp.Select) and not any(
        isinstance(e, exp.Star) for e in query.expressions
    ):
        width = min(width, len(query.expressions))
    alias = [f"__hati_c{i}" for i in range(width)]
    kept = [i for i in range(width) if i not in skip]
    select = exp.select(*(exp.column(alias[i]) for i in kept)).from_(
        exp.Subquery(
            this=query.copy(),
            alias=exp.TableAlias(
                this=exp.to_identifier("__hati_user_value"),
                columns=[exp.to_identifier(a) for a in alias],
            ),
        )
    )
    columns = [exp.to_identifier(names[i], quoted=True) for i in kept]
    tree.set("this", exp.Schema(this=table.copy(), expressions=columns))
    tree.set("expression", select)


# --- ALTER TABLE ... ALTER COLUMN c <identity action> ---------------------------------

_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
_HEAD = re.compile(
    rf"^\s*ALTER\s+TABLE\s+(IF\s+EXISTS\s+)?(?:ONLY\s+)?((?:{_IDENT}\s*\.\s*)?{_IDENT})\s*\*?\s+"
    rf"ALTER\s+(?:COLUMN\s+)?({_IDENT})\s+(.*?)\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_WORD = re.compile(rf"{_IDENT}(?:\s*\.\s*{_IDENT})*|[+-]?\d+|[(),]|\S", re.IGNORECASE)
_ACTION_START = re.compile(r"^(ADD\s+GENERATED|SET\s+|RESTART|DROP\s+IDENTITY)\b", re.I)


def _name(text: str) -> str:
    text = text.strip()
    if text.startswith('"'):
        return text[1:-1].replace('""', '"')
    return text.lower()


def _table_name(text: str) -> tuple[str | None, str]:
    parts = [_name(p) for p in re.findall(r'"(?:[^"]|"")+"|[^.\s]+', text)]
    return (_schema(parts[-2]) if len(parts) > 1 else None), parts[-1]


def _schema(name: str | None) -> str | None:
    return "main" if name == "public" else name


def alter(text: str) -> IdentityAlter | None:
    """The request of an identity ALTER TABLE, else None (not such a statement)."""
    head = _HEAD.match(text)
    if head is None or not _ACTION_START.match(head[4]):
        return None
    words = _WORD.findall(head[4])
    schema, table = _table_name(head[2])
    base = {"schema": schema, "table": table, "column": _name(head[3]), "if_exists": bool(head[1])}
    up = [w.upper() for w in words]
    if up[:2] == ["DROP", "IDENTITY"]:
        rest = up[2:]
        if rest not in ([], ["IF", "EXISTS"]):
            return None
        return IdentityAlter(**base, drop=True, drop_if_exists=bool(rest))
    if up[:2] == ["ADD", "GENERATED"]:
        kind, i = _generation(up, 2)
        if kind is None or up[i : i + 2] != ["AS", "IDENTITY"]:
            return None
        i += 2
        options: list[tuple[str, str | None]] = []
        if i < len(up):
            if up[i] != "(" or up[-1] != ")":
                return None
            parsed = _sequence_options(words[i + 1 : -1])
            if parsed is None:
                return None
            options, restart = parsed
            if restart is not None:
                return None
        elif i != len(up):
            return None
        return IdentityAlter(**base, add=kind, options=tuple(options))
    # SET GENERATED ... / SET <option> / RESTART, in any number
    generated = None
    steps: list[str] = []
    i = 0
    while i < len(words):
        if up[i] == "SET" and i + 1 < len(up) and up[i + 1] == "GENERATED":
            generated, i = _generation(up, i + 2)
            if generated is None:
                return None
            continue
        if up[i] == "SET":
            i += 1
            continue
        steps.append(words[i])
        i += 1
    parsed = _sequence_options(steps)
    if parsed is None:
        return None
    options, restart = parsed
    if any(word == "name" for word, _ in options):
        return None  # SET SEQUENCE NAME: PostgreSQL refuses it too
    return IdentityAlter(**base, generated=generated, options=tuple(options), restart=restart)


def _generation(up: list[str], i: int) -> tuple[str | None, int]:
    if up[i : i + 1] == ["ALWAYS"]:
        return ALWAYS, i + 1
    if up[i : i + 2] == ["BY", "DEFAULT"]:
        return BY_DEFAULT, i + 2
    return None, i


def _sequence_options(words: list[str]) -> tuple[list[tuple[str, str | None]], str | None] | None:
    """Sequence options as ALTER / CREATE SEQUENCE take them: (options, RESTART value)."""
    up = [w.upper() for w in words]
    out: list[tuple[str, str | None]] = []
    restart = None
    i = 0

    def number(j: int) -> str | None:
        return words[j] if j < len(words) and re.fullmatch(r"[+-]?\d+", words[j]) else None

    while i < len(words):
        w = up[i]
        if w in ("START", "INCREMENT", "RESTART"):
            j = i + 1
            if j < len(up) and up[j] == ("BY" if w == "INCREMENT" else "WITH"):
                j += 1
            value = number(j)
            if w == "RESTART":
                restart = value or ""
                i = j + (value is not None)
                continue
            if value is None:
                return None
            out.append(("start" if w == "START" else "increment", value))
            i = j + 1
        elif w in ("MINVALUE", "MAXVALUE", "CACHE"):
            value = number(i + 1)
            if value is None:
                return None
            out.append((w.lower(), value))
            i += 2
        elif w == "NO" and i + 1 < len(up) and up[i + 1] in ("MINVALUE", "MAXVALUE", "CYCLE"):
            out.append((up[i + 1].lower(), "0" if up[i + 1] == "CYCLE" else None))
            i += 2
        elif w == "CYCLE":
            out.append(("cycle", "1"))
            i += 1
        elif w == "SEQUENCE" and i + 2 < len(up) and up[i + 1] == "NAME":
            out.append(("name", words[i + 2]))
            i += 3
        elif w == "AS" and i + 1 < len(up):
            i += 2  # the sequence's type: DuckDB's are all bigint
        elif w == ",":
            i += 1
        else:
            return None
    return out, restart
