"""PostgreSQL's SQL/JSON path language, the subset hatiproxy evaluates (lax mode):
`$`, `.key` / `."key"`, `[n]`, `[last]`, `[*]`, and one filter `? (@<path> OP literal)`
with OP one of == != <> < <= > >= and a number, string, true, false or null literal.
Anything else is 0A000 naming what is not supported (never a different answer).

Lax mode as PostgreSQL's: a member access on an array applies to its elements, a
subscript on a non-array treats it as a one-element array, a missing key or index
selects nothing; a comparison of values of different kinds is not true.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from proxy.core import pg_json
from proxy.core.pg_json import JsonbError

_STEP = re.compile(
    r"""\s*(?:
        \.\s*(?P<key>[A-Za-z_$][\w$]*)
      | \.\s*"(?P<qkey>(?:[^"\\]|\\.)*)"
      | \[\s*(?P<index>\d+|last|\*)\s*\]
      | \?\s*\(\s*@(?P<fpath>(?:\s*(?:\.\s*[A-Za-z_][\w]*|\[\s*(?:\d+|last|\*)\s*\]))*)
            \s*(?P<op>==|!=|<>|<=|>=|<|>)\s*
            (?P<lit>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|"(?:[^"\\]|\\.)*"|true|false|null)\s*\)
    )""",
    re.VERBOSE,
)
_MISSING = object()


def _unsupported(path: str, at: int) -> JsonbError:
    return JsonbError(
        "0A000",
        f"jsonpath {path[at : at + 30]!r} is not supported by hatiproxy (only $, .key, [n], "
        "[last], [*] and ? (@ OP literal) filters in lax mode)",
    )


def _parse(path: str) -> list[tuple[str, Any]]:
    text = path.strip()
    if text.startswith("lax "):
        text = text[4:].lstrip()
    if not text.startswith("$"):
        raise _unsupported(text, 0)
    steps: list[tuple[str, Any]] = []
    at = 1
    while at < len(text):
        m = _STEP.match(text, at)
        if m is None:
            if not text[at:].strip():
                break
            raise _unsupported(text, at)
        if m["key"] is not None:
            steps.append(("key", m["key"]))
        elif m["qkey"] is not None:
            steps.append(("key", pg_json.load(f'"{m["qkey"]}"')))
        elif m["index"] is not None:
            steps.append(("index", m["index"]))
        else:
            sub = _parse("$" + m["fpath"])
            steps.append(
                ("filter", (sub, "!=" if m["op"] == "<>" else m["op"], _literal(m["lit"])))
            )
        at = m.end()
    return steps


def _literal(text: str) -> Any:
    if text.startswith('"'):
        return pg_json.load(text)
    return (
        {"true": True, "false": False, "null": None}.get(text, _MISSING)
        if text[0].isalpha()
        else Decimal(text)
    )


def _number(v: Any) -> Decimal | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, Decimal):
        return v
    if isinstance(v, int):
        return Decimal(v)
    if isinstance(v, str) and (digits := pg_json.number_text(v)) is not None:
        return Decimal(digits)
    return None


def _compare(a: Any, op: str, b: Any) -> bool:
    na, nb = _number(a), _number(b)
    if na is not None and nb is not None:
        x, y = na, nb
    elif isinstance(a, str) and isinstance(b, str) and _number(a) is None:
        x, y = a.encode(), b.encode()
    elif a is None or b is None:  # null equals null only
        return op == "==" and a is None and b is None or op == "!=" and (a is None) != (b is None)
    elif isinstance(a, bool) and isinstance(b, bool):
        x, y = a, b
    else:
        return False  # different kinds: unknown
    if op in ("<", "<=", ">", ">=") and isinstance(x, bool):
        return False
    return {
        "==": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y,
    }[op]  # fmt: skip


def _apply(items: list[Any], step: tuple[str, Any]) -> list[Any]:
    kind, arg = step
    out: list[Any] = []
    for v in items:
        if kind == "key":
            for e in v if isinstance(v, list) else [v]:  # lax: an array's elements
                if isinstance(e, dict) and arg in e:
                    out.append(e[arg])
        elif kind == "index":
            arr = v if isinstance(v, list) else [v]  # lax: a one-element array
            if arg == "*":
                out.extend(arr)
            else:
                i = len(arr) - 1 if arg == "last" else int(arg)
                if 0 <= i < len(arr):
                    out.append(arr[i])
        else:
            sub, op, lit = arg
            for e in v if isinstance(v, list) else [v]:
                if any(_compare(x, op, lit) for x in _run([e], sub)):
                    out.append(e)
    return out


def _run(items: list[Any], steps: list[tuple[str, Any]]) -> list[Any]:
    for step in steps:
        items = _apply(items, step)
    return items


def query(target: str, path: str) -> str:
    """The items `path` selects in `target`, as a jsonb array's text."""
    return pg_json.dump(_run([pg_json.load(target)], _parse(path)))
