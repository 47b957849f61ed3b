"""A write to a text column registered by `hatiproxy_embed_column` also clears its
embedding column: `UPDATE docs SET content = $1 ...` runs as `UPDATE docs SET content
= $1, content_embedding = NULL ...` (likewise INSERT ... ON CONFLICT DO UPDATE SET).

The background filler embeds rows whose vector is NULL, and semantic SQL embeds such
rows per row until then (semantic.py), so a search never compares a vector made from
the text a row had before. Needs catalog hints (column_hints); a SET that names the
embedding column itself is left as written.
"""

from __future__ import annotations

from sqlglot import exp

from transpiler.column_hints import ColumnHints


def rewrite(tree: exp.Expr, hints: ColumnHints) -> None:
    """Add `vector = NULL` to the SET list of `tree` (an UPDATE or an INSERT with
    ON CONFLICT DO UPDATE) for each registered text column it sets."""
    if isinstance(tree, exp.Update):
        target, assignments = tree.this, tree
    elif isinstance(tree, exp.Insert) and isinstance(tree.args.get("conflict"), exp.OnConflict):
        target, assignments = tree.this, tree.args["conflict"]
        if isinstance(target, exp.Schema):
            target = target.this
    else:
        return
    if not isinstance(target, exp.Table):
        return
    embedded = hints.embedded_columns(target.name.lower())
    if not embedded:
        return
    sets = assignments.expressions
    named = {a.this.name.lower() for a in sets if isinstance(a, exp.EQ) and a.this is not None}
    for text, vector in embedded.items():
        if text in named and vector not in named:
            assignments.append(
                "expressions", exp.EQ(this=exp.column(vector), expression=exp.Null())
            )
