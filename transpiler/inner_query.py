"""Statements around a query of their own -- COPY (<query>) TO and EXPLAIN <query> -- the
query transpiled as a statement of its own (core.py hands in how), the rest as written.
Pure."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from sqlglot.tokens import TokenType

from transpiler import external_access
from transpiler.errors import TranspileError
from transpiler.model import Statement
from transpiler.splitter import Chunk

Inner = Callable[[str], list[Statement]]

EXPLAIN = re.compile(
    r"^\s*EXPLAIN(?:\s+ANALY[SZ]E)?(?:\s+VERBOSE)?(?:\s*\([^)]*\))?\s+", re.IGNORECASE
)


def copy_query(chunk: Chunk, inner: Inner) -> Statement | None:
    """COPY (<query>) TO ...: the query transpiled as a SELECT would be, the rest as written.
    ADBC and ConnectorX read every result this way, so a PostgreSQL form in the query
    (`2.5::numeric`, `x = ANY('{a,b}')`, `1/0`) must mean what it means in a SELECT."""
    tokens = chunk.tokens
    if len(tokens) < 3 or tokens[1].token_type is not TokenType.L_PAREN:
        return None
    depth = 0
    for close in range(1, len(tokens)):
        kind = tokens[close].token_type
        depth += (kind is TokenType.L_PAREN) - (kind is TokenType.R_PAREN)
        if depth == 0:
            break
    else:
        return None
    offset = chunk.start
    query = chunk.text[tokens[1].end + 1 - offset : tokens[close].start - offset]
    statements = inner(query)
    if len(statements) != 1:
        return None
    st = statements[0]
    if st.kind != "select" or st.markers or st.agent_calls or st.bind_texts or st.atomic:
        return None  # what the server runs in steps or rewrites itself stays as written
    head = chunk.text[: tokens[1].end + 1 - offset]
    return Statement(
        sql=head + st.sql + chunk.text[tokens[close].start - offset :],
        kind="copy",
        tag="COPY",
        param_count=st.param_count,
        external_access=external_access.of_tokens(tokens),
        notices=st.notices,
    )


def explain(chunk: Chunk, inner: Inner) -> Statement | None:
    """EXPLAIN [ANALYZE] <query>: transpile the query, keep the EXPLAIN prefix as written."""
    match = EXPLAIN.match(chunk.text)
    if match is None:
        return None
    statements = inner(chunk.text[match.end() :])
    if len(statements) != 1 or statements[0].atomic:  # EXPLAIN of several statements: no
        return None
    st = statements[0]
    if st.kind == "dml_cte":  # the server runs its parts one by one: no one plan
        raise TranspileError(
            "0A000", "EXPLAIN of a statement with data-modifying WITH queries is not supported"
        )
    prefix = match.group(0)
    return replace(
        st,
        sql=prefix + st.sql,
        kind="explain",
        tag="EXPLAIN",
        command=None,
        alter_types=None,  # EXPLAIN ALTER TABLE: nothing is rebuilt
        constraints=None,
        view_sql=None,
        warnings=(),
        _prefix=prefix,
        _bound={},
    )
