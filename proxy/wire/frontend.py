"""Frontend (client -> server) messages and their sans-I/O decoder.

`FrontendDecoder.feed(bytes)` buffers input and `next_message()` returns decoded
messages. Nothing here touches a socket, so every byte sequence a hostile client
can send is testable directly.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from proxy.wire.errors import ProtocolViolation

PROTOCOL_V3 = 196608  # 3.0
SSL_REQUEST_CODE = 80877103
GSSENC_REQUEST_CODE = 80877104
CANCEL_REQUEST_CODE = 80877102

# The largest regular message we accept. Postgres allows up to 1 GiB; a bounded
# buffer keeps a hostile client from making the server allocate without limit.
DEFAULT_MAX_MESSAGE = 256 * 1024 * 1024
MAX_STARTUP_PACKET = 10_000  # Postgres uses the same bound.

_I32 = struct.Struct("!i")
_I16 = struct.Struct("!h")
_H_I = struct.Struct("!ci")


# --- frontend messages -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SSLRequest:
    pass


@dataclass(frozen=True, slots=True)
class GSSENCRequest:
    pass


@dataclass(frozen=True, slots=True)
class CancelRequest:
    process_id: int
    secret_key: int


@dataclass(frozen=True, slots=True)
class StartupMessage:
    protocol: int
    params: dict[str, str]


@dataclass(frozen=True, slots=True)
class Query:
    sql: str


@dataclass(frozen=True, slots=True)
class Parse:
    name: str
    sql: str
    param_oids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Bind:
    portal: str
    statement: str
    param_formats: tuple[int, ...]
    params: tuple[bytes | None, ...]
    result_formats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Describe:
    kind: str  # "S" statement or "P" portal
    name: str


@dataclass(frozen=True, slots=True)
class Execute:
    portal: str
    max_rows: int


@dataclass(frozen=True, slots=True)
class Close:
    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class Sync:
    pass


@dataclass(frozen=True, slots=True)
class Flush:
    pass


@dataclass(frozen=True, slots=True)
class Terminate:
    pass


@dataclass(frozen=True, slots=True)
class CopyData:
    data: bytes


@dataclass(frozen=True, slots=True)
class CopyDone:
    pass


@dataclass(frozen=True, slots=True)
class CopyFail:
    message: str


@dataclass(frozen=True, slots=True)
class PasswordData:
    """'p' message: its meaning (password, SASL initial/continue) depends on the auth step."""

    data: bytes


FrontendMessage = (
    SSLRequest
    | GSSENCRequest
    | CancelRequest
    | StartupMessage
    | Query
    | Parse
    | Bind
    | Describe
    | Execute
    | Close
    | Sync
    | Flush
    | Terminate
    | CopyData
    | CopyDone
    | CopyFail
    | PasswordData
)


class _Reader:
    """Cursor over one message body; every read is bounds-checked."""

    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def int32(self) -> int:
        if self.pos + 4 > len(self.buf):
            raise ProtocolViolation("message too short")
        (value,) = _I32.unpack_from(self.buf, self.pos)
        self.pos += 4
        return value

    def int16(self) -> int:
        if self.pos + 2 > len(self.buf):
            raise ProtocolViolation("message too short")
        (value,) = _I16.unpack_from(self.buf, self.pos)
        self.pos += 2
        return value

    def cstring(self) -> str:
        end = self.buf.find(b"\x00", self.pos)
        if end < 0:
            raise ProtocolViolation("unterminated string in message")
        raw = self.buf[self.pos : end]
        self.pos = end + 1
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolViolation(
                "invalid byte sequence for encoding UTF8", sqlstate="22021"
            ) from exc

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.buf):
            raise ProtocolViolation("message too short")
        value = self.buf[self.pos : self.pos + n]
        self.pos += n
        return value

    def rest(self) -> bytes:
        value = self.buf[self.pos :]
        self.pos = len(self.buf)
        return value

    def end(self) -> None:
        if self.pos != len(self.buf):
            raise ProtocolViolation("message has trailing bytes")


def _count(reader: _Reader, what: str) -> int:
    """Parse/Bind counts are unsigned 16-bit in Postgres (up to 65535 parameters)."""
    return reader.int16() & 0xFFFF


def _decode_startup(body: bytes) -> FrontendMessage:
    r = _Reader(body)
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
            raise ProtocolViolation(f"invalid format code {f}")
    return Bind(portal, statement, formats, tuple(params), results)


def _decode_kind_name(r: _Reader, cls: type[Describe] | type[Close]) -> Describe | Close:
    kind = r.take(1).decode("latin-1")
    if kind not in ("S", "P"):
        raise ProtocolViolation(f"invalid {cls.__name__} message subtype {kind!r}")
    return cls(kind, r.cstring())


def _decode_regular(tag: bytes, body: bytes) -> FrontendMessage:
    r = _Reader(body)
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
            msg = Terminate()
        case b"d":
            msg = CopyData(r.rest())
        case b"c":
            msg = CopyDone()
        case b"f":
            msg = CopyFail(r.cstring())
        case b"p":
            msg = PasswordData(r.rest())
        case _:
            raise ProtocolViolation(f"invalid frontend message type {tag!r}")
    r.end()
    return msg


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

    def next_message(self) -> FrontendMessage | None:
        """The next complete message, or None if more bytes are needed.

        Raises ProtocolViolation on malformed input; the connection is then unusable.
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
        if len(buf) < 5:
            return None
        tag, length = _H_I.unpack_from(buf, 0)
        if length < 4:
            raise ProtocolViolation(f"invalid message length {length}")
        if length > self.max_message:
            raise ProtocolViolation(
                f"message of {length} bytes exceeds the limit of {self.max_message} bytes",
                sqlstate="54000",
            )
        if len(buf) < length + 1:
            return None
        body = bytes(buf[5 : length + 1])
        del buf[: length + 1]
        return _decode_regular(tag, body)

    def messages(self) -> Iterable[FrontendMessage]:
        while (msg := self.next_message()) is not None:
            yield msg
