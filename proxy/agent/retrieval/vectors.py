"""Exact and sign-code vector scans over a float32 matrix (memory and session search).

See proxy/agent/memory/index.py for the measurements behind these choices: products on
one thread (numpy's SIMD loop, not BLAS), and above APPROX_MIN_ROWS a shortlist by the
Hamming distance of 1-bit sign codes, ranked by exact cosine.
"""

from __future__ import annotations

import numpy as np

APPROX_MIN_ROWS = 20_000  # below this the exact scan costs about a millisecond
POPCOUNT = getattr(np, "bitwise_count", None)  # numpy >= 2; without it search is exact


def dot(mat: np.ndarray, q: np.ndarray) -> np.ndarray:
    """mat @ q on one thread (numpy's SIMD loop, not BLAS): see the module docstring."""
    if hasattr(np, "vecdot"):  # numpy >= 2
        return np.vecdot(mat, q)
    return np.einsum("ij,j->i", mat, q)


def sign_codes(vecs: np.ndarray, center: np.ndarray) -> np.ndarray:
    """(words, rows) uint64: bit i of a row's code is set where vec[i] > center[i]."""
    words = (vecs.shape[1] + 63) // 64
    out = np.zeros((words, len(vecs)), dtype=np.uint64)
    for start in range(0, len(vecs), 16384):  # bounded temporaries
        part = vecs[start : start + 16384]
        bits = np.packbits(part > center, axis=1)
        packed = np.zeros((len(part), words * 8), dtype=np.uint8)
        packed[:, : bits.shape[1]] = bits
        out[:, start : start + len(part)] = packed.view(np.uint64).T
    return out


def hamming(codes: np.ndarray, n: int, qcode: np.ndarray) -> np.ndarray:
    """Bits differing between each of the first n codes and the query's code."""
    assert POPCOUNT is not None
    acc = np.zeros(n, dtype=np.uint16)
    tmp = np.empty(n, dtype=np.uint64)
    for w in range(codes.shape[0]):
        np.bitwise_xor(codes[w, :n], qcode[w], out=tmp)
        acc += POPCOUNT(tmp)
    return acc


def shortlist(
    codes: np.ndarray, n: int, center: np.ndarray, q: np.ndarray, valid: np.ndarray, c: int
) -> np.ndarray:
    """Rows (of the first n) passing `valid` whose sign codes are nearest the query's:
    the c closest and every row tied with the last of them."""
    dims = len(center)
    qcode = sign_codes(q[None, :], center)[:, 0]
    dist = hamming(codes, n, qcode)
    far = dims + 1  # beyond any real distance
    np.copyto(dist, far, where=~valid[:n])
    upto = np.cumsum(np.bincount(dist, minlength=far + 1)[:far])
    cut = min(int(np.searchsorted(upto, c)), dims)
    return np.flatnonzero(dist <= cut)
