"""hatidata_context / hatidata_rag_context table functions -> plain DuckDB subqueries.

`hatidata_context('table', 'query', k)` (BM25 full-text retrieval) becomes

    (SELECT *, fts_main_<table>.match_bm25(id, 'query') AS score FROM <table>
     WHERE score IS NOT NULL ORDER BY score DESC LIMIT k)

Convention (a pure transpiler cannot see the catalog): the table's key column is
`id` and it has a DuckDB fts index (`PRAGMA create_fts_index('<table>', 'id', ...)`,
schema `fts_main_<table>`). The server must make sure that index exists (and is
fresh) before running a statement whose `Statement.sql` references
`fts_main_<table>`; documented fallback when it cannot build one (no `id` column): run
`fallback_context_sql(...)` instead, a case-insensitive substring ranking.

`hatidata_rag_context('table', 'col', [v1, ...], k)` becomes

    (SELECT *, array_cosine_similarity(col, CAST([...] AS FLOAT[n])) AS similarity
     FROM table ORDER BY array_cosine_distance(col, CAST([...] AS FLOAT[n])) LIMIT k)

most similar first, in the HNSW-friendly shape. The vector may also be a `$n`
parameter (cast to FLOAT[vector_dims]), a '[..]' string, or a search text (a text
marker).

The call becomes a `dialects.ContextScan` node: its input-derived parts (table, score
or similarity expression, k, alias) are nodes, and the DuckDB generator writes them
into the subquery's fixed text (building and rendering the whole SELECT tree cost
more than parsing the statement).
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.dialects import ContextScan, HatiEmbed
from transpiler.errors import TranspileError
from transpiler.literals import string_value
from transpiler.pgvector import float_array, vector_literal_size
from transpiler.treeutil import take

_CONTEXT = "HATIDATA_CONTEXT"
_RAG = "HATIDATA_RAG_CONTEXT"
KEY_COLUMN = "id"


def rewrite_call(node: exp.Anonymous, dims: int) -> None:
    """Rewrite one hatidata_context / hatidata_rag_context call in place (semantic.rewrite
    calls this in its innermost-first pass, so its arguments are final)."""
    name = node.name.upper()
    table = node.parent
    if not isinstance(table, exp.Table):
        raise _error(node, "0A000", f"{name.lower()}(...) can only be used in FROM")
    scan = _context(node) if name == _CONTEXT else _rag(node, dims)
    # The table and the call go away: their alias and arguments move, not copied.
    alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(name.lower()))
    scan.set("alias", alias)
    table.replace(scan)


def _error(node: exp.Expr, sqlstate: str, message: str) -> TranspileError:
    start = node.meta.get("start") if node.meta else None
    return TranspileError(sqlstate, message, start + 1 if start is not None else None)


def _string(node: exp.Anonymous, arg: exp.Expr, what: str) -> str:
    text = string_value(arg)
    if text is None:
        raise _error(node, "42883", f"{node.name.lower()}: {what} must be a quoted string")
    return text


def _limit(node: exp.Anonymous, arg: exp.Expr) -> exp.Expr:
    if isinstance(arg, exp.Parameter) or (isinstance(arg, exp.Literal) and arg.is_int):
        return arg
    raise _error(node, "42883", f"{node.name.lower()}: k must be an integer, not {arg.sql()}")


def table_of(name: str) -> exp.Table:
    """A table reference built from a 'schema.table' string, each part an identifier."""
    parts = [p for p in name.split(".")]
    if not all(parts) or len(parts) > 3:
        raise TranspileError("42601", f"invalid table name {name!r}")
    ident = [exp.to_identifier(p) for p in parts]
    table = exp.Table(this=ident[-1])
    if len(ident) >= 2:
        table.set("db", ident[-2])
    return table


def _context(node: exp.Anonymous) -> ContextScan:
    usage = "hatidata_context('table', 'search text', k)"
    args = list(node.expressions)
    if len(args) not in (2, 3):
        raise _error(node, "42883", f"{usage}: expected 3 arguments, got {len(args)}")
    table_name = _string(node, args[0], "the table name")
    query = _string(node, args[1], "the search text")
    k = _limit(node, args[2]) if len(args) == 3 else exp.Literal.number(5)
    table = table_of(table_name)
    fts_schema = exp.to_identifier(f"fts_main_{table.name}")
    score = exp.Dot(
        this=fts_schema,
        expression=exp.Anonymous(
            this="match_bm25",
            expressions=[exp.column(KEY_COLUMN), exp.Literal.string(query)],
        ),
    )
    return ContextScan(this=table, score=score, limit=k)


def fallback_context_sql(table: str, query: str, k: int, text_columns: list[str]) -> str:
    """Documented fallback for hatidata_context when no fts index can exist: rows whose
    text columns contain query words (case-insensitive), ranked by how many match."""
    from transpiler.markers import render

    words = [w for w in query.split() if w] or [query]
    terms: list[exp.Expr] = []
    for word in words:
        hit = exp.or_(
            *[
                exp.ILike(this=exp.column(c), expression=exp.Literal.string(f"%{word}%"))
                for c in text_columns
            ]
        )
        terms.append(exp.Cast(this=exp.paren(hit), to=exp.DataType.build("INTEGER")))
    score = terms[0]
    for term in terms[1:]:
        score = exp.Add(this=score, expression=term)
    inner = exp.select(exp.Star(), exp.alias_(score, "score")).from_(table_of(table))
    outer = (
        exp.select("*")
        .from_(inner.subquery("c"))
        .where(exp.GT(this=exp.column("score"), expression=exp.Literal.number(0)))
        .order_by(exp.Ordered(this=exp.column("score"), desc=True, nulls_first=False))
        .limit(int(k))
    )
    return render(outer)[0]


def _rag(node: exp.Anonymous, dims: int) -> ContextScan:
    usage = "hatidata_rag_context('table', 'vector column', [v1, ...], k)"
    args = list(node.expressions)
    if len(args) != 4:
        raise _error(node, "42883", f"{usage}: expected 4 arguments, got {len(args)}")
    table = table_of(_string(node, args[0], "the table name"))
    column = exp.column(_string(node, args[1], "the vector column name"))
    vector = _vector(node, args[2], dims)
    k = _limit(node, args[3])
    return ContextScan(this=table, column=column, vector=vector, limit=k)


def _vector(node: exp.Anonymous, arg: exp.Expr, dims: int) -> exp.Expr:
    # float_array(n) is the tree DataType.build("FLOAT[n]", dialect="duckdb") parses to.
    if isinstance(arg, exp.Array):
        return exp.Cast(this=take(arg, True), to=float_array(len(arg.expressions)))
    if isinstance(arg, exp.Parameter):
        return exp.Cast(this=take(arg, True), to=float_array(dims))
    if isinstance(arg, exp.Literal) and arg.is_string:
        size = vector_literal_size(arg.this)
        if size is not None:
            return exp.Cast(this=take(arg, True), to=float_array(size))
        return HatiEmbed(this=take(arg, True), kind="text")
    return take(arg, True)
