"""A trigger function's SQL text (an INSERT / UPDATE / DELETE, an IF condition, a RAISE
argument) bound to one firing: `NEW.col` / `OLD.col` become the SQL the caller gives for
that field (proxy/pgserver/after_triggers.py: a scalar subquery over the rows the
statement wrote), a whole `NEW` / `OLD` the record, and the TG_ variables their values as
string literals. Pure: text in, text out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from transpiler.dialects import POSTGRES, tokenize
from transpiler.errors import TranspileError
from transpiler.plpgsql_trigger import TG_VARIABLES

# (record "new" / "old", folded column or None for the whole record) -> SQL
Field = Callable[[str, str | None], str]
_NAMES = (TokenType.VAR, TokenType.IDENTIFIER)


def bind(text: str, field: Field, variables: Mapping[str, str]) -> str:
    """`text` with NEW / OLD and the TG_ variables replaced (`variables`: lower name ->
    value)."""
    try:
        tokens = tokenize(POSTGRES, text)
    except TokenError as err:
        raise TranspileError("42601", f"syntax error in function body: {err}") from None
    out: list[str] = []
    at = 0  # the text consumed so far
    i = 0
    while i < len(tokens):
        token = tokens[i]
        word = token.text.lower() if token.token_type is not TokenType.STRING else ""
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        before = tokens[i - 1] if i > 0 else None
        dotted = before is not None and before.token_type is TokenType.DOT
        if word in ("new", "old") and not dotted and token.token_type is not TokenType.IDENTIFIER:
            if after is not None and after.token_type is TokenType.DOT and i + 2 < len(tokens):
                name = tokens[i + 2]
                if name.token_type is TokenType.STAR:
                    raise TranspileError(
                        "0A000", f"{word.upper()}.* in a trigger function is not supported"
                    )
                column = name.text if name.token_type is TokenType.IDENTIFIER else name.text.lower()
                out.append(text[at : token.start] + field(word, column))
                at = name.end + 1
                i += 3
                continue
            out.append(text[at : token.start] + field(word, None))
            at = token.end + 1
        elif (
            word in TG_VARIABLES
            and token.token_type is TokenType.VAR
            and not dotted
            and not (after is not None and after.token_type in (TokenType.DOT, TokenType.L_PAREN))
        ):
            value = variables[word]
            out.append(text[at : token.start] + "'" + value.replace("'", "''") + "'")
            at = token.end + 1
        i += 1
    out.append(text[at:])
    return "".join(out)
