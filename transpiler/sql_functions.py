"""`CREATE FUNCTION f(a type, ...) RETURNS t LANGUAGE sql AS $$SELECT ...$$` as a DuckDB
macro, and the declaration PostgreSQL would show for it.

A DuckDB macro has untyped parameters and no result type, volatility or STRICT. So the
statement also writes the declaration to the registry table `main.__hati_routines`
(proxy/db/catalog/install.py), in the same DuckDB call (and so the same transaction):
pg_proc, psql's `\\df` / `\\sf`, pg_get_functiondef and pg_dump then show the function as
written -- argument and result types as PostgreSQL names them, volatility, STRICT, the
body -- and a dump restores into PostgreSQL.
"""

from __future__ import annotations

import re

from transpiler.dump_ddl import PART, main_schema

REGISTRY = "main.__hati_routines"

_SQL_FUNCTION = re.compile(
    r"^\s*CREATE\s+(OR\s+REPLACE\s+)?FUNCTION\s+(.+?)\s*\((.*?)\)\s*RETURNS\s+(.+?)\s+"
    r"(?=LANGUAGE|AS|IMMUTABLE|STABLE|VOLATILE|STRICT|PARALLEL|COST|ROWS|SECURITY|CALLED"
    r"|RETURNS|LEAKPROOF|SET|WINDOW)(.*)$",
    re.IGNORECASE | re.DOTALL,
)
_BODY = re.compile(r"\bAS\s+(\$(\w*)\$)(.*?)\1", re.IGNORECASE | re.DOTALL)
_QUOTED_BODY = re.compile(r"\bAS\s+'((?:[^']|'')*)'", re.IGNORECASE | re.DOTALL)
_DEFAULT = re.compile(r"\s+(?:DEFAULT\s+|=\s*)(.*)$", re.IGNORECASE | re.DOTALL)
_VOLATILITY = {"IMMUTABLE": "i", "STABLE": "s", "VOLATILE": "v"}
_TYPES = "__hati_catalog.pg"
# Built-in scalar types: `SETOF` one of these is one column (SETOF a table or record is
# the row's columns).
_SCALARS = frozenset(
    [
        "smallint",
        "integer",
        "int",
        "int2",
        "int4",
        "int8",
        "bigint",
        "real",
        "float",
        "float4",
        "float8",
        "double",
        "numeric",
        "decimal",
        "text",
        "varchar",
        "character",
        "char",
        "bpchar",
        "boolean",
        "bool",
        "date",
        "time",
        "timestamp",
        "timestamptz",
        "interval",
        "uuid",
        "json",
        "jsonb",
        "bytea",
        "name",
        "oid",
    ]
)


def sql_function_macro(text: str) -> str | None:
    """The macro and its registry row for a SQL-language function with one SELECT (or
    expression) as its body (a table macro for SETOF / TABLE results); None otherwise."""
    m = _SQL_FUNCTION.match(text)
    if m is None or not re.search(r"\bLANGUAGE\s+'?sql'?\b", m[5], re.IGNORECASE):
        return None
    body_m = _BODY.search(m[5])
    source = body_m[3] if body_m else None
    if source is None:
        quoted = _QUOTED_BODY.search(m[5])
        source = quoted[1].replace("''", "'") if quoted else None
    if source is None:
        return None
    body = source.strip().rstrip(";").strip()
    if not body or ";" in body:
        return None  # several statements: DuckDB macros hold one
    params = []
    for param in _split_params(m[3]):
        default = _DEFAULT.search(param)
        if default:
            param = param[: default.start()]
        words = param.split()
        if words and words[0].upper() in ("IN", "INOUT", "VARIADIC"):
            words = words[1:]
        if words[:1] and words[0].upper() == "OUT":
            return None
        if len(words) < 2:
            return None  # unnamed parameters ($1): a macro needs names
        params.append((words[0], " ".join(words[1:]), default[1].strip() if default else None))
    returns = " ".join(m[4].split())
    head = body.split(None, 1)[0].upper() if body.split() else ""
    parts = main_schema(PART.findall(m[2]))
    if returns.upper().startswith(("SETOF", "TABLE")):
        # the result's columns named as PostgreSQL names them: TABLE's, or the function's
        names = [c.split(None, 1)[0] for c in _table_columns(returns)]
        if not names and _scalar(returns[5:]):
            names = [parts[-1]]  # SETOF integer: one column, named after the function
        columns = ", ".join(_quote(_fold(n)) for n in names)
        definition = (
            f"TABLE SELECT * FROM ({body}) AS __hati_f({columns})" if names else f"TABLE {body}"
        )
    elif head in ("SELECT", "WITH", "VALUES"):
        simple = re.match(r"(?is)^SELECT\s+(.*)$", body)
        if simple and not re.search(r"(?i)\b(FROM|WHERE|GROUP|ORDER|LIMIT|UNION)\b", body):
            definition = simple[1]  # SELECT <expression>: the expression
        else:
            definition = f"({body})"
    else:
        definition = body  # an expression (what a DuckDB macro holds)
    replace = "OR REPLACE " if m[1] else ""
    args = ", ".join(n if d is None else f"{n} := {d}" for n, _, d in params)
    macro = f"CREATE {replace}MACRO {'.'.join(parts)}({args}) AS {definition}"
    return f"{macro}; {_registry_row(parts, params, returns, m[5], source)}"


def _registry_row(
    parts: list[str],
    params: list[tuple[str, str, str | None]],
    returns: str,
    options: str,
    source: str,
) -> str:
    # DuckDB's schema names (public is main), as duckdb_functions() lists the macro
    schema = _lit(_fold(parts[0])) if len(parts) > 1 else "current_schema()"
    schema = f"CASE {schema} WHEN 'public' THEN 'main' ELSE {schema} END"
    name = _lit(_fold(parts[-1]))
    arguments = " || ', ' || ".join(
        f"{_lit(_fold(n) + ' ')} || {_type_name(t)}" + _default(d, t) for n, t, d in params
    )
    identity = " || ', ' || ".join(
        f"{_lit(_fold(n) + ' ')} || {_type_name(t)}" for n, t, _ in params
    )
    oids = ", ".join(_type_oid(t) for _, t, _ in params)
    upper = returns.upper()
    if upper.startswith("TABLE"):
        columns = [c.split(None, 1) for c in _table_columns(returns)]
        shown = " || ', ' || ".join(
            f"{_lit(_fold(c[0]) + ' ')} || {_type_name(c[1] if len(c) > 1 else 'text')}"
            for c in columns
        )
        result, result_oid, retset = f"'TABLE(' || {shown} || ')'", "2249", "TRUE"
    elif upper.startswith("SETOF"):
        element = returns[5:].strip()
        result, result_oid = f"'SETOF ' || {_type_name(element)}", _type_oid(element)
        retset = "TRUE"
    else:
        result, result_oid, retset = _type_name(returns), _type_oid(returns), "FALSE"
    words = options.upper().split()
    volatility = next((_VOLATILITY[w] for w in words if w in _VOLATILITY), "v")
    strict = "STRICT" in words or "RETURNS NULL ON NULL INPUT" in " ".join(words)
    ndefaults = sum(d is not None for _, _, d in params)
    return (
        f"DELETE FROM {REGISTRY} WHERE schema_name = {schema} AND name = {name}; "
        f"INSERT INTO {REGISTRY} VALUES ({schema}, {name}, {len(params)}, {ndefaults}, "
        f"{arguments or _lit('')}, {identity or _lit('')}, [{oids}]::BIGINT[], {result}, {result_oid}, {retset}, "
        f"{_lit(volatility)}, {str(strict).upper()}, {_lit(source)})"
    )


def _default(default: str | None, type_text: str) -> str:
    """` DEFAULT 5`; a string or NULL with its type, as PostgreSQL shows it ('a'::text)."""
    if default is None:
        return ""
    shown = f" || {_lit(' DEFAULT ' + default)}"
    if re.fullmatch(r"'(?:[^']|'')*'|NULL", default, re.IGNORECASE):
        shown += f" || '::' || {_type_name(type_text)}"
    return shown


def _type_oid(type_text: str) -> str:
    # 2283 anyelement: a type the catalog does not know (what the macro takes anyway)
    return f"coalesce({_TYPES}.__hati_typname_oid({_lit(type_text)}), 2283)"


def _type_name(type_text: str) -> str:
    # as PostgreSQL shows an argument's type: its name, without a typmod
    return f"coalesce({_TYPES}.format_type({_type_oid(type_text)}, NULL), {_lit(type_text)})"


def _scalar(type_text: str) -> bool:
    words = type_text.strip().lower().replace("pg_catalog.", "").split("(")[0].split()
    return bool(words) and not type_text.strip().endswith("]") and words[0] in _SCALARS


def _table_columns(returns: str) -> list[str]:
    """`TABLE(i int, sq bigint)`: its column declarations; none for other results."""
    if not returns.upper().startswith("TABLE") or "(" not in returns:
        return []
    return _split_params(returns[returns.index("(") + 1 : returns.rindex(")")])


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _fold(name: str) -> str:
    if name.startswith('"') and name.endswith('"'):
        return name[1:-1].replace('""', '"')
    return name.lower()


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


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
