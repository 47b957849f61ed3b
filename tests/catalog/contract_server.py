"""Test-only launcher: the real server, with missing_rewrites.py around transpile().

``python tests/catalog/contract_server.py serve --port N ...`` shows end to end what
clients get once the transpiler does R1-R6: test_clients_e2e.py runs every client
case against it and expects all of them to pass.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).parent))

import missing_rewrites as mr  # noqa: E402

import proxy.session  # noqa: E402
from proxy.cli import main  # noqa: E402
from transpiler import Statement, transpile  # noqa: E402


def transpile_with_missing_rewrites(sql: str, **kwargs: object) -> tuple[Statement, ...]:
    before = mr.r5_array_literal(mr.r4_srf_alias(mr.r3_oid_array(mr.r1_strip_pg_catalog(sql))))
    out = []
    for st in transpile(before, **kwargs):
        fixed = mr.r6_reg_oid(mr.r2_information_schema(st.sql))
        out.append(dataclasses.replace(st, sql=fixed) if fixed != st.sql else st)
    return tuple(out)


if __name__ == "__main__":
    proxy.session.transpile = transpile_with_missing_rewrites  # type: ignore[assignment]
    sys.exit(main())
