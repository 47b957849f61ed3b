"""PostgreSQL `CREATE INDEX` made into what DuckDB accepts, meaning kept.

DuckDB has two index kinds: ART (its default, for `=` and range lookups and UNIQUE) and
HNSW (the vss extension, for `ORDER BY <distance> LIMIT k`). PostgreSQL's forms map so:

- `USING btree` / `USING hash` / no USING: an ART index. Operator classes
  (`varchar_pattern_ops`, `text_pattern_ops`, ...) only decide which operators may use
  the index, so they are dropped; so are `CONCURRENTLY` and `INCLUDE (...)`.
- `USING hnsw (col vector_cosine_ops) WITH (m = 16, ef_construction = 64)` (pgvector):
  `USING HNSW (col) WITH (metric = 'cosine', M = 16, ef_construction = 64)`;
  `vector_l2_ops` is metric 'l2sq', `vector_ip_ops` 'ip'. `USING ivfflat` is served by
  an HNSW index of the same metric (its `lists` has no HNSW meaning), with a NOTICE.
- `USING gin` / `gist` / `brin` / `spgist`: DuckDB has no such index and PostgreSQL
  users create them for speed only, so the statement succeeds without creating
  anything, with a NOTICE saying so. The same holds for a non-unique index over an
  expression DuckDB cannot index (DuckDB refuses extension functions, JSON ones among
  them, in index expressions).
- `WHERE` (a partial index): a non-unique index then covers every row (a NOTICE says
  so); it serves the same queries. A UNIQUE partial index (Django's conditional
  UniqueConstraint) keys each column as `CASE WHEN <where> THEN <column> END`: rows
  outside the WHERE key as NULLs, which a unique index never compares equal, so exactly
  the rows PostgreSQL's index holds must be unique (the catalog shows those CASE
  expressions as the index's columns, no WHERE). `NULLS NOT DISTINCT` is refused (0A000).
- No index name: PostgreSQL's rule, `<table>_<column>[_<column>...]_idx`, expression
  columns named by their function or `expr`, cut to 63 bytes. When that name is taken
  PostgreSQL tries `..._idx1`, `..._idx2`, ...: the statement carries an `IndexName` and
  the server, which sees the catalog, picks the first free one (`index_name`).

`rewrite` is pure: it edits the tree in place and returns the NOTICE texts and the
generated name.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.tokens import Token

from transpiler.errors import TranspileError
from transpiler.model import IndexName

# Index methods that become DuckDB's ART index.
_ART = frozenset({"btree", "hash", "art"})
# Index methods DuckDB has no counterpart of: accepted, nothing created.
_SKIPPED = frozenset({"gin", "gist", "brin", "spgist", "bloom", "rum"})
# pgvector operator class -> DuckDB HNSW metric.
_METRICS = {
    "vector_l2_ops": "l2sq",
    "vector_cosine_ops": "cosine",
    "vector_ip_ops": "ip",
    "halfvec_l2_ops": "l2sq",
    "halfvec_cosine_ops": "cosine",
    "halfvec_ip_ops": "ip",
}
# pgvector HNSW storage parameters -> DuckDB HNSW options.
_HNSW_OPTIONS = {
    "m": "M",
    "ef_construction": "ef_construction",
    "ef_search": "ef_search",  # DuckDB's own options, kept when written
    "m0": "M0",
}
_NAMEDATALEN = 64
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\(")


def check_tokens(tokens: list[Token]) -> None:
    """Refuse what sqlglot cannot parse in a CREATE INDEX but PostgreSQL accepts, before
    the statement falls through to DuckDB's parser with a confusing message."""
    words = [t.text.upper() for t in tokens]
    for i in range(len(words) - 2):
        if words[i : i + 3] == ["NULLS", "NOT", "DISTINCT"]:
            raise TranspileError(
                "0A000",
                "NULLS NOT DISTINCT is not supported: DuckDB unique indexes treat NULLs "
                "as distinct",
                tokens[i].start + 1,
            )


def rewrite(tree: exp.Expr) -> tuple[exp.Expr, tuple[str, ...], IndexName | None]:
    """The DuckDB form of a CREATE INDEX tree, the NOTICEs to send and the name chosen for
    an unnamed index; other trees are returned as they are. Raises TranspileError (0A000)
    for what would change meaning."""
    new, notices = _rewrite(tree)
    if not (isinstance(new, exp.Create) and isinstance(new.this, exp.Index)):
        return new, notices, None
    auto = new.this.meta.get("auto_name")
    return new, notices, auto


def _rewrite(tree: exp.Expr) -> tuple[exp.Expr, tuple[str, ...]]:
    if not isinstance(tree, exp.Create) or (tree.args.get("kind") or "").upper() != "INDEX":
        return tree, ()
    index = tree.this
    params = index.args.get("params") if isinstance(index, exp.Index) else None
    table = index.args.get("table") if isinstance(index, exp.Index) else None
    if not isinstance(params, exp.IndexParameters) or not isinstance(table, exp.Table):
        return tree, ()
    unique = bool(tree.args.get("unique"))
    using = params.args.get("using")
    method = using.name.lower() if using is not None else "btree"
    columns = [c for c in params.args.get("columns") or []]
    if index.this is None:
        addition = _addition(columns)
        chosen = index_name(_ident(table.this), addition)
        index.set("this", exp.to_identifier(chosen, quoted=True))
        schema = _ident(table.args["db"]) if table.args.get("db") else None
        schema = "main" if schema == "public" else schema  # as pgcompat maps it
        index.meta["auto_name"] = IndexName(schema, _ident(table.this), addition, chosen)
    name = index.this.name
    tree.set("concurrently", False)
    params.set("include", None)  # covering columns and tablespaces: storage only
    params.set("tablespace", None)
    notices: list[str] = []
    if unique and method not in ("btree", "art"):  # as PostgreSQL: only btree is unique
        raise TranspileError("0A000", f'access method "{method}" does not support unique indexes')
    if method in _SKIPPED:
        return _nothing(
            f'index "{name}" was not created: DuckDB has no {method} indexes; '
            "queries run without it",
        )
    if method not in _ART and method not in ("hnsw", "ivfflat"):
        raise TranspileError("42704", f'access method "{method}" does not exist')
    where = params.args.get("where")
    partial = where.this if where is not None and unique else None  # (method: btree)
    if partial is not None:
        params.set("where", None)
    elif where is not None:
        params.set("where", None)
        notices.append(
            f'index "{name}" covers all rows: partial indexes are not supported, '
            f"its WHERE clause is ignored"
        )
    if method in ("hnsw", "ivfflat"):
        return tree, (*notices, *_vector_index(params, method, columns, unique, name))
    params.set("using", None)
    params.set("with_storage", None)  # btree fillfactor, deduplicate_items: storage only
    for column in columns:
        _drop_opclass(column)
    if partial is not None:
        _partial_unique(columns, partial)
    bad = next((c for c in columns if _unindexable(c)), None)
    if bad is not None:
        what = bad.sql("postgres")
        if unique:
            raise TranspileError(
                "0A000", f"unique indexes on the expression {what} are not supported"
            )
        return _nothing(
            f'index "{name}" was not created: DuckDB cannot index the expression '
            f"{what}; queries run without it",
        )
    return tree, tuple(notices)


def _nothing(notice: str) -> tuple[exp.Expr, tuple[str, ...]]:
    """A statement that does nothing on DuckDB (the tag stays CREATE INDEX), and why."""
    return exp.select(exp.Literal.number(1)).where(exp.false()), (notice,)


def _partial_unique(columns: list[exp.Expr], where: exp.Expr) -> None:
    """Each key column (an Ordered) made `CASE WHEN (where) THEN column END`."""
    for column in columns:
        key = column.this if isinstance(column, exp.Ordered) else column
        keyed = exp.Paren(
            this=exp.Case(ifs=[exp.If(this=exp.Paren(this=where.copy()), true=key.copy())])
        )
        key.replace(keyed)


def _drop_opclass(column: exp.Expr) -> str | None:
    """Remove the operator class of an index column; return its name."""
    target = column.this if isinstance(column, exp.Ordered) else column
    if not isinstance(target, exp.Opclass):
        return None
    opclass = target.expression.name.lower()
    target.replace(target.this)
    return opclass


def _unindexable(column: exp.Expr) -> bool:
    """An expression DuckDB refuses in an index: it calls a JSON (extension) function."""
    for node in column.walk():
        if isinstance(node, exp.Anonymous):
            if str(node.this).lower().startswith(("json", "jsonb")):
                return True
        elif isinstance(node, exp.Func) and type(node).__name__.upper().startswith("JSON"):
            return True
    return False


def _vector_index(
    params: exp.IndexParameters,
    method: str,
    columns: list[exp.Expr],
    unique: bool,
    name: str,
) -> list[str]:
    if unique:
        raise TranspileError("0A000", f'access method "{method}" does not support unique indexes')
    if len(columns) != 1:
        raise TranspileError(
            "0A000", f'access method "{method}" does not support multicolumn indexes'
        )
    given = {
        prop.this.name.lower(): prop.args["value"]
        for prop in params.args.get("with_storage") or []
        if isinstance(prop, exp.Property)
    }
    opclass = _drop_opclass(columns[0])
    if opclass is None and "metric" in given and method == "hnsw":
        metric_value: exp.Expr = given.pop("metric")  # DuckDB's own form, as written
    else:
        opclass = opclass or "vector_l2_ops"
        if opclass not in _METRICS:
            raise TranspileError(
                "0A000",
                f'operator class "{opclass}" is not supported: HNSW indexes serve '
                + ", ".join(sorted(_METRICS)),
            )
        metric_value = exp.Literal.string(_METRICS[opclass])
    metric = metric_value.name
    options: list[exp.Expr] = [exp.Property(this=exp.var("metric"), value=metric_value)]
    notices: list[str] = []
    if method == "hnsw":
        for key, value in given.items():
            if key not in _HNSW_OPTIONS:
                raise TranspileError("0A000", f'HNSW index option "{key}" is not supported')
            options.append(exp.Property(this=exp.var(_HNSW_OPTIONS[key]), value=value))
    if method == "ivfflat":
        notices.append(f'index "{name}": IVFFlat indexes are served by an HNSW index ({metric})')
    params.set("using", exp.var("HNSW"))
    params.set("with_storage", options)
    return notices


def index_name(table: str, columns: str, number: int = 0) -> str:
    """PostgreSQL's name for an unnamed index: table, column names, "idx" (then "idx1",
    "idx2", ... when taken), each part cut so the whole fits in NAMEDATALEN - 1 bytes."""
    return _object_name(table, columns, f"idx{number}" if number else "idx")


def _addition(columns: list[exp.Expr]) -> str:
    addition = "_".join(_column_name(c) for c in columns)
    return addition.encode()[: _NAMEDATALEN - 1].decode(errors="ignore")


def _column_name(column: exp.Expr) -> str:
    node = column.this if isinstance(column, exp.Ordered) else column
    if isinstance(node, exp.Opclass):
        node = node.this
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Cast):
        return _column_name(node.this)
    if isinstance(node, exp.Column):
        return _ident(node.this)
    # A function call is named by its function, an operator expression "expr".
    call = _CALL.match(node.sql("postgres"))
    return call.group(1).lower() if call else "expr"


def _ident(node: exp.Expr) -> str:
    if isinstance(node, exp.Identifier):
        return node.name if node.quoted else node.name.lower()
    return node.name.lower()


def _object_name(name1: str, name2: str, label: str) -> str:
    """PostgreSQL's makeObjectName: shorten the longer of name1 / name2 until
    `name1_name2_label` fits."""
    avail = _NAMEDATALEN - 1 - len(label.encode()) - 1 - (1 if name2 else 0)
    b1, b2 = name1.encode(), name2.encode()
    n1, n2 = len(b1), len(b2)
    while n1 + n2 > avail:
        if n1 > n2:
            n1 -= 1
        else:
            n2 -= 1
    part1 = b1[:n1].decode(errors="ignore")
    part2 = b2[:n2].decode(errors="ignore")
    return "_".join(p for p in (part1, part2, label) if p)
