from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.x509.oid import NameOID

from simkube.env.controlplane.certs import ADMIN, CLIENT_IDENTITIES, SCHEDULER, generate_pki

pytestmark = pytest.mark.unit


def _load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_pki_has_every_file_signed_by_the_ca(tmp_path: Path) -> None:
    generate_pki(tmp_path)
    ca = _load(tmp_path / "ca.crt")
    for stem in ["apiserver", *(i.file_stem for i in CLIENT_IDENTITIES)]:
        cert = _load(tmp_path / f"{stem}.crt")
        cert.verify_directly_issued_by(ca)
        assert (tmp_path / f"{stem}.key").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "service-account.pub").read_text().startswith("-----BEGIN PUBLIC KEY")


def test_identities_carry_user_and_groups(tmp_path: Path) -> None:
    generate_pki(tmp_path)
    admin = _load(tmp_path / f"{ADMIN.file_stem}.crt").subject
    assert admin.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "simkube-admin"
    assert [a.value for a in admin.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == [
        "system:masters"]
    scheduler = _load(tmp_path / f"{SCHEDULER.file_stem}.crt").subject
    assert not scheduler.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)


def test_apiserver_cert_covers_loopback_and_service_names(tmp_path: Path) -> None:
    generate_pki(tmp_path)
    names = _load(tmp_path / "apiserver.crt").extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("127.0.0.1") in names.get_values_for_type(x509.IPAddress)
    assert "kubernetes.default.svc" in names.get_values_for_type(x509.DNSName)
