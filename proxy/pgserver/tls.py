"""TLS for the wire server: a configured certificate, or a self-signed one for development."""

from __future__ import annotations

import datetime
import ipaddress
import logging
import ssl
from pathlib import Path

from proxy.core.config import Config

log = logging.getLogger("hatiproxy.tls")


def _write_self_signed(cert_path: Path, key_path: Path) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hatiproxy development")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=825))
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                    x509.IPAddress(ipaddress.ip_address("::1")),
                ]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path.parent.mkdir(parents=True, exist_ok=True)
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def server_context(config: Config) -> ssl.SSLContext | None:
    """The server's SSLContext, or None when TLS is off (SSLRequest answered 'N')."""
    cert, key = config.tls_cert, config.tls_key
    if not cert and config.tls_self_signed:
        tls_dir = Path(config.data_dir) / "tls"
        cert_path, key_path = tls_dir / "server.crt", tls_dir / "server.key"
        if not cert_path.exists() or not key_path.exists():
            _write_self_signed(cert_path, key_path)
            log.warning("generated a self-signed development certificate in %s", tls_dir)
        cert, key = str(cert_path), str(key_path)
    if not cert:
        return None
    if not key:
        raise ValueError("tls_cert is set but tls_key is not")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(cert, key)
    return ctx
