"""transpiler.token_flags.scan: the one-lookup-per-token pass gives exactly the flags of
the word-list definitions it folds together (kept here as a plain reference: the
scan before it was merged, external_access._worth_walking, agent_calls.has_agent_call
and colnames' COLUMNS/UNPACK test), on the golden examples, hand-picked edge cases and
generated token soup (ASCII and not: upper/lower differ outside ASCII, e.g. the
Kelvin sign lower-cases to k)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from transpiler import agent_calls, external_access
from transpiler.dialects import POSTGRES, SNOWFLAKE
from transpiler.pgcompat import MISSING_PG_FUNCTIONS
from transpiler.token_flags import (
    HATI_WORDS,
    PG_WORDS,
    SNOWFLAKE_WORDS,
    VECTOR_WORDS,
    Triggers,
    scan,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "sql_examples"
_NAME_TYPES = {TokenType.VAR, TokenType.IDENTIFIER, TokenType.R_PAREN}
# The server's registry tells the transpiler its agent function names; these tests scan
# with a sample of them (added to whatever is registered in this process, then restored).
AGENT_WORDS = frozenset({"store_memory", "search_memory", "get_agent_state", "branch_query"})


@pytest.fixture(autouse=True, scope="module")
def _agent_names():
    before = agent_calls.agent_functions()
    agent_calls.set_agent_functions(before | AGENT_WORDS)
    yield
    agent_calls.set_agent_functions(before)


def reference_scan(tokens: list[Token]) -> Triggers:
    """The scan as it was before the word lists were folded into one dict."""
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
        elif word.lower() in MISSING_PG_FUNCTIONS:
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
                found.pg = True
        elif tt is TokenType.VARCHAR:  # varchar(n), a varchar column: transpiler.varchar_length
            if (
                i + 1 < len(tokens)
                and tokens[i + 1].token_type is TokenType.L_PAREN
                or prev is None
                or prev.token_type not in (TokenType.DCOLON, TokenType.ALIAS)
            ):
                found.pg = True
        elif tt in (TokenType.CHAR, TokenType.BPCHAR):  # char(n) casts and columns
            found.pg = True
        elif (
            tt is TokenType.COLON
            and prev is not None
            and prev.token_type in _NAME_TYPES
            and i + 1 < len(tokens)
            and tokens[i + 1].token_type in (TokenType.VAR, TokenType.IDENTIFIER)
        ):
            found.snowflake = True
        if (  # `FROM f(...)`: maybe a scalar function in FROM
            prev is not None
            and prev.token_type in (TokenType.FROM, TokenType.JOIN)
            and tt is not TokenType.L_PAREN
            and i + 1 < len(tokens)
            and tokens[i + 1].token_type is TokenType.L_PAREN
        ):
            found.pg = True
        low = token.text.lower()
        if (  # x::"regtype"
            tt is TokenType.IDENTIFIER
            and prev is not None
            and prev.token_type is TokenType.DCOLON
            and (low == "oid" or (low.startswith("reg") and low.isalpha()))
        ):
            found.pg = True
        if tt in external_access.STRING_TOKENS and (
            token.text[:1] == "{"  # '{a,b}'::text[]: PostgreSQL array text
            or (prev is not None and prev.token_type is TokenType.DASH)  # jsonb - 'key'
        ):
            found.pg = True
        prev = token
    found.pg |= found.three_part or found.pg_functions
    # The flags that used to be separate passes.
    found.agent = agent_calls.has_agent_call({t.text.lower() for t in tokens})
    found.outside = external_access._worth_walking(tokens)
    found.expansion = any(t.text.upper() in ("COLUMNS", "UNPACK") for t in tokens)
    found.division = any(
        t.token_type in (TokenType.SLASH, TokenType.MOD) or t.text.upper() == "MOD" for t in tokens
    )
    return found


def check(sql: str) -> None:
    for dialect in (POSTGRES, SNOWFLAKE):
        try:
            tokens = dialect.tokenize(sql)
        except TokenError:
            return
        expected_tokens = dialect.tokenize(sql)
        expected = reference_scan(expected_tokens)
        assert scan(tokens) == expected, sql
        # The FLOAT[ token fix is the same too.
        assert [t.token_type for t in tokens] == [t.token_type for t in expected_tokens]


def example_sql() -> list[str]:
    out = []
    for path in sorted(EXAMPLES.rglob("*.sql")):
        body = []
        for line in path.read_text().splitlines():
            if line in ("-- transpiled:", "-- rows:") or line.startswith("-- error:"):
                break
            body.append(line)
        out.append("\n".join(body))
    return out


EDGE_CASES = [
    "SELECT a FROM x.y.z",
    "SELECT a FROM x . y . z WHERE b.c = 1",
    'SELECT * FROM "db"."public"."t"',
    "SELECT a.b FROM t, u.v",
    "CREATE TABLE t (v FLOAT[3], w FLOAT(10), x FLOAT)",
    "CREATE TABLE t (a varchar(10), b character varying (3), c varchar, d char(2))",
    "SELECT x::varchar(3), y::varchar, CAST(z AS VARCHAR(2)) FROM t",
    "SELECT 'x'::regclass, c.oid::oid, 'y'::regtype",
    "SELECT v:path, o:a.b::string FROM t",
    "SELECT $1, $2, $10, $x FROM t WHERE a = $3",
    "SELECT * FROM read_csv('x.csv')",
    "SELECT * FROM \"read_parquet\"('a')",
    "SELECT * FROM d.csv",
    "SELECT * FROM d . parquet",
    'SELECT * FROM "d.csv"',
    "SELECT enable_profiling(), Verify_External()",
    "SELECT * FROM search_memory('q', top_k := 5) m",
    "SELECT COLUMNS('a.*'), UNPACK(s) FROM t",
    "SELECT semantic_match(embedding, 'x'), a <=> b, c <-> d, e <#> f FROM t",
    "SELECT * FROM t JOIN_VECTOR u ON semantic_match(u.embedding, t.body)",
    "SELECT NVL(a, 1), IFF(b, 1, 2) FROM t, LATERAL FLATTEN(input => c) f",
    "SELECT pg_backend_pid(), version(), current_setting('x') FROM pg_catalog.pg_class",
    "SELECT a COLLATE \"C\", b OPERATOR(pg_catalog.~) 'x', c::numeric, d::bytea FROM public.t",
    "SELECT 'semantic_match', \"flatten\", 'read_csv' FROM t",
    # Non-ASCII spellings: the Kelvin sign lower-cases to "k", the long s upper-cases to "S".
    "SELECT duc\u212adb_logs(), pg_bac\u212aend_pid(), ſemantic_match(e, 'x') FROM t",
    "SELECT * FROM ſearch_memory('q'), d.cſv, COLUMNſ(x), \u212aELVIN",
    'SELECT ÉTÉ, "naïve", straße FROM tbl',
]


@pytest.mark.parametrize("sql", example_sql() + EDGE_CASES)
def test_scan_matches_reference(sql: str) -> None:
    check(sql)


_WORDS = sorted(
    HATI_WORDS
    | VECTOR_WORDS
    | PG_WORDS
    | SNOWFLAKE_WORDS
    | MISSING_PG_FUNCTIONS
    | AGENT_WORDS
    | set(list(external_access.OUTSIDE_FUNCTIONS)[:20])
    | set(list(external_access.FILE_EXTENSIONS)[:10])
    | {"COLUMNS", "unpack", "enable_x", "float", "FLOAT", "select", "from", "t", "x1"}
    | {"varchar", "VARCHAR", "character varying", "char", "bpchar", "as"}
)
_PUNCT = [".", ",", "(", ")", "[", "]", ":", "::", "$", "$1", "$12", " ", "'a.b'", '"q.r"', "*"]
_ODD = ["\u212a", "ſ", "é", "İ", "ß"]
tokens_soup = st.lists(
    st.one_of(
        st.sampled_from(_WORDS),
        st.sampled_from(_PUNCT),
        st.sampled_from(_ODD),
        st.builds(
            lambda w, o: w.replace("s", o).replace("k", o),
            st.sampled_from(_WORDS),
            st.sampled_from(_ODD),
        ),
    ),
    max_size=25,
)


@settings(max_examples=400, deadline=None)
@given(tokens_soup)
def test_scan_matches_reference_on_token_soup(parts: list[str]) -> None:
    check(" ".join(parts))
    check("".join(parts))


@pytest.mark.parametrize("sql", ["SELECT j #- 'a.b'", "SELECT j - 'k'", "SELECT '{a}'"])
def test_strings_that_mark_postgresql(sql: str) -> None:
    check(sql)
