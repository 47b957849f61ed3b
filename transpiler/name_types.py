"""Which result columns of a query PostgreSQL types `name` (OID 19) or `name[]` (1003).

DuckDB holds catalog identifiers as VARCHAR, which the server would describe as text.
Drivers tell the two apart: node-postgres parses text[] into an array but hands name[]
over as its '{a,b}' text, which Sequelize's showIndex then parses itself. So a column is
described as PostgreSQL types it when this can say so from the statement alone:

- a catalog column PostgreSQL declares `name` (name_columns.py): pg_class.relname,
  pg_attribute.attname, information_schema's sql_identifier columns ..., read plainly
  (through aliases, derived tables, CTEs: column_origins.py) or inside the expressions
  below;
- current_user, session_user, current_role, user, current_schema, current_database(),
  current_catalog, pg_get_userbyid(...) and a cast to name; current_schemas(...) is name[];
- array_agg(<name>) is name[]; COALESCE / CASE whose results are all name (or literals).

Anything else keeps DuckDB's type (text), as do set operations and `*`.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.column_origins import ColumnOrigin, Origins, Relation
from transpiler.name_columns import INFORMATION_SCHEMA, PG_CATALOG

NAME, NAME_ARRAY = "name", "name[]"
NameOutputs = tuple[str | None, ...]

# Words one of which a statement must contain to have a name column (a cheap gate).
GATE_WORDS = ("pg_", "information_schema", "current_", "user", "name")
_NAME_NODES = (
    exp.CurrentUser,
    exp.SessionUser,
    exp.CurrentSchema,
    exp.CurrentDatabase,
    exp.CurrentCatalog,
)
_NAME_FUNCTIONS = frozenset(
    {"pg_get_userbyid", "getpgusername", "current_role", "current_user", "session_user"}
)
_USER_WORDS = frozenset({"current_role", "user"})  # bare words sqlglot reads as columns


def select_list(tree: exp.Expr) -> list[exp.Expr] | None:
    """A plain SELECT's result expressions; None for another statement or one with a star
    (a star's width is the catalog's to say)."""
    if not isinstance(tree, exp.Select):
        return None
    projections = tree.expressions
    if any(
        isinstance(p, exp.Star) or (isinstance(p, exp.Column) and p.is_star) for p in projections
    ):
        return None
    return projections


def outputs(tree: exp.Expr, origins: Origins | None) -> NameOutputs | None:
    """Per result column, "name", "name[]" or None (DuckDB's type stands); None when no
    column is name. `origins`: column_origins.column_origins(tree)."""
    projections = select_list(tree)
    if projections is None:
        return None
    if origins is not None and len(origins) != len(projections):
        origins = None
    out: list[str | None] = []
    for i, proj in enumerate(projections):
        origin = origins[i] if origins is not None else None
        if origin is not None and _origin_is_name(origin):
            out.append(NAME)
        else:
            out.append(_type_of(proj, tree))
    return tuple(out) if any(out) else None


def _origin_is_name(origin: ColumnOrigin) -> bool:
    column = origin.column
    if column is None or not origin.candidates:
        return False
    sets = [_name_columns(rel) for rel in origin.candidates]
    if any(s is None for s in sets):
        return False  # a user relation may have a text column of that name
    return any(column in s for s in sets if s is not None)


def _name_columns(rel: Relation) -> frozenset[str] | None:
    """The name columns of a catalog relation; None for any other relation."""
    if rel.schema in (None, "pg_catalog") and rel.name in PG_CATALOG:
        return PG_CATALOG[rel.name]
    if rel.schema == "information_schema" and rel.name in INFORMATION_SCHEMA:
        return INFORMATION_SCHEMA[rel.name]
    if rel.schema in (None, "pg_catalog") and rel.name.startswith("pg_"):
        return frozenset()  # a catalog relation without name columns
    return None


def _type_of(node: exp.Expr, select: exp.Select) -> str | None:
    while isinstance(node, (exp.Alias, exp.Paren)):
        node = node.this
    if isinstance(node, _NAME_NODES):
        return NAME
    if isinstance(node, exp.CurrentSchemas):
        return NAME_ARRAY
    if isinstance(node, exp.Cast):
        to = node.args.get("to")
        if isinstance(to, exp.DataType) and to.this is exp.DataType.Type.NAME:
            return NAME
        return None
    if isinstance(node, exp.Anonymous) and node.name.lower() in _NAME_FUNCTIONS:
        return NAME
    if isinstance(node, exp.ArrayAgg):
        inner = node.this.this if isinstance(node.this, exp.Order) else node.this
        return NAME_ARRAY if inner is not None and _type_of(inner, select) == NAME else None
    if isinstance(node, exp.Coalesce):
        return _common([node.this, *node.expressions], select)
    if isinstance(node, exp.Case):
        results = [w.args.get("true") for w in node.args.get("ifs") or ()]
        default = node.args.get("default")
        return _common([*results, *([default] if default is not None else [])], select)
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier):
        return NAME if _column_is_name(node, select) else None
    if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Select):
        inner = node.this  # a scalar subquery: its one column's type
        if len(inner.expressions) == 1:
            return _type_of(inner.expressions[0], inner)
    return None


def _common(values: list[exp.Expr], select: exp.Select) -> str | None:
    """name when every value is name or an untyped literal (resolved to name), one at least."""
    types = [None if _untyped(v) else _type_of(v, select) for v in values]
    typed = [t for v, t in zip(values, types, strict=True) if not _untyped(v)]
    return NAME if typed and all(t == NAME for t in typed) else None


def _untyped(node: exp.Expr) -> bool:
    return isinstance(node, exp.Null) or (isinstance(node, exp.Literal) and node.is_string)


def _column_is_name(col: exp.Column, select: exp.Select) -> bool:
    """A column inside an expression, against the SELECT's own FROM tables only."""
    name = _fold(col.this)
    if not col.args.get("table") and name in _USER_WORDS and not col.this.quoted:
        return True  # current_role, user
    tables = _from_tables(select)
    if tables is None:
        return False
    qualifier = col.args.get("table")
    if qualifier is not None:
        chosen = [t for alias, t in tables if alias == _fold(qualifier)]
    else:
        chosen = [t for _alias, t in tables]
    sets = [_name_columns(rel) for rel in chosen]
    if not sets or any(s is None for s in sets):
        return False
    return any(name in s for s in sets if s is not None)


def _from_tables(select: exp.Select) -> list[tuple[str, Relation]] | None:
    """(alias, relation) of each plain table in FROM / JOIN; None if any source is not."""
    from_ = select.args.get("from_") or select.args.get("from")
    sources = [from_.this] if from_ is not None else []
    sources += [j.this for j in select.args.get("joins") or ()]
    out = []
    for t in sources:
        if not isinstance(t, exp.Table) or not isinstance(t.this, exp.Identifier):
            return None
        alias = t.args.get("alias")
        db = t.args.get("db")
        rel = Relation(None, _fold(db) if db else None, _fold(t.this))
        out.append((_fold(alias.this) if alias is not None and alias.this else rel.name, rel))
    return out


def _fold(ident: object) -> str:
    if isinstance(ident, exp.Identifier):
        return ident.this if ident.quoted else ident.this.lower()
    return str(ident).lower()
