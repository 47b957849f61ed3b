"""DataRow and COPY ... TO STDOUT messages from an Arrow record batch, a column at a time.

Each column becomes a binary array of its cells (`arrow_cells.cells`); the per-row framing
(length words, message headers, separators, CSV quoting, text escapes) is built by
pyarrow.compute over whole columns, and `binary_join_element_wise` lays the messages end
to end in one buffer. No Python runs per row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from proxy.wire.arrow_cells import STRING_KINDS, Plan, cells, fixed_cells

_HEADER = np.dtype([("t", "S1"), ("len", ">i4")])
_ROW_HEADER = np.dtype([("t", "S1"), ("len", ">i4"), ("n", ">i2")])
BINARY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8  # signature, flags, no extension


def _joined_bytes(parts: Sequence[pa.Array | bytes]) -> bytes:
    out = pc.binary_join_element_wise(*parts, b"")
    offsets = np.frombuffer(out.buffers()[1], dtype=np.int32)
    start, end = int(offsets[out.offset]), int(offsets[out.offset + len(out)])
    return out.buffers()[2].to_pybytes()[start:end]


def _length_prefixed(
    columns: Sequence[pa.Array], plans: Sequence[Plan]
) -> tuple[list[pa.Array], np.ndarray]:
    """[len0, cell0, len1, cell1, ...] (int32 lengths, -1 for NULL) and each row's size."""
    n = len(columns[0]) if columns else 0
    size = np.zeros(n, dtype=np.int64)
    parts: list[pa.Array] = []
    for col, plan in zip(columns, plans, strict=True):
        c = cells(col, plan)
        lengths = pc.fill_null(pc.binary_length(c), -1).to_numpy(zero_copy_only=False)
        size += 4 + np.maximum(lengths, 0)
        parts.append(fixed_cells(lengths.astype(">i4"), None))
        parts.append(pc.fill_null(c, b"") if c.null_count else c)
    return parts, size


def data_rows(batch: pa.RecordBatch, plans: Sequence[Plan]) -> bytes:
    """The batch's rows as DataRow ('D') messages, end to end."""
    n = batch.num_rows
    if n == 0:
        return b""
    parts, size = _length_prefixed(batch.columns, plans)
    head = np.zeros(n, dtype=_ROW_HEADER)
    head["t"], head["len"], head["n"] = b"D", size + 6, len(plans)
    return _joined_bytes([fixed_cells(head, None), *parts])


def _text_escape(c: pa.Array, sep: str) -> pa.Array:
    """COPY text escapes, as PostgreSQL's CopyAttributeOutText writes them."""
    special = _any_of("\\", "\b", "\f", "\n", "\r", "\t", "\v", sep)
    if not pc.any(pc.match_substring_regex(c, special)).as_py():
        return c  # the usual case: one scan instead of eight
    for raw, esc in (
        ("\\", "\\\\"),
        ("\b", "\\b"),
        ("\f", "\\f"),
        ("\n", "\\n"),
        ("\r", "\\r"),
        ("\t", "\\t"),
        ("\v", "\\v"),
    ):
        c = pc.replace_substring(c, raw.encode(), esc.encode())
    if sep not in "\\\b\f\n\r\t\v":
        c = pc.replace_substring(c, sep.encode(), ("\\" + sep).encode())
    return c


def _csv_quote(c: pa.Array, sep: str, null: str, quote: str, escape: str | None) -> pa.Array:
    """Quote a CSV value holding the delimiter, quote, CR or LF, or equal to the NULL
    string (so it reads back as a value), as PostgreSQL does."""
    needs = pc.or_(
        pc.match_substring_regex(c, _any_of(sep, quote, "\n", "\r")),
        pc.equal(c, null.encode()),
    )
    if not pc.any(needs).as_py():
        return c
    esc = escape or quote
    body = c
    if esc != quote:
        body = pc.replace_substring(body, esc.encode(), (esc + esc).encode())
    body = pc.replace_substring(body, quote.encode(), (esc + quote).encode())
    quoted = pc.binary_join_element_wise(quote.encode(), body, quote.encode(), b"")
    return pc.if_else(needs, quoted, c)


def _any_of(*chars: str) -> str:
    import re

    return "[" + "".join(re.escape(ch) for ch in chars) + "]"


def copy_rows(
    batch: pa.RecordBatch,
    plans: Sequence[Plan],
    fmt: str,
    sep: str = "\t",
    null: str = "\\N",
    quote: str = '"',
    escape: str | None = None,
    first: bool = False,
) -> bytes:
    """The batch's rows as CopyData ('d') messages, one a row (as PostgreSQL sends them);
    binary format puts the file header in front of the first row (`first`)."""
    n = batch.num_rows
    if n == 0:
        return b""
    if fmt == "binary":
        parts, size = _length_prefixed(batch.columns, plans)
        head = np.zeros(n, dtype=_ROW_HEADER)
        head["t"], head["len"], head["n"] = b"d", size + 6, len(plans)
        if first:
            head["len"][0] += len(BINARY_SIGNATURE)
            first_row = _joined_bytes([fixed_cells(head, None), *parts])
            return first_row[:5] + BINARY_SIGNATURE + first_row[5:]
        return _joined_bytes([fixed_cells(head, None), *parts])
    fields: list[pa.Array] = []
    for col, plan in zip(batch.columns, plans, strict=True):
        c = cells(col, plan)
        if plan.kind in STRING_KINDS or sep not in ",\t|;" or (fmt == "csv" and null):
            c = _text_escape(c, sep) if fmt == "text" else _csv_quote(c, sep, null, quote, escape)
        fields.append(c)
    line = pc.binary_join_element_wise(
        *fields, sep.encode(), null_handling="replace", null_replacement=null.encode()
    )
    lengths = pc.binary_length(line).to_numpy(zero_copy_only=False)
    head = np.zeros(n, dtype=_HEADER)
    head["t"], head["len"] = b"d", lengths + 5
    return _joined_bytes([fixed_cells(head, None), line, b"\n"])
