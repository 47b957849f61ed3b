"""Webhook SSRF guard: registration and delivery refuse link-local / metadata destinations and
this server's own ports; the allow-list lets them through; local receivers keep working."""

from __future__ import annotations

import asyncio
import http.server
import json
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from proxy.agent.layer import AgentLayer
from proxy.agent.triggers import webhooks
from proxy.agent.triggers.args import check_actions
from proxy.agent.triggers.webhook_guard import WebhookGuard, WebhookRefused, parse_ip
from proxy.core.errors import AgentError
from proxy.core.identity import Identity
from tests.agent.agent_support import open_layer, run, who
from tests.conftest import free_port, free_ports

METADATA_URLS = [
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:a9fe:a9fe]/latest",
    "http://2852039166/",  # 169.254.169.254 as one decimal number
    "http://0xa9.0xfe.0xa9.0xfe/",
    "http://[fe80::1]:8000/hook",
    "https://169.254.10.20/hook",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA/",
    "http://instance-data./latest",
]


class Receiver:
    """A local HTTP endpoint on a thread that keeps what it was sent."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], dict]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.requests.append((dict(self.headers), json.loads(body)))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


async def call(layer: AgentLayer, fn: str, ident: Identity, /, **kwargs: Any) -> list[dict]:
    return await layer.registry.get(fn).call(layer, ident, [], kwargs)


async def register_webhook(layer: AgentLayer, url: str, name: str = "hook") -> dict:
    rows = await call(
        layer, "register_trigger", who(), name=name, concept="alert",
        action_type="webhook", action_config={"url": url},
    )  # fmt: skip
    return rows[0]


def refused(url: str, settings: Any) -> str:
    """The AgentError message check_actions gives for url under these settings."""
    with pytest.raises(AgentError) as err:
        check_actions(["webhook"], {"url": url}, settings)
    assert err.value.code == "invalid_argument"
    return err.value.message


# ---- registration ----------------------------------------------------------------------


def test_registration_refuses_metadata_and_link_local(tmp_path: Path) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            for url in METADATA_URLS:
                with pytest.raises(AgentError) as err:
                    await register_webhook(layer, url)
                message = err.value.message
                assert err.value.code == "invalid_argument", url
                assert "link-local" in message or "metadata" in message, message
                assert "webhook_allowed_hosts" in message, message
            assert await call(layer, "list_triggers", who(), status=None) == []

            ok = await register_webhook(layer, "http://10.1.2.3:9000/hook", "private")
            with pytest.raises(AgentError, match="link-local"):
                await call(
                    layer, "update_trigger", who(), trigger_id=ok["trigger_id"],
                    action_config={"url": "http://169.254.169.254/"},
                )  # fmt: skip
            (row,) = await call(layer, "list_triggers", who(), status=None)
            assert row["action_config"]["url"] == "http://10.1.2.3:9000/hook"

    run(go())


def test_own_ports_are_refused_under_the_server_config(tmp_path: Path) -> None:
    wire, mcp, rest, other = free_ports(4)

    async def go() -> None:
        async with open_layer(tmp_path, port=wire, mcp_port=mcp, rest_port=rest) as layer:
            settings = layer.config
            for url in [
                f"http://127.0.0.1:{rest}/v1/keys",
                f"http://localhost:{mcp}/mcp",
                f"http://127.9.9.9:{wire}/",
                f"http://[::1]:{rest}/v1/triggers",
                f"http://0.0.0.0:{mcp}/mcp",
                f"http://[::ffff:127.0.0.1]:{rest}/v1/keys",
                f"http://api.localhost:{rest}/v1/keys",
                f"http://2130706433:{rest}/",  # 127.0.0.1
            ]:
                message = refused(url, settings)
                assert "this server's own port" in message and "webhook_allowed_hosts" in message
            # Loopback on other ports, and private addresses, stay allowed.
            for url in [
                f"http://127.0.0.1:{other}/hook",
                f"http://localhost:{other}/hook",
                f"http://10.0.0.8:{rest}/hook",
                "http://192.168.1.20/hook",
                "https://hooks.example.com/x",
            ]:
                check_actions(["webhook"], {"url": url}, settings)
            # Without the server's config only the port-independent rules hold.
            check_actions(["webhook"], {"url": f"http://127.0.0.1:{rest}/v1/keys"})
            assert "link-local" in refused("http://169.254.169.254/", None)

    run(go())


def test_the_allow_list_lets_listed_hosts_through(tmp_path: Path) -> None:
    rest = free_port()
    allowed = "169.254.169.254, Metadata.Google.Internal, [fe80::1], localhost"

    async def go() -> None:
        async with open_layer(tmp_path, rest_port=rest, webhook_allowed_hosts=allowed) as layer:
            settings = layer.config
            for url in [
                "http://169.254.169.254/latest/meta-data/",
                "http://[::ffff:169.254.169.254]/",  # the same address, spelled otherwise
                "http://metadata.google.internal/computeMetadata/v1/",
                "http://[fe80::1]/hook",
                f"http://localhost:{rest}/v1/keys",
            ]:
                check_actions(["webhook"], {"url": url}, settings)
            assert "link-local" in refused("http://169.254.1.1/", settings)
            assert "own port" in refused(f"http://127.0.0.1:{rest}/v1/keys", settings)
            assert "metadata" in refused("http://instance-data/", settings)

    run(go())


def test_guard_reads_the_config() -> None:
    from proxy.core import config

    cfg = config.load(None, {"HATIDATA_WEBHOOK_ALLOWED_HOSTS": "a.example, ,10.0.0.1"})
    guard = WebhookGuard.from_config(cfg)
    assert guard.own_ports == {cfg.port, cfg.mcp_port, cfg.rest_port}
    assert guard.allowed_hosts == {"a.example", "10.0.0.1"}
    off = config.load(None, {"HATIDATA_MCP_PORT": "0", "HATIDATA_REST_PORT": "0"})
    assert WebhookGuard.from_config(off).own_ports == {off.port}
    assert str(parse_ip("::ffff:169.254.169.254")) == "169.254.169.254"
    assert parse_ip("hooks.example.com") is None and parse_ip("cafe") is None


# ---- delivery --------------------------------------------------------------------------


def test_loopback_receiver_still_gets_deliveries(tmp_path: Path, receiver: Receiver) -> None:
    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            t = await register_webhook(layer, receiver.url)
            layer.triggers.notify(who(), "memory", "m1", "alert", None)
            await layer.triggers.drain()
            (fire,) = await call(layer, "trigger_fires", who(), trigger_id=t["trigger_id"])
            assert fire["status"] == "delivered"
            assert receiver.requests[-1][1]["event"] == "trigger.fired"

    run(go())


def test_delivery_refuses_a_stored_link_local_url(tmp_path: Path, receiver: Receiver) -> None:
    """A trigger stored before the guard existed is still refused when it fires."""

    async def go() -> None:
        async with open_layer(tmp_path) as layer:
            layer.triggers.webhook_backoff_secs = 0.01
            t = await register_webhook(layer, receiver.url)
            stored = json.dumps(
                {"url": "http://[::ffff:169.254.169.254]/latest", "max_attempts": 3}
            )
            layer.db.run_sync(
                lambda cur: cur.execute(
                    "UPDATE hatidata_internal.triggers SET action_config = ? WHERE id = ?",
                    [stored, t["trigger_id"]],
                )
            )
            layer.triggers.notify(who(), "memory", "m1", "alert", None)
            await layer.triggers.drain()
            (fire,) = await call(layer, "trigger_fires", who(), trigger_id=t["trigger_id"])
            assert fire["status"] == "failed"
            assert fire["details"]["webhook"]["attempts"] == 1  # refused is final: no retries
            assert "link-local" in fire["details"]["webhook"]["error"]
            (attempt,) = layer.db.run_sync(
                lambda cur: cur.execute(
                    "SELECT attempt, ok, status_code, error FROM "
                    "hatidata_internal.webhook_deliveries"
                ).fetchall()
            )
            assert attempt[:3] == (1, False, None) and "refused" in attempt[3]
            assert receiver.requests == []

    run(go())


class FixedDNS:
    """Stands in for DNS answers a test cannot set up (the system resolver is not mocked
    for anything else: getaddrinfo is the guard's one injected dependency)."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def __call__(self, host: str, port: int, **kwargs: Any) -> list[tuple[Any, ...]]:
        self.asked.append(host)
        family = {4: socket.AF_INET, 6: socket.AF_INET6}
        return [
            (family[parse_ip(ip).version], socket.SOCK_STREAM, 6, "", (ip, port))  # type: ignore[union-attr]
            for ip in self.answers[host]
        ]


def deliver(url: str, guard: WebhookGuard) -> list[webhooks.Attempt]:
    recorded: list[webhooks.Attempt] = []

    async def record(attempt: webhooks.Attempt) -> None:
        recorded.append(attempt)

    async def go() -> list[webhooks.Attempt]:
        cfg = webhooks.parse_config({"url": url, "max_attempts": 3, "timeout_secs": 5})
        with ThreadPoolExecutor(1) as pool:
            return await webhooks.deliver(
                cfg, {"event": "x"}, executor=pool, backoff=0.01, record=record, guard=guard
            )

    attempts = asyncio.run(go())
    assert attempts == recorded
    return attempts


def test_delivery_checks_what_the_name_resolves_to_now(tmp_path: Path, receiver: Receiver) -> None:
    rest = free_port()

    async def settings() -> Any:
        async with open_layer(tmp_path, rest_port=rest) as layer:
            return layer.config

    cfg = run(settings())
    dns = FixedDNS(
        {
            "rebound.example": ["203.0.113.9", "169.254.169.254"],
            "control.example": ["127.0.0.1"],
            "hook.invalid": ["127.0.0.1"],
        }
    )
    guard = WebhookGuard.from_config(cfg, resolver=dns)
    # Registration passes (names are not resolved then); delivery resolves and refuses.
    for name, rule in (("rebound.example", "link-local"), (f"control.example:{rest}", "own port")):
        url = f"http://{name}/hook"
        guard.check_url(url)
        (attempt,) = deliver(url, guard)  # refused is final: one attempt
        assert not attempt.ok and not attempt.retryable and attempt.status_code is None
        assert rule in (attempt.error or "") and name.split(":")[0] in (attempt.error or "")

    # The connection goes to the address that was checked: `.invalid` never resolves for
    # real, so reaching the receiver proves no second lookup happened.
    (attempt,) = deliver(f"http://hook.invalid:{receiver.port}/hook", guard)
    assert attempt.ok and attempt.status_code == 200
    headers, body = receiver.requests[-1]
    assert headers["Host"] == f"hook.invalid:{receiver.port}" and body == {"event": "x"}

    # An unresolvable name is an ordinary, retried failure.
    attempts = deliver("http://nothing-here.invalid/hook", WebhookGuard())
    assert len(attempts) == 3 and all(a.retryable and not a.ok for a in attempts)


def test_delivery_to_this_hosts_name_on_an_own_port_is_refused(receiver: Receiver) -> None:
    """Real resolution: the machine's host name resolves to one of its own addresses."""
    name = socket.gethostname()
    guard = WebhookGuard(own_ports=frozenset({receiver.port}), listen_host="0.0.0.0")
    (attempt,) = deliver(f"http://{name}:{receiver.port}/hook", guard)
    assert not attempt.ok and not attempt.retryable and "own port" in (attempt.error or "")
    assert receiver.requests == []
    allowed = WebhookGuard(frozenset({receiver.port}), frozenset({name.lower()}), "0.0.0.0")
    with pytest.raises(WebhookRefused):
        guard.check_address(parse_ip("127.0.0.1"), receiver.port)  # type: ignore[arg-type]
    allowed.check_url(f"http://{name}:{receiver.port}/hook")


def _self_signed(directory: Path, dns_name: str) -> tuple[Path, Path]:
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns_name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(dns_name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_https_is_pinned_and_still_verifies_the_name(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ssl

    cert, key = _self_signed(tmp_path, "hook.invalid")
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    receiver.server.socket = tls.wrap_socket(receiver.server.socket, server_side=True)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts this one certificate
    dns = FixedDNS({"hook.invalid": ["127.0.0.1"], "other.invalid": ["127.0.0.1"]})
    guard = WebhookGuard(resolver=dns)

    (attempt,) = deliver(f"https://hook.invalid:{receiver.port}/hook", guard)
    assert attempt.ok, attempt.error  # SNI and the certificate check used the name
    assert receiver.requests[-1][0]["Host"] == f"hook.invalid:{receiver.port}"
    # Same address, other name: the certificate does not match it, so nothing is sent.
    attempts = deliver(f"https://other.invalid:{receiver.port}/hook", guard)
    assert not attempts[-1].ok and "CERTIFICATE_VERIFY_FAILED" in (attempts[-1].error or "")
    assert len(receiver.requests) == 1


# ---- through register_trigger / delivery once the layer passes its config ---------------


def test_layer_registration_uses_the_server_config(tmp_path: Path) -> None:
    mcp, rest = free_ports(2)

    async def go() -> None:
        async with open_layer(tmp_path, mcp_port=mcp, rest_port=rest) as layer:
            for url in (f"http://127.0.0.1:{rest}/v1/triggers", f"http://localhost:{mcp}/mcp"):
                with pytest.raises(AgentError, match="own port.*webhook_allowed_hosts"):
                    await register_webhook(layer, url)
        async with open_layer(
            tmp_path, rest_port=rest,
            webhook_allowed_hosts="169.254.169.254,metadata.google.internal,127.0.0.1",
        ) as layer:  # fmt: skip
            for i, url in enumerate(
                [
                    "http://169.254.169.254/latest/meta-data/",
                    "http://[::ffff:169.254.169.254]/",
                    "http://metadata.google.internal/computeMetadata/v1/",
                    f"http://127.0.0.1:{rest}/v1/triggers",
                ]
            ):
                await register_webhook(layer, url, f"allowed-{i}")

    run(go())


def test_layer_delivery_refuses_a_stored_own_port_url(tmp_path: Path) -> None:
    rest = free_port()

    async def go() -> None:
        async with open_layer(tmp_path, rest_port=rest) as layer:
            t = await register_webhook(layer, f"http://127.0.0.1:{free_port()}/hook")
            stored = json.dumps({"url": f"http://{socket.gethostname()}:{rest}/v1/keys"})
            layer.db.run_sync(
                lambda cur: cur.execute(
                    "UPDATE hatidata_internal.triggers SET action_config = ? WHERE id = ?",
                    [stored, t["trigger_id"]],
                )
            )
            layer.triggers.notify(who(), "memory", "m1", "alert", None)
            await layer.triggers.drain()
            (fire,) = await call(layer, "trigger_fires", who(), trigger_id=t["trigger_id"])
            assert fire["status"] == "failed" and fire["details"]["webhook"]["attempts"] == 1
            assert "own port" in fire["details"]["webhook"]["error"]

    run(go())
