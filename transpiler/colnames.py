"""Result column names as Postgres gives them to unnamed select-list expressions.

DuckDB names `count(*)` "count_star()" and `lower(a)` "lower(a)"; Postgres says
"count" and "lower", and `1 + 1` is "?column?". Drivers, pandas and BI tools key
rows by these names, so the transpiler reports the Postgres name of each top-level
result column (Postgres' FigureColname rules, simplified), read off the tree before
the other rewrites so a function renamed for DuckDB keeps the name the user wrote.
"""

from __future__ import annotations

import re

from sqlglot import exp

from transpiler.pgcompat import LOGIN_USER_WORDS

UNKNOWN = "?column?"

# Statements whose RETURNING list is a result, named like a select list.
_DML = (exp.Insert, exp.Update, exp.Delete)

# Postgres' names of types in a cast that has nothing better to name it by.
_TYPE_NAMES = {
    "INT": "int4",
    "INTEGER": "int4",
    "BIGINT": "int8",
    "SMALLINT": "int2",
    "DOUBLE": "float8",
    "DOUBLE PRECISION": "float8",
    "FLOAT": "float8",
    "REAL": "float4",
    "BOOLEAN": "bool",
    "BOOL": "bool",
    "VARCHAR": "varchar",
    "CHAR": "bpchar",
    "DECIMAL": "numeric",
    "NUMERIC": "numeric",
    "TIMESTAMPTZ": "timestamptz",
}

# sqlglot turns some Postgres functions into its own node types; name them as written.
_FUNC_NAMES: dict[type[exp.Expr], str] = {
    exp.Count: "count",
    exp.CurrentTimestamp: "current_timestamp",  # now() is named by its written name
    exp.CurrentDate: "current_date",
    exp.CurrentTime: "current_time",
    exp.Case: "case",
    exp.If: "case",
    exp.Exists: "exists",
    exp.Array: "array",
    exp.Coalesce: "coalesce",
    exp.Extract: "extract",
    exp.Substring: "substring",
    exp.ArraySize: "array_length",
    exp.Explode: "unnest",  # unnest(...) in a select list
    exp.GenerateSeries: "generate_series",
    exp.Hex: "to_hex",
}


# sqlglot reads these operators as function nodes; PostgreSQL names their column ?column?
_OPERATORS = (exp.JSONExtract, exp.JSONExtractScalar, exp.JSONBExtract, exp.JSONBExtractScalar)

# A function name as written (sqlglot records where a call's name token stands), or its
# call as sqlglot writes it for Postgres.
_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_$]*|"(?:[^"]|"")+"')
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\(")
_KEYWORD = re.compile(r"[A-Za-z_]+")
_TRIMS = {"LEADING": "ltrim", "TRAILING": "rtrim"}

# Node types that exist only in some sqlglot versions, by class name.
_BY_CLASS_NAME = {"CurrentVersion": "version", "CurrentSchema": "current_schema"}


def _is_expansion(node: exp.Expr, expansion_words: bool = True) -> bool:
    """`*`, `t.*`, DuckDB's COLUMNS(...) / UNPACK: one alias would not fit them all.
    expansion_words: whether the statement has a COLUMNS / UNPACK token at all (see
    transpiler.token_flags); without one, no node below can be such a call."""
    if isinstance(node, exp.Star) or (isinstance(node, exp.Column) and node.is_star):
        return True
    if not expansion_words:
        return False
    for sub in node.walk():
        if isinstance(sub, exp.Anonymous) and sub.name.upper() in ("COLUMNS", "UNPACK"):
            return True
        if type(sub).__name__ == "Columns":
            return True
    return False


def written(node: exp.Expr, text: str | None) -> str | None:
    """The name a function call was written with (`char_length`, `strpos`, `"lower"`):
    sqlglot folds many into one node type (Length, StrPosition) that Postgres names apart."""
    meta = node.meta if text is not None else {}
    start, end = meta.get("start"), meta.get("end")
    if text is None or start is None or end is None:
        return None
    word = text[start : end + 1]
    if not _NAME.fullmatch(word):
        return None
    return word[1:-1].replace('""', '"') if word.startswith('"') else word.lower()


def _strong(node: exp.Expr, text: str | None) -> str | None:
    """A name Postgres prefers to a cast's type name (FigureColname's strength 2): a
    column's or a function's; None for constants and casts of them."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Column):
        return node.name
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return _strong(node.this, text)
    if isinstance(node, (exp.Literal, exp.Interval, exp.Null, exp.Boolean)):
        return None
    if isinstance(node, (exp.Case, exp.If)):
        return None  # "case" is weaker than the type name (ARRAY[] and ROW() are not)
    named = figure(node, text)
    return named if named != UNKNOWN else None


def figure(node: exp.Expr, text: str | None = None) -> str | None:
    """The Postgres column name of an expression; None where DuckDB's name is the same.
    `text`: the SQL the tree was parsed from (for function names as written)."""
    if isinstance(node, exp.Column):
        # CURRENT_ROLE / USER: keywords sqlglot reads as columns (pgcompat rewrites them).
        name = node.name.lower()
        keyword = not node.table and not node.this.quoted and name in LOGIN_USER_WORDS
        return name if keyword else None
    if isinstance(node, exp.Paren):
        return figure(node.this, text) or UNKNOWN
    if isinstance(node, (exp.Cast, exp.TryCast)):
        named = _strong(node.this, text)
        if named:
            return named
        to = node.to.sql(dialect="postgres").upper().split("(")[0].strip()
        return _TYPE_NAMES.get(to, to.lower() or UNKNOWN)
    if isinstance(node, exp.Interval):  # `interval '1 day'`: a typed literal
        return "interval"
    if isinstance(node, (exp.Window, exp.WithinGroup, exp.Filter, exp.Collate)):
        return figure(node.this, text) or UNKNOWN
    if isinstance(node, exp.Bracket):  # `arr[1]`: the array's name
        inner = node.this.unnest()
        return inner.name if isinstance(inner, exp.Column) else figure(inner, text) or UNKNOWN
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
        return figure(node.expression, text)  # pg_catalog.lower(x): lower
    if isinstance(node, exp.Tuple):
        return "row"
    if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select):
        projections = node.this.expressions
        if len(projections) == 1:
            proj = projections[0]
            if isinstance(proj, (exp.Alias, exp.Column)):
                return proj.alias_or_name
            return figure(proj, text) or UNKNOWN
        return UNKNOWN
    if isinstance(node, _OPERATORS):  # `j ->> 'k'`: an operator, not a function
        return UNKNOWN
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if not isinstance(node, exp.Literal) and (name := written(node, text)):
        return name  # a call (also mod(a, b), which sqlglot reads as the operator)
    if isinstance(node, exp.Extract) and node.meta.get("date_part"):
        return "date_part"
    if isinstance(node, exp.Trim):  # TRIM([BOTH | LEADING | TRAILING] ...)
        return _TRIMS.get(str(node.args.get("position") or "").upper(), "btrim")
    for cls, name in _FUNC_NAMES.items():
        if isinstance(node, cls):
            return name
    special = _BY_CLASS_NAME.get(type(node).__name__)
    if special:
        return special
    if isinstance(node, exp.Func):
        # Called by another name, a keyword (LOCALTIME), or an operator sqlglot reads as
        # a function (`~`, `@>`): as Postgres writes it, a call or a keyword is named by
        # it, an operator (its left operand comes first) ?column?.
        sql = node.sql(dialect="postgres")
        first = node.this
        if isinstance(first, exp.Expr) and sql.startswith(first.sql(dialect="postgres")):
            return UNKNOWN
        if _KEYWORD.fullmatch(sql):
            return sql.lower()
        call = _CALL.match(sql)
        return call.group(1).lower() if call else UNKNOWN
    return UNKNOWN


def head_select(tree: exp.Expr) -> exp.Select | None:
    """The SELECT whose list names a query's result columns: the first branch of a set
    operation, through parentheses; None for anything else (VALUES, DML...)."""
    select = tree
    while isinstance(select, exp.SetOperation):
        select = select.this
    if isinstance(select, exp.Subquery):
        select = select.unnest()
    return select if isinstance(select, exp.Select) else None


def names(
    tree: exp.Expr, expansion_words: bool = True, text: str | None = None
) -> tuple[str | None, ...] | None:
    """Postgres names for the result columns of a query (or of a DML's RETURNING), by
    position. `text`: the SQL `tree` was parsed from.

    None for a column whose DuckDB name is already right (columns, aliases), and
    None overall when the select list has an expansion (`*`) or nothing to rename.
    The SQL itself is not changed: the server renames columns in RowDescription.
    """
    select = head_select(tree)
    returning = tree.args.get("returning") if isinstance(tree, _DML) else None
    if select is not None:
        projections = select.expressions
    elif returning is not None:  # `RETURNING t.role::text` is "role", as a select list says
        projections = returning.expressions
    else:
        return None
    out: list[str | None] = []
    for proj in projections:
        if _is_expansion(proj, expansion_words):
            return None
        out.append(None if isinstance(proj, exp.Alias) else figure(proj, text))
    return tuple(out) if any(n is not None for n in out) else None
