"""Frontend (client -> server) messages and their sans-I/O decoder.

`FrontendDecoder.feed(bytes)` buffers input and `next_message()` returns decoded
messages. Nothing here touches a socket, so every byte sequence a hostile client
can send is testable directly.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from proxy.wire.errors import PgError, ProtocolViolation, invalid_utf8
from proxy.wire.frontend_messages import (
    Bind,
    CancelRequest,
    Close,
    CopyData,
    CopyDone,
    CopyFail,
    Describe,
    Execute,
    Flush,
    FrontendMessage,
    FunctionCall,
    GSSENCRequest,
    Malformed,
    Parse,
    PasswordData,
    Query,
    SSLRequest,
    StartupMessage,
    Sync,
    Terminate,
)

PROTOCOL_V3 = 196608  # 3.0
SSL_REQUEST_CODE = 80877103
GSSENC_REQUEST_CODE = 80877104
CANCEL_REQUEST_CODE = 80877102

# The largest Query/Parse/Bind/CopyData we accept. Postgres allows up to 1 GiB; a
# bounded buffer keeps a hostile client from making the server allocate without limit.
DEFAULT_MAX_MESSAGE = 256 * 1024 * 1024
MAX_STARTUP_PACKET = 10_000  # Postgres uses the same bound.
# Postgres bounds the messages that carry no SQL or data at PQ_SMALL_MESSAGE_LIMIT, and
# password/SASL messages at PG_MAX_AUTH_TOKEN_LENGTH; we do the same.
SMALL_MESSAGE_LIMIT = 10_000
AUTH_MESSAGE_LIMIT = 65_535
_LARGE_TAGS = frozenset(b"QPBdF")
_KNOWN_TAGS = frozenset(b"QPBDECSHXdcfpF")

_I32 = struct.Struct("!i")
_I16 = struct.Struct("!h")
_U16 = struct.Struct("!H")
_H_I = struct.Struct("!ci")
_SYNC = Sync()  # frozen and empty: one serves every Sync


def _content_error(message: str, sqlstate: str = "08P01") -> PgError:
    return PgError(sqlstate, message)


class _Reader:
    """Cursor over one message body; every read is bounds-checked."""

    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def int32(self) -> int:
        if self.pos + 4 > len(self.buf):
            raise _content_error("insufficient data left in message")
        (value,) = _I32.unpack_from(self.buf, self.pos)
        self.pos += 4
        return value

    def int16(self) -> int:
        if self.pos + 2 > len(self.buf):
            raise _content_error("insufficient data left in message")
        (value,) = _I16.unpack_from(self.buf, self.pos)
        self.pos += 2
        return value

    def cstring(self) -> str:
        end = self.buf.find(b"\x00", self.pos)
        if end < 0:
            raise _content_error("invalid string in message")
        raw = self.buf[self.pos : end]
        self.pos = end + 1
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _content_error(invalid_utf8(raw, exc.start), "22021") from None

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.buf):
            raise _content_error("insufficient data left in message")
        value = self.buf[self.pos : self.pos + n]
        self.pos += n
        return value

    def rest(self) -> bytes:
        value = self.buf[self.pos :]
        self.pos = len(self.buf)
        return value

    def end(self) -> None:
        if self.pos != len(self.buf):
            raise _content_error("invalid message format")


def _count(reader: _Reader, what: str) -> int:
    """Parse/Bind counts are unsigned 16-bit in Postgres (up to 65535 parameters)."""
    return reader.int16() & 0xFFFF


def _decode_startup(body: bytes) -> FrontendMessage:
    try:
        return _decode_startup_body(_Reader(body))
    except ProtocolViolation:
        raise
    except PgError as exc:  # before the session exists every error ends the connection
        raise ProtocolViolation(exc.message, sqlstate=exc.sqlstate) from None


def _decode_startup_body(r: _Reader) -> FrontendMessage:
    code = r.int32()
    if code == SSL_REQUEST_CODE:
        r.end()
        return SSLRequest()
    if code == GSSENC_REQUEST_CODE:
        r.end()
        return GSSENCRequest()
    if code == CANCEL_REQUEST_CODE:
        pid, key = r.int32(), r.int32()
        r.end()
        return CancelRequest(pid, key)
    if code >> 16 != 3:
        raise ProtocolViolation(
            f"unsupported frontend protocol {code >> 16}.{code & 0xFFFF}: server supports 3.0",
            sqlstate="0A000",
        )
    params: dict[str, str] = {}
    while True:
        key = r.cstring()
        if not key:
            break
        params[key] = r.cstring()
    r.end()
    return StartupMessage(code, params)


def _decode_parse(r: _Reader) -> Parse:
    name, sql = r.cstring(), r.cstring()
    oids = tuple(r.int32() & 0xFFFFFFFF for _ in range(_count(r, "parameter type")))
    return Parse(name, sql, oids)


def _decode_bind(r: _Reader) -> Bind:
    portal, statement = r.cstring(), r.cstring()
    formats = tuple(r.int16() for _ in range(_count(r, "parameter format")))
    params: list[bytes | None] = []
    for _ in range(_count(r, "parameter")):
        n = r.int32()
        params.append(None if n == -1 else r.take(n))
    results = tuple(r.int16() for _ in range(_count(r, "result format")))
    for f in (*formats, *results):
        if f not in (0, 1):
            raise _content_error(f"unsupported format code: {f}")
    return Bind(portal, statement, formats, tuple(params), results)


def _decode_kind_name(r: _Reader, cls: type[Describe] | type[Close]) -> Describe | Close:
    kind = r.take(1).decode("latin-1")
    if kind not in ("S", "P"):
        what = cls.__name__.upper()
        raise _content_error(f"invalid {what} message subtype {ord(kind)}")
    return cls(kind, r.cstring())


def _fast_bind(body: bytes) -> Bind | None:
    """Bind without the checked reader's call per field, or None when anything is
    unusual: the checked path then decodes it, its errors included."""
    try:
        end = body.index(0)
        portal = body[:end].decode()
        start = end + 1
        end = body.index(0, start)
        statement = body[start:end].decode()
        pos = end + 1
        (count,) = _U16.unpack_from(body, pos)
        formats = struct.unpack_from(f"!{count}h", body, pos + 2)
        pos += 2 + 2 * count
        (count,) = _U16.unpack_from(body, pos)
        pos += 2
        params: list[bytes | None] = []
        for _ in range(count):
            (n,) = _I32.unpack_from(body, pos)
            pos += 4
            if n == -1:
                params.append(None)
                continue
            if n < 0 or pos + n > len(body):
                return None
            params.append(body[pos : pos + n])
            pos += n
        (count,) = _U16.unpack_from(body, pos)
        results = struct.unpack_from(f"!{count}h", body, pos + 2)
        pos += 2 + 2 * count
    except (ValueError, struct.error):  # UnicodeDecodeError is a ValueError
        return None
    if pos != len(body):
        return None
    for f in formats + results:
        if f != 0 and f != 1:
            return None
    return Bind(portal, statement, formats, tuple(params), results)


def _fast_execute(body: bytes) -> Execute | None:
    end = body.find(b"\x00")
    if end < 0 or len(body) != end + 5:
        return None
    try:
        name = body[:end].decode()
    except UnicodeDecodeError:
        return None
    return Execute(name, _I32.unpack_from(body, end + 1)[0])


def _fast_describe(body: bytes) -> Describe | None:
    if body[:1] not in (b"S", b"P") or body.find(b"\x00", 1) != len(body) - 1:
        return None
    try:
        return Describe(chr(body[0]), body[1:-1].decode())
    except UnicodeDecodeError:
        return None


# A prepared statement's run, decoded without the checked reader when well formed.
_FAST: dict[bytes, Callable[[bytes], FrontendMessage | None]] = {
    b"B": _fast_bind,
    b"E": _fast_execute,
    b"D": _fast_describe,
    b"S": lambda body: None if body else _SYNC,
}


def _decode_regular(tag: bytes, body: bytes) -> FrontendMessage:
    fast = _FAST.get(tag)
    if fast is not None and (msg := fast(body)) is not None:
        return msg
    try:
        return _decode_fields(tag, _Reader(body))
    except ProtocolViolation:
        raise
    except PgError as exc:
        return Malformed(tag.decode("latin-1"), exc)


def _decode_fields(tag: bytes, r: _Reader) -> FrontendMessage:
    msg: FrontendMessage
    match tag:
        case b"Q":
            msg = Query(r.cstring())
        case b"P":
            msg = _decode_parse(r)
        case b"B":
            msg = _decode_bind(r)
        case b"D":
            msg = _decode_kind_name(r, Describe)
        case b"E":
            msg = Execute(r.cstring(), r.int32())
        case b"C":
            msg = _decode_kind_name(r, Close)
        case b"S":
            msg = Sync()
        case b"H":
            msg = Flush()
        case b"X":
            return Terminate()  # Postgres closes without reading the rest
        case b"d":
            msg = CopyData(r.rest())
        case b"c":
            return CopyDone()  # Postgres reads nothing after the type either
        case b"f":
            # Its text is only echoed in the COPY error: never reject the failure itself.
            return CopyFail(r.rest().split(b"\0", 1)[0].decode("utf-8", "replace"))
        case b"F":
            return FunctionCall()
        case b"p":
            msg = PasswordData(r.rest())
        case _:
            raise ProtocolViolation(f"invalid frontend message type {tag[0]}")
    r.end()
    return msg


_SYNC_BYTES = b"S\x00\x00\x00\x04"


@dataclass
class FrontendDecoder:
    """Turns a byte stream from a client into frontend messages.

    Starts in the startup phase (untyped packets); the server calls
    `startup_done()` once the StartupMessage has been accepted.
    """

    max_message: int = DEFAULT_MAX_MESSAGE
    in_startup: bool = True
    _buf: bytearray = field(default_factory=bytearray)

    def feed(self, data: bytes) -> None:
        self._buf += data

    def startup_done(self) -> None:
        self.in_startup = False

    @property
    def buffered(self) -> int:
        return len(self._buf)

    def has_message(self) -> bool:
        """A whole message is buffered: a reader may pause until it is consumed.

        While only part of one is buffered, more input is the only way forward.
        """
        buf = self._buf
        header = 4 if self.in_startup else 5
        if len(buf) < header:
            return False
        (length,) = _I32.unpack_from(buf, header - 4)
        return len(buf) >= length + header - 4

    def sync_next(self) -> bool:
        """The next buffered message is a Sync (b"S", length 4)."""
        return self._buf[:5] == _SYNC_BYTES

    def _limit(self, tag: int) -> int:
        if tag in _LARGE_TAGS:
            return self.max_message
        small = AUTH_MESSAGE_LIMIT if tag == ord("p") else SMALL_MESSAGE_LIMIT
        return min(small, self.max_message)

    def next_message(self) -> FrontendMessage | None:
        """The next complete message, or None if more bytes are needed.

        Raises ProtocolViolation when the framing is broken (the stream cannot be
        followed: the connection must end); bad content inside a correctly framed
        message comes back as a Malformed message instead.
        """
        buf = self._buf
        if self.in_startup:
            if len(buf) < 4:
                return None
            (length,) = _I32.unpack_from(buf, 0)
            if length < 8 or length > MAX_STARTUP_PACKET:
                raise ProtocolViolation(f"invalid length of startup packet: {length}")
            if len(buf) < length:
                return None
            body = bytes(buf[4:length])
            del buf[:length]
            return _decode_startup(body)
        if not buf:
            return None
        # Like Postgres, an unknown type byte is rejected before its length arrives.
        if buf[0] not in _KNOWN_TAGS:
            raise ProtocolViolation(f"invalid frontend message type {buf[0]}")
        if len(buf) < 5:
            return None
        tag, length = _H_I.unpack_from(buf, 0)
        limit = self._limit(buf[0])
        if length < 4 or length > limit:
            # Checked on the header alone: an over-limit body is never buffered.
            raise ProtocolViolation(
                "invalid message length",
                detail=f"{tag.decode('latin-1')!r} message declares {length} bytes; "
                f"accepted: 4 to {limit}",
            )
        if len(buf) < length + 1:
            return None
        body = bytes(buf[5 : length + 1])
        del buf[: length + 1]
        return _decode_regular(tag, body)

    def messages(self) -> Iterable[FrontendMessage]:
        while (msg := self.next_message()) is not None:
            yield msg
