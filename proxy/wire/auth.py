"""Password authentication exchanges (cleartext, md5, SCRAM-SHA-256), sans-I/O.

An Authenticator produces the bytes to send and consumes the client's 'p'
message bodies; the server shell moves the bytes. Wrong credentials raise a
FatalError with SQLSTATE 28P01, malformed messages a ProtocolViolation (08P01);
either closes the connection. SCRAM's parsing and proof checks are scramp's; this
module frames its messages in PostgreSQL's and maps its errors to SQLSTATEs.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import struct
from functools import lru_cache

from scramp import ScramException, ScramMechanism
from scramp.utils import ServerError

from proxy.wire import messages as m
from proxy.wire.errors import FatalError, PgError, ProtocolViolation

SCRAM_ITERATIONS = 4096  # PostgreSQL's default (scram_iterations)
_SCRAM = ScramMechanism("SCRAM-SHA-256")


def _auth_failed(user: str, method: str) -> FatalError:
    return FatalError("28P01", f'{method} authentication failed for user "{user}"')


def _cstring(data: bytes) -> str:
    end = data.find(b"\x00")
    if end < 0:
        raise ProtocolViolation("password message is not a terminated string")
    return data[:end].decode("utf-8", "replace")


class Authenticator:
    """Base: `start()` gives the first request; `step(data)` returns (reply, finished)."""

    def __init__(self, user: str, password: str | None) -> None:
        self.user = user
        self.password = password

    def start(self) -> bytes:
        raise NotImplementedError

    def step(self, data: bytes) -> tuple[bytes, bool]:
        raise NotImplementedError


class CleartextAuth(Authenticator):
    def start(self) -> bytes:
        return m.authentication_cleartext()

    def step(self, data: bytes) -> tuple[bytes, bool]:
        given = _cstring(data)
        if self.password is None or not hmac.compare_digest(given.encode(), self.password.encode()):
            raise _auth_failed(self.user, "password")
        return b"", True


class Md5Auth(Authenticator):
    def __init__(self, user: str, password: str | None) -> None:
        super().__init__(user, password)
        self.salt = secrets.token_bytes(4)

    def start(self) -> bytes:
        return m.authentication_md5(self.salt)

    def step(self, data: bytes) -> tuple[bytes, bool]:
        given = _cstring(data)
        if self.password is None:
            raise _auth_failed(self.user, "password")
        inner = hashlib.md5((self.password + self.user).encode()).hexdigest()
        expected = "md5" + hashlib.md5(inner.encode() + self.salt).hexdigest()
        if not hmac.compare_digest(given.encode(), expected.encode()):
            raise _auth_failed(self.user, "password")
        return b"", True


@lru_cache(maxsize=256)
def _scram_auth_info(password: str, salt: bytes) -> tuple[bytes, bytes, bytes, int]:
    """(salt, StoredKey, ServerKey, iterations); cached because PBKDF2 is deliberately slow."""
    try:
        return _SCRAM.make_auth_info(password, SCRAM_ITERATIONS, salt)
    except ScramException:
        # scramp hashes only SASLprep'd passwords and rejects the rest (control characters,
        # code points unassigned in Unicode 3.2 such as emoji). PostgreSQL, libpq, asyncpg
        # and pgJDBC hash such a password's raw UTF-8 bytes instead, which scramp cannot.
        salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, SCRAM_ITERATIONS)
        client_key = hmac.digest(salted, b"Client Key", "sha256")
        server_key = hmac.digest(salted, b"Server Key", "sha256")
        return salt, hashlib.sha256(client_key).digest(), server_key, SCRAM_ITERATIONS


def _scram_failure(user: str, exc: ScramException) -> PgError:
    """scramp's complaint as PostgreSQL words it: a wrong proof is 28P01, the rest 08P01."""
    match exc.server_error:
        case ServerError.INVALID_PROOF:
            return _auth_failed(user, "password")
        case (
            ServerError.CHANNEL_BINDING_NOT_SUPPORTED | ServerError.UNSUPPORTED_CHANNEL_BINDING_TYPE
        ):
            return ProtocolViolation("SCRAM channel binding is not supported")
        case ServerError.CHANNEL_BINDINGS_DONT_MATCH:
            return ProtocolViolation("SCRAM nonce or channel binding mismatch")
    return ProtocolViolation("malformed SCRAM message", detail=str(exc.args[0]))


def _without_scram_user(client_first: str) -> tuple[str, str | None]:
    """(client-first for scramp, the client's own bare part) with the SCRAM user replaced.

    PostgreSQL authenticates the startup packet's user and ignores SCRAM's `n=`, which
    libpq sends empty (`n,,n=,r=...`) and pgJDBC as `*`; scramp insists on a non-empty,
    SASLprep-valid name. The bare part is None when the message is too short to have one.
    """
    parts = client_first.split(",", 3)  # gs2 flag, authzid, n=user, rest
    if len(parts) < 4 or not parts[2].startswith("n="):
        return client_first, None
    own_bare = f"{parts[2]},{parts[3]}"
    return ",".join((parts[0], parts[1], "n=*", parts[3])), own_bare


class ScramSha256Auth(Authenticator):
    """SCRAM-SHA-256 without channel binding (no -PLUS is offered, with or without TLS)."""

    MECHANISM = "SCRAM-SHA-256"

    def __init__(self, user: str, password: str | None) -> None:
        super().__init__(user, password)
        # A per-user salt that is stable for the process keeps the PBKDF2 cache useful.
        self.salt = hashlib.sha256(b"hatiproxy-scram:" + user.encode()).digest()[:16]
        # 18 random bytes in base64, as PostgreSQL's server nonce.
        nonce = base64.b64encode(secrets.token_bytes(18)).decode()
        self._server = _SCRAM.make_server(self._auth_info, s_nonce=nonce)
        self._stage = 0

    def _auth_info(self, _scram_user: str) -> tuple[bytes, bytes, bytes, int]:
        if self.password is None:
            # Keys no proof matches: the exchange runs to its end and fails with 28P01.
            return _SCRAM.make_auth_info(secrets.token_hex(16), SCRAM_ITERATIONS, self.salt)
        return _scram_auth_info(self.password, self.salt)

    def start(self) -> bytes:
        return m.authentication_sasl([self.MECHANISM])

    def step(self, data: bytes) -> tuple[bytes, bool]:
        stage, self._stage = self._stage, self._stage + 1
        try:
            if stage == 0:
                return self._initial(data), False
            if stage == 1:
                self._server.set_client_final(data.decode("utf-8", "replace"))
                final = self._server.get_server_final()
                return m.authentication_sasl_final(final.encode()), True
        except ScramException as exc:
            raise _scram_failure(self.user, exc) from None
        raise ProtocolViolation("unexpected SASL message")

    def _initial(self, data: bytes) -> bytes:
        # SASLInitialResponse: mechanism name, then an Int32 length (-1: none) and the data.
        end = data.find(b"\x00")
        if end < 0 or len(data) < end + 5:
            raise ProtocolViolation("malformed SASLInitialResponse")
        mechanism = data[:end].decode("ascii", "replace")
        if mechanism != self.MECHANISM:
            raise ProtocolViolation(f"unsupported SASL mechanism {mechanism!r}")
        (length,) = struct.unpack_from("!i", data, end + 1)
        client_first = data[end + 5 : end + 5 + max(length, 0)].decode("utf-8", "replace")
        for_scramp, own_bare = _without_scram_user(client_first)
        self._server.set_client_first(for_scramp)
        if own_bare is not None:
            # The client signs its own bare message, so the proof is checked against that.
            self._server.client_first_bare = own_bare
        return m.authentication_sasl_continue(self._server.get_server_first().encode())


class PasswordCapture(Authenticator):
    """Cleartext exchange that only records the password (an API key, checked by the caller)."""

    given = ""

    def start(self) -> bytes:
        return m.authentication_cleartext()

    def step(self, data: bytes) -> tuple[bytes, bool]:
        self.given = _cstring(data)
        return b"", True


METHODS: dict[str, type[Authenticator]] = {
    "password": CleartextAuth,
    "md5": Md5Auth,
    "scram-sha-256": ScramSha256Auth,
}
