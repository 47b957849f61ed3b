"""Render a rewritten tree to DuckDB SQL and read its markers in output order."""

from __future__ import annotations

from sqlglot import exp

from transpiler.dialects import HatiEmbed, generator
from transpiler.model import Marker


def render(tree: exp.Expr) -> tuple[str, tuple[Marker, ...], tuple[str, ...]]:
    """(DuckDB SQL, markers in output order, distinct marker texts in order)."""
    gen = generator()
    sql = gen.generate(tree, copy=False)
    if not gen.hati_embeds:
        return sql, (), ()
    # A snapshot: rendering a column marker's value records the markers nested in it
    # (e.g. in a subquery) again.
    markers = tuple(_marker(node, gen) for node in tuple(gen.hati_embeds))
    texts = tuple(dict.fromkeys(m.value for m in markers if m.kind == "text"))
    return sql, markers, texts  # type: ignore[return-value]


def _marker(node: HatiEmbed, gen) -> Marker:
    kind = node.text("kind")
    arg = node.this
    if kind == "text":
        return Marker("text", arg.this, "query")
    if kind == "param":
        return Marker("param", int(arg.this.this), "query")
    return Marker("column", gen.sql(arg), "passage")
