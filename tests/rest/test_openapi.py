"""Schemathesis against a live server's /openapi.json: every operation that exists when
this runs, fuzzed with an admin key, with valid (positive) and invalid (negative) data.
No 5xx; every response documented (status code, content type, body schema, headers);
invalid data refused with a 4xx.

The server is dedicated to this module and its admin key is created only for it:
DELETE / revoke / rotate operations run too.

Why not `schemathesis.pytest.from_fixture` + `@schema.parametrize()`: schemathesis
4.32 sets `request.node._nodeid`, which pytest 9 no longer has (AttributeError). So
each operation gets a Hypothesis test built from `operation.as_strategy(mode)`, and
all failures are reported together.
"""

from __future__ import annotations

import zlib

import hypothesis
import pytest
import requests
import schemathesis
import schemathesis.checks
from hypothesis import HealthCheck, Phase, given
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from tests.rest.rest_support import KeySpec, keyed_server

# Per operation and mode: bounds the run (no shrinking either). The examples are
# derandomized, so every run sends the same fixed set: 10 reach each operation's valid and
# invalid inputs; 25 made this the suite's longest test (about a minute of CI).
EXAMPLES = 10
# Schema-valid but semantically refused requests are correct here (422 for a client
# content_hash that does not match its content, a webhook action without a URL, ...):
# OpenAPI cannot say those rules, so positive_data_acceptance would flag correct code.
EXCLUDED = [schemathesis.checks.positive_data_acceptance]


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    server = keyed_server(
        tmp_path_factory.mktemp("openapi"),
        {"admin": KeySpec("admin"), "bot": KeySpec("agent", agent_id="bot")},
    )
    yield server
    server.server.stop()


def test_openapi_document_lists_every_router(live):
    doc = requests.get(f"{live.url}/openapi.json", timeout=30).json()
    paths = set(doc["paths"])
    for path in (
        "/v1/cot/ingest",
        "/v1/cot/sessions/{session_id}/verify",
        "/v1/cot/approvals",
        "/v1/organizations/{org_id}/agent-keys",
        "/v1/organizations/{org_id}/api-keys/{key_id}/rotate",
    ):
        assert path in paths, path


def _own_org(case) -> None:
    # Paths name the caller's own org most of the time, so the handlers run, not only 404.
    params = case.path_parameters or {}
    if "org_id" in params and zlib.crc32(repr(params).encode()) % 4:
        params["org_id"] = "local"


def test_every_operation_conforms(live):
    schema = schemathesis.openapi.from_url(f"{live.url}/openapi.json", timeout=30)
    headers = live.headers("admin")
    failures: list[str] = []
    operations = [r.ok() for r in schema.get_all_operations()]
    assert len(operations) >= 10
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @hypothesis.settings(
                max_examples=EXAMPLES,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                derandomize=True,
                database=None,
                phases=[Phase.explicit, Phase.generate],  # no shrinking: bounded time
            )
            def run(case) -> None:
                _own_org(case)
                case.call_and_validate(
                    base_url=live.url, headers=headers, excluded_checks=EXCLUDED, timeout=30
                )

            try:
                run()
            except Unsatisfiable:
                # Negative mode for an operation whose every input is valid (no body, only
                # free-text parameters): there is nothing invalid to send.
                if mode is not GenerationMode.NEGATIVE:
                    raise
            except (Exception, BaseExceptionGroup) as exc:  # all failures reported below
                failures.append(f"{operation.label} [{mode.value}]: {exc}")
    assert not failures, f"{len(failures)} failing operation(s):\n\n" + "\n\n".join(failures)
