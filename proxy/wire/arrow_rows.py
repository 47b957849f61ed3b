"""DataRow and COPY ... TO STDOUT messages from an Arrow record batch, a column at a time.

Each column becomes a binary array of its cells (`arrow_cells.cells`). The per-row framing
(message headers, length words, separators) is computed by numpy over whole columns, and
runs of it together with same-width cells become one fixed-width piece a row; then one
Arrow element-wise join over [pieces, cells] lays every message end to end in one
buffer, in C++ (cheaper than a `take` of every piece, or a numpy scatter of every byte,
both measured). No Python runs per row or per cell.
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
    """Each cell's byte length (0 for NULL), from the array's offsets (int32: half the
    memory of int64, and under glibc's mmap threshold for a batch)."""
    offsets = np.frombuffer(c.buffers()[1], dtype=np.int32)[c.offset : c.offset + len(c) + 1]
    return np.diff(offsets)


def _valid(c: pa.Array) -> np.ndarray | None:
    return c.is_valid().to_numpy(zero_copy_only=False) if c.null_count else None


def _fixed_matrix(c: pa.Array, lengths: np.ndarray) -> np.ndarray | None:
    """The cells of a column without NULLs whose cells all have one width (binary
    integers and dates, text dates, one-letter flags) as an (n, width) byte matrix over
    its data, else None."""
    if c.null_count or not len(lengths) or lengths[0] != lengths[-1]:
        return None
    width = int(lengths[0])
    if width == 0 or lengths.min() != width or lengths.max() != width:
        return None
    start = int(np.frombuffer(c.buffers()[1], dtype=np.int32)[c.offset])
    data = np.frombuffer(c.buffers()[2], dtype=np.uint8)
    return data[start : start + width * len(lengths)].reshape(-1, width)


def _words(lengths: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    """Length words (-1 for NULL) as an (n, 4) big-endian byte matrix."""
    words = (lengths if valid is None else np.where(valid, lengths, -1)).astype(">i4")
    return words.view(np.uint8).reshape(-1, 4)


def _run(parts: list[np.ndarray]) -> pa.Array:
    """Byte matrices side by side as one fixed-width binary cell a row."""
    matrix = np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]
    return fixed_cells(np.ascontiguousarray(matrix).view(f"S{matrix.shape[1]}").ravel(), None)


def _view(out: pa.Array) -> memoryview:
    """A binary array's cells end to end, as a view of its data buffer (no copy: a
    `bytes` copy of each batch cost as much as the join, most of it in page faults)."""
    offsets = np.frombuffer(out.buffers()[1], dtype=np.int32)
    start, end = int(offsets[out.offset]), int(offsets[out.offset + len(out)])
    return memoryview(out.buffers()[2].slice(start, end - start)).cast("B")


def _joined(pieces: Sequence[pa.Array], null: bytes = b"") -> memoryview:
    """Each row's pieces end to end (NULL pieces give `null`), rows end to end: one pass
    of Arrow's element-wise join over the batch."""
    if len(pieces) == 1:
        out = pieces[0]
    else:
        options = pc.JoinOptions(null_handling="replace", null_replacement=null)
        out = pc.binary_join_element_wise(*pieces, b"", options=options)
    return _view(out)


def _length_prefixed(
    tag: bytes, columns: Sequence[pa.Array], lead: bytes = b""
) -> bytes | memoryview:
    """Messages `tag` int32 size, [lead,] int16 count, then int32 length (-1: NULL) and
    bytes of each cell: DataRow, and COPY binary rows (`lead`: the file header, first row
    only). Header, length words and same-width cells of neighbouring columns go into one
    fixed-width piece a row (fewer pieces make the join cheaper); other cells stay
    pieces of their own."""
    n, k = len(columns[0]), len(columns)
    size = np.full(n, 6 + 4 * k, dtype=np.int32)
    shapes = []
    for c in columns:
        lengths = _lengths(c)
        valid = _valid(c)
        if valid is not None:  # a NULL slot may span bytes; the join adds none of them
            lengths[~valid] = 0
        size += lengths
        shapes.append((lengths, valid))
    head = np.empty(n, dtype=[("t", "S1"), ("size", ">i4"), ("n", ">i2")])
    head["t"], head["size"], head["n"] = tag, size, k
    run: list[np.ndarray] = [head.view(np.uint8).reshape(n, 7)]
    pieces: list[pa.Array] = []
    for c, (lengths, valid) in zip(columns, shapes, strict=True):
        run.append(_words(lengths, valid))
        fixed = _fixed_matrix(c, lengths)
        if fixed is not None:
            run.append(fixed)
        else:
            pieces += [_run(run), c]
            run = []
    if run:
        pieces.append(_run(run))
    out = _joined(pieces)
    if lead:  # the first message grows by the header, inserted after its 'n' word
        first_size = int(size[0]) + len(lead)
        return b"".join((out[:1], first_size.to_bytes(4, "big"), lead, out[5:]))
    return out


def data_rows(batch: pa.RecordBatch, plans: Sequence[Plan]) -> bytes | memoryview:
    """The batch's rows as DataRow ('D') messages, end to end (a view of Arrow's buffer,
    which the socket takes as it is)."""
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


def _delimited(columns: Sequence[pa.Array], sep: bytes, null: bytes) -> memoryview:
    """CopyData messages of text or CSV lines: cells joined by `sep`, `null` for NULL.
    Arrow joins each row's cells in one pass (the line), then puts every line between
    its message header and newline in a second; both cost less than laying out the
    2k + 1 pieces of a row by `take` or by one join of them all (measured)."""
    lines = pc.binary_join_element_wise(
        *columns, sep, options=pc.JoinOptions(null_handling="replace", null_replacement=null)
    )
    head = np.empty(len(lines), dtype=[("t", "S1"), ("size", ">i4")])
    head["t"], head["size"] = b"d", _lengths(lines) + 5  # size word, line, newline
    framed = pc.binary_join_element_wise(fixed_cells(head, None), lines, b"\n", b"")
    return _view(framed)


def copy_rows(
    batch: pa.RecordBatch,
    plans: Sequence[Plan],
    fmt: str,
    sep: str = "\t",
    null: str = "\\N",
    quote: str = '"',
    escape: str | None = None,
    first: bool = False,
) -> bytes | memoryview:
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
