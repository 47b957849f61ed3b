"""SCRAM-SHA-256 exchange of proxy.wire.auth, driven message by message (no sockets).

The client side here is written from RFC 5802 with hashlib, independently of scramp,
so these tests check the server against the RFC rather than against itself.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct

import pytest

from proxy.wire import auth
from proxy.wire import messages as m
from proxy.wire.errors import FatalError, PgError, ProtocolViolation

# RFC 7677's SCRAM-SHA-256 example exchange.
RFC_SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
RFC_CLIENT_NONCE = "rOprNGfwEbeRWgbNEkqO"
RFC_SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"


def initial_response(client_first: bytes, mechanism: bytes = b"SCRAM-SHA-256") -> bytes:
    """SASLInitialResponse body: mechanism, Int32 length, client-first-message."""
    return mechanism + b"\x00" + struct.pack("!i", len(client_first)) + client_first


def sasl_payload(reply: bytes, code: int) -> str:
    """The SCRAM text of an AuthenticationSASLContinue (11) / SASLFinal (12) message."""
    assert reply[:1] == b"R"
    assert struct.unpack_from("!i", reply, 5)[0] == code
    return reply[9:].decode()


def client_final(password: str, client_first_bare: str, server_first: str) -> tuple[str, str]:
    """(client-final-message, the server-final it must answer), per RFC 5802 section 3."""
    attrs = dict(part.split("=", 1) for part in server_first.split(","))
    salted = hashlib.pbkdf2_hmac(
        "sha256", password.encode(), base64.b64decode(attrs["s"]), int(attrs["i"])
    )
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    stored_key = hashlib.sha256(client_key).digest()
    without_proof = f"c=biws,r={attrs['r']}"
    message = f"{client_first_bare},{server_first},{without_proof}".encode()
    signature = hmac.digest(stored_key, message, "sha256")
    proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
    server_key = hmac.digest(salted, b"Server Key", "sha256")
    verifier = base64.b64encode(hmac.digest(server_key, message, "sha256")).decode()
    return f"{without_proof},p={base64.b64encode(proof).decode()}", f"v={verifier}"


def login(
    authenticator: auth.Authenticator, password: str, scram_user: str = "", nonce: str = "abc"
) -> str:
    """A whole exchange as libpq runs it (empty SCRAM user); returns the server-final."""
    assert authenticator.start() == m.authentication_sasl(["SCRAM-SHA-256"])
    bare = f"n={scram_user},r={nonce}"
    reply, done = authenticator.step(initial_response(f"n,,{bare}".encode()))
    assert not done
    server_first = sasl_payload(reply, 11)
    final, expected = client_final(password, bare, server_first)
    reply, done = authenticator.step(final.encode())
    assert done
    server_final = sasl_payload(reply, 12)
    assert server_final == expected
    return server_final


def test_only_plain_scram_sha_256_is_advertised() -> None:
    # No SCRAM-SHA-256-PLUS: channel binding is not offered, with or without TLS.
    sasl = auth.ScramSha256Auth("alice", "secret").start()
    assert sasl == m.authentication_sasl(["SCRAM-SHA-256"])


@pytest.mark.parametrize(
    "scram_user",
    ["", "*", "alice", "someone=2Celse"],
    ids=["libpq-empty", "pgjdbc-star", "same", "escaped"],
)
def test_right_password_whatever_scram_user_the_client_sends(scram_user: str) -> None:
    # PostgreSQL authenticates the startup packet's user and ignores SCRAM's n=.
    login(auth.ScramSha256Auth("alice", "secret"), "secret", scram_user)


def test_rfc7677_example_exchange() -> None:
    authenticator = auth.ScramSha256Auth("user", "pencil")
    authenticator.salt = RFC_SALT
    authenticator._server = auth._SCRAM.make_server(
        authenticator._auth_info, s_nonce=RFC_SERVER_NONCE
    )
    reply, _ = authenticator.step(initial_response(f"n,,n=user,r={RFC_CLIENT_NONCE}".encode()))
    server_first = sasl_payload(reply, 11)
    assert (
        server_first == f"r={RFC_CLIENT_NONCE}{RFC_SERVER_NONCE},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    final = (
        f"c=biws,r={RFC_CLIENT_NONCE}{RFC_SERVER_NONCE},"
        "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    reply, done = authenticator.step(final.encode())
    assert done and sasl_payload(reply, 12) == "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def test_salt_and_iterations_unchanged() -> None:
    # Stable per user for the process (and across restarts): the PBKDF2 cache relies on it.
    authenticator = auth.ScramSha256Auth("alice", "secret")
    authenticator.start()
    reply, _ = authenticator.step(initial_response(b"n,,n=,r=abc"))
    attrs = dict(p.split("=", 1) for p in sasl_payload(reply, 11).split(","))
    salt = hashlib.sha256(b"hatiproxy-scram:alice").digest()[:16]
    assert attrs["s"] == base64.b64encode(salt).decode() and attrs["i"] == "4096"
    assert attrs["r"].startswith("abc") and len(attrs["r"]) == 3 + 24


def test_wrong_password_is_28p01() -> None:
    with pytest.raises(FatalError) as info:
        login(auth.ScramSha256Auth("alice", "secret"), "not the secret")
    assert info.value.sqlstate == "28P01" and info.value.severity == "FATAL"
    assert info.value.message == 'password authentication failed for user "alice"'


def test_user_without_password_fails_like_a_wrong_password() -> None:
    with pytest.raises(FatalError) as info:
        login(auth.ScramSha256Auth("alice", None), "")
    assert info.value.sqlstate == "28P01"


@pytest.mark.parametrize(
    ("password", "client_hashes"),
    [
        ("x\u00a0y", "x y"),  # SASLprep maps a no-break space to a space
        ("\uff50\uff41\uff53\uff53", "pass"),  # and full-width letters to ASCII (NFKC)
        ("key\U0001f511", "key\U0001f511"),  # rejected by SASLprep (unassigned in 3.2): raw
        ("tab\there", "tab\there"),  # a control character: rejected, raw
    ],
)
def test_passwords_are_hashed_as_libpq_hashes_them(password: str, client_hashes: str) -> None:
    """libpq, asyncpg and pgJDBC hash SASLprep(password), or the raw one if SASLprep fails."""
    login(auth.ScramSha256Auth("alice", password), client_hashes)


def reject(first: bytes, final: bytes | None = None) -> PgError:
    """The error a bad client-first (or, after a good one, a bad client-final) raises."""
    authenticator = auth.ScramSha256Auth("alice", "secret")
    authenticator.start()
    with pytest.raises(PgError) as info:
        authenticator.step(initial_response(first))
        assert final is not None
        authenticator.step(final)
    assert info.value.severity == "FATAL"
    return info.value


@pytest.mark.parametrize(
    "first",
    [
        b"",
        b"garbage",
        b"x,,n=,r=abc",  # unknown gs2 flag
        b"n,,n=",  # no nonce
        b"n,,n=,r=",  # empty nonce
        b"n,,n=,r=a\x00b",
        b"n,,m=ext,n=,r=abc",  # mandatory extension
        b"n,a=bob,n=,r=abc",  # authorization identity
    ],
)
def test_malformed_client_first_is_08p01(first: bytes) -> None:
    error = reject(first)
    assert isinstance(error, ProtocolViolation) and error.sqlstate == "08P01"
    assert error.message == "malformed SCRAM message" and error.detail


def test_channel_binding_request_is_08p01() -> None:
    error = reject(b"p=tls-server-end-point,,n=,r=abc")
    assert (error.sqlstate, error.message) == ("08P01", "SCRAM channel binding is not supported")


def test_other_mechanism_or_broken_framing_is_08p01() -> None:
    authenticator = auth.ScramSha256Auth("alice", "secret")
    with pytest.raises(ProtocolViolation, match="unsupported SASL mechanism"):
        authenticator.step(initial_response(b"n,,n=,r=abc", b"SCRAM-SHA-256-PLUS"))
    with pytest.raises(ProtocolViolation, match="malformed SASLInitialResponse"):
        auth.ScramSha256Auth("alice", "secret").step(b"SCRAM-SHA-256")


@pytest.mark.parametrize(
    "final",
    [
        b"",
        b"garbage",
        b"c=biws,r=abc",  # no proof
        b"c=biws,p=AAAA",  # no nonce
        b"c=biws,r=NONCE,p=not base64!",
        b"c=biws,r=abcWRONG,p=AAAA",  # not the nonce the server sent
    ],
)
def test_malformed_client_final_is_08p01(final: bytes) -> None:
    authenticator = auth.ScramSha256Auth("alice", "secret")
    authenticator.start()
    reply, _ = authenticator.step(initial_response(b"n,,n=,r=abc"))
    nonce = dict(p.split("=", 1) for p in sasl_payload(reply, 11).split(","))["r"]
    with pytest.raises(ProtocolViolation) as info:
        authenticator.step(final.replace(b"NONCE", nonce.encode()))
    assert info.value.sqlstate == "08P01" and info.value.message == "malformed SCRAM message"


def test_client_final_with_other_channel_binding_is_08p01() -> None:
    authenticator = auth.ScramSha256Auth("alice", "secret")
    reply, _ = authenticator.step(initial_response(b"n,,n=,r=abc"))
    nonce = dict(p.split("=", 1) for p in sasl_payload(reply, 11).split(","))["r"]
    # c= must repeat the gs2 header "n,," (biws); "y,," (eSws) is someone else's exchange.
    with pytest.raises(ProtocolViolation, match="nonce or channel binding mismatch"):
        authenticator.step(f"c=eSws,r={nonce},p=AAAA".encode())


def test_proof_of_the_wrong_length_is_28p01() -> None:
    authenticator = auth.ScramSha256Auth("alice", "secret")
    reply, _ = authenticator.step(initial_response(b"n,,n=,r=abc"))
    nonce = dict(p.split("=", 1) for p in sasl_payload(reply, 11).split(","))["r"]
    with pytest.raises(FatalError) as info:
        authenticator.step(f"c=biws,r={nonce},p=AAAA".encode())
    assert info.value.sqlstate == "28P01"


def test_message_after_the_end_is_08p01() -> None:
    authenticator = auth.ScramSha256Auth("alice", "secret")
    login(authenticator, "secret")
    with pytest.raises(ProtocolViolation, match="unexpected SASL message"):
        authenticator.step(b"c=biws")
