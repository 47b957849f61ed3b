"""pgvector's `vector` on the wire: FLOAT[n] results in text ('[0.1,-2]') and binary
(vector_send), differential against PostgreSQL 15's float4 output (pgvector's vector_out
prints each element with the same shortest float4 routine as float4out; vector_send
is int16 dim, int16 0, then the float4s as float4send writes them), and through a real
server. FLOAT[] lists stay float4[]."""

from __future__ import annotations

import struct

import psycopg
import pytest

from proxy.wire.types import param_decoder, pg_type_for, result_encoder
from tests.wire.test_types_pg import _RawBinary, _RawText, pg, pg_raw  # noqa: F401

VECTORS = [
    ["0.1", "-2.5", "1e-8", "3.4e38", "-3.4e38", "0", "-0"],
    ["1.17549435e-38", "1e-45", "123456.7", "1234567", "16777216", "0.333333333"],
    ["-1", "1e6", "999999.9", "1e-5", "0.0001", "12345.678", "-7.5e-21"],
]


@pytest.mark.parametrize("elems", VECTORS, ids=lambda v: ",".join(v)[:40])
def test_text_and_binary_match_postgres_float4(pg: str, elems: list[str]) -> None:  # noqa: F811
    literal = "ARRAY[" + ",".join(f"'{e}'::float4" for e in elems) + "]::float4[]"
    ((oid, pg_text, pg_bin),) = pg_raw(pg, [literal])
    assert oid == 1021
    values = [struct.unpack(">f", struct.pack(">f", float(e)))[0] for e in elems]
    dtype = f"FLOAT[{len(values)}]"
    assert (pg_type_for(dtype).oid, pg_type_for(dtype).typmod) == (16400, len(values))
    # text: the same elements float4out prints, in pgvector's brackets
    assert result_encoder(dtype, 0)(values) == b"[" + pg_text[1:-1] + b"]"
    # binary: float4send's bytes of each element after the vector_send header
    body = b"".join(pg_bin[24 + 8 * i : 24 + 8 * i + 4] for i in range(len(values)))
    assert result_encoder(dtype, 1)(values) == struct.pack(">hh", len(values), 0) + body


def test_binary_vector_parameters() -> None:
    """vector_recv: a binary parameter binds like its text form; pgvector's refusals."""
    send = result_encoder("FLOAT[3]", 1)
    assert param_decoder(16400, 1)(send([0.5, -2.0, 3.0])) == "[0.5,-2.0,3.0]"
    nan = struct.pack(">hhfff", 3, 0, 1.0, float("nan"), 2.0)
    with pytest.raises(ValueError, match="NaN not allowed in vector") as e:
        param_decoder(16400, 1)(nan)
    assert e.value.sqlstate == "22000"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="incorrect binary data format") as e:
        param_decoder(16400, 1)(struct.pack(">hhf", 2, 0, 1.0))  # says 2, carries 1
    assert e.value.sqlstate == "22P03"  # type: ignore[attr-defined]


def test_vectors_through_the_server(server) -> None:  # noqa: ANN001
    with psycopg.connect(server.dsn, autocommit=True) as conn:
        conn.adapters.register_loader(16400, _RawText)
        conn.adapters.register_loader(16400, _RawBinary)
        sql = (
            "SELECT [0.1, -2.5, 1e-8, 3.4e38]::FLOAT[4] AS v, "
            "['nan'::FLOAT, 1]::FLOAT[2] AS n, [0.5, 2]::FLOAT[] AS l"
        )
        for binary in (False, True):
            cur = conn.cursor(binary=binary)
            v, n, lst = cur.execute(sql).fetchone()
            assert [d.type_code for d in cur.description] == [16400, 16400, 1021]
            if binary:
                assert v == struct.pack(">hhffff", 4, 0, 0.1, -2.5, 1e-8, 3.4e38)
                assert n[:4] == b"\x00\x02\x00\x00" and len(n) == 12  # NaN: sent, not a crash
            else:
                assert v == b"[0.1,-2.5,1e-08,3.4e+38]"
                assert n == b"[NaN,1]"
            assert lst == [0.5, 2.0]
