"""API keys shared by the proxies of one DuckLake (issue 25): a key created through one
proxy authenticates on another within seconds, a key revoked through one is refused by
the others within seconds, and key writes made on two proxies at once are both kept.

The shared cluster's proxies run with `--auth-method trust` (tests/lake/conftest.py), so
a keyless HTTP caller may manage keys, and a presented key is still checked."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import psycopg
import requests

from tests.conftest import ServerProcess

ORG = "local"
DEADLINE = 20.0  # seconds; the poll interval is 250 ms, a loaded CI machine is slow


def _whoami(p: ServerProcess, secret: str) -> requests.Response:
    return requests.get(
        p.rest_url + "/v1/whoami", headers={"Authorization": f"ApiKey {secret}"}, timeout=30
    )


def _create(p: ServerProcess, name: str) -> dict:
    r = requests.post(
        f"{p.rest_url}/v1/organizations/{ORG}/api-keys",
        json={"name": name, "role": "analyst"},
        timeout=60,
    )
    assert r.status_code == 201, r.text
    return r.json()


def _until(check, what: str) -> float:
    """Poll `check()` until true; the seconds it took (fails after DEADLINE)."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < DEADLINE, f"{what} not within {DEADLINE} s"
    return time.monotonic() - start


def test_a_key_created_on_one_proxy_works_on_another_and_revoked_on_one_is_refused_on_all(
    proxies: list[ServerProcess],
) -> None:
    a, b, c = proxies
    made = _create(a, f"k-{uuid.uuid4().hex[:8]}")
    secret, key_id = made["raw_key"], made["key_id"]
    _until(lambda: _whoami(b, secret).status_code == 200, "the new key on B")
    me = _whoami(b, secret).json()
    assert me["org_id"] == ORG and me["role"] == "analyst"
    assert _whoami(c, secret).status_code == 200  # C has it (and caches it) too

    # revoked through B, a proxy that did not create it
    r = requests.delete(f"{b.rest_url}/v1/organizations/{ORG}/api-keys/{key_id}", timeout=60)
    assert r.status_code == 200, r.text
    assert _whoami(b, secret).status_code == 401  # at once where it was revoked
    _until(lambda: _whoami(c, secret).status_code == 401, "the revocation on C")
    _until(lambda: _whoami(a, secret).status_code == 401, "the revocation on A")
    refused = _whoami(c, secret)
    assert "revoked" in refused.json()["message"]
    # and C's key listing says so too
    listed = requests.get(f"{c.rest_url}/v1/organizations/{ORG}/api-keys", timeout=60).json()
    assert {k["key_id"]: k["status"] for k in listed}[key_id] == "revoked"


def test_keys_created_on_two_proxies_at_once_are_both_kept(
    proxies: list[ServerProcess],
) -> None:
    a, b, c = proxies
    tag = uuid.uuid4().hex[:8]
    with ThreadPoolExecutor(2) as pool:  # both publish at once: one retries after 40001
        made = list(pool.map(lambda p: _create(p[1], f"both-{tag}-{p[0]}"), enumerate((a, b))))
    for m in made:
        _until(lambda m=m: _whoami(c, m["raw_key"]).status_code == 200, "both keys on C")

    def names() -> set[str]:
        r = requests.get(f"{c.rest_url}/v1/organizations/{ORG}/api-keys", timeout=60)
        return {k["name"] for k in r.json() if k["name"].startswith(f"both-{tag}")}

    _until(lambda: names() == {f"both-{tag}-0", f"both-{tag}-1"}, "both keys listed on C")


def test_a_memory_superseded_through_one_proxy_is_retired_on_another(
    proxies: list[ServerProcess],
) -> None:
    a, b, _ = proxies
    tag = uuid.uuid4().hex[:8]
    old_text, new_text = f"the {tag} office is in Lisbon", f"the {tag} office moved to Porto"
    with (
        psycopg.connect(a.dsn, autocommit=True) as ca,
        psycopg.connect(b.dsn, autocommit=True) as cb,
    ):
        store = "SELECT memory_id::VARCHAR FROM store_memory(%s, wait := true"
        (old,) = ca.execute(store + ")", (old_text,)).fetchone()
        get = "SELECT conflict_status, superseded_by_id::VARCHAR FROM get_memory(%s)"

        def on_b() -> tuple | None:
            try:
                return cb.execute(get, (old,)).fetchone()
            except psycopg.Error:  # not applied on B yet
                return None

        _until(lambda: on_b() == ("none", None), "the memory on B")
        (new,) = ca.execute(store + ", supersedes := %s)", (new_text, old)).fetchone()
        took = _until(lambda: on_b() == ("superseded", new), "the supersede on B")
        # B's search index follows: the retired memory is no longer found there
        found = [r[0] for r in cb.execute(
            "SELECT content FROM search_memory(%s, top_k := 5)", (f"{tag} office",)
        ).fetchall()]  # fmt: skip
        assert old_text not in found, (found, took)
