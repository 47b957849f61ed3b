"""Which relations a transpiled (DuckDB) statement names: for API keys limited to some
schemas or tables (proxy/access/table_limits.py decides what is allowed).

`relations_of(sql, skip)` parses the DuckDB SQL the server will run and returns every
table, view or schema it names, lower-cased (DuckDB names are case-insensitive), with
the database and schema parts as written ('' when not given; the caller resolves them).
Not relations: CTE names (scope-aware: a CTE hides a table only in FROM / JOIN inside
its WITH, and never as the target of a write), table functions (listed apart, e.g.
range(), read_csv()), UNNEST / VALUES, and the names in `skip` (the relations that agent
table functions were lifted into). Apart, in `named`: the relations functions name by a
string argument (nextval('s'), pragma_table_info('t')), for the organisation boundary;
such a name computed at run time leaves the statement `unchecked`. Apart, in `internal`:
hatiproxy's own relations (`__hati*`: owner records, registries) the statement reads. A statement that cannot be parsed, or that parses
only as an opaque command, comes back with `unchecked` set. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from transpiler.text_cache import text_lru_cache

# The session's own temp tables the server writes a statement's rows into and reads them
# back from: a data-modifying WITH's (transpiler/dml_cte.py, `__hati_cte_<n>`) and AFTER
# triggers' NEW / OLD rows (proxy/db/trigger_plan.py, `__hati_trg<n>_new` & co.). They are
# the caller's rows, not a registry of everyone's objects.
_SESSION_TABLE = re.compile(r"__hati_(cte_\w+|trg\d+_\w+)$")

_EXPLAIN = re.compile(
    r"^\s*EXPLAIN(?:\s+ANALY[SZ]E)?(?:\s+VERBOSE)?(?:\s*\([^)]*\))?\s+", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Relation:
    catalog: str  # the database part of a three-part name, '' when not given
    schema: str  # '' when not given: the session's search path decides
    name: str  # '' for a schema itself (CREATE SCHEMA s, DROP SCHEMA s)

    def __str__(self) -> str:
        return ".".join(p for p in (self.catalog, self.schema, self.name) if p)


@dataclass(frozen=True, slots=True)
class Relations:
    relations: tuple[Relation, ...] = ()
    functions: tuple[str, ...] = ()  # table functions called in FROM, lower case
    unchecked: str | None = None  # why the relations could not be determined
    named: tuple[Relation, ...] = ()  # named by a function's string argument
    internal: tuple[str, ...] = ()  # hatiproxy's own relations (__hati*) read in FROM / JOIN


# Functions whose first argument is a relation's name as text: sequences' draws and the
# pragmas that show a table's columns or its storage (min / max of its values).
NAMING_FUNCTIONS: frozenset[str] = frozenset(
    {
        "nextval",
        "currval",
        "setval",
        "pragma_table_info",
        "pragma_show",
        "pragma_storage_info",
        "duckdb_table_sample",
    }
)


def relations_of(sql: str, skip: frozenset[str] = frozenset()) -> Relations:
    """The relations and table functions `sql` (DuckDB dialect) names."""
    return _cached(_EXPLAIN.sub("", sql, count=1), skip)


@text_lru_cache(maxsize=4096)  # a client's statement texts: long ones are not kept
def _cached(sql: str, skip: frozenset[str]) -> Relations:
    try:
        trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
    except SqlglotError:
        return Relations(unchecked="a statement whose tables cannot be checked")
    found: list[Relation] = []
    functions: list[str] = []
    named: list[Relation] = []
    internal: list[str] = []
    for tree in trees:
        if isinstance(tree, exp.Command):
            word = str(tree.this).upper()
            return Relations(unchecked=f"{word}: its tables cannot be checked")
        for table in tree.find_all(exp.Table):
            this = table.this
            if isinstance(this, exp.Func):
                name = this.name if isinstance(this, exp.Anonymous) else this.sql_name()
                functions.append(name.lower())
                continue
            if this is None:  # CREATE / DROP SCHEMA s: the schema itself
                found.append(Relation(table.catalog.lower(), table.db.lower(), ""))
                continue
            if not isinstance(this, exp.Identifier) or _is_cte(table):
                continue
            name = table.name.lower()
            if not table.db and not table.catalog and name in skip:
                continue
            if (
                name.startswith("__hati")
                and not _SESSION_TABLE.match(name)
                and isinstance(table.parent, exp.From | exp.Join)
            ):
                internal.append(name)
            found.append(Relation(table.catalog.lower(), table.db.lower(), name))
        for call in tree.find_all(exp.Anonymous):
            if call.name.lower() in NAMING_FUNCTIONS:
                rel = _named(call)
                if rel is None:
                    return Relations(unchecked=f"{call.name.lower()}() of a computed name")
                named.append(rel)
    return Relations(
        tuple(dict.fromkeys(found)),
        tuple(dict.fromkeys(functions)),
        named=tuple(named),
        internal=tuple(dict.fromkeys(internal)),
    )


_SERIAL_SEQUENCE = "__hati_pg_get_serial_sequence"  # what pg_get_serial_sequence becomes


def _named(call: exp.Anonymous) -> Relation | None:
    """The relation a naming function's first argument names, or None when it is not a
    literal ('orga' || '_seq', a column, a parameter)."""
    arg = call.expressions[0] if call.expressions else None
    while isinstance(arg, exp.Cast):  # 's'::regclass, 's'::text
        arg = arg.this
    if isinstance(arg, exp.Anonymous) and arg.name.lower() == _SERIAL_SEQUENCE:
        # setval(pg_get_serial_sequence('t', 'id'), ...): t's own sequence, judged as t
        return _named(arg)
    if not isinstance(arg, exp.Literal) or not arg.is_string:
        return None
    try:
        table = exp.to_table(arg.this, dialect="duckdb")
    except SqlglotError:
        return None
    return Relation(table.catalog.lower(), table.db.lower(), table.name.lower())


def _is_cte(table: exp.Table) -> bool:
    """Whether `table` reads a CTE in scope rather than a stored relation."""
    if table.args.get("db") or table.args.get("catalog"):
        return False
    if not isinstance(table.parent, exp.From | exp.Join):  # write targets are tables
        return False
    name = table.name.lower()
    child: exp.Expr = table
    node = table.parent
    came_from_with = False
    while node is not None:
        if isinstance(node, exp.With):
            # Inside CTE k: the CTEs before it, and itself only when RECURSIVE.
            ctes = list(node.expressions)
            k = next((i for i, c in enumerate(ctes) if c is child), len(ctes))
            upto = k + 1 if node.args.get("recursive") else k
            if name in {c.alias_or_name.lower() for c in ctes[:upto]}:
                return True
            came_from_with = True
        else:
            with_ = node.args.get("with_", node.args.get("with"))  # sqlglot 30: "with_"
            visible = with_.expressions if isinstance(with_, exp.With) else []
            if not came_from_with and name in {c.alias_or_name.lower() for c in visible}:
                return True
            came_from_with = False
        child, node = node, node.parent
    return False
