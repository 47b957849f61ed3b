"""FrontendDecoder and backend encoders: round trips, split feeds, and fuzzing.

The frontend bytes are built here independently of the decoder (a tiny client
side encoder) so a symmetric bug in both directions cannot hide.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy.wire import messages as m
from proxy.wire.errors import ProtocolViolation

# --- client-side encoders (test only) ----------------------------------------------


def i32(n: int) -> bytes:
    return struct.pack("!i", n)


def i16(n: int) -> bytes:
    return struct.pack("!h", n)


def cstr(s: str) -> bytes:
    return s.encode() + b"\x00"


def typed(tag: bytes, body: bytes) -> bytes:
    return tag + i32(len(body) + 4) + body


def untyped(body: bytes) -> bytes:
    return i32(len(body) + 4) + body


def startup(params: dict[str, str], protocol: int = m.PROTOCOL_V3) -> bytes:
    return untyped(i32(protocol) + b"".join(cstr(k) + cstr(v) for k, v in params.items()) + b"\0")


def bind(
    portal: str, stmt: str, fmts: list[int], params: list[bytes | None], res: list[int]
) -> bytes:
    body = cstr(portal) + cstr(stmt) + i16(len(fmts)) + b"".join(i16(f) for f in fmts)
    body += i16(len(params))
    for p in params:
        body += i32(-1) if p is None else i32(len(p)) + p
    body += i16(len(res)) + b"".join(i16(f) for f in res)
    return typed(b"B", body)


STARTUP_CASES: list[tuple[bytes, m.FrontendMessage]] = [
    (untyped(i32(m.SSL_REQUEST_CODE)), m.SSLRequest()),
    (untyped(i32(m.GSSENC_REQUEST_CODE)), m.GSSENCRequest()),
    (untyped(i32(m.CANCEL_REQUEST_CODE) + i32(1234) + i32(-5)), m.CancelRequest(1234, -5)),
    (
        startup({"user": "bob", "database": "db", "application_name": "ünï"}),
        m.StartupMessage(
            m.PROTOCOL_V3, {"user": "bob", "database": "db", "application_name": "ünï"}
        ),
    ),
    (startup({}), m.StartupMessage(m.PROTOCOL_V3, {})),
]

REGULAR_CASES: list[tuple[bytes, m.FrontendMessage]] = [
    (typed(b"Q", cstr("SELECT 'é'; SELECT 2")), m.Query("SELECT 'é'; SELECT 2")),
    (typed(b"Q", cstr("")), m.Query("")),
    (
        typed(b"P", cstr("s1") + cstr("SELECT $1") + i16(2) + i32(23) + i32(-1)),
        m.Parse("s1", "SELECT $1", (23, 0xFFFFFFFF)),
    ),
    (typed(b"P", cstr("") + cstr("SELECT 1") + i16(0)), m.Parse("", "SELECT 1", ())),
    (
        bind("p", "s", [0, 1], [b"42", None, b""], [1]),
        m.Bind("p", "s", (0, 1), (b"42", None, b""), (1,)),
    ),
    (bind("", "", [], [], []), m.Bind("", "", (), (), ())),
    (typed(b"D", b"S" + cstr("s1")), m.Describe("S", "s1")),
    (typed(b"D", b"P" + cstr("")), m.Describe("P", "")),
    (typed(b"E", cstr("p") + i32(100)), m.Execute("p", 100)),
    (typed(b"C", b"S" + cstr("s1")), m.Close("S", "s1")),
    (typed(b"C", b"P" + cstr("p")), m.Close("P", "p")),
    (typed(b"S", b""), m.Sync()),
    (typed(b"H", b""), m.Flush()),
    (typed(b"X", b""), m.Terminate()),
    (typed(b"d", b"1\t2\n\x00\xff"), m.CopyData(b"1\t2\n\x00\xff")),
    (typed(b"c", b""), m.CopyDone()),
    (typed(b"f", cstr("client gave up")), m.CopyFail("client gave up")),
    (typed(b"p", b"secret\x00"), m.PasswordData(b"secret\x00")),
]


def decode_all(data: bytes, *, in_startup: bool, chunks: list[int] | None = None) -> list:
    dec = m.FrontendDecoder(in_startup=in_startup)
    out = []
    pos = 0
    for size in [*(chunks or []), len(data)]:
        dec.feed(data[pos : pos + size])
        pos += size
        out.extend(dec.messages())
    assert dec.buffered == 0
    return out


# --- frontend round trips ------------------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), STARTUP_CASES, ids=lambda c: type(c).__name__)
def test_startup_messages_decode(raw: bytes, expected: m.FrontendMessage) -> None:
    assert decode_all(raw, in_startup=True) == [expected]


@pytest.mark.parametrize(("raw", "expected"), REGULAR_CASES, ids=lambda c: type(c).__name__)
def test_regular_messages_decode(raw: bytes, expected: m.FrontendMessage) -> None:
    assert decode_all(raw, in_startup=False) == [expected]


def test_every_split_point_gives_the_same_messages() -> None:
    stream = b"".join(raw for raw, _ in REGULAR_CASES)
    expected = [msg for _, msg in REGULAR_CASES]
    for cut in range(len(stream) + 1):
        assert decode_all(stream, in_startup=False, chunks=[cut]) == expected, cut
    assert decode_all(stream, in_startup=False, chunks=[1] * len(stream)) == expected


def test_startup_split_at_every_byte() -> None:
    raw, expected = STARTUP_CASES[3]
    for cut in range(len(raw) + 1):
        assert decode_all(raw, in_startup=True, chunks=[cut]) == [expected]


# --- malformed input -------------------------------------------------------------------

# Broken framing: the stream cannot be followed any further, so the connection ends.
BAD_FRAMING = {
    "unknown_type": typed(b"z", b""),
    "nul_type": typed(b"\x00", b""),
    "length_below_4": b"Q" + i32(3),
    "negative_length": b"Q" + i32(-1),
    "min_int_length": b"Q" + i32(-(2**31)),
    "small_message_over_10000": b"S" + i32(10_001),
    "password_over_65535": b"p" + i32(65_536),
}


@pytest.mark.parametrize("raw", BAD_FRAMING.values(), ids=BAD_FRAMING.keys())
def test_broken_framing_is_a_protocol_violation(raw: bytes) -> None:
    dec = m.FrontendDecoder(in_startup=False)
    dec.feed(raw)
    with pytest.raises(ProtocolViolation) as info:
        list(dec.messages())
    assert info.value.sqlstate == "08P01"
    assert info.value.severity == "FATAL"


def test_unknown_type_is_rejected_on_its_first_byte() -> None:
    """Postgres answers an unknown type byte before reading any length."""
    dec = m.FrontendDecoder(in_startup=False)
    dec.feed(b"z")
    with pytest.raises(ProtocolViolation, match="invalid frontend message type 122"):
        dec.next_message()


# Framed messages with bad content: as in Postgres, an ERROR the session reports.
BAD_CONTENT = {
    "unterminated_query": (typed(b"Q", b"SELECT 1"), "08P01", "invalid string in message"),
    "invalid_utf8_query": (
        typed(b"Q", b"SELECT '\xff\xfe'\x00"),
        "22021",
        'invalid byte sequence for encoding "UTF8": 0xff',
    ),
    "truncated_utf8_parse": (
        typed(b"P", cstr("") + b"SELECT 'a\xe2\x82'\x00" + i16(0)),
        "22021",
        'invalid byte sequence for encoding "UTF8": 0xe2 0x82',
    ),
    "invalid_utf8_portal": (
        typed(b"E", b"\xc3\x28\x00" + i32(0)),
        "22021",
        'invalid byte sequence for encoding "UTF8": 0xc3 0x28',
    ),
    "trailing_bytes": (typed(b"S", b"x"), "08P01", "invalid message format"),
    "bind_negative_param_count": (
        typed(b"B", cstr("") + cstr("") + i16(0) + i16(-1) + i16(0)),
        "08P01",
        "insufficient data left in message",
    ),
    "bind_param_len_past_end": (
        typed(b"B", cstr("") + cstr("") + i16(0) + i16(1) + i32(99)),
        "08P01",
        "insufficient data left in message",
    ),
    "bind_param_len_negative": (
        typed(b"B", cstr("") + cstr("") + i16(0) + i16(1) + i32(-7)),
        "08P01",
        "insufficient data left in message",
    ),
    "bind_bad_format": (bind("", "", [2], [b"x"], []), "08P01", "unsupported format code: 2"),
    "bind_bad_result_format": (bind("", "", [], [], [7]), "08P01", "unsupported format code: 7"),
    "describe_bad_kind": (
        typed(b"D", b"X" + cstr("a")),
        "08P01",
        "invalid DESCRIBE message subtype 88",
    ),
    "close_empty": (typed(b"C", b""), "08P01", "insufficient data left in message"),
    "execute_short": (typed(b"E", cstr("") + b"\x00\x00"), "08P01", "insufficient data"),
    "parse_negative_count": (
        typed(b"P", cstr("") + cstr("x") + i16(-3)),
        "08P01",
        "insufficient data left in message",
    ),
}


@pytest.mark.parametrize(("raw", "sqlstate", "text"), BAD_CONTENT.values(), ids=BAD_CONTENT.keys())
def test_bad_content_is_a_recoverable_error(raw: bytes, sqlstate: str, text: str) -> None:
    # Followed by a valid message: the stream stays in step after the bad one.
    msgs = decode_all(raw + typed(b"S", b""), in_startup=False)
    assert len(msgs) == 2 and msgs[1] == m.Sync()
    bad = msgs[0]
    assert isinstance(bad, m.Malformed) and bad.tag == chr(raw[0])
    assert bad.error.sqlstate == sqlstate and bad.error.severity == "ERROR"
    assert bad.error.message.startswith(text), bad.error.message


def test_lenient_messages() -> None:
    """Postgres reads nothing past the type of Terminate and CopyDone; CopyFail's text
    is only echoed back, so undecodable bytes in it are replaced, not an error."""
    assert decode_all(typed(b"X", b"junk"), in_startup=False) == [m.Terminate()]
    assert decode_all(typed(b"c", b"junk"), in_startup=False) == [m.CopyDone()]
    assert decode_all(typed(b"f", b"bad \xff\x00"), in_startup=False) == [m.CopyFail("bad \ufffd")]
    assert decode_all(typed(b"F", i32(0)), in_startup=False) == [m.FunctionCall()]


BAD_STARTUP = {
    "length_too_small": i32(4) + i32(m.PROTOCOL_V3),
    "negative_length": i32(-100),
    "length_over_limit": i32(m.MAX_STARTUP_PACKET + 1),
    "garbage": b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    "ssl_request_with_extra": untyped(i32(m.SSL_REQUEST_CODE) + b"xx"),
    "unterminated_params": untyped(i32(m.PROTOCOL_V3) + b"user\x00bob"),
    "invalid_utf8_param": startup({"user": "x"})[:-2] + b"\x00application_name\x00\xc3\x28\x00\x00",
    "protocol_2": startup({"user": "x"}, protocol=2 << 16),
}


@pytest.mark.parametrize("raw", BAD_STARTUP.values(), ids=BAD_STARTUP.keys())
def test_malformed_startup_is_a_protocol_violation(raw: bytes) -> None:
    dec = m.FrontendDecoder()
    dec.feed(raw)
    with pytest.raises(ProtocolViolation):
        list(dec.messages())


def test_oversized_length_is_rejected_before_the_body_arrives() -> None:
    dec = m.FrontendDecoder(in_startup=False)
    dec.feed(b"Q" + i32(2**30 + 10))  # only the header: must not wait for 1 GiB
    with pytest.raises(ProtocolViolation, match="invalid message length") as info:
        dec.next_message()
    assert info.value.sqlstate == "08P01"
    small = m.FrontendDecoder(max_message=1000, in_startup=False)
    small.feed(b"d" + i32(1001))
    with pytest.raises(ProtocolViolation):
        small.next_message()
    small = m.FrontendDecoder(max_message=1000, in_startup=False)
    small.feed(typed(b"d", b"x" * 996))  # exactly at the limit is fine
    assert small.next_message() == m.CopyData(b"x" * 996)


def test_huge_parameter_count_decodes() -> None:
    params: list[bytes | None] = [str(i).encode() for i in range(32767)]
    msg = decode_all(bind("", "s", [0], params, []), in_startup=False)[0]
    assert isinstance(msg, m.Bind) and len(msg.params) == 32767 and msg.params[-1] == b"32766"


# --- backend encoders --------------------------------------------------------------------


def split_backend(data: bytes) -> list[tuple[bytes, bytes]]:
    """Backend byte stream -> [(tag, body)], checking every length field."""
    out, pos = [], 0
    while pos < len(data):
        tag = data[pos : pos + 1]
        (length,) = struct.unpack_from("!i", data, pos + 1)
        assert length >= 4 and pos + 1 + length <= len(data)
        out.append((tag, data[pos + 5 : pos + 1 + length]))
        pos += 1 + length
    return out


def one(data: bytes) -> tuple[bytes, bytes]:
    msgs = split_backend(data)
    assert len(msgs) == 1
    return msgs[0]


def fields_of(body: bytes) -> dict[str, str]:
    assert body.endswith(b"\x00")
    out = {}
    for part in body[:-1].split(b"\x00")[:-1]:
        out[chr(part[0])] = part[1:].decode()
    return out


SIMPLE_BACKEND = [
    (m.authentication_ok(), b"R", i32(0)),
    (m.authentication_cleartext(), b"R", i32(3)),
    (m.authentication_md5(b"salt"), b"R", i32(5) + b"salt"),
    (m.authentication_sasl(["SCRAM-SHA-256"]), b"R", i32(10) + b"SCRAM-SHA-256\x00\x00"),
    (m.authentication_sasl_continue(b"r=abc"), b"R", i32(11) + b"r=abc"),
    (m.authentication_sasl_final(b"v=xyz"), b"R", i32(12) + b"v=xyz"),
    (m.parameter_status("TimeZone", "UTC"), b"S", b"TimeZone\x00UTC\x00"),
    (m.backend_key_data(77, -9), b"K", i32(77) + i32(-9)),
    (m.ready_for_query("T"), b"Z", b"T"),
    (m.command_complete("INSERT 0 3"), b"C", b"INSERT 0 3\x00"),
    (m.empty_query_response(), b"I", b""),
    (m.parse_complete(), b"1", b""),
    (m.bind_complete(), b"2", b""),
    (m.close_complete(), b"3", b""),
    (m.no_data(), b"n", b""),
    (m.portal_suspended(), b"s", b""),
    (
        m.parameter_description([23, 25, 0xFFFFFFFF & 0x7FFFFFFF]),
        b"t",
        i16(3) + i32(23) + i32(25) + i32(0x7FFFFFFF),
    ),
    (m.copy_in_response(False, 2), b"G", b"\x00" + i16(2) + i16(0) + i16(0)),
    (m.copy_out_response(True, 1), b"H", b"\x01" + i16(1) + i16(1)),
    (m.copy_data(b"a\tb\n"), b"d", b"a\tb\n"),
    (m.copy_done(), b"c", b""),
]


@pytest.mark.parametrize(("data", "tag", "body"), SIMPLE_BACKEND, ids=lambda x: repr(x)[:20])
def test_backend_encoders(data: bytes, tag: bytes, body: bytes) -> None:
    assert one(data) == (tag, body)


def test_row_description_round_trip() -> None:
    fields = [
        m.FieldDescription("id", 23, 4, -1, 1, 16384, 1),
        m.FieldDescription("naïve", 1700, -1, 655366, 0),
    ]
    tag, body = one(m.row_description(fields))
    assert tag == b"T"
    (n,) = struct.unpack_from("!h", body, 0)
    pos, got = 2, []
    for _ in range(n):
        end = body.index(b"\x00", pos)
        name = body[pos:end].decode()
        table, col, oid, size, typmod, fmt = struct.unpack_from("!ihihih", body, end + 1)
        got.append(m.FieldDescription(name, oid, size, typmod, fmt, table, col))
        pos = end + 1 + 18
    assert pos == len(body) and got == fields


def test_data_row_round_trip() -> None:
    values = [b"1", None, b"", b"\x00\xff" * 100]
    tag, body = one(m.data_row(values))
    assert tag == b"D"
    (n,) = struct.unpack_from("!h", body, 0)
    pos, got = 2, []
    for _ in range(n):
        (size,) = struct.unpack_from("!i", body, pos)
        pos += 4
        got.append(None if size == -1 else body[pos : pos + size])
        pos += max(size, 0)
    assert pos == len(body) and got == values


def test_error_and_notice_fields() -> None:
    fields = {
        "S": "ERROR",
        "V": "ERROR",
        "C": "42P01",
        "M": 'relation "x" does not exist',
        "P": "15",
    }
    tag, body = one(m.error_response(fields))
    assert tag == b"E" and fields_of(body) == fields
    tag, body = one(m.notice_response({"S": "NOTICE", "C": "00000", "M": "hi", "D": ""}))
    assert tag == b"N" and fields_of(body) == {"S": "NOTICE", "C": "00000", "M": "hi"}


def test_nul_in_backend_strings_cannot_break_framing() -> None:
    tag, body = one(m.command_complete("SELECT\x00 1"))
    assert body == b"SELECT 1\x00"
    tag, body = one(m.error_response({"M": "a\x00b", "C": "XX000"}))
    assert fields_of(body) == {"M": "ab", "C": "XX000"}


# --- property-based fuzzing ------------------------------------------------------------

FUZZ_MAX = 4096  # a small limit so hypothesis can hit the over-limit path too


def _drain(dec: m.FrontendDecoder, stream: list[bytes]) -> list[m.FrontendMessage]:
    """Feed chunks; only messages or ProtocolViolation may come out. Buffer stays bounded."""
    out: list[m.FrontendMessage] = []
    try:
        for chunk in stream:
            dec.feed(chunk)
            while (msg := dec.next_message()) is not None:
                out.append(msg)
                if isinstance(msg, m.Malformed):
                    assert msg.error.severity == "ERROR", msg
                if isinstance(msg, m.StartupMessage):
                    dec.startup_done()
            # Whatever stays buffered is an incomplete message within the limits.
            limit = m.MAX_STARTUP_PACKET if dec.in_startup else FUZZ_MAX + 1
            assert dec.buffered < limit
    except ProtocolViolation as exc:
        assert exc.sqlstate in ("08P01", "22021", "0A000")
    return out


def _chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in zip(points, points[1:], strict=False)]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=600), st.lists(st.integers(0, 600), max_size=8), st.booleans())
def test_fuzz_arbitrary_bytes(data: bytes, cuts: list[int], in_startup: bool) -> None:
    dec = m.FrontendDecoder(max_message=FUZZ_MAX, in_startup=in_startup)
    _drain(dec, _chunked(data, cuts))


_valid_regular = st.sampled_from([raw for raw, _ in REGULAR_CASES])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_valid_regular, min_size=1, max_size=6),
    st.integers(0, 2000),
    st.binary(min_size=1, max_size=8),
    st.lists(st.integers(0, 2000), max_size=6),
)
def test_fuzz_mutated_valid_streams(
    msgs: list[bytes], at: int, junk: bytes, cuts: list[int]
) -> None:
    """Valid messages with a few bytes overwritten: decoded prefix matches, then anything."""
    stream = b"".join(msgs)
    pos = at % len(stream)
    mutated = stream[:pos] + junk + stream[pos + len(junk) :]
    dec = m.FrontendDecoder(max_message=FUZZ_MAX, in_startup=False)
    got = _drain(dec, _chunked(mutated, cuts))
    # Messages entirely before the mutation decode exactly as sent.
    clean, size = [], 0
    for raw in msgs:
        if size + len(raw) > pos:
            break
        clean.append(decode_all(raw, in_startup=False)[0])
        size += len(raw)
    assert got[: len(clean)] == clean


@settings(max_examples=100, deadline=None)
@given(st.lists(_valid_regular, min_size=1, max_size=10), st.lists(st.integers(0, 3000)))
def test_fuzz_valid_streams_any_chunking(msgs: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(msgs)
    expected = [decode_all(raw, in_startup=False)[0] for raw in msgs]
    dec = m.FrontendDecoder(in_startup=False)
    assert _drain(dec, _chunked(stream, cuts)) == expected
    assert dec.buffered == 0


def test_parameter_counts_are_unsigned_16_bit() -> None:
    """Postgres accepts up to 65535 parameters: counts above 32767 must not read negative."""
    n = 40_000
    body = cstr("") + cstr("") + i16(0) + struct.pack("!H", n)
    body += b"".join(i32(1) + b"7" for _ in range(n)) + i16(0)
    dec = m.FrontendDecoder(in_startup=False)
    dec.feed(typed(b"B", body))
    msg = dec.next_message()
    assert isinstance(msg, m.Bind) and len(msg.params) == n
    assert m.parameter_description([23] * n)[5:7] == struct.pack("!H", n)
    assert m.parameter_description([0xFFFFFFFF])[7:11] == b"\xff\xff\xff\xff"
