"""DataRow and COPY ... TO STDOUT messages from an Arrow record batch, a column at a time.

Each column becomes a binary array of its cells (`arrow_cells.cells`). The per-row framing
(message headers, length words, separators) is computed by numpy over whole columns into
one fixed-width record per row; then a single Arrow `take` over [framing pieces, cells]
lays every message end to end in one buffer, in C++. No Python runs per row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from proxy.wire.arrow_cells import STRING_KINDS, Plan, cells, fixed_cells

BINARY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8  # signature, flags, no extension


def _binary(c: pa.Array) -> pa.Array:
    if isinstance(c, pa.ChunkedArray):
        c = c.combine_chunks()
    return c if c.type == pa.binary() else pc.cast(c, pa.binary())


def _lengths(c: pa.Array) -> np.ndarray:
    """Each cell's byte length (0 for NULL), from the array's offsets."""
    offsets = np.frombuffer(c.buffers()[1], dtype=np.int32)[c.offset : c.offset + len(c) + 1]
    return np.diff(offsets).astype(np.int64)


def _valid(c: pa.Array) -> np.ndarray | None:
    return c.is_valid().to_numpy(zero_copy_only=False) if c.null_count else None


def _pieces(record: np.ndarray, cuts: Sequence[int]) -> pa.Array:
    """Every row's fixed-width record cut at `cuts` (byte offsets inside one record) into
    len(cuts) - 1 binary pieces, row after row."""
    n, width = len(record), record.dtype.itemsize
    inner = np.asarray(cuts[:-1], dtype=np.int64)
    offsets = np.empty(n * len(inner) + 1, dtype=np.int32)
    offsets[:-1] = (np.arange(n, dtype=np.int64)[:, None] * width + inner[None, :]).ravel()
    offsets[-1] = n * width
    data = pa.py_buffer(record)
    return pa.Array.from_buffers(pa.binary(), len(offsets) - 1, [None, pa.py_buffer(offsets), data])


def _laid_out(sources: Sequence[pa.Array], order: np.ndarray) -> bytes:
    """The elements of the concatenated sources in `order` (NULLs add nothing), end to end."""
    out = pa.concat_arrays(list(sources)).take(pa.array(order.ravel(), pa.int32()))
    offsets = np.frombuffer(out.buffers()[1], dtype=np.int32)
    start, end = int(offsets[out.offset]), int(offsets[out.offset + len(out)])
    data = out.buffers()[2]
    return b"" if data is None else data.to_pybytes()[start:end]


def _length_prefixed(tag: bytes, columns: Sequence[pa.Array], lead: bytes = b"") -> bytes:
    """Messages `tag` int32 size, [lead,] int16 count, then int32 length (-1: NULL) and
    bytes of each cell: DataRow, and COPY binary rows (`lead`: the file header, first row
    only)."""
    n, k = len(columns[0]), len(columns)
    fields = [("t", "S1"), ("size", ">i4"), ("n", ">i2")]
    record = np.zeros(n, dtype=fields + [(f"l{j}", ">i4") for j in range(k)])
    size = np.full(n, 6 + 4 * k, dtype=np.int64)
    for j, c in enumerate(columns):
        lengths = _lengths(c)
        valid = _valid(c)
        if valid is not None:  # a NULL slot may span bytes; take copies none of them
            lengths[~valid] = 0
        size += lengths
        record[f"l{j}"] = lengths if valid is None else np.where(valid, lengths, -1)
    record["t"], record["size"], record["n"] = tag, size, k
    # pieces per row: [t size n l0], [l1], ... [l(k-1)]; cells interleave after each
    fixed = _pieces(record, [0, *range(11, 8 + 4 * k, 4)])
    order = np.empty((n, 2 * k), dtype=np.int32)
    order[:, 0::2] = np.arange(n * k, dtype=np.int32).reshape(n, k)
    order[:, 1::2] = n * k + np.arange(k, dtype=np.int32)[None, :] * n
    order[:, 1::2] += np.arange(n, dtype=np.int32)[:, None]
    out = _laid_out([fixed, *columns], order)
    if lead:  # the first message grows by the header, inserted after its 'n' word
        first_size = int(size[0]) + len(lead)
        out = out[:1] + first_size.to_bytes(4, "big") + lead + out[5:]
    return out


def data_rows(batch: pa.RecordBatch, plans: Sequence[Plan]) -> bytes:
    """The batch's rows as DataRow ('D') messages, end to end."""
    if batch.num_rows == 0:
        return b""
    columns = [_binary(cells(col, plan)) for col, plan in zip(batch.columns, plans, strict=True)]
    return _length_prefixed(b"D", columns)


def _text_escape(c: pa.Array, sep: str) -> pa.Array:
    """COPY text escapes, as PostgreSQL's CopyAttributeOutText writes them."""
    if not _holds_any(c, "\\\b\f\n\r\t\v" + sep):
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
    if not _holds_any(c, sep + quote + "\n\r") and not _holds_null_string(c, null):
        return c
    needs = pc.or_(
        pc.match_substring_regex(c, _any_of(sep, quote, "\n", "\r")),
        pc.equal(c, null.encode()),
    )
    esc = escape or quote
    body = c
    if esc != quote:
        body = pc.replace_substring(body, esc.encode(), (esc + esc).encode())
    body = pc.replace_substring(body, quote.encode(), (esc + quote).encode())
    quoted = pc.binary_join_element_wise(quote.encode(), body, quote.encode(), b"")
    return pc.if_else(needs, quoted, c)


def _holds_any(c: pa.Array, chars: str) -> bool:
    """Whether any byte of `chars` occurs in the column's data (NULL slots included: a
    false yes only costs the exact pass). One memchr-speed search per byte."""
    c = _binary(c)
    offsets = np.frombuffer(c.buffers()[1], dtype=np.int32)[c.offset : c.offset + len(c) + 1]
    data = c.buffers()[2]
    if data is None or offsets[0] == offsets[-1]:
        return False
    raw = data.slice(int(offsets[0]), int(offsets[-1] - offsets[0])).to_pybytes()
    return any(bytes([b]) in raw for b in set(chars.encode()))


def _holds_null_string(c: pa.Array, null: str) -> bool:
    if null:
        return bool(pc.any(pc.equal(c, null.encode())).as_py())
    valid = _valid(c)
    empty = _lengths(_binary(c)) == 0
    return bool((empty if valid is None else empty & valid).any())


def _any_of(*chars: str) -> str:
    import re

    return "[" + "".join(re.escape(ch) for ch in chars) + "]"


def _delimited(columns: Sequence[pa.Array], sep: bytes, null: bytes) -> bytes:
    """CopyData messages of text or CSV lines: cells joined by `sep`, `null` for NULL.
    Arrow joins each row's cells in one pass (the line), then puts every line between
    its message header and newline in a second; both cost less than laying out the
    2k + 1 pieces of a row by `take`."""
    lines = pc.binary_join_element_wise(
        *columns, sep, options=pc.JoinOptions(null_handling="replace", null_replacement=null)
    )
    head = np.empty(len(lines), dtype=[("t", "S1"), ("size", ">i4")])
    head["t"], head["size"] = b"d", _lengths(lines) + 5  # size word, line, newline
    framed = pc.binary_join_element_wise(fixed_cells(head, None), lines, b"\n", b"")
    offsets = np.frombuffer(framed.buffers()[1], dtype=np.int32)
    start, end = int(offsets[framed.offset]), int(offsets[framed.offset + len(framed)])
    return framed.buffers()[2].slice(start, end - start).to_pybytes()


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
    if batch.num_rows == 0:
        return b""
    fields: list[pa.Array] = []
    for col, plan in zip(batch.columns, plans, strict=True):
        c = cells(col, plan)
        if fmt == "binary":
            pass
        elif plan.kind in STRING_KINDS or sep not in ",\t|;" or (fmt == "csv" and null):
            c = _text_escape(c, sep) if fmt == "text" else _csv_quote(c, sep, null, quote, escape)
        fields.append(_binary(c))
    if fmt == "binary":
        return _length_prefixed(b"d", fields, BINARY_SIGNATURE if first else b"")
    return _delimited(fields, sep.encode(), null.encode())
