r"""PostgreSQL built-ins DuckDB has under the same name with other semantics, or lacks in a
form a macro cannot take (variadic, a literal read at transpile time). Each is rewritten
by the shape of its call; the macros they call are in proxy/db/catalog/82_pg_functions.sql.

- SIMILAR TO, `substring(x FROM 'regex')`, `regexp_matches`, `regexp_match`: see pg_regex;
- `format('lit', ...)`: %s, %I, %L, %% and positions `%n$` (DuckDB's format is fmt's {});
- `num_nulls(...)` / `num_nonnulls(...)` (variadic);
- `(s1, e1) OVERLAPS (s2, e2)`;
- `to_timestamp(text, fmt)` is timestamptz (DuckDB's strptime gives timestamp);
- `encode(bytea, 'hex' | 'base64')` / `decode(text, ...)` (DuckDB's are UTF-8 casts);
- `to_char(number, '9,990.00')` (sqlglot reads every to_char as a date format);
- `extract(field FROM x)` is numeric, `date_part('field', x)` double precision (DuckDB's
  are integers); seconds and milliseconds keep their fraction (DuckDB's are whole
  numbers: 1 for 1.5 s), 6 / 3 decimals as PostgreSQL's extract; epoch exact to the
  microsecond;
- `percentile_cont(f) WITHIN GROUP (ORDER BY x)`: double precision (DuckDB's quantile of
  a DECIMAL rounds to the column's scale: 1.625 became 1.62);
- `to_hex(n)`: lower case; `overlay(s PLACING r FROM f [FOR n])`;
- the patterns of `~`, `~*`, `!~`, `regexp_replace`: PostgreSQL's `\Z`, `\y`, `\Y` (pg_regex).
"""

from __future__ import annotations

import re

from sqlglot import exp

from transpiler import pg_regex
from transpiler.literals import string_value

# Anonymous calls rewritten here, by lower-case name
NAMES = frozenset({"num_nulls", "num_nonnulls", "regexp_matches", "regexp_match", "to_char"})
NODES = (
    exp.SimilarTo,
    exp.Escape,
    exp.Substring,
    exp.Format,
    exp.Overlaps,
    exp.StrToTime,
    exp.Encode,
    exp.Decode,
    exp.Hex,
    exp.Overlay,
)
# extract / date_part fields whose value has a fraction in PostgreSQL: its decimals
_FRACTION_FIELDS = {"SECOND": 6, "SECONDS": 6, "MILLISECOND": 3, "MILLISECONDS": 3, "EPOCH": 6}
_KEEP_FIELDS = {"JULIAN"}  # DuckDB's double, as date_part's
# what makes a statement worth this pass (token_flags.PG_WORDS)
TRIGGER_WORDS = frozenset(
    {
        "SIMILAR TO",
        "SUBSTRING",
        "REGEXP_MATCHES",
        "FORMAT",
        "NUM_NULLS",
        "NUM_NONNULLS",
        "OVERLAPS",
        "TO_TIMESTAMP",
        "ENCODE",
        "DECODE",
        "TO_CHAR",
        "ARRAY",  # ARRAY[...] || element
        "EXTRACT",
        "DATE_PART",
        "PERCENTILE_CONT",
        "TO_HEX",
        "OVERLAY",
        "REGEXP_MATCH",
        "~",
        "~*",
        "!~",
        "!~*",
        "REGEXP_REPLACE",
    }
)


def handles(node: exp.Expr) -> bool:
    if isinstance(node, exp.Anonymous):
        return node.name.lower() in NAMES
    if isinstance(node, (exp.Like, exp.ILike)):
        return isinstance(node.expression, (exp.Any, exp.All))
    if isinstance(node, exp.DPipe):
        return _array_and_element(node) is not None
    if isinstance(node, exp.Length):  # length('\x01'::bytea): its bytes (DuckDB: no length(BLOB))
        arg = node.this  # a bytea literal's cast is already unhex(...) (children go first)
        return (isinstance(arg, exp.Anonymous) and arg.name.lower() == "unhex") or (
            isinstance(arg, exp.Cast) and arg.to.this is exp.DataType.Type.VARBINARY
        )
    if isinstance(node, exp.Extract):
        return isinstance(node.this, exp.Var) and node.this.name.upper() not in _KEEP_FIELDS
    if isinstance(node, exp.WithinGroup):
        return isinstance(node.this, exp.PercentileCont)
    return isinstance(node, (*NODES, *pg_regex.PATTERN_NODES))


def rewrite(node: exp.Expr) -> None:
    if isinstance(node, exp.Escape) and isinstance(node.this, exp.SimilarTo):
        pg_regex.similar_to(node.this, node.expression, node)
    elif isinstance(node, exp.SimilarTo) and not isinstance(node.parent, exp.Escape):
        pg_regex.similar_to(node, None, node)
    elif isinstance(node, exp.Substring):
        pg_regex.substring_regex(node)
    elif isinstance(node, exp.Format):
        _format(node)
    elif isinstance(node, exp.Overlaps):
        _overlaps(node)
    elif isinstance(node, exp.StrToTime):
        if not isinstance(node.parent, exp.Cast):  # PostgreSQL's to_timestamp is timestamptz
            node.replace(exp.cast(node.copy(), exp.DataType.build("TIMESTAMPTZ")))
    elif isinstance(node, (exp.Encode, exp.Decode)):
        _encode(node)
    elif isinstance(node, (exp.Like, exp.ILike)):
        _like_any(node)
    elif isinstance(node, exp.DPipe):
        _array_append(node)
    elif isinstance(node, exp.Length):
        node.replace(_call("octet_length", node.this.copy()))
    elif isinstance(node, exp.Extract):
        _extract(node)
    elif isinstance(node, exp.WithinGroup):
        _percentile_cont(node)
    elif isinstance(node, exp.Hex):
        node.replace(exp.Lower(this=node.copy()))
    elif isinstance(node, exp.Overlay):
        _overlay(node)
    elif isinstance(node, pg_regex.PATTERN_NODES):
        pg_regex.are_pattern(node)
    elif isinstance(node, exp.Anonymous):
        name = node.name.lower()
        if name in ("num_nulls", "num_nonnulls"):
            _num_nulls(node, name == "num_nulls")
        elif name == "regexp_matches":
            pg_regex.regexp_matches(node)
        elif name == "regexp_match":
            pg_regex.regexp_match(node)
        elif name == "to_char" and len(node.expressions) == 2:
            node.replace(
                _call(
                    "__hati_to_char_number",
                    exp.cast(node.expressions[0].copy(), "VARCHAR"),
                    node.expressions[1].copy(),
                )
            )


def _call(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


# ---------------------------------------------------------------- format


_SPEC = re.compile(r"%(?:(\d+)\$)?([-]?\d*)([sIL%])")


def _format(node: exp.Format) -> None:
    fmt = string_value(node.this)
    if fmt is None:
        return
    args = list(node.expressions)
    pieces: list[exp.Expr] = []
    pos, nxt = 0, 0
    for m in _SPEC.finditer(fmt):
        if m.start() > pos:
            pieces.append(exp.Literal.string(fmt[pos : m.start()]))
        pos = m.end()
        kind = m.group(3)
        if kind == "%":
            pieces.append(exp.Literal.string("%"))
            continue
        if m.group(2):
            return  # a width: left to DuckDB, which will refuse it
        index = int(m.group(1)) - 1 if m.group(1) else nxt
        nxt = index + 1
        if index >= len(args):
            return  # "too few arguments for format()": let DuckDB's error stand
        arg = args[index].copy()
        if kind == "s":
            pieces.append(
                exp.Coalesce(this=exp.cast(arg, "VARCHAR"), expressions=[exp.Literal.string("")])
            )
        elif kind == "I":
            pieces.append(_call("__hati_quote_ident", exp.cast(arg, "VARCHAR")))
        else:
            pieces.append(_call("__hati_quote_nullable", arg))
    if pos < len(fmt):
        pieces.append(exp.Literal.string(fmt[pos:]))
    if not pieces:
        pieces = [exp.Literal.string("")]
    out: exp.Expr = pieces[0]
    for p in pieces[1:]:
        out = exp.DPipe(this=out, expression=p, safe=True)
    node.replace(exp.paren(out) if len(pieces) > 1 else out)


# ---------------------------------------------------------------- arrays


def _is_array(node: exp.Expr) -> bool:
    if isinstance(node, exp.Cast):
        return node.to.this is exp.DataType.Type.ARRAY
    return isinstance(node, exp.Array)


def _is_element(node: exp.Expr) -> bool:
    """A value known not to be an array: a literal, or a cast to a scalar type."""
    if isinstance(node, exp.Neg):
        node = node.this
    if isinstance(node, exp.Cast):
        return node.to.this is not exp.DataType.Type.ARRAY and not node.to.args.get("nested")
    return isinstance(node, exp.Literal)


def _array_and_element(node: exp.DPipe) -> str | None:
    """'append' for `ARRAY[...] || 3`, 'prepend' for `0 || ARRAY[...]`, else None."""
    if _is_array(node.this) and _is_element(node.expression):
        return "append"
    if _is_element(node.this) and _is_array(node.expression):
        return "prepend"
    return None


def _array_append(node: exp.DPipe) -> None:
    """`ARRAY[1,2] || 3` / `0 || ARRAY[1,2]`: PostgreSQL's array_append / array_prepend
    (DuckDB's || takes two lists)."""
    how = _array_and_element(node)
    if how == "append":
        node.replace(_call("list_append", node.this.copy(), node.expression.copy()))
    elif how == "prepend":
        node.replace(_call("list_prepend", node.this.copy(), node.expression.copy()))


def _like_any(node: exp.Like | exp.ILike) -> None:
    """`x LIKE ANY (array)` / `ALL`, NOT and ILIKE too: each pattern with PostgreSQL's
    backslash escape; ANY of no patterns is false, ALL of none true."""
    quantifier = node.expression
    patterns = quantifier.this
    while isinstance(patterns, exp.Paren):
        patterns = patterns.this
    if isinstance(patterns, (exp.Select, exp.Subquery)):
        return  # a subquery: left to DuckDB
    var = exp.to_identifier("__hati_p")
    test: exp.Expr = exp.Escape(
        this=type(node)(this=node.this.copy(), expression=exp.column(var)),
        expression=exp.Literal.string("\\"),
    )
    if node.args.get("negate"):
        test = exp.Not(this=test)
    anyone = isinstance(quantifier, exp.Any)
    verdict = _call(
        "list_aggregate",
        _call("list_transform", patterns.copy(), exp.Lambda(this=test, expressions=[var])),
        exp.Literal.string("bool_or" if anyone else "bool_and"),
    )
    empty = exp.EQ(this=_call("len", patterns.copy()), expression=exp.Literal.number(0))
    node.replace(
        exp.paren(
            exp.Case(ifs=[exp.If(this=empty, true=exp.Boolean(this=not anyone))], default=verdict)
        )
    )


# ---------------------------------------------------------------- small ones


def _num_nulls(node: exp.Anonymous, nulls: bool) -> None:
    terms: list[exp.Expr] = [
        exp.Case(
            ifs=[
                exp.If(
                    this=exp.Is(this=a.copy(), expression=exp.Null()),
                    true=exp.Literal.number(int(nulls)),
                )
            ],
            default=exp.Literal.number(int(not nulls)),
        )
        for a in node.expressions
    ]
    total: exp.Expr = terms[0] if terms else exp.Literal.number(0)
    for t in terms[1:]:
        total = exp.Add(this=total, expression=t)
    node.replace(exp.cast(exp.paren(total), "INTEGER"))


def _overlaps(node: exp.Overlaps) -> None:
    left, right = node.this, node.expression
    if not (isinstance(left, exp.Tuple) and isinstance(right, exp.Tuple)):
        return
    if len(left.expressions) != 2 or len(right.expressions) != 2:
        return
    (s1, e1), (s2, e2) = left.expressions, right.expressions
    node.replace(_call("__hati_overlaps", s1.copy(), e1.copy(), s2.copy(), e2.copy()))


def _encode(node: exp.Encode | exp.Decode) -> None:
    charset = node.args.get("charset")
    if charset is None:
        return
    name = "__hati_encode" if isinstance(node, exp.Encode) else "__hati_decode"
    node.replace(_call(name, node.this.copy(), charset.copy()))


# to_char's number patterns (PostgreSQL's "Template Patterns for Numeric Formatting")
_NUMBER_FORMAT = re.compile(r"(?:FM|fm|9|0|\.|,|D|G|S|L|MI|PR|PL|SG|V|EEEE|TH|th|\s)+")


def is_number_format(fmt: str) -> bool:
    """A to_char format of digit patterns (`9`, `0`), not of date fields."""
    return bool(_NUMBER_FORMAT.fullmatch(fmt)) and bool(re.search(r"[09]", fmt))


# ---------------------------------------------------------------- dates, aggregates, text


def _extract(node: exp.Extract) -> None:
    """extract is numeric, date_part double precision. The fields with a fraction come
    from microseconds: DuckDB's microsecond(x) holds the seconds with their fraction,
    epoch_us(x) the epoch; seconds and epoch are those / 10^6, milliseconds / 10^3."""
    field = node.this.name.upper()
    date_part = bool(node.meta.get("date_part"))
    decimals = _FRACTION_FIELDS.get(field)
    if decimals is None:
        node.replace(exp.cast(node.copy(), "DOUBLE" if date_part else "DECIMAL(18, 0)"))
        return
    micros = _call("epoch_us" if field == "EPOCH" else "microsecond", node.expression.copy())
    if date_part:
        divisor = exp.cast(exp.Literal.number(10**decimals), "DOUBLE")
        node.replace(exp.Div(this=micros, expression=divisor))
        return
    unit = exp.Literal.number(f"{10**-decimals:.{decimals}f}")  # 0.000001: scale 6
    node.replace(exp.Paren(this=exp.Mul(this=exp.cast(micros, "DECIMAL(18, 0)"), expression=unit)))


def _percentile_cont(node: exp.WithinGroup) -> None:
    order = node.expression
    if not isinstance(order, exp.Order) or len(order.expressions) != 1:
        return
    ordered = order.expressions[0]
    value = ordered.this
    if isinstance(value, exp.Cast) and value.to.this is exp.DataType.Type.DOUBLE:
        return
    ordered.set("this", exp.cast(value.copy(), "DOUBLE"))


def _overlay(node: exp.Overlay) -> None:
    """overlay(s PLACING r FROM f [FOR n]) = the part before f, r, the part after f + n."""
    text, placing, start = node.this, node.expression, node.args.get("from_")
    if start is None:
        return
    length = node.args.get("for_") or _call("length", placing.copy())
    before = exp.Substring(
        this=text.copy(),
        start=exp.Literal.number(1),
        length=exp.Sub(this=start.copy(), expression=exp.Literal.number(1)),
    )
    after = exp.Substring(
        this=text.copy(), start=exp.Add(this=start.copy(), expression=exp.Paren(this=length.copy()))
    )
    node.replace(
        exp.Paren(
            this=exp.DPipe(this=exp.DPipe(this=before, expression=placing.copy()), expression=after)
        )
    )
