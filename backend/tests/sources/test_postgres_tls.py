"""TLS to a PostgreSQL source, against a throwaway cluster of this machine's PostgreSQL
started with ssl=on and a certificate for `localhost` signed by a CA made here (in a
temporary folder, on a free port, stopped and removed after; as root the cluster runs as
the postgres user, since PostgreSQL refuses root). The CA is trusted through
SSL_CERT_FILE, which the verifying modes read instead of the system's CAs."""

from __future__ import annotations

import datetime
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from app.sources.querying import QueryFailed
from tests.sources.engine import collect, connection, run
from tests.support.services import free_port

ENCRYPTED = "SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()"


@dataclass(frozen=True)
class TlsServer:
    port: int
    ca: Path  # the CA that signed the server's certificate (for `localhost` only)
    other_ca: Path  # a CA that signed nothing of this server's

    def url(self, host: str, mode: str) -> str:
        return f"postgresql://tester@{host}:{self.port}/postgres?sslmode={mode}"


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _certificate(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None = None,
) -> x509.Certificate:
    """A CA's own certificate (no issuer), or a server's for `localhost` signed by one."""
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    signer = issuer[1] if issuer else key
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer[0].subject if issuer else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()), False
        )
    )
    if issuer is None:
        builder = builder.add_extension(
            x509.BasicConstraints(ca=True, path_length=None), critical=True
        ).add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), True
        )
    else:
        builder = (
            builder.add_extension(x509.BasicConstraints(ca=False, path_length=None), True)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        )
    return builder.sign(signer, hashes.SHA256())


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def _bin(tool: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{tool}"))
    if not found:
        pytest.fail(f"PostgreSQL's {tool} is needed (apt-get install postgresql)", pytrace=False)
    return found[-1]


def _as_postgres() -> tuple[list[str], int | None]:
    """How to run PostgreSQL's programs (as the postgres user when this is root), and the
    user id that must then own its files."""
    if os.geteuid() != 0:
        return [], None
    return ["runuser", "-u", "postgres", "--"], pwd.getpwnam("postgres").pw_uid


@pytest.fixture(scope="module")
def tls_server() -> Iterator[TlsServer]:
    folder = Path(tempfile.mkdtemp(prefix="wb-pg-tls-"))
    prefix, uid = _as_postgres()
    data = folder / "data"
    ca_key, server_key, other_key = _key(), _key(), _key()
    ca = _certificate("Workbench test CA", ca_key)
    (folder / "ca.pem").write_bytes(_pem(ca))
    (folder / "other-ca.pem").write_bytes(_pem(_certificate("Someone else's CA", other_key)))
    (folder / "server.crt").write_bytes(_pem(_certificate("localhost", server_key, (ca, ca_key))))
    (folder / "server.key").write_bytes(
        server_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    (folder / "server.key").chmod(0o600)
    if uid is not None:
        for path in (folder, folder / "server.crt", folder / "server.key"):
            os.chown(path, uid, -1)
    port = free_port()
    subprocess.run(
        [*prefix, _bin("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"],
        check=True,
        capture_output=True,
    )
    # Over TCP only encrypted logins, and only for tester: a role with no line at all
    # (stranger) is refused by pg_hba.conf whether TLS is used or not.
    (data / "pg_hba.conf").write_text(
        "local all all trust\n"
        "hostssl all tester 127.0.0.1/32 trust\n"
        "hostssl all tester ::1/128 trust\n"
    )
    options = (
        f"-p {port} -k {folder} -c listen_addresses=localhost -c ssl=on "
        f"-c ssl_cert_file={folder}/server.crt -c ssl_key_file={folder}/server.key"
    )
    pg_ctl = _bin("pg_ctl")
    subprocess.run(
        [*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start"],
        check=True,
        capture_output=True,
    )
    try:
        subprocess.run(
            [
                *prefix,
                shutil.which("psql") or "psql",
                "-X",
                "-q",
                "-h",
                str(folder),
                "-p",
                str(port),
                "-U",
                "postgres",
                "-c",
                "CREATE ROLE tester LOGIN; CREATE ROLE stranger LOGIN",
            ],
            check=True,
            capture_output=True,
        )
        yield TlsServer(port, folder / "ca.pem", folder / "other-ca.pem")
    finally:
        subprocess.run(
            [*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)


def test_require_connects_encrypted(tls_server: TlsServer) -> None:
    row = run(collect(connection(tls_server.url("127.0.0.1", "require")), ENCRYPTED)).to_pylist()
    assert row[0]["ssl"] is True and row[0]["version"].startswith("TLS")


def test_verify_full_passes_with_the_certificates_name_and_ca(
    tls_server: TlsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tls_server.ca))
    row = run(collect(connection(tls_server.url("localhost", "verify-full")), ENCRYPTED))
    assert row.to_pylist()[0]["ssl"] is True


def test_verify_full_refuses_another_name_with_the_tls_sentence(
    tls_server: TlsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tls_server.ca))
    source = connection(tls_server.url("127.0.0.1", "verify-full"))
    with pytest.raises(
        QueryFailed, match=r"TLS certificate of 127\.0\.0\.1:\d+ was not accepted \(.*mismatch"
    ):
        run(collect(source, "SELECT 1"))
    # verify-ca checks the signature only: the same address is accepted.
    ca_only = connection(tls_server.url("127.0.0.1", "verify-ca"))
    assert run(collect(ca_only, ENCRYPTED)).to_pylist()[0]["ssl"] is True


def test_verify_full_refuses_a_certificate_no_trusted_ca_signed(
    tls_server: TlsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tls_server.other_ca))
    with pytest.raises(
        QueryFailed,
        match=r"TLS certificate of localhost:\d+ was not accepted \(unable to get local issuer",
    ):
        run(collect(connection(tls_server.url("localhost", "verify-full")), "SELECT 1"))


def test_prefer_connects_encrypted_where_the_server_offers_tls(tls_server: TlsServer) -> None:
    row = run(collect(connection(tls_server.url("127.0.0.1", "prefer")), ENCRYPTED)).to_pylist()
    assert row[0]["ssl"] is True


def test_a_login_pg_hba_refuses_never_blames_a_tls_requirement_prefer_did_not_make(
    tls_server: TlsServer,
) -> None:
    """With sslmode=prefer TLS was tried first: a role pg_hba.conf has no line for is
    refused for that, and the sentence says so (it used to say "without TLS: add
    ?sslmode=require", which would change nothing)."""
    url = f"postgresql://stranger@127.0.0.1:{tls_server.port}/postgres"
    for given in (url, f"{url}?sslmode=prefer", f"{url}?sslmode=require"):
        with pytest.raises(QueryFailed) as refused:
            run(collect(connection(given), "SELECT 1"))
        said = str(refused.value)
        assert said.startswith(
            f"PostgreSQL at 127.0.0.1:{tls_server.port} does not let stranger connect to the "
            "database 'postgres' from the workbench's server (no pg_hba.conf entry allows it)."
        ), said
        assert "sslmode" not in said and "without TLS" not in said, said


def test_only_a_login_without_tls_is_told_tls_may_help(tls_server: TlsServer) -> None:
    """sslmode=disable never tried TLS, and only encrypted logins have a line: that one
    sentence may suggest TLS."""
    with pytest.raises(QueryFailed) as refused:
        run(collect(connection(tls_server.url("127.0.0.1", "disable")), "SELECT 1"))
    assert "without TLS: it may allow it with ?sslmode=require" in str(refused.value)
