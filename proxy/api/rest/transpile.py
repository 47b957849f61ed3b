"""REST: POST /v1/transpile, hybrid SQL -> SQL with its search texts embedded.

HatiDataAgent posts hybrid SQL (semantic_match / semantic_rank / vector_match /
JOIN_VECTOR) here with `Authorization: ApiKey KEY`, reads `result["sql"]` and sends
that over the wire unchanged. So the answer is SQL the wire server accepts: the
transpiler's DuckDB SQL with each search text embedded by the server's model
(through its embedding cache) and written as `CAST([...] AS FLOAT[dims])`.

Decisions:
- Column markers (a text column embedded per row, e.g. `semantic_match(content, ...)`
  or JOIN_VECTOR's text side) cannot be resolved ahead of time: they stay
  `__HATI_EMBED__(col)`, which the wire server evaluates; `deferred` lists them.
- Postgres SQL without search texts comes back unchanged (the wire handles it as is),
  e.g. psycopg2-style `semantic_match(content, %s)`: the client fills the text in and
  the wire server embeds it. Quoted search texts together with `%s` placeholders are
  refused (422): the rendered SQL would no longer carry the client's placeholders.
- The output is transpiled once more here, as the wire will: SQL that would not read
  back identically-shaped is refused (422) instead of failing later on the wire. As
  the REST API runs in the wire server's process, this also warms its transpile cache.
- `quota_remaining` is always null: hatiproxy has no quota. A 429 here comes only from
  the per-key rate limiter.
- `embeddings_generated` counts the distinct search texts embedded (cache hits included).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from proxy.api.rest.auth import Caller, caller
from proxy.api.rest.errors import ErrorBody, error
from proxy.core.errors import AgentError
from proxy.semantic.engine import FIX_HINT
from proxy.semantic.vector_sql import (
    RenderError,
    deferred_markers,
    has_client_placeholders,
    render_resolved,
)
from transpiler import Statement, TranspileError, transpile

router = APIRouter(tags=["sql"])
Who = Annotated[Caller, Depends(caller)]


class TranspileRequest(BaseModel):
    model_config = ConfigDict(strict=True)
    sql: str = Field(min_length=1, description="One or more SQL statements (hybrid SQL allowed)")
    dialect: Literal["postgres", "snowflake"] = Field("postgres", description="Input dialect")


class TranspileResult(BaseModel):
    sql: str = Field(description="SQL to send over the wire as is (search texts resolved)")
    hybrid: bool = Field(description="The SQL uses semantic functions")
    embeddings_generated: int = Field(description="Distinct search texts embedded")
    embedding_dimensions: int | None = Field(description="Vector size; null when not hybrid")
    quota_remaining: int | None = Field(
        None, description="Always null: hatiproxy has no transpile quota"
    )
    deferred: list[str] = Field(
        description="Columns / $n embedded per row by the server at run time (not resolvable "
        "ahead of time; left as __HATI_EMBED__(...) markers)"
    )
    model: str | None = Field(description="The embedding model used; null when none loaded")


class SqlErrorBody(ErrorBody):
    sqlstate: str | None = Field(None, description="The SQLSTATE the wire would answer")
    position: int | None = Field(None, description="1-based character position of the error")


def _sql_error(exc: TranspileError) -> JSONResponse:
    return error(422, "invalid_sql", exc.message, sqlstate=exc.sqlstate, position=exc.position)


def _check_round_trip(sql: str, original: tuple[Statement, ...], dims: int) -> None:
    """Transpile the output as the wire will; refuse it unless it reads back alike."""
    try:
        back = transpile(sql, dialect="postgres", vector_dims=dims)
    except TranspileError as exc:
        raise AgentError.invalid(
            f"the resolved SQL does not read back on the wire ({exc.message})",
            hint="send this SQL over the wire as written: the server resolves semantic SQL",
        ) from None
    same = len(back) == len(original) and all(
        not b.bind_texts and deferred_markers(b) == deferred_markers(o)
        for b, o in zip(back, original, strict=True)
    )
    if not same:
        raise AgentError.invalid(
            "the resolved SQL would not run as the original on the wire",
            hint="send this SQL over the wire as written: the server resolves semantic SQL",
        )


@router.post(
    "/v1/transpile",
    response_model=TranspileResult,
    summary="Resolve hybrid SQL's search texts to vectors (query:read)",
    responses={
        422: {"model": SqlErrorBody, "description": "Invalid SQL (with SQLSTATE and position)"},
        503: {"model": ErrorBody, "description": "No embedding model is loaded"},
    },
)
async def transpile_sql(body: TranspileRequest, request: Request, who: Who):
    who.require("query:read")
    semantic = request.app.state.services.semantic
    dims = semantic.dims
    try:
        statements = transpile(body.sql, dialect=body.dialect, vector_dims=dims)
    except TranspileError as exc:
        return _sql_error(exc)
    hybrid = any(st.markers for st in statements)
    deferred = list(dict.fromkeys(d for st in statements for d in deferred_markers(st)))
    texts = list(dict.fromkeys(t for st in statements for t in st.bind_texts))
    if hybrid and semantic.embedder is None:
        raise AgentError.unavailable(
            f"semantic SQL needs an embedding model: {semantic.error or 'none is loaded'}",
            hint=FIX_HINT,
        )
    result = {
        "hybrid": hybrid,
        "embeddings_generated": len(texts),
        "embedding_dimensions": dims if hybrid else None,
        "quota_remaining": None,
        "deferred": deferred,
        "model": semantic.model_name,
    }
    if not texts and body.dialect == "postgres":
        return {**result, "sql": body.sql}
    if texts and has_client_placeholders(body.sql, body.dialect):
        raise AgentError.invalid(
            "client-side parameters (%s) and quoted search texts in one request cannot be "
            "pre-resolved",
            hint="pass the search text as a parameter too (the SQL then comes back unchanged "
            "and the server embeds it), or send the SQL over the wire as written",
        )
    vectors = {}
    if texts:
        embedded = await semantic.worker.embed_now(texts, "query")
        vectors = dict(zip(texts, embedded, strict=True))
    try:
        sql = ";\n".join(render_resolved(st, vectors) for st in statements)
    except RenderError as exc:
        raise AgentError.invalid(str(exc)) from None
    _check_round_trip(sql, statements, dims)
    return {**result, "sql": sql}
