"""One cheap pass over a statement's tokens deciding which rewrites can apply.

Most statements need no rewrite beyond sqlglot's own translation; the flags let
`rewrite.apply` skip whole tree walks, which keeps the uncached path near plain
sqlglot cost. The pass also fixes one token: `FLOAT[` (DuckDB's 4-byte float array,
the vector column type) must not become Postgres' DOUBLE.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.tokens import Token, TokenType

HATI_WORDS = frozenset(
    {
        "SEMANTIC_MATCH",
        "SEMANTIC_RANK",
        "VECTOR_MATCH",
        "JOIN_VECTOR",
        "HATIDATA_CONTEXT",
        "HATIDATA_RAG_CONTEXT",
        "__HATI_EMBED__",
    }
)
_HATI_LOWER = tuple(w.lower() for w in HATI_WORDS)
VECTOR_WORDS = frozenset({"VECTOR", "<=>", "<->", "<#>"})
PG_WORDS = frozenset(
    {
        "PUBLIC",
        "PG_CATALOG",
        "OPERATOR",
        "COLLATE",
        "OID",
        "VERSION",
        "CURRENT_SETTING",
        "BYTEA",
        "NUMERIC",
        "DECIMAL",
    }
)
# Identifiers that only Snowflake SQL uses; seeing one switches a Postgres-mode
# statement to the Snowflake reader.
SNOWFLAKE_WORDS = frozenset(
    {
        "IFF",
        "NVL",
        "NVL2",
        "DATEADD",
        "DATEDIFF",
        "LISTAGG",
        "FLATTEN",
        "PARSE_JSON",
        "TO_VARCHAR",
        "TO_DATE",
        "VARIANT",
        "TIMESTAMP_NTZ",
        "TIMESTAMP_LTZ",
        "TIMESTAMP_TZ",
        "TRY_TO_NUMBER",
        "TO_NUMBER",
        "ZEROIFNULL",
        "ARRAY_SIZE",
        "OBJECT_CONSTRUCT",
    }
)
_NAME_TYPES = frozenset({TokenType.VAR, TokenType.IDENTIFIER, TokenType.R_PAREN})


@dataclass(slots=True)
class Triggers:
    hati: bool = False
    vector: bool = False
    pg: bool = False
    snowflake: bool = False
    three_part: bool = False
    max_param: int = 0
    pg_functions: bool = False
    flatten: bool = False


def scan(tokens: list[Token], pg_function_names: frozenset[str] | None = None) -> Triggers:
    from transpiler.pgcompat import MISSING_PG_FUNCTIONS

    names = pg_function_names or MISSING_PG_FUNCTIONS
    found = Triggers()
    dots = 0
    prev: Token | None = None
    for i, token in enumerate(tokens):
        tt = token.token_type
        word = token.text.upper()
        if word in HATI_WORDS:
            found.hati = True
        elif word in VECTOR_WORDS or tt is TokenType.OBJECT_IDENTIFIER:
            found.vector |= word in VECTOR_WORDS
            found.pg |= tt is TokenType.OBJECT_IDENTIFIER
        elif word in PG_WORDS:
            found.pg = True
        elif word in SNOWFLAKE_WORDS:
            found.snowflake = True
            found.flatten |= word == "FLATTEN"
        elif word.lower() in names:
            found.pg_functions = True
        if tt is TokenType.DOT:
            dots += 1
            if dots >= 2:
                found.three_part = True
        elif tt is not TokenType.VAR and tt is not TokenType.IDENTIFIER:
            dots = 0
        if tt is TokenType.PARAMETER and i + 1 < len(tokens):
            nxt = tokens[i + 1]
            if nxt.token_type is TokenType.NUMBER and nxt.text.isdigit():
                found.max_param = max(found.max_param, int(nxt.text))
        elif tt is TokenType.DOUBLE and word == "FLOAT":
            if i + 1 < len(tokens) and tokens[i + 1].token_type is TokenType.L_BRACKET:
                token.token_type = TokenType.FLOAT
            elif i + 1 < len(tokens) and tokens[i + 1].token_type is TokenType.L_PAREN:
                found.pg = True  # FLOAT(p): Postgres precision -> REAL / DOUBLE
        elif (
            tt is TokenType.COLON
            and prev is not None
            and prev.token_type in _NAME_TYPES
            and i + 1 < len(tokens)
            and tokens[i + 1].token_type in (TokenType.VAR, TokenType.IDENTIFIER)
        ):
            found.snowflake = True  # `col:path` semi-structured access
        prev = token
    found.pg |= found.three_part or found.pg_functions
    return found


def uses_hati_text(sql: str) -> bool:
    """Substring check for inputs that could not be tokenized."""
    low = sql.lower()
    return any(w in low for w in _HATI_LOWER)
