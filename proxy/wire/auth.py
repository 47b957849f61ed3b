"""Password authentication exchanges (cleartext, md5, SCRAM-SHA-256), sans-I/O.

An Authenticator produces the bytes to send and consumes the client's 'p'
message bodies; the server shell moves the bytes. Wrong credentials raise a
FatalError with SQLSTATE 28P01, which closes the connection.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import struct
from functools import lru_cache

from proxy.wire import messages as m
from proxy.wire.errors import FatalError, ProtocolViolation

SCRAM_ITERATIONS = 4096


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
def _scram_keys(password: str, salt: bytes, iterations: int) -> tuple[bytes, bytes]:
    """(StoredKey, ServerKey) per RFC 5802; cached because PBKDF2 is deliberately slow."""
    salted = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    return hashlib.sha256(client_key).digest(), server_key


def _scram_attrs(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if sep and len(key) == 1:
            out[key] = value
    return out


class ScramSha256Auth(Authenticator):
    MECHANISM = "SCRAM-SHA-256"

    def __init__(self, user: str, password: str | None) -> None:
        super().__init__(user, password)
        # A per-user salt that is stable for the process keeps the PBKDF2 cache useful.
        self.salt = hashlib.sha256(b"hatiproxy-scram:" + user.encode()).digest()[:16]
        self.server_nonce = base64.b64encode(secrets.token_bytes(18)).decode()
        self._stage = 0
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""

    def start(self) -> bytes:
        return m.authentication_sasl([self.MECHANISM])

    def step(self, data: bytes) -> tuple[bytes, bool]:
        if self._stage == 0:
            return self._initial(data), False
        if self._stage == 1:
            return self._final(data), True
        raise ProtocolViolation("unexpected SASL message")

    def _initial(self, data: bytes) -> bytes:
        end = data.find(b"\x00")
        if end < 0 or len(data) < end + 5:
            raise ProtocolViolation("malformed SASLInitialResponse")
        mechanism = data[:end].decode("ascii", "replace")
        if mechanism != self.MECHANISM:
            raise ProtocolViolation(f"unsupported SASL mechanism {mechanism!r}")
        (length,) = struct.unpack_from("!i", data, end + 1)
        client_first = data[end + 5 : end + 5 + max(length, 0)].decode("utf-8", "replace")
        gs2, _, rest = client_first.partition(",")
        if gs2 not in ("n", "y"):
            raise ProtocolViolation("SCRAM channel binding is not supported")
        _, _, bare = rest.partition(",")
        attrs = _scram_attrs(bare)
        if "r" not in attrs:
            raise ProtocolViolation("SCRAM client nonce missing")
        self._client_first_bare = bare
        self._gs2_header = gs2 + ",,"
        self._nonce = attrs["r"] + self.server_nonce
        salt = base64.b64encode(self.salt).decode()
        self._server_first = f"r={self._nonce},s={salt},i={SCRAM_ITERATIONS}"
        self._stage = 1
        return m.authentication_sasl_continue(self._server_first.encode())

    def _final(self, data: bytes) -> bytes:
        self._stage = 2
        client_final = data.decode("utf-8", "replace")
        without_proof, _, proof_part = client_final.rpartition(",p=")
        attrs = _scram_attrs(without_proof)
        expected_binding = base64.b64encode(self._gs2_header.encode()).decode()
        if attrs.get("r") != self._nonce or attrs.get("c") != expected_binding:
            raise ProtocolViolation("SCRAM nonce or channel binding mismatch")
        if self.password is None:
            raise _auth_failed(self.user, "password")
        try:
            proof = base64.b64decode(proof_part, validate=True)
        except ValueError as exc:
            raise ProtocolViolation("malformed SCRAM proof") from exc
        stored_key, server_key = _scram_keys(self.password, self.salt, SCRAM_ITERATIONS)
        auth_message = ",".join(
            (self._client_first_bare, self._server_first, without_proof)
        ).encode()
        signature = hmac.new(stored_key, auth_message, hashlib.sha256).digest()
        if len(proof) != len(signature):
            raise _auth_failed(self.user, "password")
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.sha256(client_key).digest(), stored_key):
            raise _auth_failed(self.user, "password")
        verifier = hmac.new(server_key, auth_message, hashlib.sha256).digest()
        return m.authentication_sasl_final(b"v=" + base64.b64encode(verifier))


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
