"""Is running a recorded write statement again guaranteed to change the same rows the
same way? Used by ROLLBACK TO SAVEPOINT, which DuckDB cannot do itself: the proxy rolls
the whole transaction back and replays the writes made before the savepoint
(proxy/pgserver/savepoints.py). A replay that could differ is refused, never run.

Pure: the caller answers catalog questions (functions, views, column defaults) through
`Catalog`, from the same database state the replay will see.

Refused, with a reason a person can act on:
- statements other than INSERT / UPDATE / DELETE / MERGE / TRUNCATE (DDL: object ids
  change; anything sqlglot cannot parse);
- functions that give a new value per call or per transaction (random(), uuid(), now(),
  nextval(), ...: DuckDB's own stability flags, plus settings readers such as
  getvariable()), Python UDFs with side effects, unknown functions;
- results that depend on row order: LIMIT / OFFSET / FETCH, TABLESAMPLE, DISTINCT ON,
  window functions, aggregates other than count / min / max / bool_* / bit_*, rowid,
  UPDATE ... FROM, MERGE or ON CONFLICT fed by a query (which matching row wins);
- table functions other than range / generate_series / unnest (files, system tables);
- views and macros whose definitions fail the same checks;
- column defaults of the written tables that fail them (DEFAULT nextval(...), now()): an
  INSERT's unlisted columns, an UPDATE's `SET c = DEFAULT`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from transpiler import upsert_guard


@dataclass(frozen=True)
class FunctionInfo:
    """A function name as DuckDB knows it, all overloads and schemas together."""

    kinds: frozenset[str]  # "scalar", "aggregate", "macro", "table", "table_macro", ...
    volatile: bool  # an overload is not CONSISTENT, or has side effects
    definitions: tuple[str, ...] = ()  # macro bodies


class Catalog(Protocol):
    def function(self, name: str) -> FunctionInfo | None: ...

    def view(self, schema: str | None, name: str) -> str | None:
        """The defining SQL of a view of that name (any schema when None), else None."""
        ...

    def defaults(self, schema: str | None, table: str) -> Sequence[tuple[str, str]]:
        """(column, default expression) of that table's columns with a default (any
        schema when None)."""
        ...


# DuckDB functions that are not CONSISTENT (duckdb_functions().stability; a test keeps
# this list in step with DuckDB), and readers of session state that DuckDB calls
# consistent but that can change between the original run and the replay.
VOLATILE_NAMES = frozenset(
    {
        "current_connection_id", "current_database", "current_date", "current_query",
        "current_query_id", "current_schema", "current_schemas", "current_transaction_id",
        "currval", "error", "gen_random_uuid", "get_current_time", "get_current_timestamp",
        "in_search_path", "nextval", "now", "random", "setseed", "sleep_ms", "stats", "today",
        "transaction_timestamp", "txid_current", "uuid", "uuidv4", "uuidv7", "write_log",
        "getvariable", "current_setting", "set_config", "clock_timestamp",
        "statement_timestamp", "timeofday", "localtimestamp", "localtime", "current_time",
        "current_timestamp", "pg_sleep", "version",
    }
)  # fmt: skip
# Semantic SQL: the embedding model runs inside the statement.
_EMBED_PREFIXES = ("__hati_embed",)
# sqlglot's typed functions for the same things (their class names).
_VOLATILE_CLASS_PREFIXES = ("Current", "Rand", "Uuid", "Local", "Sys", "Utc", "Read", "AI", "Seq")
_VOLATILE_CLASSES = frozenset({"GenerateEmbedding", "GenerateText", "GenerateTable"})
# Aggregates whose result cannot depend on the order rows arrive in (sums of floats can).
_ORDER_FREE_AGGREGATES = frozenset(
    {"count", "count_star", "count_if", "countif", "min", "max", "bool_and", "bool_or",
     "every", "bit_and", "bit_or", "bit_xor"}
)  # fmt: skip
_ORDER_FREE_AGG_TYPES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name)
    for name in (
        "Count",
        "CountIf",
        "Min",
        "Max",
        "LogicalAnd",
        "LogicalOr",
        "BitwiseAndAgg",
        "BitwiseOrAgg",
        "BitwiseXorAgg",
    )
    if hasattr(exp, name)
)
_SAFE_TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest"})
_SAFE_TABLE_FUNCTION_TYPES = (exp.GenerateSeries, exp.Unnest)
_WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.TruncateTable)
_MAX_DEPTH = 12  # views of views of macros ...
# Rows DuckDB handles as one chunk, in order, on one thread: a VALUES list this long
# resolves ON CONFLICT the same way every time.
_ONE_CHUNK = 2048


def replay_refusal(sql: str, catalog: Catalog) -> str | None:
    """None when replaying `sql` (DuckDB SQL) is exact, else why not."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except SqlglotError:
        return "syntax the replay check cannot parse"
    if not isinstance(tree, _WRITES):
        if isinstance(tree, exp.Command):
            return "syntax the replay check cannot parse"
        if isinstance(tree, (exp.Create, exp.Drop, exp.Alter)):
            return "DDL (a replayed CREATE or ALTER gives objects new ids)"
        return "a statement kind other than INSERT, UPDATE, DELETE or MERGE"
    if isinstance(tree, exp.Insert) and tree.args.get("conflict") is not None:
        upsert_guard.unwrap(tree)  # its rows' order is the source's
    return _Checker(catalog).statement(tree)


def _set_to_default(tree: exp.Update) -> set[str]:
    """The columns an UPDATE sets to DEFAULT (lower case)."""
    return {
        item.this.name.lower()
        for item in tree.expressions
        if isinstance(item, exp.EQ)
        and isinstance(item.expression, exp.Column)
        and not item.expression.table
        and item.expression.name.upper() == "DEFAULT"
        and not item.expression.this.quoted
    }


class _Checker:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.checked: set[str] = set()  # views and macros already found safe (or in progress)
        self.depth = 0

    def statement(self, tree: exp.Expression) -> str | None:
        reason = _row_matching(tree) or self.tree(tree)
        if reason:
            return reason
        target = tree.this if not isinstance(tree, exp.Delete) else None
        given: set[str] = set()  # an INSERT's listed columns: their defaults never run
        if isinstance(target, exp.Schema):
            if isinstance(tree, exp.Insert):
                given = {c.name.lower() for c in target.expressions}
            target = target.this
        # An UPDATE runs a default only where it sets a column to DEFAULT.
        run = _set_to_default(tree) if isinstance(tree, exp.Update) else None
        if isinstance(target, exp.Table) and target.name:
            for column, default in self.catalog.defaults(target.db or None, target.name):
                if column.lower() in given or (run is not None and column.lower() not in run):
                    continue
                why = self.nested(f"default:{target.db}.{target.name}:{default}", default)
                if why:
                    return f"the column default {default} of table {target.name}: {why}"
        return None

    def tree(self, tree: exp.Expression) -> str | None:
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        handled: set[int] = set()
        for node in tree.walk():
            reason = self.node(node, ctes, handled)
            if reason:
                return reason
        return None

    def node(self, node: exp.Expression, ctes: set[str], handled: set[int]) -> str | None:
        if isinstance(node, exp.Command):
            return "syntax the replay check cannot parse"
        if isinstance(node, exp.Window):
            return "a window function (its result depends on row order)"
        if isinstance(node, (exp.Limit, exp.Offset, exp.Fetch)):
            return "LIMIT / OFFSET (which rows they pick depends on row order)"
        if isinstance(node, exp.TableSample):
            return "TABLESAMPLE (a random sample)"
        if isinstance(node, exp.Distinct) and node.args.get("on") is not None:
            return "DISTINCT ON (which row it keeps depends on row order)"
        if isinstance(node, exp.Column) and node.name.lower() in ("rowid", "ctid"):
            return "rowid (row ids can differ)"
        if isinstance(node, exp.Table):
            if isinstance(node.this, exp.Func):
                handled.add(id(node.this))
                return self.table_function(node.this)
            if node.name and not (node.name.lower() in ctes and not node.db):
                view = self.catalog.view(node.db or None, node.name)
                if view is not None:
                    key = f"view:{node.db}.{node.name}".lower()
                    why = self.nested(key, view)
                    return f"view {node.name}: {why}" if why else None
            return None
        if isinstance(node, exp.Func) and id(node) not in handled:
            return self.function(node)
        return None

    def function(self, node: exp.Func) -> str | None:
        if isinstance(node, exp.Anonymous):
            return self.named(node.name.lower(), table=False)
        name = _shown_name(node)
        cls = type(node).__name__
        if cls.startswith(_VOLATILE_CLASS_PREFIXES) or cls in _VOLATILE_CLASSES:
            return f"{name}() (it gives a new value each time)"
        if name in VOLATILE_NAMES or node.sql_name().lower() in VOLATILE_NAMES:
            return f"{name}() (it gives a new value each time)"
        if isinstance(node, exp.AnonymousAggFunc):
            return self.named(node.name.lower(), table=False)
        if isinstance(node, exp.AggFunc) and not isinstance(node, _ORDER_FREE_AGG_TYPES):
            return f"the aggregate {name}() (its result can depend on row order)"
        return None

    def table_function(self, node: exp.Func) -> str | None:
        if isinstance(node, _SAFE_TABLE_FUNCTION_TYPES):
            return None
        if isinstance(node, exp.Anonymous):
            return self.named(node.name.lower(), table=True)
        return f"the table function {_shown_name(node)}() (it reads outside the tables)"

    def named(self, name: str, *, table: bool) -> str | None:
        if name in VOLATILE_NAMES or name.startswith(_EMBED_PREFIXES):
            return f"{name}() (it gives a new value each time)"
        if table and name in _SAFE_TABLE_FUNCTIONS:
            return None
        info = self.catalog.function(name)
        if info is None:
            return f"{name}() (a function the replay check does not know)"
        if info.volatile:
            return f"{name}() (it gives a new value each time, or has side effects)"
        if table and "table_macro" not in info.kinds:
            return f"the table function {name}() (it reads outside the tables)"
        if not table and "aggregate" in info.kinds and name not in _ORDER_FREE_AGGREGATES:
            return f"the aggregate {name}() (its result can depend on row order)"
        for i, body in enumerate(info.definitions):
            why = self.nested(f"macro:{name}:{i}", body)
            if why:
                return f"{name}(): {why}"
        return None

    def nested(self, key: str, sql: str) -> str | None:
        """Check a view, macro or default definition once."""
        if key in self.checked:
            return None
        if self.depth >= _MAX_DEPTH:
            return "definitions nested too deeply to check"
        self.checked.add(key)
        try:
            trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
        except SqlglotError:
            return "a definition the replay check cannot parse"
        self.depth += 1
        try:
            for tree in trees:
                reason = self.tree(tree)
                if reason:
                    return reason
        finally:
            self.depth -= 1
        return None


def _row_matching(tree: exp.Expression) -> str | None:
    """Statements where several source rows can meet one target row, and which one wins
    depends on the order DuckDB's threads deliver them."""
    if isinstance(tree, exp.Update) and tree.args.get("from_") is not None:
        return "UPDATE ... FROM (which matching row is used can differ)"
    if isinstance(tree, exp.Merge) and not _one_row(tree.args.get("using")):
        return "MERGE from a table or several rows (which matching row is used can differ)"
    conflict = tree.args.get("conflict") is not None or tree.args.get("alternative")
    if isinstance(tree, exp.Insert) and conflict:
        source = tree.expression
        small = isinstance(source, exp.Values) and len(source.expressions) <= _ONE_CHUNK
        if not (small or _one_row(source)):
            return "ON CONFLICT / OR REPLACE from a query (which row wins can differ)"
    return None


def _one_row(source: exp.Expression | None) -> bool:
    """A source of one row of constants (parameters, literals, expressions of them)."""
    if isinstance(source, exp.Subquery):
        source = source.this
    if isinstance(source, exp.Values):
        return len(source.expressions) == 1
    if isinstance(source, exp.Select):
        return source.args.get("from_") is None and source.find(exp.Table) is None
    return False


def _shown_name(node: exp.Func) -> str:
    """The function's name as DuckDB SQL spells it (sqlglot's class names differ)."""
    try:
        text = node.sql(dialect="duckdb")
    except SqlglotError:
        return node.sql_name().lower()
    head = text.split("(", 1)[0].strip().lower()
    return head if head and head not in ("cast", "try_cast") else node.sql_name().lower()
