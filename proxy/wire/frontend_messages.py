"""Frontend (client -> server) messages: what `frontend.FrontendDecoder` returns."""

from __future__ import annotations

from dataclasses import dataclass

from proxy.wire.errors import PgError

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
class FunctionCall:
    """'F': the fastpath function call (libpq's lo_* functions use it)."""


@dataclass(frozen=True, slots=True)
class Malformed:
    """A correctly framed message whose content is invalid (bad UTF-8, short fields).

    Framing is intact, so, as in Postgres, this is an ERROR for the session to report
    (the connection goes on), not a protocol violation.
    """

    tag: str
    error: PgError


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
    | FunctionCall
    | Malformed
)
