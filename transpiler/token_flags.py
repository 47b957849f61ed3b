"""One cheap pass over a statement's tokens deciding which rewrites and checks apply.

Most statements need no rewrite beyond sqlglot's own translation; the flags let
`rewrite.apply`, agent-call extraction, result-column naming and the external-access
tree walk be skipped, which keeps the uncached path near plain sqlglot cost. The pass
is one dict lookup per token (every word list below folded into one table per set of
agent function names, `_word_table`). It
also fixes one token: `FLOAT[` (DuckDB's 4-byte float array, the vector column type)
must not become Postgres' DOUBLE.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from sqlglot.tokens import Token, TokenType

from transpiler import (
    agent_calls,
    external_access,
    json_functions,
    pg_functions,
    pg_functions_more,
    regproc_columns,
)
from transpiler.pgcompat import MISSING_PG_FUNCTIONS

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
        "ANY",  # x = ANY('{a,b}'): see any_array
        # LIKE's default backslash escape: see like_escape
        "LIKE",
        "ILIKE",
        "~~",
        "~~*",
        "!~~",
        "!~~*",
        # array size functions: see array_dims
        "CARDINALITY",
        "ARRAY_LENGTH",
        "ARRAY_UPPER",
        "ARRAY_LOWER",
        "ARRAY_NDIMS",
        "UNNEST",  # FROM unnest(a, b): see unnest_zip
        "GENERATE_SERIES",  # FROM generate_series(1, n): see series_from
        # set-returning functions in FROM (pgcompat._SRF_AS_SUBQUERY)
        "PG_OPTIONS_TO_TABLE",
        "PG_PARTITION_ANCESTORS",
        "REGEXP_SPLIT_TO_TABLE",
        "GENERATE_SUBSCRIPTS",
        "NOW",  # a column DEFAULT now() kept as written (pgcompat._now_default)
        "EVERY",  # bool_and's other name (pgcompat._SYNONYMS)
        # int2vector / oidvector subscripts (vector_subscript.VECTOR_COLUMNS)
        "INDKEY",
        "INDCLASS",
        "INDCOLLATION",
        "INDOPTION",
        "PROARGTYPES",
        "TGATTR",
        "PARTATTRS",
        "PARTCLASS",
        "PARTCOLLATION",
        "STXKEYS",
        # jsonb operators and functions: see jsonb_ops
        "JSON",
        "JSONB",
        "->",
        "@>",
        "<@",
        "?",
        "?|",
        "?&",
        "#>",
        "#>>",
        "TO_JSONB",
        "JSON_AGG",
        "JSONB_AGG",
        "JSON_BUILD_OBJECT",
        "JSONB_BUILD_OBJECT",
        "JSON_BUILD_ARRAY",
        "JSONB_BUILD_ARRAY",
        "JSON_TYPEOF",
        "JSONB_TYPEOF",
        "JSONB_ARRAY_LENGTH",
        "JSON_ARRAY_ELEMENTS",
        "JSONB_ARRAY_ELEMENTS",
        "JSON_ARRAY_ELEMENTS_TEXT",
        "JSONB_ARRAY_ELEMENTS_TEXT",
        "JSON_OBJECT_KEYS",
        "JSONB_OBJECT_KEYS",
        "JSONB_PATH_MATCH",
        "PUBLIC",
        "PG_CATALOG",
        "OPERATOR",
        "COLLATE",
        "OID",
        "VERSION",
        "CURRENT_SETTING",
        "CURRENT_USER",
        "SESSION_USER",
        "CURRENT_ROLE",
        "CURRENT_CATALOG",
        "USER",
        "BYTEA",
        "NUMERIC",
        "DECIMAL",
        "STORED",  # GENERATED ALWAYS AS (...) STORED (pgcompat)
        "TYPE",  # CREATE TYPE t AS (...): pgcompat._composite_type
        # special date / time input strings: pgcompat._special_datetime
        "TODAY",
        "TOMORROW",
        "YESTERDAY",
        "EPOCH",
        "ALLBALLS",
    }
    | pg_functions.TRIGGER_WORDS
    | pg_functions_more.TRIGGER_WORDS
)
PG_WORDS |= {c.upper() for c in regproc_columns.REGPROC_COLUMNS}  # typreceive != 0
# Identifiers that only Snowflake SQL uses (not to_date / to_number: PostgreSQL has them
# too); seeing one switches a Postgres-mode statement to the Snowflake reader.
PG_WORDS |= json_functions.WORDS

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
        "VARIANT",
        "TIMESTAMP_NTZ",
        "TIMESTAMP_LTZ",
        "TIMESTAMP_TZ",
        "TRY_TO_NUMBER",
        "ZEROIFNULL",
        "ARRAY_SIZE",
        "OBJECT_CONSTRUCT",
    }
)
_NAME_TYPES = frozenset({TokenType.VAR, TokenType.IDENTIFIER, TokenType.R_PAREN})
_NAMES = frozenset({TokenType.VAR, TokenType.IDENTIFIER})
_QUOTED = external_access.STRING_TOKENS | {TokenType.IDENTIFIER}
_STRINGS = external_access.STRING_TOKENS
# DuckDB's star expansions COLUMNS(...) / UNPACK(...) (see colnames._is_expansion).
EXPANSION_WORDS = frozenset({"COLUMNS", "UNPACK"})
_OUTSIDE_PREFIXES = tuple(p.upper() for p in external_access.PRAGMA_PREFIXES)

# Word classes. HATI..PG_FUNCTION are exclusive, first match wins, in this order (a
# word in several lists counts for the first); the rest are independent bits.
HATI, VECTOR, PG, SNOWFLAKE, FLATTEN, PG_FUNCTION = 1, 2, 4, 8, 16, 32
AGENT, OUTSIDE, FILE_EXT, EXPANSION, DIVISION = 64, 128, 256, 512, 1024
DIVISION_WORDS = frozenset({"MOD"})  # mod(a, b) is `a % b`
_CHAIN = HATI | VECTOR | PG | SNOWFLAKE | FLATTEN | PG_FUNCTION


def _chain_flag(word: str) -> int:
    """Class of an upper-cased word among the exclusive lists."""
    if word in HATI_WORDS:
        return HATI
    if word in VECTOR_WORDS:
        return VECTOR
    if word in PG_WORDS:
        return PG
    if word in SNOWFLAKE_WORDS:
        return SNOWFLAKE | (FLATTEN if word == "FLATTEN" else 0)
    if word.lower() in MISSING_PG_FUNCTIONS:
        return PG_FUNCTION
    return 0


def _word_flags(text: str, agent: frozenset[str]) -> int:
    """All flags of one token text, by the definitions (any text, any script); `agent`:
    the agent function names."""
    word = text.upper()
    low = text.lower()
    flags = _chain_flag(word)
    if low in agent:
        flags |= AGENT
    if low in external_access.OUTSIDE_FUNCTIONS:
        flags |= OUTSIDE
    if low in external_access.FILE_EXTENSIONS:
        flags |= FILE_EXT
    if word in EXPANSION_WORDS:
        flags |= EXPANSION
    if word in DIVISION_WORDS:
        flags |= DIVISION
    return flags


@lru_cache(maxsize=8)
def _word_table(agent: frozenset[str]) -> dict[str, int]:
    # Keyed by upper case: for ASCII text, upper/lower round-trip, so one lookup of
    # text.upper() answers the lower-case lists too. Non-ASCII text takes _word_flags.
    # One table per set of agent names (in practice one: the server's, fixed at start).
    words = (
        HATI_WORDS | VECTOR_WORDS | PG_WORDS | SNOWFLAKE_WORDS | EXPANSION_WORDS | DIVISION_WORDS
        | {w.upper() for w in MISSING_PG_FUNCTIONS | agent}
        | {w.upper() for w in external_access.OUTSIDE_FUNCTIONS | external_access.FILE_EXTENSIONS}
    )  # fmt: skip
    return {w: f for w in words if w.isascii() and (f := _word_flags(w, agent))}


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
    # An agent function's name (agent_calls.agent_functions()): lift agent calls out.
    agent: bool = False
    # What external_access.of_tree needs its tree walk for (a file-like string or
    # name, an outside function's name, `.ext` after a dot); see its _worth_walking.
    outside: bool = False
    # COLUMNS / UNPACK: a select-list item may expand to several columns.
    expansion: bool = False
    # `/`, `%` or mod(): PostgreSQL's division semantics (division.py).
    division: bool = False


# Token types as plain names: attribute lookups on the enum class cost more per token.
_DOT, _PARAMETER, _DOUBLE, _COLON = (
    TokenType.DOT,
    TokenType.PARAMETER,
    TokenType.DOUBLE,
    TokenType.COLON,
)
_OBJECT_IDENTIFIER, _IDENTIFIER = TokenType.OBJECT_IDENTIFIER, TokenType.IDENTIFIER
_VARCHAR = TokenType.VARCHAR
_CHARS = frozenset({TokenType.CHAR, TokenType.BPCHAR})
_CAST_TO = frozenset({TokenType.DCOLON, TokenType.ALIAS})
_DCOLON = TokenType.DCOLON
_SELECT = TokenType.SELECT
_DIVISION_TOKENS = frozenset({TokenType.SLASH, TokenType.MOD})
_FROM_JOIN = frozenset({TokenType.FROM, TokenType.JOIN})
_L_PAREN = TokenType.L_PAREN
_SPECIAL = frozenset(
    {_DOT, _PARAMETER, _DOUBLE, _COLON, _VARCHAR, _DCOLON, _SELECT} | _DIVISION_TOKENS | _CHARS
)


def _quoted_reg_type(text: str) -> bool:
    low = text.lower()
    return low == "oid" or (low.startswith("reg") and low.isalpha())


def scan(tokens: Sequence[Token], agent: frozenset[str] | None = None) -> Triggers:
    """The flags of a statement's tokens; `agent`: the agent function names (default:
    the current set, agent_calls.agent_functions())."""
    if agent is None:
        agent = agent_calls.agent_functions()
    found = Triggers()
    flags = 0
    outside = False
    get = _word_table(agent).get
    prev_type: TokenType | None = None
    for i, token in enumerate(tokens):
        tt = token.token_type
        text = token.text
        word = text.upper()
        ascii_text = text.isascii()
        cls = get(word, 0) if ascii_text else _word_flags(text, agent)
        if cls:
            if tt is _OBJECT_IDENTIFIER and not cls & HATI:
                cls = (cls & ~_CHAIN) | (cls & VECTOR) | PG  # a reg* / oid type word
            flags |= cls
        elif tt is _OBJECT_IDENTIFIER or (
            tt is _IDENTIFIER and prev_type is _DCOLON and _quoted_reg_type(text)
        ):
            flags |= PG  # x::regclass, x::"regtype" (TypeORM quotes it)
        if not outside:  # external_access._worth_walking's test, word flags precomputed
            if tt in _QUOTED:
                outside = external_access.file_like(text) or (
                    tt is _IDENTIFIER and external_access.outside_function(text)
                )
            elif cls & OUTSIDE or (
                word.startswith(_OUTSIDE_PREFIXES)
                if ascii_text
                else external_access.outside_function(text)
            ):
                outside = True
            if cls & FILE_EXT and prev_type is _DOT and tt in _NAMES:
                outside = True  # `d . csv`
        if tt in _SPECIAL:
            flags |= _special(tokens, i, tt, word, prev_type, found)
        elif text[:1] == "{" and tt in _STRINGS:
            flags |= PG  # '{a,b}'::text[]: PostgreSQL array text (pgcompat._array_literal)
        elif tt in _STRINGS and text[:9].lower().startswith(("public.", '"public".')):
            flags |= PG  # nextval('public.s'): DuckDB's schema is main (reg_casts)
        elif tt in _STRINGS and prev_type is TokenType.DASH:
            flags |= PG  # jsonb - 'key' (jsonb_ops; a number minus a string is an error anyway)
        elif tt is TokenType.HEX_STRING:
            flags |= PG  # x'1F'::int (pg_functions_more)
        elif prev_type in _FROM_JOIN and tt is not _L_PAREN:
            nxt = i + 1
            if nxt < len(tokens) and tokens[nxt].token_type is _L_PAREN:
                flags |= PG  # `FROM f(...)`: maybe a scalar function (scalar_from)
        prev_type = tt
    found.hati = bool(flags & HATI)
    found.vector = bool(flags & VECTOR)
    found.snowflake = bool(flags & SNOWFLAKE)
    found.flatten = bool(flags & FLATTEN)
    found.pg_functions = bool(flags & PG_FUNCTION)
    found.agent = bool(flags & AGENT)
    found.expansion = bool(flags & EXPANSION)
    found.division = bool(flags & DIVISION)
    found.outside = outside
    found.pg = bool(flags & PG) or found.three_part or found.pg_functions
    return found


def _special(
    tokens: Sequence[Token],
    i: int,
    tt: TokenType,
    word: str,
    prev: TokenType | None,
    found: Triggers,
) -> int:
    """Dots, `$n`, FLOAT[ / FLOAT(, VARCHAR(, `/` / `%` and `col:path`: sets `found`
    fields, returns flags."""
    n = len(tokens)
    if tt in _DIVISION_TOKENS:
        return DIVISION
    if tt is _DOT:
        if not found.three_part and _after_dotted_name(tokens, i):
            found.three_part = True
    elif tt is _PARAMETER:
        if i + 1 < n:
            nxt = tokens[i + 1]
            if nxt.token_type is TokenType.NUMBER and nxt.text.isdigit():
                found.max_param = max(found.max_param, int(nxt.text))
    elif tt is _DOUBLE:
        if word == "FLOAT" and i + 1 < n:
            nxt_type = tokens[i + 1].token_type
            if nxt_type is TokenType.L_BRACKET:
                tokens[i].token_type = TokenType.FLOAT
            elif nxt_type is TokenType.L_PAREN:
                return PG  # FLOAT(p): Postgres precision -> REAL / DOUBLE
    elif tt is _VARCHAR:
        if i + 1 < n and tokens[i + 1].token_type is TokenType.L_PAREN:
            return PG  # varchar(n): a length check in CREATE TABLE, truncating casts
        if prev not in _CAST_TO:
            return PG  # a varchar column: its word recorded (varchar_length.column_def)
    elif tt in _CHARS:
        return PG  # ::char(n): a cast cutting to n; a char(n) column: its CHECK
    elif tt is _SELECT:
        if i + 1 < n and tokens[i + 1].token_type is TokenType.FROM:
            return PG  # EXISTS (SELECT FROM t ...): an empty select list (pgcompat)
        return 0
    elif tt is _DCOLON:
        if i + 1 < n and tokens[i + 1].token_type is TokenType.NAME:
            return PG  # ::name (psqlODBC's catalog queries): pgcompat makes it VARCHAR
    elif prev in _NAME_TYPES and i + 1 < n and tokens[i + 1].token_type in _NAMES:
        return SNOWFLAKE  # `col:path` semi-structured access (tt is COLON)
    return 0


def _after_dotted_name(tokens: Sequence[Token], i: int) -> bool:
    """Whether the DOT at i follows another DOT with only names between (`a.b.`)."""
    j = i - 1
    while j >= 0 and tokens[j].token_type in _NAMES:
        j -= 1
    return j >= 0 and tokens[j].token_type is _DOT


def uses_hati_text(sql: str) -> bool:
    """Substring check for inputs that could not be tokenized."""
    low = sql.lower()
    return any(w in low for w in _HATI_LOWER)
