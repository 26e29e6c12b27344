"""A private PKI for one environment: a CA, the API server's serving cert, client identities.

The aggregation layer (metrics-server's ``metrics.k8s.io``) gets what Kubernetes expects of it:
a second CA for the front proxy, whose one client certificate the API server presents when it
forwards a request (``front-proxy-client``, the only name ``--requestheader-allowed-names``
lets assert a user), and a serving certificate for metrics-server under the name the
aggregator dials it by (``metrics-server.kube-system.svc``), signed by the environment's CA.

ECDSA P-256 keys keep generation to milliseconds, so every ``env up`` starts from fresh keys
and nothing secret outlives ``env down``. Components authenticate with client certificates:
the CN is the user name and the O entries are its groups, as Kubernetes reads them.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = dt.timedelta(days=365)
SERVICE_IP = "10.96.0.1"
API_SERVER_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                    "kubernetes.default.svc.cluster.local")


@dataclass(frozen=True, kw_only=True)
class Identity:
    """A client certificate's subject: ``user`` becomes CN, ``groups`` become O entries."""

    file_stem: str
    user: str
    groups: tuple[str, ...] = ()


ADMIN = Identity(file_stem="admin", user="simkube-admin", groups=("system:masters",))
# The controller manager runs every controller under its own identity instead of one service
# account per controller: fewer moving parts and no token requests at start-up.
CONTROLLER_MANAGER = Identity(file_stem="controller-manager",
                              user="system:kube-controller-manager", groups=("system:masters",))
SCHEDULER = Identity(file_stem="scheduler", user="system:kube-scheduler")
KWOK = Identity(file_stem="kwok", user="simkube-kwok", groups=("system:masters",))
# Lists nodes and pods, reads the aggregation configmap and delegates authn/authz reviews.
METRICS_SERVER = Identity(file_stem="metrics-server", user="system:metrics-server",
                          groups=("system:masters",))
CLIENT_IDENTITIES = (ADMIN, CONTROLLER_MANAGER, SCHEDULER, KWOK, METRICS_SERVER)
FRONT_PROXY_CLIENT = "front-proxy-client"
METRICS_SERVER_NAMES = ("metrics-server.kube-system.svc", "localhost")


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)


def _write_cert(cert: x509.Certificate, path: Path) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _builder(subject: x509.Name, issuer: x509.Name,
             key: ec.EllipticCurvePrivateKey) -> x509.CertificateBuilder:
    now = dt.datetime.now(dt.UTC)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + VALIDITY))


def _leaf(*, subject: x509.Name, ca_key: ec.EllipticCurvePrivateKey, ca_name: x509.Name,
          usage: x509.ObjectIdentifier,
          names: x509.SubjectAlternativeName | None = None) -> tuple[x509.Certificate,
                                                                     ec.EllipticCurvePrivateKey]:
    key = _new_key()
    builder = (_builder(subject, ca_name, key)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
    if names is not None:
        builder = builder.add_extension(names, critical=False)
    return builder.sign(ca_key, hashes.SHA256()), key


def _new_ca(directory: Path, stem: str, *,
            common_name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Name]:
    key = _new_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (_builder(name, name, key)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                         crl_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    _write_cert(cert, directory / f"{stem}.crt")
    _write_key(key, directory / f"{stem}.key")
    return key, name


def _aggregation(directory: Path, *, ca_key: ec.EllipticCurvePrivateKey,
                 ca_name: x509.Name) -> None:
    """The front proxy's CA and client certificate, and metrics-server's serving cert."""
    proxy_key, proxy_name = _new_ca(directory, "front-proxy-ca",
                                    common_name="simkube-front-proxy-ca")
    cert, key = _leaf(subject=x509.Name([x509.NameAttribute(NameOID.COMMON_NAME,
                                                            FRONT_PROXY_CLIENT)]),
                      ca_key=proxy_key, ca_name=proxy_name, usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    _write_cert(cert, directory / f"{FRONT_PROXY_CLIENT}.crt")
    _write_key(key, directory / f"{FRONT_PROXY_CLIENT}.key")
    names = x509.SubjectAlternativeName([x509.DNSName(n) for n in METRICS_SERVER_NAMES]
                                        + [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    cert, key = _leaf(subject=x509.Name([x509.NameAttribute(NameOID.COMMON_NAME,
                                                            "metrics-server")]),
                      ca_key=ca_key, ca_name=ca_name, usage=ExtendedKeyUsageOID.SERVER_AUTH,
                      names=names)
    _write_cert(cert, directory / "metrics-server-serving.crt")
    _write_key(key, directory / "metrics-server-serving.key")


def generate_pki(directory: Path) -> None:
    """Write ca, apiserver, service-account, every client identity's files and the
    aggregation layer's (front proxy, metrics-server's serving cert)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key, ca_name = _new_ca(directory, "ca", common_name="simkube-local-ca")

    names = x509.SubjectAlternativeName(
        [x509.DNSName(n) for n in API_SERVER_NAMES]
        + [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ("127.0.0.1", SERVICE_IP)]
    )
    serving, serving_key = _leaf(
        subject=x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")]),
        ca_key=ca_key, ca_name=ca_name, usage=ExtendedKeyUsageOID.SERVER_AUTH, names=names)
    _write_cert(serving, directory / "apiserver.crt")
    _write_key(serving_key, directory / "apiserver.key")

    for identity in CLIENT_IDENTITIES:
        attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in identity.groups]
        attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, identity.user))
        cert, key = _leaf(subject=x509.Name(attributes), ca_key=ca_key, ca_name=ca_name,
                          usage=ExtendedKeyUsageOID.CLIENT_AUTH)
        _write_cert(cert, directory / f"{identity.file_stem}.crt")
        _write_key(key, directory / f"{identity.file_stem}.key")

    _aggregation(directory, ca_key=ca_key, ca_name=ca_name)
    signing_key = _new_key()
    _write_key(signing_key, directory / "service-account.key")
    (directory / "service-account.pub").write_bytes(signing_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
