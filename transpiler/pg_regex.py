r"""PostgreSQL's regular-expression built-ins where DuckDB's differ (pg_functions.py
dispatches here). Pure.

- `x SIMILAR TO 'pat' [ESCAPE 'e']`: DuckDB reads the pattern as a regular expression
  (`%` and `_` are not wildcards there); a literal pattern becomes PostgreSQL's regex
  (similar_to_escape) under regexp_full_match;
- `substring(x FROM 'regex')` / `substring(x, 'regex')`: the first parenthesised group's
  match (else the whole match), NULL without a match (DuckDB: a start position);
- `regexp_matches(s, 'regex' [, 'flags'])`: PostgreSQL's set-returning form (one text[]
  row a match, all of them with 'g'; DuckDB's is a boolean test);
- `regexp_match(s, 'regex' [, 'flags'])`: the first match's groups as text[], else NULL;
- the pattern of `~`, `~*`, `!~`, `regexp_replace`: PostgreSQL's escapes RE2 lacks, `\Z`
  (the end of the string: RE2's `\z`), `\y` / `\Y` (a word boundary or not: `\b` / `\B`);
  a pattern not written in the statement (a parameter, a column) through `__hati_are`
  (proxy/db/catalog/82_pg_functions.sql) when it runs.
"""

from __future__ import annotations

import re

from sqlglot import exp

from transpiler.literals import string_value


def _call(name: str, *args: exp.Expr) -> exp.Anonymous:
    return exp.Anonymous(this=name, expressions=list(args))


# ---------------------------------------------------------------- SIMILAR TO

_REGEX_SPECIAL = set(".^$\\")  # literal in SIMILAR TO, special in a regex


def similar_to_regex(pattern: str, escape: str | None = "\\") -> str | None:
    """PostgreSQL's similar_to_escape: the regex (to match the whole string) of a SIMILAR TO
    pattern; None for what it cannot read (an escape at the end)."""
    out: list[str] = []
    i = 0
    in_bracket = False
    while i < len(pattern):
        c = pattern[i]
        if escape and c == escape:
            if i + 1 >= len(pattern):
                return None
            nxt = pattern[i + 1]
            out.append("\\" + nxt if not nxt.isalnum() else nxt)
            i += 2
            continue
        if in_bracket:
            out.append("\\\\" if c == "\\" else c)
            in_bracket = c != "]"
        elif c == "[":
            in_bracket = True
            out.append(c)
        elif c == "%":
            out.append(".*")
        elif c == "_":
            out.append(".")
        elif c in _REGEX_SPECIAL:
            out.append("\\" + c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def similar_to(node: exp.SimilarTo, escape: exp.Expr | None, replaced: exp.Expr) -> None:
    pattern = string_value(node.expression)
    esc: str | None = "\\"
    if escape is not None:
        esc = string_value(escape)
        if esc is None:
            return
        esc = esc or None  # ESCAPE '' turns escaping off
    if pattern is None:
        return
    regex = similar_to_regex(pattern, esc)
    if regex is None:
        return
    replaced.replace(_call("regexp_full_match", node.this.copy(), exp.Literal.string(regex)))


# ---------------------------------------------------------------- substring(x FROM regex)


def _capture_groups(regex: str) -> int:
    """Capturing groups of a regex: `(` not escaped, not `(?`, not in a bracket."""
    count, i, in_bracket = 0, 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if in_bracket:
            in_bracket = c != "]"
        elif c == "[":
            in_bracket = True
        elif c == "(" and not regex.startswith("(?", i):
            count += 1
        i += 1
    return count


def substring_regex(node: exp.Substring) -> None:
    start = node.args.get("start")
    if node.args.get("length") is not None or not isinstance(start, exp.Literal):
        return
    if not start.is_string:
        return  # a position (a text second argument is a pattern in PostgreSQL, even '2')
    group = 1 if _capture_groups(start.name) else 0
    subject = node.this.copy()
    found = exp.If(
        this=_call("regexp_matches", subject, start.copy()),
        true=_call("regexp_extract", subject.copy(), start.copy(), exp.Literal.number(group)),
    )
    node.replace(exp.Case(ifs=[found]))


# ---------------------------------------------------------------- regexp_matches


def regexp_matches(node: exp.Anonymous) -> None:
    args = node.expressions
    if len(args) not in (2, 3):
        return
    pattern = string_value(args[1])
    flags = string_value(args[2]) if len(args) == 3 else ""
    if pattern is None or flags is None:
        return  # a pattern not known here: DuckDB's own (boolean) regexp_matches
    options = [exp.Literal.string(flags.replace("g", ""))] if flags.replace("g", "") else []
    subject, pat = args[0], exp.Literal.string(pattern)
    groups = _capture_groups(pattern)
    if "g" in flags:
        each = [
            _call("regexp_extract_all", subject.copy(), pat.copy(), exp.Literal.number(g), *options)
            for g in (range(1, groups + 1) if groups else [0])
        ]
        index = exp.to_identifier("__hati_i")
        matches: exp.Expr = exp.Lambda(
            this=exp.Array(
                expressions=[exp.Bracket(this=e, expressions=[exp.column(index)]) for e in each]
            ),
            expressions=[index],
        )
        count = _call("len", each[0].copy())
        rows: exp.Expr = _call(
            "list_transform",
            _call(
                "range",
                exp.Literal.number(1),
                exp.Add(this=count, expression=exp.Literal.number(1)),
            ),
            matches,
        )
    else:
        first = _first_match(subject, pat, groups, options)
        rows = exp.Case(
            ifs=[exp.If(this=first.args["ifs"][0].this, true=exp.Array(expressions=[first]))],
            default=exp.Array(expressions=[]),
        )
    node.replace(exp.Unnest(expressions=[rows]))


def _first_match(subject: exp.Expr, pat: exp.Expr, groups: int, options: list) -> exp.Case:
    """CASE WHEN it matches THEN [group 1, group 2, ...] (the whole match without groups) END"""
    found = exp.Array(
        expressions=[
            _call("regexp_extract", subject.copy(), pat.copy(), exp.Literal.number(g), *options)
            for g in (range(1, groups + 1) if groups else [0])
        ]
    )
    test = _call("regexp_matches", subject.copy(), pat.copy(), *options)
    return exp.Case(ifs=[exp.If(this=test, true=found)])


def regexp_match(node: exp.Anonymous) -> None:
    args = node.expressions
    if len(args) not in (2, 3):
        return
    pattern = string_value(args[1])
    flags = string_value(args[2]) if len(args) == 3 else ""
    if pattern is None or flags is None or "g" in flags:
        return  # not known here (or 'g', which PostgreSQL refuses): DuckDB's error
    options = [exp.Literal.string(flags)] if flags else []
    pat = exp.Literal.string(pattern)
    node.replace(_first_match(args[0], pat, _capture_groups(pattern), options))


# ---------------------------------------------------------------- ARE escapes

_ARE_TO_RE2 = {"Z": r"\z", "y": r"\b", "Y": r"\B"}
_ESCAPE = re.compile(r"\\(.)", re.S)
PATTERN_NODES = (exp.RegexpLike, exp.RegexpILike, exp.RegexpReplace)


def are_to_re2(pattern: str) -> str:
    """A PostgreSQL (ARE) pattern with the escapes above as RE2 spells them."""
    return _ESCAPE.sub(lambda m: _ARE_TO_RE2.get(m.group(1), m.group(0)), pattern)


def are_pattern(node: exp.RegexpLike | exp.RegexpILike | exp.RegexpReplace) -> None:
    """The pattern of `~` / `~*` / regexp_replace in RE2's spelling."""
    pattern = node.expression
    if pattern is None or pattern.meta.get("re2"):
        return
    text = string_value(pattern)
    if text is None:
        fixed: exp.Expr = _call("__hati_are", pattern.copy())
    elif "\\" in text and are_to_re2(text) != text:
        fixed = exp.Literal.string(are_to_re2(text))
    else:
        return
    fixed.meta["re2"] = True
    node.set("expression", fixed)
