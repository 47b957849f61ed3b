"""The limits REST and MCP over HTTP share, on a real server: body size (413) and
per-key request rate (429), both counted in /metrics."""

from __future__ import annotations

import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.rest.rest_support import KeySpec, keyed_server


def http_counts(text: str) -> dict[tuple[str, str], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        if family.name == "hatiproxy_http_requests":
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    key = (sample.labels["interface"], sample.labels["status"])
                    out[key] = sample.value
    return out


def test_body_and_rate_limits(tmp_path) -> None:
    specs = {"a": KeySpec("admin"), "b": KeySpec("admin"), "metrics": KeySpec("auditor")}
    args = ("--max-request-body-bytes", "2000", "--rate-limit-per-minute", "5")
    ks = keyed_server(tmp_path, specs, *args)
    try:
        big = {"sql": "SELECT '" + "x" * 5000 + "'"}
        r = ks.request("POST", "/v1/transpile", key="a", json=big)
        assert r.status_code == 413 and r.json()["error"] == "payload_too_large"
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        rpc["params"] = {"name": "query", "arguments": {"sql": big["sql"]}}
        m = requests.post(ks.server.mcp_url, json=rpc, headers=ks.headers("a"), timeout=10)
        assert m.status_code == 413
        # On REST, key a has spent 1 of its 5 requests a minute (a 413 counts too).
        statuses = [ks.request("GET", "/v1/cot/sessions", key="a").status_code for _ in range(4)]
        assert 429 not in statuses
        limited = ks.request("GET", "/v1/cot/sessions", key="a")
        assert limited.status_code == 429 and int(limited.headers["Retry-After"]) >= 1
        assert limited.json()["error"] == "rate_limited"
        # Another key has its own budget; /health is never limited.
        assert ks.request("GET", "/v1/cot/sessions", key="b").status_code != 429
        assert all(ks.request("GET", "/health").status_code == 200 for _ in range(8))
        text = ks.request("GET", "/metrics", key="metrics").text
        counts = http_counts(text)
        assert counts[("rest", "413")] == 1 and counts[("mcp", "413")] == 1
        assert counts[("rest", "429")] == 1
    finally:
        ks.server.stop()


def test_rate_buckets_follow_the_key_not_the_header(tmp_path) -> None:
    """Valid keys are counted per key id; unknown or revoked keys per source address, so
    a client cannot buy itself fresh buckets with made-up keys (REST and MCP alike)."""
    specs = {"a": KeySpec("admin"), "b": KeySpec("admin")}
    ks = keyed_server(tmp_path, specs, "--rate-limit-per-minute", "4")
    try:
        fake = "hd_live_" + "x" * 32

        def get(auth: str | None) -> int:
            headers = {"Authorization": auth} if auth else {}
            url = ks.url + "/v1/cot/sessions"
            return requests.get(url, headers=headers, timeout=30).status_code

        # Made-up keys and keyless calls draw on one bucket: the address's.
        junk = [get(f"ApiKey {fake[:-1]}{i}") for i in range(3)] + [get(None)]
        assert junk == [401] * 4
        assert get(f"ApiKey {fake[:-1]}9") == 429 and get(None) == 429
        assert get("Bearer not-a-key-at-all") == 429
        # Each valid key keeps its own budget, under either scheme, despite the address.
        a, b = ks.secrets["a"], ks.secrets["b"]
        assert [get(f"ApiKey {a}"), get(f"Bearer {a}"), get(f"ApiKey {a}")] == [200] * 3
        assert get(f"ApiKey {a}") == 200 and get(f"ApiKey {a}") == 429
        assert get(f"Bearer {b}") == 200
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        mcp = requests.post(ks.server.mcp_url, json=rpc, headers=ks.headers("b"), timeout=30)
        assert mcp.status_code == 200  # MCP has its own limiter; b is a key there too
        # A revoked key is no longer anyone: its calls go to the (spent) address bucket,
        # although b's own bucket has a token left (4 - GET - list - DELETE).
        listed = ks.request("GET", "/v1/organizations/local/api-keys", key="b").json()
        b_id = next(k["id"] for k in listed if b.startswith(k["key_prefix"]))
        r = ks.request("DELETE", f"/v1/organizations/local/api-keys/{b_id}", key="b")
        assert r.status_code == 200
        assert get(f"ApiKey {b}") == 429
    finally:
        ks.server.stop()
