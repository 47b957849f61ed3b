"""Helpers for rewriting from a snapshot of a tree's nodes."""

from __future__ import annotations

from sqlglot import exp


def nodes(tree: exp.Expr) -> list[exp.Expr]:
    """Every node of `tree`, breadth-first: the order of `list(tree.walk())`, built
    without sqlglot's per-node generators (about 2.5x faster; the transpiler's rewrites
    and checks all start from such a snapshot)."""
    out = [tree]
    add = out.append
    node_type = exp.Expr
    for node in out:  # grows while iterated: a breadth-first queue
        for value in node.args.values():
            if isinstance(value, node_type):
                add(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, node_type):
                        add(item)
    return out


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
