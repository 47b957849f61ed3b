"""`DO [LANGUAGE plpgsql] <string>`: the subset of PL/pgSQL blocks hatiproxy runs.

ORMs and migration tools wrap DDL that PostgreSQL has no IF NOT EXISTS for in an
anonymous block that swallows one error, e.g. Sequelize's and drizzle-kit's

    DO 'BEGIN CREATE TYPE "public"."e" AS ENUM(''a''); EXCEPTION WHEN duplicate_object THEN null; END';

The subset: a body `BEGIN <statement>; ... [EXCEPTION WHEN <condition> [OR <condition>]
THEN <statement>; ... [WHEN ...]] END [;]`, where a statement is SQL that returns no rows,
PL/pgSQL's `NULL;`, or (in the body) `IF <expression> THEN <statements> [ELSIF
<expression> THEN <statements>] [ELSE <statements>] END IF;` (LangGraph's store:
`IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN CREATE
EXTENSION vector; END IF;`), and a condition is a name of PostgreSQL's errcodes table
(plpgsql_conditions.py), `others` or `SQLSTATE 'xxxxx'`. Anything else PL/pgSQL has
(DECLARE and variables, CASE, LOOP, PERFORM, RAISE, EXECUTE, nested blocks, other
languages) is refused with 0A000 naming it. The server runs the statements as one
subtransaction (proxy/pgserver/do_blocks.py). Parsing is token-based (sqlglot's tokenizer),
so strings, dollar quotes and comments inside the body never split it.
"""

from __future__ import annotations

from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from transpiler.dialects import POSTGRES, tokenize
from transpiler.errors import TranspileError
from transpiler.model import OTHERS, DoBlock, DoHandler, DoIf
from transpiler.plpgsql_conditions import CONDITIONS

# PL/pgSQL statements outside the subset, by their first word.
_UNSUPPORTED = {
    "DECLARE": "DECLARE (variables)",
    "BEGIN": "a nested BEGIN ... END block",
    "IF": "IF",
    "CASE": "CASE statements",
    "LOOP": "LOOP",
    "WHILE": "WHILE loops",
    "FOR": "FOR loops",
    "FOREACH": "FOREACH loops",
    "EXIT": "EXIT",
    "CONTINUE": "CONTINUE",
    "RETURN": "RETURN",
    "PERFORM": "PERFORM",
    "RAISE": "RAISE",
    "ASSERT": "ASSERT",
    "EXECUTE": "dynamic EXECUTE",
    "GET": "GET DIAGNOSTICS",
    "OPEN": "cursors (OPEN)",
    "FETCH": "cursors (FETCH)",
    "MOVE": "cursors (MOVE)",
    "CLOSE": "cursors (CLOSE)",
    "COMMIT": "COMMIT",
    "ROLLBACK": "ROLLBACK",
    "CALL": "CALL",
}
_STRINGS = (TokenType.STRING, TokenType.HEREDOC_STRING, TokenType.BYTE_STRING)
_SUBSET = (
    "hatiproxy runs DO blocks of the form BEGIN <SQL statements>; [EXCEPTION WHEN "
    "<condition> THEN <statements>;] END"
)


def parse(text: str) -> DoBlock:
    """`text`: the whole DO statement. Raises TranspileError (42601 bad syntax, 0A000
    outside the subset)."""
    rest = text.lstrip()[2:]  # after DO (the tokenizer reads DO's operand as one string)
    try:
        tokens = tokenize(POSTGRES, rest)
    except TokenError as err:
        raise TranspileError("42601", f"syntax error in DO: {err}") from None
    words = [t.text.upper() for t in tokens]
    if tokens and tokens[-1].token_type is TokenType.SEMICOLON:
        tokens, words = tokens[:-1], words[:-1]
    language = "plpgsql"
    body: Token | None = None
    i = 0
    while i < len(tokens):
        if words[i] == "LANGUAGE" and i + 1 < len(tokens):
            language = tokens[i + 1].text.lower()
            i += 2
        elif tokens[i].token_type in _STRINGS and body is None:
            body = tokens[i]
            i += 1
        else:
            raise TranspileError("42601", f'syntax error at or near "{tokens[i].text}" in DO')
    if body is None:
        raise TranspileError("42601", "no inline code specified in DO")
    if language != "plpgsql":
        raise TranspileError(
            "0A000", f"DO blocks in language {language} are not supported: {_SUBSET} in plpgsql"
        )
    return parse_body(body.text)


def parse_body(body: str) -> DoBlock:
    """The PL/pgSQL block of a DO statement (its string's contents)."""
    try:
        tokens = tokenize(POSTGRES, body)
    except TokenError as err:
        raise TranspileError("42601", f"syntax error in DO block: {err}") from None
    if tokens and tokens[0].token_type is TokenType.LT:
        _refuse("block labels (<<label>>)")
    if not tokens or tokens[0].text.upper() != "BEGIN":
        first = tokens[0].text.upper() if tokens else "an empty block"
        _refuse(_UNSUPPORTED.get(first, f'a block starting with "{first}"'))
    segments = _segments(tokens[1:])
    if not segments or [t.text.upper() for t in segments[-1]] != ["END"]:
        raise TranspileError(
            "42601", 'syntax error in DO block: it must end with "END" after the last ";"'
        )
    body_segments = segments[:-1]
    k = next(
        (n for n, seg in enumerate(body_segments) if seg and seg[0].text.upper() == "EXCEPTION"),
        len(body_segments),
    )
    statements, _ = _items(body, _split_heads(body_segments[:k]), 0, frozenset())
    handlers: list[DoHandler] = []
    in_handlers = False
    for seg in body_segments[k:]:
        if not seg:
            continue  # `;;`
        head = seg[0].text.upper()
        if head == "EXCEPTION" and not in_handlers:
            in_handlers, seg = True, seg[1:]
            if not seg or seg[0].text.upper() != "WHEN":
                raise TranspileError("42601", 'syntax error in DO block: "WHEN" expected')
            head = "WHEN"
        if head == "WHEN" and in_handlers:
            conditions, seg = _conditions(seg[1:])
            handlers.append(DoHandler(conditions, ()))
            if not seg:
                raise TranspileError("42601", "syntax error in DO block: a statement expected")
        text = _statement(body, seg)
        if text is None:
            continue  # NULL;
        last = handlers[-1]
        handlers[-1] = DoHandler(last.conditions, (*last.statements, text))
    return DoBlock(tuple(statements), tuple(handlers))


_BRANCH_ENDS = frozenset({"ELSIF", "ELSEIF", "ELSE", "END"})


def _split_heads(segments: list[list[Token]]) -> list[list[Token]]:
    """`IF c THEN stmt` / `ELSIF c THEN stmt` / `ELSE stmt` as two segments each: the
    head (through THEN, or ELSE), then the statement."""
    out: list[list[Token]] = []
    for seg in segments:
        while seg:  # `ELSE IF c THEN stmt`: the rest may start another head
            head = seg[0].text.upper()
            cut = (
                1 if head == "ELSE" else _then(seg) + 1 if head in ("IF", "ELSIF", "ELSEIF") else 0
            )
            if not cut:
                out.append(seg)
                break
            out.append(seg[:cut])
            seg = seg[cut:]
    return out


def _then(seg: list[Token]) -> int:
    """The index of the THEN that ends an IF's condition (not one of a CASE in it)."""
    depth = cases = 0
    for n, tok in enumerate(seg):
        word = tok.text.upper()
        depth += (tok.token_type is TokenType.L_PAREN) - (tok.token_type is TokenType.R_PAREN)
        if depth == 0 and word == "CASE":
            cases += 1
        elif depth == 0 and word == "END" and cases:
            cases -= 1
        elif depth == 0 and word == "THEN" and not cases:
            return n
    raise TranspileError("42601", 'syntax error in DO block: "THEN" expected after IF')


def _items(
    body: str, segs: list[list[Token]], i: int, ends: frozenset[str]
) -> tuple[list[str | DoIf], int]:
    """The statements from segs[i] up to one starting with a word of `ends`."""
    out: list[str | DoIf] = []
    while i < len(segs) and segs[i][0].text.upper() not in ends:
        if segs[i][0].text.upper() == "IF":
            node, i = _if(body, segs, i)
            out.append(node)
            continue
        text = _statement(body, segs[i])
        i += 1
        if text is not None:
            out.append(text)
    return out, i


def _if(body: str, segs: list[list[Token]], i: int) -> tuple[DoIf, int]:
    branches: list[tuple[str | None, tuple[str | DoIf, ...]]] = []
    condition: str | None = _condition(body, segs[i])
    i += 1
    while True:
        statements, i = _items(body, segs, i, _BRANCH_ENDS)
        branches.append((condition, tuple(statements)))
        words = [t.text.upper() for t in segs[i]] if i < len(segs) else []
        if words == ["END", "IF"]:
            return DoIf(tuple(branches)), i + 1
        if words[:1] == ["ELSE"] and condition is not None:
            condition, i = None, i + 1
        elif words[:1] in (["ELSIF"], ["ELSEIF"]) and condition is not None:
            condition, i = _condition(body, segs[i]), i + 1
        else:
            raise TranspileError("42601", 'syntax error in DO block: "END IF" expected')


def _condition(body: str, head: list[Token]) -> str:
    """The expression between IF / ELSIF and THEN, as written."""
    if len(head) < 3:
        raise TranspileError("42601", "syntax error in DO block: IF without a condition")
    if any(t.token_type is TokenType.COLON_EQ for t in head):
        _refuse("variable assignment (:=)")
    return body[head[1].start : head[-2].end + 1]


def _segments(tokens: list[Token]) -> list[list[Token]]:
    """Split at the semicolons (only ever between statements: strings are tokens)."""
    out: list[list[Token]] = [[]]
    for tok in tokens:
        if tok.token_type is TokenType.SEMICOLON:
            out.append([])
        else:
            out[-1].append(tok)
    if not out[-1]:
        out.pop()  # `END;`
    return out


def _conditions(seg: list[Token]) -> tuple[tuple[str, ...], list[Token]]:
    """`cond [OR cond ...] THEN` at the start of `seg`: the SQLSTATEs, and what follows."""
    conditions: list[str] = []
    i = 0
    while True:
        if i >= len(seg):
            raise TranspileError("42601", 'syntax error in DO block: "THEN" expected')
        word = seg[i].text.lower()
        if word == "sqlstate" and i + 1 < len(seg) and seg[i + 1].token_type is TokenType.STRING:
            code = seg[i + 1].text.upper()
            if len(code) != 5 or not code.isalnum():
                raise TranspileError("42601", f'invalid SQLSTATE code "{seg[i + 1].text}"')
            conditions.append(code)
            i += 2
        elif word == OTHERS:
            conditions.append(OTHERS)
            i += 1
        elif word in CONDITIONS:
            conditions.extend(CONDITIONS[word])
            i += 1
        else:
            raise TranspileError("42704", f'unrecognized exception condition "{seg[i].text}"')
        if i < len(seg) and seg[i].text.upper() == "OR":
            i += 1
            continue
        if i < len(seg) and seg[i].text.upper() == "THEN":
            return tuple(conditions), seg[i + 1 :]
        raise TranspileError("42601", 'syntax error in DO block: "THEN" expected')


def _statement(body: str, seg: list[Token]) -> str | None:
    """The SQL of one statement of the block; None for PL/pgSQL's `NULL;`."""
    head = seg[0].text.upper()
    if head == "NULL" and len(seg) == 1:
        return None
    if head in _UNSUPPORTED:
        _refuse(_UNSUPPORTED[head])
    if head in ("EXCEPTION", "WHEN", "END"):
        raise TranspileError("42601", f'syntax error in DO block at or near "{seg[0].text}"')
    if any(t.token_type is TokenType.COLON_EQ for t in seg):
        _refuse("variable assignment (:=)")
    return body[seg[0].start : seg[-1].end + 1]


def _refuse(what: str) -> None:
    raise TranspileError("0A000", f"{what} in a DO block is not supported: {_SUBSET}")
