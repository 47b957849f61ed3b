"""Apply the rewrites a statement needs, as decided by its token triggers.

The tree's nodes are listed once and the list shared by the transforms (each tree
walk costs about as much as a transform); it is taken again only after the semantic
rewrites, which build new subtrees, when a later transform still has to run.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler import (
    array_output,
    array_text,
    bytea_input,
    date_arith,
    division,
    embedded_writes,
    group_by_key,
    insert_columns,
    json_functions,
    jsonb_ops,
    pgcompat,
    pgvector,
    reg_casts,
    semantic,
    snowflake,
    timestamp_literals,
)
from transpiler.column_hints import ColumnHints
from transpiler.token_flags import Triggers
from transpiler.treeutil import nodes as tree_nodes

_HATI_NODES = (exp.Anonymous, exp.Select)


def apply(
    tree: exp.Expr,
    triggers: Triggers,
    dims: int,
    offset: int,
    hints: ColumnHints | None = None,
) -> exp.Expr:
    """Rewrite `tree` in place (and return it). Error positions come from node meta,
    which holds absolute offsets into the input; `offset` is kept for callers. `hints`:
    catalog facts for the semantic rewrite, for writes to embedded text columns and for
    INSERTs of fewer values than columns (see column_hints, embedded_writes,
    insert_columns)."""
    if triggers.division and not triggers.snowflake:
        # First: the later rewrites' own arithmetic (none divides today) stays DuckDB's.
        division.rewrite(tree_nodes(tree))
    if hints is not None and isinstance(tree, (exp.Update, exp.Insert)):
        embedded_writes.rewrite(tree, hints)
        array_text.rewrite(tree, hints)
        bytea_input.rewrite(tree, hints)
        if isinstance(tree, exp.Insert):
            insert_columns.rewrite(tree, hints)
    if hints is not None and tree.find(exp.Length) is not None:  # length(<bytea column>)
        bytea_input.lengths(tree, hints)
    if hints is not None and hints.has_primary_keys and tree.find(exp.Group) is not None:
        group_by_key.rewrite(tree, hints)
    if tree.find(exp.Cast) is not None:  # array::text in PostgreSQL's form
        array_output.rewrite(tree, hints)
        json_functions.rewrite_casts(tree, hints)  # jsonb::text in jsonb's text form
    if tree.find(exp.Sub) is not None:  # date - date is an integer
        date_arith.rewrite(tree, hints)
    if hints is not None or tree.find(exp.Cast) is not None:  # '... +00:00' timestamptz
        timestamp_literals.rewrite(tree, hints)
    if not (triggers.hati or triggers.vector or triggers.flatten or triggers.pg):
        return tree
    nodes = tree_nodes(tree)
    if triggers.hati:
        # The semantic and context rewrites act only on calls and SELECTs: hand them
        # just those, in the same order.
        calls = [n for n in nodes if isinstance(n, _HATI_NODES)]
        semantic.rewrite(calls, dims, hints)
        if triggers.vector or triggers.flatten or triggers.pg:
            nodes = tree_nodes(tree)
    if triggers.vector:
        pgvector.rewrite(nodes, dims, hints)
    if triggers.flatten:
        snowflake.rewrite(nodes)
    if triggers.pg:
        if hints is not None:  # ints = '{1,2}' ('{' text sets the pg trigger)
            array_text.rewrite_comparisons(nodes, hints)
        json_functions.rewrite(nodes)
        jsonb_ops.rewrite(nodes, hints)
        pgcompat.rewrite(nodes)
        reg_casts.name_outputs(tree)
    return tree
