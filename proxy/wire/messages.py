"""PostgreSQL v3 frontend message decoder and backend message encoders.

Sans-I/O: `FrontendDecoder.feed(bytes)` buffers input and `next_message()`
returns decoded messages; the encoders return bytes. Nothing here touches a
socket, so every byte sequence a hostile client can send is testable directly.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
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


# --- backend messages --------------------------------------------------------


def _msg(tag: bytes, body: bytes = b"") -> bytes:
    return tag + _I32.pack(len(body) + 4) + body


def _cstr(s: str) -> bytes:
    return s.encode("utf-8").replace(b"\x00", b"") + b"\x00"


def authentication_ok() -> bytes:
    return _msg(b"R", _I32.pack(0))


def authentication_cleartext() -> bytes:
    return _msg(b"R", _I32.pack(3))


def authentication_md5(salt: bytes) -> bytes:
    return _msg(b"R", _I32.pack(5) + salt)


def authentication_sasl(mechanisms: Sequence[str]) -> bytes:
    return _msg(b"R", _I32.pack(10) + b"".join(_cstr(m) for m in mechanisms) + b"\x00")


def authentication_sasl_continue(data: bytes) -> bytes:
    return _msg(b"R", _I32.pack(11) + data)


def authentication_sasl_final(data: bytes) -> bytes:
    return _msg(b"R", _I32.pack(12) + data)


def parameter_status(name: str, value: str) -> bytes:
    return _msg(b"S", _cstr(name) + _cstr(value))


def backend_key_data(process_id: int, secret_key: int) -> bytes:
    return _msg(b"K", _I32.pack(process_id) + _I32.pack(secret_key))


def ready_for_query(status: str) -> bytes:
    return _msg(b"Z", status.encode("ascii"))


@dataclass(frozen=True, slots=True)
class FieldDescription:
    name: str
    type_oid: int
    type_size: int
    type_modifier: int = -1
    format: int = 0
    table_oid: int = 0
    column_number: int = 0


_FIELD = struct.Struct("!ihihih")


def row_description(fields: Sequence[FieldDescription]) -> bytes:
    parts = [_I16.pack(len(fields))]
    for f in fields:
        parts.append(_cstr(f.name))
        parts.append(
            _FIELD.pack(
                f.table_oid, f.column_number, f.type_oid, f.type_size, f.type_modifier, f.format
            )
        )
    return _msg(b"T", b"".join(parts))


def data_row(values: Sequence[bytes | None]) -> bytes:
    parts = [_I16.pack(len(values))]
    for v in values:
        if v is None:
            parts.append(b"\xff\xff\xff\xff")
        else:
            parts.append(_I32.pack(len(v)))
            parts.append(v)
    return _msg(b"D", b"".join(parts))


def command_complete(tag: str) -> bytes:
    return _msg(b"C", _cstr(tag))


def empty_query_response() -> bytes:
    return _msg(b"I")


def parse_complete() -> bytes:
    return _msg(b"1")


def bind_complete() -> bytes:
    return _msg(b"2")


def close_complete() -> bytes:
    return _msg(b"3")


def no_data() -> bytes:
    return _msg(b"n")


def portal_suspended() -> bytes:
    return _msg(b"s")


def parameter_description(oids: Sequence[int]) -> bytes:
    # OIDs are unsigned 32-bit; the count is unsigned 16-bit, as in Postgres.
    body = struct.pack("!H", len(oids)) + b"".join(struct.pack("!I", o & 0xFFFFFFFF) for o in oids)
    return _msg(b"t", body)


def _copy_response(tag: bytes, binary: bool, ncols: int) -> bytes:
    fmt = 1 if binary else 0
    return _msg(tag, bytes([fmt]) + _I16.pack(ncols) + _I16.pack(fmt) * ncols)


def copy_in_response(binary: bool, ncols: int) -> bytes:
    return _copy_response(b"G", binary, ncols)


def copy_out_response(binary: bool, ncols: int) -> bytes:
    return _copy_response(b"H", binary, ncols)


def copy_data(data: bytes) -> bytes:
    return _msg(b"d", data)


def copy_done() -> bytes:
    return _msg(b"c")


def _fields(fields: dict[str, str]) -> bytes:
    return b"".join(k.encode("ascii") + _cstr(v) for k, v in fields.items() if v) + b"\x00"


def error_response(fields: dict[str, str]) -> bytes:
    """fields: single-letter Postgres field codes (S, V, C, M, D, H, P, ...) -> value."""
    return _msg(b"E", _fields(fields))


def notice_response(fields: dict[str, str]) -> bytes:
    return _msg(b"N", _fields(fields))
