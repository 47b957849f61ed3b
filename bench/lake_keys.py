"""How long an API key created or revoked through one proxy takes to take effect on the
others (issue 25: "within seconds"), over a real PostgreSQL 15 catalog with three
hatiproxy processes. Baseline in the same run: the same revocation seen on the proxy that
made it (at once: its own cache is dropped).

    PYTHONPATH=. nice -n 5 .venv/bin/python bench/lake_keys.py [ROUNDS]
"""

from __future__ import annotations

import statistics
import sys
import time

import requests
from lake_cluster import LakeCluster, until

from tests.conftest import ServerProcess


def _ok(p: ServerProcess, secret: str) -> bool:
    r = requests.get(
        p.rest_url + "/v1/whoami", headers={"Authorization": f"ApiKey {secret}"}, timeout=60
    )
    return r.status_code == 200


def main(rounds: int) -> None:
    args = ("--embedding-provider", "hash", "--auth-method", "trust")
    with LakeCluster("bench-lake-keys", *args) as lake:
        a, b, c = (lake.start() for _ in range(3))
        created, local, remote = [], [], []
        for i in range(rounds):
            r = requests.post(
                f"{a.rest_url}/v1/organizations/local/api-keys",
                json={"name": f"bench-{i}", "role": "analyst"},
                timeout=60,
            )
            made = r.json()
            secret, key_id = made["raw_key"], made["key_id"]
            created.append(until(lambda s=secret: _ok(b, s)))
            assert _ok(c, secret)  # cached on C before the revocation
            requests.delete(
                f"{b.rest_url}/v1/organizations/local/api-keys/{key_id}", timeout=60
            ).raise_for_status()
            t0 = time.monotonic()
            local.append(until(lambda s=secret: not _ok(b, s)))
            until(lambda s=secret: not _ok(c, s))
            remote.append(time.monotonic() - t0)  # from the revocation's return
            print(f"round {i}: create->B {created[-1]:.3f} s, revoke->C {remote[-1]:.3f} s")

        def fig(xs: list[float]) -> str:
            return f"p50 {statistics.median(xs):.3f} s, max {max(xs):.3f} s"

        print(f"created on A, first login on B:        {fig(created)}")
        print(f"revoked on B, refused on B (baseline): {fig(local)}")
        print(f"revoked on B, refused on C:            {fig(remote)}")
        ratio = statistics.median(remote) / max(statistics.median(local), 1e-3)
        print(f"ratio C / B (p50): {ratio:.1f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
