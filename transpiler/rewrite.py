"""Apply the rewrites a statement needs, as decided by its token triggers."""

from __future__ import annotations

from sqlglot import exp

from transpiler import context, pgcompat, pgvector, semantic, snowflake
from transpiler.triggers import Triggers


def apply(tree: exp.Expr, triggers: Triggers, dims: int, offset: int) -> exp.Expr:
    """Rewrite `tree` in place (and return it). `offset` is the statement's 0-based
    start in the input, used for error positions."""
    if triggers.hati:
        tree = context.rewrite(tree, dims)
        tree = semantic.rewrite(tree, dims)
    if triggers.vector:
        tree = pgvector.rewrite(tree, dims)
    if triggers.flatten:
        tree = snowflake.rewrite(tree)
    if triggers.pg:
        tree = pgcompat.rewrite(tree)
    return tree
