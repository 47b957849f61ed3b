"""PostgreSQL bytea text written where a bytea column takes it: `INSERT INTO t (b) VALUES
('\\x00ff')`, `UPDATE t SET b = 'a\\000b'` (and INSERT ... SELECT, ON CONFLICT DO UPDATE).

PostgreSQL reads an untyped literal by its target column's input function: `\\x` and hex
digits are those bytes, any other text the escape format (`\\\\` a backslash, `\\ooo` an
octal byte). DuckDB casts the VARCHAR to BLOB by its own rules (`\\xNN` one escaped byte,
the rest characters), so '\\x00ff' became 00 66 66 and '\\x' an error. With catalog hints
saying the column is a BLOB, the literal becomes `unhex('<its bytes>')`. Text PostgreSQL
would refuse is left as written (DuckDB's error stands); so are columns the hints do not
know.

`length(b)` of a bytea column is its byte count in PostgreSQL; DuckDB has no
length(BLOB) ("No function matches"): with the hints saying so, it is octet_length(b).
"""

from __future__ import annotations

import re

from sqlglot import exp

from transpiler.column_hints import BYTEA, ColumnHints, table_of, written_values

_HEX = re.compile(r"\\x((?:\s*[0-9A-Fa-f]\s*[0-9A-Fa-f])*)\s*\Z")
_ESCAPE = re.compile(r"\\\\|\\[0-3][0-7]{2}|\\|[^\\]+")


def bytea_in(text: str) -> bytes | None:
    """PostgreSQL's byteain of `text` (hex or escape format), None where it would refuse."""
    if text.startswith("\\x"):
        m = _HEX.match(text)
        return bytes.fromhex(re.sub(r"\s", "", m[1])) if m else None
    out = bytearray()
    for part in _ESCAPE.findall(text):
        if part == "\\\\":
            out += b"\\"
        elif part == "\\":
            return None  # a lone backslash: "invalid input syntax for type bytea"
        elif part.startswith("\\"):
            out.append(int(part[1:], 8))
        else:
            out += part.encode()
    return bytes(out)


def rewrite(tree: exp.Insert | exp.Update, hints: ColumnHints) -> None:
    for kind, value in written_values(tree, hints):
        if kind == BYTEA and isinstance(value, exp.Literal) and value.is_string:
            data = bytea_in(value.name)
            if data is not None:
                value.replace(
                    exp.Anonymous(this="unhex", expressions=[exp.Literal.string(data.hex())])
                )


def lengths(tree: exp.Expr, hints: ColumnHints) -> None:
    """`length(<bytea column>)` as octet_length (in place)."""
    for node in list(tree.find_all(exp.Length)):
        column = node.this
        if not isinstance(column, exp.Column):
            continue
        table = table_of(column, hints)
        kinds = hints.columns(table) if table is not None else None
        if kinds and kinds.get(column.name.lower()) == BYTEA:
            node.replace(exp.Anonymous(this="octet_length", expressions=[column.copy()]))
