"""Backend (server -> client) message encoders: each returns the message's bytes."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

_I32 = struct.Struct("!i")
_I16 = struct.Struct("!h")


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


def notification_response(process_id: int, channel: str, payload: str) -> bytes:
    """'A': a NOTIFY of backend `process_id` on `channel`, delivered to a listener."""
    return _msg(b"A", _I32.pack(process_id) + _cstr(channel) + _cstr(payload))


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
