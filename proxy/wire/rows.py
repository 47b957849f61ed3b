"""DataRow ('D') batch encoding: the hot path for large results.

For each column count we generate (once, cached) a function with the per-row loop
unrolled over columns: tuple unpacking, one ``is None`` test and one encoder call
per cell, and a single bytes ``%`` formatting per row.  This is ~2x faster than a
generic nested loop in CPython.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

Encoder = Callable[[object], bytes]

_NULL = b"\xff\xff\xff\xff"
_cache: dict[int, Callable[..., bytes]] = {}


def _build(n: int) -> Callable[..., bytes]:
    """Source of ``rows_n(rows, e0..e{n-1})`` -> bytes of n-column DataRow messages."""
    cols = [f"c{i}" for i in range(n)]
    lines = [
        f"def rows_{n}(rows, {', '.join(f'e{i}' for i in range(n))}):",
        "    out = []",
        "    ap = out.append",
        f"    for {', '.join(cols)}{',' if n == 1 else ''} in rows:",
    ]
    for i in range(n):
        lines += [
            f"        if c{i} is None:",
            f"            p{i} = NULL",
            "        else:",
            f"            b = e{i}(c{i})",
            f"            p{i} = I(len(b)) + b",
        ]
    body = " + ".join(f"p{i}" for i in range(n))
    lines += [
        f"        body = {body}",
        "        ap(H(68, len(body) + 6, NC) + body)",
        "    return b''.join(out)",
    ]
    ns: dict[str, object] = {
        "NULL": _NULL,
        "I": struct.Struct(">i").pack,
        "H": struct.Struct(">Bih").pack,
        "NC": n,
    }
    exec(compile("\n".join(lines), f"<datarow_{n}>", "exec"), ns)  # noqa: S102 - generated
    return ns[f"rows_{n}"]  # type: ignore[return-value]


def encode_data_rows(rows: list[tuple], encoders: list[Encoder]) -> bytes:
    """Concatenated DataRow messages for ``rows``; None cells are SQL NULL (-1 length)."""
    n = len(encoders)
    if n == 0:
        return b"D\x00\x00\x00\x06\x00\x00" * len(rows)
    fn = _cache.get(n)
    if fn is None:
        fn = _cache.setdefault(n, _build(n))
    return fn(rows, *encoders)
