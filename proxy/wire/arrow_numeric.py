"""DECIMAL columns (precision + padding <= 18) -> PostgreSQL binary numeric cells, in numpy
(and their text, `digit_rows`, below).

Each row's cell is written right-aligned into a fixed-width row of 16-bit words: filler,
then the header (ndigits, weight, sign, dscale) and the base-10000 groups between the
leading and trailing zero groups. Arrow's `ascii_ltrim` then drops the filler of every
row in one pass (a cell's first byte, ndigits' high byte, is always 0, so the trim stops
there). Divisions are by a scalar (numpy's libdivide path, 4x cheaper than `divmod`).
This replaced a boolean-mask `np.compress` whose int64 index array was mapped, faulted
in and unmapped every batch (server CPU of a lineitem binary transfer: numeric ~0.07 s
of 0.26 s per 200k rows before).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from proxy.wire.bincodec import NUMERIC_NEG, NUMERIC_POS

_GROUPS = 5  # base-10000 groups: an int64 of 18 digits (plus padding) fits in five
_WORDS = 4 + _GROUPS  # header words, then the groups
_POW = 10 ** np.arange(0, 4 * _GROUPS, 4, dtype=np.int64)  # 1, 10**4 .. 10**16
_FILL = 0x2020  # two spaces: trimmed off the front of each row


def unscaled(col: pa.Array) -> np.ndarray:
    """A DECIMAL column's unscaled values (they fit an int64: precision <= 18)."""
    if not pa.types.is_decimal128(col.type):
        col = pc.cast(col, pa.decimal128(col.type.precision, col.type.scale))  # type: ignore[attr-defined]
    n = len(col)
    return np.frombuffer(col.buffers()[1], dtype="<i8")[2 * col.offset : 2 * (col.offset + n) : 2]


def _split(rest: np.ndarray, words: np.ndarray) -> None:
    """The base-10000 groups of `rest` into the row's last _GROUPS words, right-aligned."""
    for k in range(_WORDS - 1, _WORDS - 1 - _GROUPS, -1):
        hi = rest // 10_000
        words[:, k] = rest - hi * 10_000
        rest = hi


def numeric_binary_rows(col: pa.Array, scale: int, word: bool) -> tuple[np.ndarray, np.ndarray]:
    """numeric_send of DECIMAL(p, s) values (p + padding to whole groups <= 18): ndigits,
    weight, sign, dscale, then the base-10000 groups without leading or trailing zero
    groups; each right-aligned in a fixed-width row of _FILL, preceded by its int32
    length word when `word` (a NULL row: filler, then the word -1). Returns the (n, width)
    byte rows and each cell's length (0 for NULL)."""
    raw = unscaled(col)
    n = len(raw)
    lead = 2 if word else 0  # the length word's two 16-bit halves
    width = lead + _WORDS
    pad = -scale % 4
    frac_groups = (scale + pad) // 4
    q = np.abs(raw)
    if pad:
        q = q * 10**pad
    used = (q > 0).astype(np.int16)  # groups up to the most significant non-zero one
    for floor in _POW[1:]:
        used += q >= floor
    # trailing zero groups, divided away (zero has none)
    trailing = np.zeros(n, dtype=np.int16)
    rest, tail = q, q > 0
    for _ in range(_GROUPS - 1):
        hi = rest // 10_000
        tail &= rest == hi * 10_000
        if not tail.any():
            break
        trailing += tail
        rest = np.where(tail, hi, rest)
    ndigits = used - trailing
    words = np.full((n, width), _FILL, dtype=">u2")
    _split(rest, words[:, lead:])
    at = np.arange(lead + _GROUPS, n * width, width) - ndigits  # each row's header
    flat = words.reshape(-1)
    flat[at] = ndigits
    flat[at + 1] = np.where(ndigits > 0, used - 1 - frac_groups, 0)  # weight
    flat[at + 2] = np.where(raw < 0, NUMERIC_NEG, NUMERIC_POS)
    flat[at + 3] = scale
    zero = ndigits == 0  # the header alone: the word before it is a (zero) group
    if zero.any():
        words[zero, width - _GROUPS] = _FILL
    lengths = 8 + 2 * ndigits.astype(np.int32)
    if word:  # a cell is at most 8 + 2 * _GROUPS bytes: the high half is 0
        flat[at - 2] = 0
        flat[at - 1] = lengths
    if col.null_count:
        null = ~col.is_valid().to_numpy(zero_copy_only=False)
        words[null] = _FILL
        if word:
            words[null, -2:] = 0xFFFF
        lengths[null] = 0
    return words.view(np.uint8), lengths


def trimmed(rows: np.ndarray, col: pa.Array | None = None) -> pa.Array:
    """Right-aligned cells of space-padded rows as a binary array (NULL where `col` is)."""
    n, width = rows.shape
    offsets = np.arange(0, (n + 1) * width, width, dtype=np.int32)
    # a string array over the bytes (not validated: ascii_ltrim only looks at the front)
    text = pa.Array.from_buffers(
        pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(rows))]
    )
    out = pc.ascii_ltrim(text, " ").view(pa.binary())
    if col is not None and col.null_count:
        out = pc.if_else(col.is_valid(), out, pa.scalar(None, pa.binary()))
    return out


def numeric_binary(col: pa.Array, scale: int) -> pa.Array:
    """numeric_send cells (`numeric_binary_rows`) as a binary array, NULL for NULL."""
    return trimmed(numeric_binary_rows(col, scale, word=False)[0], col)


_SPACE, _DOT, _MINUS = ord(" "), ord("."), ord("-")
_POW10 = 10 ** np.arange(19, dtype=np.int64)


def _pair_table(fmt: object) -> np.ndarray:
    """100 two-byte words, one for each pair of digits 00..99 (bytes in text order)."""
    return np.frombuffer(b"".join(fmt(i) for i in range(100)), dtype="<u2")  # type: ignore[operator]


_PLAIN = _pair_table(lambda i: b"%02d" % i)
# indexed by pair + 100 when no digit is above the pair: its leading zeros as spaces
# (the units pair keeps its units digit: 0 is '0')
_TOP = np.concatenate([_PLAIN, _pair_table(lambda i: b"%2d" % i if i else b"  ")])
_UNITS = np.concatenate([_PLAIN, _pair_table(lambda i: b"%2d" % i)])


def _lookup(table: np.ndarray, index: np.ndarray, out: np.ndarray) -> None:
    """out[i] = table[index[i]], written in place (indexes are in range: "clip" skips the
    bounds check and the buffer; a third of a fancy-indexed assignment's cost, measured)."""
    np.take(table, index, out=out, mode="clip")


def _words(rows: np.ndarray, start: int, count: int) -> np.ndarray:
    """An (n, count) view of 16-bit words over each row's bytes from `start` (unaligned)."""
    return np.ndarray((rows.shape[0], count), "<u2", rows, start, (rows.shape[1], 2))


def digit_rows(
    raw: np.ndarray, valid: np.ndarray | None, scale: int
) -> tuple[np.ndarray, np.ndarray]:
    """numeric_out / int8out text of unscaled integers (DECIMAL(p <= 18, s), integers
    with s = 0): each value's sign, digits and dot right-aligned in a fixed-width row of
    spaces (NULL rows: spaces), and each value's length (0 for NULL). Two digits at a
    time, by a lookup of 16-bit words written straight into the rows (per digit, and
    Arrow's decimal cast, cost twice as much for lineitem's 7-digit prices, measured);
    the top pair's table turns its leading zeros into spaces, so no mask pass."""
    n = len(raw)
    q = np.abs(raw)
    if valid is not None:  # a NULL slot may hold any number
        q = np.where(valid, q, 0)
    top = int(q.max()) if n else 0
    if top < 2**31 and scale <= 9:  # int32 divisions cost less than int64's
        q = q.astype(np.int32)
    whole_digits = max(len(str(top)) - scale, 1)
    whole_pairs, frac_pairs = (whole_digits + 1) // 2, (scale + 1) // 2
    dot = 1 if scale else 0
    width = 1 + 2 * whole_pairs + dot + scale  # a sign, the whole pairs, dot, fraction
    rows = np.empty((n, width), dtype=np.uint8)
    rows[:, 0] = _SPACE
    whole = q
    if scale:
        unit = q.dtype.type(10**scale)
        whole = q // unit
        frac = q - whole * unit
        # an odd scale's first word starts with a zero where the dot then goes
        words = _words(rows, width - 2 * frac_pairs, frac_pairs)
        for j in range(frac_pairs - 1, 0, -1):
            hi = frac // 100
            _lookup(_PLAIN, frac - hi * 100, words[:, j])
            frac = hi
        _lookup(_PLAIN, frac, words[:, 0])
        rows[:, width - scale - 1] = _DOT
    words = _words(rows, 1, whole_pairs)
    rest = whole
    for j in range(whole_pairs - 1, -1, -1):
        hi = rest // 100
        pair = rest - hi * 100
        pair += (hi == 0) * pair.dtype.type(100)
        _lookup(_UNITS if j == whole_pairs - 1 else _TOP, pair, words[:, j])
        rest = hi
    shown = np.full(n, scale + 1, dtype=np.int32)  # digits shown
    for k in range(scale + 1, scale + whole_digits):
        shown += q >= _POW10[k]
    negative = raw < 0
    if valid is not None:
        negative &= valid
    if negative.any():  # '-' right before the first digit shown
        where = np.arange(0, n * width, width) + (width - 1 - dot - shown)
        rows.reshape(-1)[where[negative]] = _MINUS
    lengths = shown + dot + negative
    if valid is not None:
        rows[~valid] = _SPACE
        lengths[~valid] = 0
    return rows, lengths


def numeric_rows(col: pa.Array, scale: int) -> tuple[np.ndarray, np.ndarray]:
    """`digit_rows` of a DECIMAL(p <= 18, s) column."""
    valid = col.is_valid().to_numpy(zero_copy_only=False) if col.null_count else None
    return digit_rows(unscaled(col), valid, scale)


def numeric_text(col: pa.Array, scale: int) -> pa.Array:
    """numeric_out cells of a DECIMAL(p <= 18, s) column (`digit_rows`), NULL for NULL."""
    return trimmed(numeric_rows(col, scale)[0], col)
