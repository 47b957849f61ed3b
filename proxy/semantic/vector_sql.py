"""Render a transpiled statement with its text markers resolved to vector literals.

POST /v1/transpile returns SQL a client sends back over the wire unchanged, so the
vectors become literals our own transpiler reads back and DuckDB types as
FLOAT[dims]: `CAST([0.0123e0, -0.04e0, ...] AS FLOAT[384])`. Each float32 is
written as the shortest decimal of its exact double value, always with an exponent:
DuckDB then reads every element as a DOUBLE (exact) and the cast to FLOAT is exact.
Without the exponent DuckDB reads DECIMALs, whose cast to FLOAT can land one ulp off.
So the vector the wire server sees is bit-identical to the one the model produced.

Column and parameter markers (per-row embeddings of a text column, `$n`) cannot be
resolved ahead of time: they stay `__HATI_EMBED__(col)` / `__HATI_EMBED__($n)`,
the marker form the wire server evaluates itself (a vectorised UDF embedding each
distinct value once). Pure: no model, no DuckDB.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import numpy as np
from sqlglot import exp
from sqlglot.errors import SqlglotError

from transpiler import Statement
from transpiler.dialects import POSTGRES, SNOWFLAKE

# Text markers are bound from this parameter number on, then replaced by literals.
# Far above any real `$n`, so a user's own parameters are never mistaken for one.
_BASE = 1_000_000


class RenderError(ValueError):
    """The statement cannot be rendered with literal vectors."""


def vector_literal(vector: Sequence[float] | np.ndarray, dims: int) -> str:
    """`CAST([...] AS FLOAT[dims])` that DuckDB reads back bit-identically."""
    values = np.asarray(vector, dtype=np.float32).ravel()
    if values.shape[0] != dims:
        raise RenderError(f"vector has {values.shape[0]} dimensions, expected {dims}")
    parts = []
    for value in values:
        if not math.isfinite(value):
            raise RenderError("the model produced a non-finite vector component")
        text = repr(float(value))  # every float32 is a double; repr round-trips it
        parts.append(text if "e" in text else text + "e0")
    return f"CAST([{', '.join(parts)}] AS FLOAT[{dims}])"


def has_client_placeholders(sql: str, dialect: str) -> bool:
    """Does the SQL hold client-side placeholders (psycopg2's `%s` / `%(name)s`)?

    The rendered DuckDB SQL spells them `?` / `$name`, which the client would no longer
    fill in, so such SQL cannot be pre-resolved.
    """
    try:
        trees = (SNOWFLAKE if dialect == "snowflake" else POSTGRES).parse(sql)
    except SqlglotError:
        return False
    return any(tree is not None and tree.find(exp.Placeholder) for tree in trees)


def deferred_markers(st: Statement) -> list[str]:
    """Column / parameter markers the server evaluates per row at run time."""
    out = []
    for marker in st.markers:
        if marker.kind == "column":
            out.append(str(marker.value))
        elif marker.kind == "param":
            out.append(f"${marker.value}")
    return list(dict.fromkeys(out))


def render_resolved(st: Statement, vectors: Mapping[str, Sequence[float] | np.ndarray]) -> str:
    """The statement's DuckDB SQL with every text marker replaced by its vector literal.

    `vectors` maps each text of `st.bind_texts` to its embedding (st.vector_dims long).
    Raises RenderError when the statement cannot be sent back as SQL (agent table
    functions are lifted out of its SQL; the server runs those itself).
    """
    if st.agent_calls:  # their SQL names relations only the server's session registers
        raise RenderError(
            "agent table functions cannot be rendered for the wire here; send this "
            "statement over the wire as written"
        )
    if not st.bind_texts:
        return st.sql
    dims = st.vector_dims
    literals = [vector_literal(vectors[text], dims) for text in st.bind_texts]
    placeholder = re.compile(r"CAST\(\$(\d+) AS FLOAT\[" + str(dims) + r"\]\)")
    replaced = 0

    def literal(match: re.Match[str]) -> str:
        nonlocal replaced
        index = int(match.group(1)) - _BASE
        if not 0 <= index < len(literals):
            return match.group(0)
        replaced += 1
        return literals[index]

    sql = placeholder.sub(literal, st.bind_sql(_BASE))
    expected = sum(1 for m in st.markers if m.kind == "text")
    if replaced != expected:  # e.g. a string literal that spells a placeholder
        raise RenderError(
            f"found {replaced} of {expected} search-text placeholders in the rendered SQL"
        )
    return sql
