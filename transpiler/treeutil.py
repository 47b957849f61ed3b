"""Helpers for rewriting from a snapshot of a tree's nodes."""

from __future__ import annotations

from sqlglot import exp


def attached(node: exp.Expr) -> bool:
    """Whether `node` is still in its tree: sqlglot's `set` leaves a replaced child's
    `parent` pointing at its old parent, so check the parent really holds it."""
    parent = node.parent
    if parent is None:
        return False
    value = parent.args.get(node.arg_key)
    if isinstance(value, list):
        return any(v is node for v in value)
    return value is node
