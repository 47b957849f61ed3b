"""PostgreSQL's jsonb semantics over JSON text: its output form and the functions DuckDB's
JSON extension has no counterpart for (jsonb_set, jsonb_insert, #-, jsonb_pretty,
jsonb_strip_nulls). Pure: text in, text out; failures raise `JsonbError` with the
SQLSTATE PostgreSQL 15 uses.

jsonb's text form (what PostgreSQL prints for any jsonb value): ", " and ": " separators,
an object's keys ordered by length in bytes then by bytes, a duplicated key's last value,
numbers as `numeric` prints them (`1.50` stays `1.50`, `1e2` is `100`, `-0` is `0`).
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

# A number's text travels through json.dumps as a string carrying this prefix (its
# escaped form is unique: jsonb strings cannot hold U+0000), then loses the quotes.
_MARK = "\x00\x01n"
_MARKED = re.compile(r'"\\u0000\\u0001n([^"]*)"')


class JsonbError(ValueError):
    def __init__(self, sqlstate: str, message: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        self.message = message


def _number(text: str) -> str:
    """A JSON number with a fraction or exponent as PostgreSQL's numeric prints it."""
    try:
        d = Decimal(text)
    except InvalidOperation:  # pragma: no cover - json only hands over valid numbers
        return text
    out = format(d, "f")
    if d.is_zero() and out.startswith("-"):
        out = out[1:]
    return _MARK + out


def _key(k: str) -> tuple[int, bytes]:
    b = k.encode()
    return len(b), b


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)  # a duplicated key: the last value wins
    if len(d) < 2:
        return d
    return {k: d[k] for k in sorted(d, key=_key)}


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_float=_number)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "), check_circular=False)
_INDENT = "    "


def _invalid(text: str, exc: ValueError) -> JsonbError:
    return JsonbError("22P02", f"invalid input syntax for type json: {text[:60]!r} ({exc})")


def load(text: str) -> Any:
    """A jsonb value as Python (objects in jsonb's key order, numbers with a fraction or
    exponent as marked text that `dump` prints back unquoted)."""
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise _invalid(text, exc) from None


def dump(value: Any) -> str:
    try:
        out = _ENCODER.encode(value)
    except RecursionError:
        raise JsonbError("54001", "stack depth limit exceeded") from None
    return _MARKED.sub(r"\1", out) if "\\u0001n" in out else out


def normalize(text: str) -> str:
    """jsonb's text form of JSON text."""
    return dump(load(text))


def output_text(text: str) -> str:
    """What PostgreSQL sends for a jsonb value stored as `text`; text that is no JSON
    (nothing DuckDB's JSON type lets in) as it is."""
    try:
        return normalize(text)
    except JsonbError:
        return text


def pretty(text: str) -> str:
    """jsonb_pretty: four spaces per level, one member or element a line (an empty
    object or array too spans two lines, as PostgreSQL prints it)."""
    return _pretty(load(text), 0)


def _pretty(v: Any, level: int) -> str:
    if isinstance(v, dict):
        inner = [f"{_INDENT * (level + 1)}{dump(k)}: {_pretty(x, level + 1)}" for k, x in v.items()]
        open_, close = "{", "}"
    elif isinstance(v, list):
        inner = [_INDENT * (level + 1) + _pretty(x, level + 1) for x in v]
        open_, close = "[", "]"
    else:
        return dump(v)
    body = ",\n".join(inner) + "\n" if inner else ""
    return f"{open_}\n{body}{_INDENT * level}{close}"


def _strip(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _strip(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_strip(x) for x in v]
    return v


def strip_nulls(text: str) -> str:
    """jsonb_strip_nulls: object members whose value is null, at every depth, dropped
    (array elements that are null stay)."""
    return dump(_strip(load(text)))


_CREATING = frozenset({"set_missing", "before", "after"})


def _index(step: str, depth: int, size: int, mode: str) -> int | None:
    """A path step as an array subscript: negative counts from the end, one before the
    first element is None (prepend); a step that is no integer finds nothing, or is an
    error where the call would create."""
    try:
        n = int(step)
    except ValueError:
        if mode in _CREATING:
            raise JsonbError(
                "22P02", f'path element at position {depth + 1} is not an integer: "{step}"'
            ) from None
        return size
    if n < 0:
        return None if -n > size else n + size
    return n


def _edit(target: Any, path: list[str], new: Any, mode: str) -> Any:
    """jsonb_set ('set' / 'set_missing'), jsonb_insert ('before' / 'after'), #-
    ('delete') of `path` in `target`, a fresh document changed in place."""
    node = target
    for depth, step in enumerate(path):
        last = depth == len(path) - 1
        if isinstance(node, dict):
            if not last:
                if step not in node:
                    return target
                node = node[step]
            elif mode == "delete":
                node.pop(step, None)
            elif mode in ("before", "after") and step in node:
                raise JsonbError("22023", "cannot replace existing key")
            elif step in node or mode != "set":
                node[step] = new
        elif isinstance(node, list):
            i = _index(step, depth, len(node), mode)
            found = i is not None and i < len(node)
            if not last:
                if not found:
                    return target
                node = node[i]  # type: ignore[index]
            elif found and mode == "delete":
                del node[i]  # type: ignore[arg-type]
            elif found and mode in ("set", "set_missing"):
                node[i] = new  # type: ignore[index]
            elif found:
                node.insert(i + (mode == "after"), new)  # type: ignore[operator]
            elif mode in _CREATING:
                node.insert(0 if i is None else len(node), new)
        else:
            return target  # a scalar inside the document: nothing there to change
    return target


def _path(path: list[str | None]) -> list[str]:
    if any(p is None for p in path):
        i = path.index(None)
        raise JsonbError("22004", f"path element at position {i + 1} is null")
    return list(path)  # type: ignore[arg-type]


def set_path(target: str, path: list[str | None], new: str, create_missing: bool) -> str:
    """jsonb_set(target, path, new, create_missing)."""
    doc = load(target)
    if not isinstance(doc, (dict, list)):
        raise JsonbError("22023", "cannot set path in scalar")
    mode = "set_missing" if create_missing else "set"
    return dump(_finish(_edit(doc, _path(path), load(new), mode)))


def insert_path(target: str, path: list[str | None], new: str, after: bool) -> str:
    """jsonb_insert(target, path, new, insert_after)."""
    doc = load(target)
    if not isinstance(doc, (dict, list)):
        raise JsonbError("22023", "cannot set path in scalar")
    return dump(_finish(_edit(doc, _path(path), load(new), "after" if after else "before")))


def delete_path(target: str, path: list[str | None]) -> str:
    """target #- path."""
    doc = load(target)
    if not isinstance(doc, (dict, list)):
        raise JsonbError("22023", "cannot delete path in scalar")
    return dump(_finish(_edit(doc, _path(path), None, "delete")))


def _finish(v: Any) -> Any:
    """Objects a new key went into back in jsonb's key order."""
    if isinstance(v, dict):
        return {k: _finish(v[k]) for k in sorted(v, key=_key)}
    if isinstance(v, list):
        return [_finish(x) for x in v]
    return v


def delete_index(target: str, n: int) -> str:
    """jsonb - integer: without the array element at n (negative counts from the end)."""
    doc = load(target)
    if isinstance(doc, dict):
        raise JsonbError("22023", "cannot delete from object using integer index")
    if not isinstance(doc, list):
        raise JsonbError("22023", "cannot delete from scalar")
    i = n + len(doc) if n < 0 else n
    if 0 <= i < len(doc):
        del doc[i]
    return dump(doc)


def delete_keys(target: str, keys: list[str | None]) -> str:
    """jsonb - text[]: without the object keys, or the string array elements, in keys."""
    doc = load(target)
    gone = {k for k in keys if k is not None}
    if isinstance(doc, dict):
        return dump({k: v for k, v in doc.items() if k not in gone})
    if isinstance(doc, list):
        return dump([v for v in doc if not (isinstance(v, str) and v in gone)])
    raise JsonbError("22023", "cannot delete from scalar")


def number_text(v: str) -> str | None:
    """The digits of a number `load` kept as marked text (a fraction or exponent), else None."""
    return v[len(_MARK) :] if v.startswith(_MARK) else None
