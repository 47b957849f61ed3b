"""The decoder's fast path for Bind/Execute/Describe/Sync (frontend._FAST) must decode
exactly as the bounds-checked path does, and leave every malformed message to it (so
clients get the same message or the same ERROR either way)."""

from __future__ import annotations

import random
import struct

from proxy.wire import frontend as f


def _checked(tag: bytes, body: bytes) -> object:
    try:
        return f._decode_fields(tag, f._Reader(body))
    except f.PgError as exc:
        return ("error", exc.sqlstate, exc.message)


def _bind(rng: random.Random) -> bytes:
    parts = [
        rng.choice([b"", b"p1", "é".encode(), b"\xff"]) + b"\0",
        rng.choice([b"", b"s"]) + b"\0",
    ]
    nf = rng.choice([0, 1, 2])
    parts.append(struct.pack("!H", nf))
    parts += [struct.pack("!h", rng.choice([0, 1, 2, -1])) for _ in range(nf)]
    npar = rng.choice([0, 1, 2])
    parts.append(struct.pack("!H", npar))
    for _ in range(npar):
        n = rng.choice([-1, 0, 3, -2, 100])
        parts.append(struct.pack("!i", n))
        parts.append(b"x" * max(n, 0))
    nr = rng.choice([0, 1, 2])
    parts.append(struct.pack("!H", nr))
    parts += [struct.pack("!h", rng.choice([0, 1, 5])) for _ in range(nr)]
    body = b"".join(parts)
    if rng.random() < 0.2:
        body = body[: rng.randrange(len(body) + 1)]
    return body + (b"z" if rng.random() < 0.1 else b"")


def test_fast_path_decodes_as_the_checked_path() -> None:
    rng = random.Random(21)
    hits = 0
    for _ in range(3000):
        tag = rng.choice([b"B", b"E", b"D", b"S"])
        if tag == b"B":
            body = _bind(rng)
        elif tag == b"E":
            body = (
                rng.choice([b"", b"p", b"\xff"])
                + rng.choice([b"\0", b""])
                + bytes(rng.randrange(6))
            )
        elif tag == b"D":
            body = rng.choice([b"S", b"P", b"X", b""]) + rng.choice([b"n", b"", b"\xff", b"a\0b"])
            body += rng.choice([b"\0", b"", b"\0\0"])
        else:
            body = rng.choice([b"", b"x"])
        expected = _checked(tag, body)
        fast = f._FAST[tag](body)
        if fast is not None:
            hits += 1
            assert fast == expected, (tag, body)
        got = f._decode_regular(tag, body)
        if isinstance(got, f.Malformed):
            assert expected == ("error", got.error.sqlstate, got.error.message), (tag, body)
        else:
            assert got == expected, (tag, body)
    assert hits > 300  # the well-formed messages did take the fast path
