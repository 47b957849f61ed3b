"""Where a trigger webhook may not be sent (SSRF): checked at registration and at delivery.

Refused unless the host is listed in `webhook_allowed_hosts`:
- link-local addresses, 169.254.0.0/16 and fe80::/10 (cloud metadata services live at
  169.254.169.254), in any spelling: IPv4-mapped IPv6 (::ffff:169.254.169.254) and the
  legacy IPv4 forms `inet_aton` accepts (2852039166, 0xa9fea9fe) count as the address;
- the metadata service host names (metadata.google.internal, metadata, instance-data);
- this host (loopback, unspecified, the address the server listens on, and the machine's
  own addresses when it listens on all of them) together with one of this server's own
  ports (wire `port`, `mcp_port`, `rest_port`): a trigger must not drive the control plane.
Other loopback and private destinations stay allowed (local receivers are a real use).

Registration checks what the URL says without resolving names (no DNS on the event
loop, and a name's answer can change anyway). Delivery (`resolve`, on the webhook thread
pool) resolves the name, checks every address it gets, and hands back the checked
addresses so the connection goes to exactly those (see `proxy.agent.triggers.webhooks`).
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from proxy.core.config import Config

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[..., list[tuple[Any, ...]]]

METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data"})
LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain"})
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")  # "this host" to the kernel
_LEGACY_IPV4 = re.compile(r"[0-9a-fA-FxX.]+")
SETTING = "webhook_allowed_hosts (--webhook-allowed-hosts, HATIDATA_WEBHOOK_ALLOWED_HOSTS)"


class WebhookRefused(ValueError):
    """The webhook destination is one the SSRF rules refuse."""

    def __init__(self, host: str, rule: str) -> None:
        super().__init__(
            f"webhook URL refused: {host} {rule}; list the host in {SETTING} to allow it"
        )


def parse_ip(text: str) -> IPAddress | None:
    """The address a literal host means (IPv4-mapped IPv6 as IPv4), None for a name."""
    text = text.strip("[]")
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        if not _LEGACY_IPV4.fullmatch(text) or not any(c.isdigit() for c in text):
            return None
        try:  # what the resolver would make of 2852039166 or 0xa9.0xfe.0xa9.0xfe
            ip = ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _host_key(host: str) -> str:
    ip = parse_ip(host)
    return str(ip) if ip is not None else host.strip("[]").lower().rstrip(".")


@functools.lru_cache(maxsize=1)
def _machine_addresses() -> frozenset[str]:
    """This machine's own addresses as far as its host name says (best effort, cached)."""
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, proto=socket.IPPROTO_TCP)
    except OSError:
        return frozenset()
    found = (parse_ip(str(info[4][0])) for info in infos)
    return frozenset(str(ip) for ip in found if ip is not None)


@dataclass(frozen=True)
class WebhookGuard:
    own_ports: frozenset[int] = frozenset()
    allowed_hosts: frozenset[str] = frozenset()  # names lower-cased, addresses canonical
    listen_host: str = "127.0.0.1"  # where this server listens (config.host)
    resolver: Resolver = field(default=socket.getaddrinfo, compare=False)  # tests inject

    @classmethod
    def from_config(cls, config: Config, **kwargs: Any) -> WebhookGuard:
        ports = {config.port, config.mcp_port, config.rest_port} - {0}
        hosts = (h.strip() for h in config.webhook_allowed_hosts.split(","))
        allowed = frozenset(_host_key(h) for h in hosts if h)
        return cls(frozenset(ports), allowed, config.host, **kwargs)

    def allows(self, host: str) -> bool:
        return _host_key(host) in self.allowed_hosts

    def check_url(self, url: str) -> None:
        """Registration: refuse what the URL itself names (no DNS). Raises WebhookRefused."""
        host, port = _host_port(url)
        if self.allows(host):
            return
        name = host.lower().rstrip(".")
        if name in METADATA_HOSTS:
            raise WebhookRefused(host, "is a cloud metadata service host name")
        ip = parse_ip(host)
        if ip is not None:
            self.check_address(ip, port, host)
        elif (name in LOCAL_NAMES or name.endswith(".localhost")) and port in self.own_ports:
            raise WebhookRefused(f"{host}:{port}", "is this server's own port")

    def check_address(self, ip: IPAddress, port: int, shown: str | None = None) -> None:
        shown = shown or str(ip)
        if str(ip) in self.allowed_hosts:
            return
        if ip.is_link_local:
            raise WebhookRefused(
                shown, "is a link-local address (where cloud metadata services answer)"
            )
        if port in self.own_ports and self._is_this_host(ip):
            raise WebhookRefused(f"{shown} port {port}", "is this server's own port")

    def resolve(self, url: str) -> list[str] | None:
        """Delivery (blocking DNS): the checked addresses to connect to, None if allow-listed.

        Raises WebhookRefused when any address the name resolves to is refused, OSError when
        it does not resolve."""
        self.check_url(url)
        host, port = _host_port(url)
        if self.allows(host):
            return None
        infos = self.resolver(host.strip("[]"), port, type=socket.SOCK_STREAM)
        addresses: list[str] = []
        for info in infos:
            raw = str(info[4][0])
            ip = parse_ip(raw)
            if ip is None:
                continue
            self.check_address(ip, port, f"{host} ({ip})" if str(ip) != host else None)
            if raw not in addresses:
                addresses.append(raw)
        if not addresses:
            raise OSError(f"{host} resolved to no usable address")
        return addresses

    def _is_this_host(self, ip: IPAddress) -> bool:
        if ip.is_loopback or ip.is_unspecified or ip in _THIS_NETWORK:
            return True
        listen = parse_ip(self.listen_host)
        if listen is None or listen.is_unspecified:  # listening everywhere: any own address
            return str(ip) in _machine_addresses()
        return ip == listen


DEFAULT_GUARD = WebhookGuard()  # no configuration: link-local and metadata rules only


def _host_port(url: str) -> tuple[str, int]:
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.hostname or "", port


def guard_for(config: Config | None) -> WebhookGuard:
    return DEFAULT_GUARD if config is None else WebhookGuard.from_config(config)
